"""Benchmark an event-time compaction on an S3 API server against the same compaction on local disk.

    python bench/bench_object_store.py [--file-groups 40] [--rows 2000] [--runs 3]

The same table is written twice with the core writer, once on local disk and once on S3 (moto in server mode
on 127.0.0.1, s3fs as the client, started by this script): `--file-groups` file groups of `--rows` rows, then
two log files per group, one older than T and one newer. Each run copies nothing: the table is written again
(not measured) and an event-time compaction in copy mode is scheduled (not measured) and run in this process
(`run_compaction`, one task after another: measured), then the table is indexed (measured on its own). Best of
`--runs`. Figures: seconds, rows/s and the ratio S3 / local disk; the server is local, so the ratio is the cost
of the S3 API and of object semantics (one request per file, copies instead of symlinks), not of a network.
The script checks that both runs compacted every group and kept the same number of copies, and exits non-zero
otherwise.
"""

from __future__ import annotations

import logging
import socket
import sys
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
from timing import Timings
from workspace import bench_parser, store, work_dir

from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.format.links import LinkMode
from hudi_meta.index.indexer import Indexer
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import WriteClient, create_table

T0 = 1_767_225_600_000


def s3_server() -> tuple[Any, dict[str, object]]:
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    options: dict[str, object] = {"key": "k", "secret": "s", "endpoint_url": endpoint}
    options["client_kwargs"] = {"region_name": "us-east-1"}
    client = boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1"
    )
    client.create_bucket(Bucket="bench")
    client.close()
    return server, options


def build(uri: str, options: dict[str, object], groups: int, rows: int) -> int:
    """The table; the rows it holds."""
    create_table(uri, "bench", ["id"], "ts", ["region"], event_time_field="ts", options=options)
    file_ids: dict[str, str] = {}
    for n, seconds in enumerate((0, 10, 1000)):  # base files, a log older than T = 100 s, one newer
        w = WriteClient(HudiTable.open(uri, options))
        w.begin()
        for g in range(groups):
            part = f"region=r{g:03d}"
            keys = [f"{g}-{i}" for i in range(rows if n == 0 else rows // 10)]
            data = pa.table(
                {
                    "id": keys,
                    "ts": pa.array([T0 + seconds * 1000] * len(keys), pa.int64()),
                    "region": [part.split("=")[1]] * len(keys),
                    "amount": [float(n)] * len(keys),
                }
            )
            if part in file_ids:
                w.append_log(part, file_ids[part], data, [])
            else:
                file_ids[part] = w.write_base_file(part, data).file_id
        w.commit()
    return groups * rows


def measure(
    place: str, uri: str, options: dict[str, object], engine: Any, groups: int, rows: int
) -> tuple[float, float, int]:
    """Best compaction and index seconds of one run on `uri`, and the copies the plan kept."""
    build(uri, options, groups, rows)
    table = HudiTable.open(uri, options)
    result = schedule_compaction(engine, table, ScheduleRequest(threshold_ms=T0 + 100_000, mode=LinkMode.COPY))
    if result.instant is None or result.plan is None or len(result.plan.operations) != groups:
        raise SystemExit(f"{place}: expected {groups} operations, got {result.reason}")
    compaction, index = Timings(), Timings()
    compaction.run(lambda: run_compaction(HudiTable.open(uri, options), result.instant))
    index.run(lambda: Indexer(engine, HudiTable.open(uri, options)).run())
    return compaction.best, index.best, sum(len(op.symlink_operations) for op in result.plan.operations)


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, runs=3)
    parser.add_argument("--file-groups", type=int, default=40, help="file groups (one per partition)")
    parser.add_argument("--rows", type=int, default=2000, help="rows per base file (a tenth per log file)")
    args = parser.parse_args(argv)
    server, options = s3_server()
    results: dict[str, list[tuple[float, float, int]]] = {"local disk": [], "S3 (moto)": []}
    try:
        with work_dir("bench-object-store-") as work:
            for run in range(args.runs):
                for place in results:
                    folder = Path(work) / f"store-{place[:2]}-{run}"
                    folder.mkdir()
                    with store("sqlite", folder) as engine:
                        uri = (
                            str(Path(work) / f"local-{run}")
                            if place == "local disk"
                            else f"s3://bench/t-{uuid.uuid4().hex[:8]}"
                        )
                        results[place].append(measure(place, uri, options if place != "local disk" else {}, engine,
                                                      args.file_groups, args.rows))  # fmt: skip
    finally:
        server.stop()
    copies = {place: {r[2] for r in runs} for place, runs in results.items()}
    if len({c for cs in copies.values() for c in cs}) != 1:
        print(f"the runs kept different numbers of copies: {copies}")
        return 1
    rows = args.file_groups * (args.rows + 2 * (args.rows // 10))
    best = {place: (min(r[0] for r in runs), min(r[1] for r in runs)) for place, runs in results.items()}
    print(f"{args.file_groups} file groups, {rows:,} rows in base and log files, best of {args.runs}\n")
    print("| where | compaction s | rows/s | index s |")
    print("|---|---|---|---|")
    for place, (compaction_s, index_s) in best.items():
        print(f"| {place} | {compaction_s:.2f} | {rows / compaction_s:,.0f} | {index_s:.2f} |")
    local, s3 = best["local disk"], best["S3 (moto)"]
    print(f"\nS3 / local disk: compaction {s3[0] / local[0]:.2f}x the time, index {s3[1] / local[1]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
