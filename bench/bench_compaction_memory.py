"""Benchmark the peak memory (RSS) of a compaction task as its slice's base file grows.

    python bench/bench_compaction_memory.py [--rows 1000000,4000000] [--log-rows 10000] [--keep DIR]

For each size in `--rows`, one v6 MOR table (rows id, ts, region, amount; one file group) is written with the
core writer: a base file of that many rows, then one deltacommit with a small log file (`--log-rows`
updates). An unbounded compaction of it is scheduled from a SQLite store. Writing and scheduling are timed
and printed but not measured. Then each measurement runs in a fresh Python process of its own, which reports
its peak resident set (VmHWM, /proc/self/status) when done:

- compaction: `run_compaction(HudiTable.open(path), instant)`, the local executor running the one task
  (read the slice, merge, write the new base file) and committing.
- baseline, idle: the same imports and `HudiTable.open(path)`, nothing read (the fixed cost of a process).
- baseline, base file: `pyarrow.parquet.read_table` of the base file, nothing else (holding it whole).

"growth" is the peak at the largest size over the peak at the smallest; issue 15 asks that a compaction's
peak grow by at most 20% from 1M to 4M rows (small logs), i.e. that the base file be streamed, not held.
Figures only: the script checks that each compaction committed and wrote every row, and exits non-zero if
not.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from functools import partial
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from timing import measure
from workspace import bench_parser, store, work_dir

from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.strategies import Strategy
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import WriteClient, create_table

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
MODES = ("idle", "base-file", "compaction")  # the compaction last: it adds a base file


def rows_of(first: int, n: int, ts: int) -> pa.Table:
    return pa.table(
        {
            "id": [f"k{i:09d}" for i in range(first, first + n)],
            "ts": pa.array([ts + i % 1000 for i in range(first, first + n)], pa.int64()),
            "region": ["eu"] * n,
            "amount": pa.array([float(i % 997) for i in range(first, first + n)], pa.float64()),
        }
    )


def write_table(path: str, rows: int, log_rows: int) -> None:
    create_table(path, "bench_memory", ["id"], "ts", ["region"], event_time_field="ts")
    w = WriteClient(HudiTable.open(path))
    w.begin()
    file_id = w.write_base_file("region=eu", rows_of(0, rows, T0)).file_id
    w.commit()
    w = WriteClient(HudiTable.open(path))
    w.begin()
    w.append_log("region=eu", file_id, rows_of(rows // 2, min(log_rows, rows), T0 + 60_000))
    w.commit()


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status (Linux only)")


def child(mode: str, path: str, instant: str) -> int:
    """One measurement in this (fresh) process; prints the peak RSS in MB, then a count to check."""
    table = HudiTable.open(path)
    count = 0
    if mode == "compaction":
        run_compaction(table, instant)
        count = sum(pq.read_metadata(p).num_rows for p in Path(path).rglob(f"*_{instant}.parquet"))
    elif mode == "base-file":
        count = sum(pq.read_table(p).num_rows for p in Path(path).rglob("*.parquet"))
    print(f"{peak_rss_mb():.1f} {count}")
    return 0


def measure_child(mode: str, path: str, instant: str) -> tuple[float, int]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", mode, path, instant], check=True, capture_output=True, text=True
    ).stdout.split()
    return float(out[-2]), int(out[-1])


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, keep="write the tables and the store here and keep them")
    parser.add_argument("--rows", default="1000000,4000000", help="base file sizes in rows, comma-separated")
    parser.add_argument("--log-rows", type=int, default=10_000, help="updates in the one log file")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # MODE PATH INSTANT: one measurement
    args = parser.parse_args(argv)
    if args.child:
        return child(*args.child)
    try:
        sizes = sorted({int(r) for r in args.rows.split(",") if r.strip()})
    except ValueError:
        parser.error(f"--rows: expected comma-separated row counts, got {args.rows!r}")
    if not sizes or sizes[0] < 1 or args.log_rows < 1:
        parser.error("--rows and --log-rows must be at least 1")

    results: dict[int, dict[str, float]] = {}
    with work_dir("bench-memory-", args.keep) as root, store("sqlite", root) as engine:
        for rows in sizes:
            path = str(root / f"table-{rows}")
            written, _ = measure(partial(write_table, path, rows, args.log_rows))
            scheduled, result = measure(
                partial(schedule_compaction, engine, HudiTable.open(path), ScheduleRequest(strategy=Strategy.UNBOUNDED))
            )
            assert result.instant is not None, result.reason
            print(
                f"{rows:,} rows: written in {written.best:.1f} s, scheduled {result.instant} in "
                f"{scheduled.best:.1f} s (not measured)"
            )
            results[rows] = {}
            for mode in MODES:
                peak, count = measure_child(mode, path, result.instant)
                want = {"compaction": rows, "idle": 0, "base-file": rows}[mode]
                if count != want:
                    print(f"{rows:,} rows, {mode}: counted {count:,}, expected {want:,}")
                    return 1
                results[rows][mode] = peak

        print("\npeak RSS (MB) of one process per measurement:\n")
        header = ("base file rows", "compaction", "idle", "base file read", "compaction - idle")
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for rows, r in results.items():
            cells = (
                f"{rows:,}",
                f"{r['compaction']:.0f}",
                f"{r['idle']:.0f}",
                f"{r['base-file']:.0f}",
                f"{r['compaction'] - r['idle']:.0f}",
            )
            print("| " + " | ".join(cells) + " |")
        low, high = results[sizes[0]], results[sizes[-1]]
        print(
            f"\ngrowth {sizes[0]:,} -> {sizes[-1]:,} rows: compaction {high['compaction'] / low['compaction']:.2f}x, "
            f"base file read {high['base-file'] / low['base-file']:.2f}x"
        )
        if args.keep:
            print(f"\nkept {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
