"""Benchmark the web UI's pages and JSON API on a large store, through a real HTTP server.

    python bench/bench_ui.py [--file-groups 50000] [--requests 200] [--backends sqlite,postgresql]

The store is filled directly (as in bench_planning.py: building 50,000 real file groups is too slow) with
what the indexer would write for one table: `--file-groups` file groups in 10 partitions, each with a
committed slice (base file, 2 log files of 2 committed data blocks: 200,000 blocks at 50,000 groups) and the
slice of a completed compaction that made every tenth group's newest log file a link; 400 deltacommits and
that compaction on the timeline; its plan with one operation per file group. Then `hudi-meta serve` (waitress)
is started on the store in its own process, and each page and API endpoint gets `--requests` GET requests,
one after another, over HTTP; p50 and p95 latency are printed per endpoint, with the ratio of p95 to the p50
of the static stylesheet (the server's own cost per request, measured in the same run).

The first request after the server starts computes the table's freshness, histogram and late data from every
block not yet in a base file, then caches them until the table is indexed again; it is timed and printed as
"cold" on its own. Goal (issue 12): p95 under 200 ms for every page and endpoint. Figures only: the script
checks that every response is 200 and names the file group count it expects, and exits non-zero otherwise.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from typing import Any

from bench_planning import TABLE_ROW, generate, instant
from workspace import bench_parser, fill_store, parse_backends, store, work_dir

COMPACTION = instant(10_000)
LINK_EVERY = 10


def add_history(rows: dict[str, list[dict[str, Any]]], groups: int, deltacommits: int) -> None:
    """Timeline, one completed compaction with its plan, its slices and the links it made (every tenth group)."""
    rows["instant"] = [
        {
            "table_id": 1,
            "requested_time": instant(m),
            "action": "deltacommit",
            "state": "completed",
            "is_compaction": False,
            "summary": json.dumps({"operation_type": "UPSERT", "num_writes": 1000}),
        }
        for m in range(1, deltacommits + 1)
    ] + [
        {
            "table_id": 1,
            "requested_time": COMPACTION,
            "action": "commit",
            "state": "completed",
            "is_compaction": True,
            "summary": json.dumps({"operation_type": "COMPACT", "threshold": str(1_767_225_600_000)}),
        }
    ]
    rows["compaction_plan"] = [
        {
            "id": 1,
            "table_id": 1,
            "instant": COMPACTION,
            "state": "completed",
            "strategy": "org.apache.hudi.table.action.compact.strategy.EventTimeBasedCompactionStrategy",
            "threshold": 1_767_225_600_000,
            "mode": "symlink",
            "exact": False,
            "created_at": dt.datetime(2026, 1, 8, tzinfo=dt.UTC),
        }
    ]
    rows["compaction_operation"] = []
    rows["link"] = []
    next_slice, next_file = groups + 1, len(rows["log_file"]) + 1
    for g in rows["file_group"]:
        fid, part = g["file_id"], g["partition_path"]
        old = rows["file_slice"][g["id"] - 1]["base_instant"]
        rows["compaction_operation"].append(
            {
                "plan_id": 1,
                "partition_path": part,
                "file_id": fid,
                "base_instant": old,
                "base_file": f"{fid}_0-1-0_{old}.parquet",
                "files_to_compact": json.dumps([f".{fid}_{old}.log.1_1-0-1"]),
                "metrics": "{}",
            }
        )
        rows["file_slice"].append(
            {
                "id": next_slice,
                "file_group_id": g["id"],
                "base_instant": COMPACTION,
                "base_file": f"{fid}_0-2-0_{COMPACTION}.parquet",
                "base_file_size": 4_000_000,
                "base_committed": True,
            }
        )
        if g["id"] % LINK_EVERY == 0:
            link, target = f".{fid}_{COMPACTION}.log.1_1-0-1", f".{fid}_{old}.log.2_1-0-1"
            rows["log_file"].append(
                {
                    "id": next_file,
                    "table_id": 1,
                    "file_slice_id": next_slice,
                    "partition_path": part,
                    "name": link,
                    "file_id": fid,
                    "base_instant": COMPACTION,
                    "version": 1,
                    "write_token": "1-0-1",
                    "size": 200_000,
                    "indexed_offset": 0,
                    "is_link": True,
                    "link_target": target,
                }
            )
            rows["link"].append(
                {
                    "table_id": 1,
                    "partition_path": part,
                    "link_name": link,
                    "target_name": target,
                    "via_name": None,
                    "compaction_instant": COMPACTION,
                    "state": "created",
                }
            )
            next_file += 1
        next_slice += 1


def endpoints(groups: int) -> dict[str, str]:
    last = -(-groups // 50)
    part = "region%3Dr03"
    fid = f"{LINK_EVERY:08x}-0000-4000-8000-000000000000-0"
    return {
        "static stylesheet (baseline)": "/static/style.css",
        "tables": "/",
        "table (freshness, chart, timeline)": "/tables/1",
        "table, timeline page 8": "/tables/1?page=8",
        "plans": "/tables/1/plans",
        "plan": f"/tables/1/plans/{COMPACTION}",
        "plan, last page": f"/tables/1/plans/{COMPACTION}?page={last}",
        "file groups": "/tables/1/file-groups",
        "file groups, last page": f"/tables/1/file-groups?page={last}",
        "file groups of a partition": f"/tables/1/file-groups?partition={part}",
        "lineage": f"/tables/1/lineage?partition=region%3Dr{LINK_EVERY % 10:02d}&file_id={fid}",
        "late data": "/tables/1/late",
        "metrics": "/metrics",
        "api tables": "/api/v1/tables",
        "api table": "/api/v1/tables/1",
        "api freshness": "/api/v1/tables/1/freshness",
        "api timeline": "/api/v1/tables/1/timeline",
        "api plans": "/api/v1/tables/1/plans",
        "api plan": f"/api/v1/tables/1/plans/{COMPACTION}",
        "api file groups, last page": f"/api/v1/tables/1/file-groups?page={last}",
        "api lineage": f"/api/v1/tables/1/lineage?partition=region%3Dr{LINK_EVERY % 10:02d}&file_id={fid}",
        "api late": "/api/v1/tables/1/late",
    }


def get(url: str) -> float:
    start = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        response.read()
        if response.status != 200:
            raise RuntimeError(f"{url}: status {response.status}")
    return time.perf_counter() - start


def serve(url: str) -> tuple[str, subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "hudi_meta.cli.main", "--db", url, "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HUDI_META_UI_TOKEN": ""},
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "http://" not in line:
        process.kill()
        raise RuntimeError(f"serve did not start: {line!r}")
    return line.split()[3].rstrip("/"), process


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--file-groups", type=int, default=50_000, help="file groups (2 log files of 2 blocks each)")
    parser.add_argument("--requests", type=int, default=200, help="requests per page or endpoint")
    parser.add_argument("--backends", default="sqlite,postgresql", help="stores to serve, comma-separated")
    args = parser.parse_args(argv)
    groups, count = args.file_groups, args.requests
    rows, _ = generate(groups, 2)
    add_history(rows, groups, deltacommits=400)
    print(
        f"{groups:,} file groups, {len(rows['log_block']):,} log blocks, {len(rows['link']):,} links, "
        f"{len(rows['instant']):,} instants, {len(rows['compaction_operation']):,} plan operations; "
        f"{count} requests per endpoint over HTTP (hudi-meta serve, waitress)\n"
    )
    failed = False
    with work_dir("bench-ui-") as work:
        for backend in parse_backends(parser, args.backends):
            with store(backend, work) as engine:
                fill_store(engine, TABLE_ROW, rows)
                url = engine.url.render_as_string(hide_password=False)
                base, process = serve(url)
                try:
                    cold = get(f"{base}/tables/1")
                    total = json.loads(urllib.request.urlopen(f"{base}/api/v1/tables/1/partitions").read())
                    if sum(p["file_groups"] for p in total["items"]) != groups:
                        print(f"{backend}: the store does not hold {groups} file groups")
                        return 1
                    print(f"{backend}: cold table page (freshness of {len(rows['log_block']):,} blocks): {cold:.2f} s")
                    results = {
                        name: [get(base + path) for _ in range(count)] for name, path in endpoints(groups).items()
                    }
                finally:
                    process.terminate()
                    process.communicate(timeout=30)
            baseline = statistics.median(results["static stylesheet (baseline)"])
            print(f"\n{backend}: latency over {count} requests each\n")
            print("| page or endpoint | p50 ms | p95 ms | p95 / baseline p50 |")
            print("|---|---|---|---|")
            for name, seconds in results.items():
                p50, p95 = percentile(seconds, 0.5), percentile(seconds, 0.95)
                failed |= p95 > 0.2 and name != "static stylesheet (baseline)"
                print(f"| {name} | {p50 * 1000:.1f} | {p95 * 1000:.1f} | {p95 / baseline:.1f}x |")
            print()
    print("goal: p95 under 200 ms for every page and endpoint:", "missed" if failed else "met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
