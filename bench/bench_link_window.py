"""How long stock readers can see a running compaction's links before its commit (issue 8, defect 5).

    python bench/bench_link_window.py [--file-groups 50] [--log-mb 1]

Until `<C>.commit` exists, Java Hudi reads a pending compaction's slice together with the slice before it,
so a link created before the commit repeats records of the old slice for stock readers (ours skip planned
links). The executor therefore makes the links last, right before the commit. This script builds an events
table (`create_events_table`, one bucket) of `--file-groups` regions, each one file group with one merged log
file and one kept log file of about `--log-mb` MB, runs an event-time compaction in-process (local engine)
in symlink and in copy mode, and prints, per mode, the window from the first link to the commit and, for
comparison, the whole run. Figures only.
"""

from __future__ import annotations

import sys
import time

import pyarrow as pa
from sqlalchemy import Engine
from timing import measure
from workspace import bench_parser, store, work_dir

from hudi_meta.compaction.run import run_compaction, set_crash_hook
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.demo.event_stream import SCHEMA, create_events_table
from hudi_meta.format.links import LinkMode
from hudi_meta.table.bucket_index import new_bucket_file_id
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import WriteClient

T0 = 1_767_225_600_000


def build(path: str, groups: int, rows: int) -> None:
    """An events table with `groups` regions of one bucket (one file group each): a base file, then one log
    file below the threshold (merged) and one above it (kept, so linked)."""
    create_events_table(path, buckets=1)

    def data(region: str, ts: int) -> pa.Table:
        columns = {
            "event_id": [f"{region}-{i}" for i in range(rows)],
            "ts": [ts] * rows,
            "region": [region] * rows,
            "amount": [1.0] * rows,
            "payload": ["x" * 1000] * rows,
        }
        return pa.table(columns, schema=SCHEMA)

    regions = [f"r{g:05d}" for g in range(groups)]
    w = WriteClient(HudiTable.open(path))
    w.begin()
    fids = [w.write_base_file(f"region={r}", data(r, T0), new_bucket_file_id(0)).file_id for r in regions]
    w.commit("INSERT")
    for ts in (T0 + 1000, T0 + 100_000):  # merged, then kept
        w = WriteClient(HudiTable.open(path))
        w.begin()
        for r, fid in zip(regions, fids, strict=True):
            w.append_log(f"region={r}", fid, data(r, ts))
        w.commit()


def link_window(engine: Engine, path: str, mode: str) -> tuple[float, float]:
    """(first link -> commit, whole run) in seconds of one event-time compaction in `mode`."""
    result = schedule_compaction(
        engine, HudiTable.open(path), ScheduleRequest(threshold_ms=T0 + 10_000, mode=LinkMode(mode))
    )
    assert result.instant is not None, result.reason
    instant = result.instant
    first_link: list[float] = []
    set_crash_hook(lambda step: first_link.append(time.perf_counter()) if step == "after-link" else None)
    try:
        whole, _ = measure(lambda: run_compaction(HudiTable.open(path), instant))
        committed = time.perf_counter()
    finally:
        set_crash_hook(None)
    return committed - first_link[0], whole.best


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--file-groups", type=int, default=50, help="file groups (one region each)")
    parser.add_argument("--log-mb", type=float, default=1.0, help="size of each kept log file, in MB")
    args = parser.parse_args(argv)
    rows = max(1, int(args.log_mb * 1000))
    with work_dir("bench-link-window-") as work:
        print(f"{args.file_groups} file groups, one kept log file of ~{args.log_mb} MB each")
        print(f"{'mode':8} {'first link -> commit (s)':>26} {'whole run (s)':>14} {'share':>7}")
        for mode in ("symlink", "copy"):
            path = str(work / mode)
            build(path, args.file_groups, rows)
            (work / f"{mode}-store").mkdir()
            with store("sqlite", work / f"{mode}-store") as engine:
                window, whole = link_window(engine, path, mode)
            print(f"{mode:8} {window:26.4f} {whole:14.3f} {window / whole:7.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
