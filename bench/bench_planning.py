"""Benchmark compaction planning from the index for a table with many file groups.

    python bench/bench_planning.py [--file-groups 50000] [--logs-per-slice 4] [--backends sqlite,postgresql]

This measures the planner and the store's queries, NOT indexing: building 50,000 real file groups on disk is
too slow, so each store (a SQLite file; a fresh PostgreSQL database created through $HUDI_META_TEST_PG,
default postgresql+psycopg://root@127.0.0.1:5432/postgres, dropped at the end) is upgraded to the newest
schema and filled directly with bulk inserts (COPY on PostgreSQL) of what the indexer would have written:
one `hudi_table` row, and per file group one `file_group`, one committed `file_slice` with a base file,
`--logs-per-slice` `log_file` rows and 2 committed `avro_data` `log_block` rows per log file, then each log
file's summary of its blocks (`hudi_meta.index.log_file_summary`, which planning reads). Log file v of
a slice holds events of the v-th interval after its stream's start (staggered across file groups, jittered),
and 10% of the log files hold late events, so an event-time threshold T at mid-stream makes some log files
older than T and some newer, and leaves some slices with nothing to compact. Filling is timed and printed
but not measured. PostgreSQL is ANALYZEd after filling (as autovacuum would do); SQLite is not.

Then, best of 3 each (`RUNS`), in this process:

- read: `snapshot.candidate_slices(engine, table_id, instant)`, the planner's input read from the store.
- plan: `strategies.plan_operations(slices, EventTimeBasedCompactionStrategy(T))` + `plan.build_plan(...)`
  (pure Python), and, for reference, the plan's Avro serialisation (`plan.to_bytes()`, what scheduling
  writes to `<instant>.compaction.requested`).
- total: the three in a row.

slices/s = candidate slices / seconds. Compare read vs plan, and SQLite vs PostgreSQL, within one run of
the script; absolute times depend on the machine. Figures only: the script checks the number of slices,
operations, log files compacted and links against what it generated, and exits non-zero if they differ.
"""

from __future__ import annotations

import datetime as dt
import random
import sys
from functools import partial
from typing import Any

from sqlalchemy import Engine
from timing import Timings, measure
from workspace import bench_parser, fill_store, parse_backends, store, work_dir

from hudi_meta.compaction.candidates import candidate_slices
from hudi_meta.compaction.plan import build_plan
from hudi_meta.compaction.plan_records import SliceInfo
from hudi_meta.compaction.strategies import EventTimeBasedCompactionStrategy, plan_operations
from hudi_meta.format.table_service_metadata import CompactionPlan
from hudi_meta.gc_pause import paused_gc

PARTITIONS = 10
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
STEP_MS = 60_000  # event time advances one minute per log file version
LATE_SHARE = 0.1
BASE = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
TABLE_ROW: dict[str, Any] = {
    "id": 1,
    "base_path": "/bench/events",
    "name": "events",
    "table_type": "MERGE_ON_READ",
    "table_version": 6,
    "timeline_layout": 1,
    "record_key_fields": "event_id",
    "ordering_field": "ts",
    "event_time_field": "ts",
}
RUNS = 3  # plannings per store: the best of them is reported


def instant(minutes: int) -> str:
    return (BASE + dt.timedelta(minutes=minutes)).strftime("%Y%m%d%H%M%S") + "000"


def threshold(logs: int) -> int:
    return START_MS + (logs // 2) * STEP_MS - STEP_MS // 2


def generate(groups: int, logs: int, seed: int = 0) -> tuple[dict[str, list[dict[str, Any]]], dict[str, int]]:
    """Rows per store table (explicit ids, table id 1) and the expected plan figures for `threshold`."""
    rng, t = random.Random(seed), threshold(logs)
    base = instant(0)
    rows: dict[str, list[dict[str, Any]]] = {"file_group": [], "file_slice": [], "log_file": [], "log_block": []}
    expected = {"slices": groups, "operations": 0, "compacted": 0, "links": 0}
    for g in range(1, groups + 1):
        part, fid = f"region=r{g % PARTITIONS:02d}", f"{g:08x}-0000-4000-8000-000000000000-0"
        rows["file_group"].append({"id": g, "table_id": 1, "partition_path": part, "file_id": fid, "replaced": False})
        rows["file_slice"].append(
            {
                "id": g,
                "file_group_id": g,
                "base_instant": base,
                "base_file": f"{fid}_0-1-0_{base}.parquet",
                "base_file_size": 4_000_000,
                "base_committed": True,
            }
        )
        k, shift = 0, rng.randrange(logs) * STEP_MS  # streams start at different times: some have nothing <= T
        for v in range(1, logs + 1):
            lf = (g - 1) * logs + v
            lo = START_MS + shift + (v - 1) * STEP_MS + rng.randrange(STEP_MS)
            if rng.random() < LATE_SHARE:
                lo -= rng.randrange(logs * STEP_MS)
            k = v if lo <= t else k
            name = f".{fid}_{base}.log.{v}_1-0-1"
            rows["log_file"].append(
                {
                    "id": lf,
                    "table_id": 1,
                    "file_slice_id": g,
                    "partition_path": part,
                    "name": name,
                    "file_id": fid,
                    "base_instant": base,
                    "version": v,
                    "write_token": "1-0-1",
                    "size": 200_000,
                    "indexed_offset": 200_000,
                    "is_link": False,
                }
            )
            for i, offset in enumerate((0, 100_000)):
                rows["log_block"].append(
                    {
                        "id": 2 * lf - 1 + i,
                        "table_id": 1,
                        "log_file_id": lf,
                        "offset": offset,
                        "length": 100_000,
                        "block_type": "avro_data",
                        "instant": instant(v),
                        "record_count": 500,
                        "min_event_time": lo + i * STEP_MS // 4,
                        "max_event_time": START_MS + shift + v * STEP_MS,
                        "min_event_time_source": "stats",
                        "status": "committed",
                    }
                )
        if k:
            expected["operations"] += 1
            expected["compacted"] += k
            expected["links"] += logs - k
    return rows, expected


def plan_from(slices: list[SliceInfo], strategy: EventTimeBasedCompactionStrategy, at: str) -> CompactionPlan:
    """The planner proper: strategy over the candidate slices, then the Hudi plan (pure Python)."""
    return build_plan(plan_operations(slices, strategy), strategy, at)


def plan_rounds(
    engine: Engine, strategy: EventTimeBasedCompactionStrategy, at: str
) -> tuple[tuple[Timings, Timings, Timings], tuple[list[SliceInfo], CompactionPlan, bytes]]:
    """Timings of `RUNS` plannings from the store (read, plan, serialise) and the last one's output."""
    read, plan_t, ser = Timings(), Timings(), Timings()
    for _ in range(RUNS):
        with paused_gc():  # as scheduling plans (compaction/schedule.py)
            slices = read.run(partial(candidate_slices, engine, 1, at))
            plan = plan_t.run(partial(plan_from, slices, strategy, at))
            data = ser.run(plan.to_bytes)
    return (read, plan_t, ser), (slices, plan, data)


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__)
    parser.add_argument("--file-groups", type=int, default=50_000, help="file groups (one slice each)")
    parser.add_argument("--logs-per-slice", type=int, default=4, help="log files per slice (2 blocks each)")
    parser.add_argument("--backends", default="sqlite,postgresql", help="stores to plan from, comma-separated")
    args = parser.parse_args(argv)
    backends = parse_backends(parser, args.backends)
    n, logs, t = args.file_groups, args.logs_per_slice, threshold(args.logs_per_slice)
    strategy = EventTimeBasedCompactionStrategy(threshold_ms=t)
    at = instant(logs + 1)  # the compaction instant: after every deltacommit

    gen, (rows, expected) = measure(lambda: generate(n, logs))
    print(
        f"{n:,} file groups x {logs} log files x 2 blocks ({len(rows['log_block']):,} log_block rows), "
        f"{PARTITIONS} partitions; generated in {gen.best:.1f} s (not measured)"
    )
    print(
        f"threshold T: {expected['operations']:,} slices have log files older than T; "
        f"{expected['compacted']:,} log files to compact, {expected['links']:,} to link\n"
    )
    results: list[tuple[str, float, float, float, float]] = []
    with work_dir("bench-planning-") as work:
        for backend in backends:
            with store(backend, work) as engine:
                filled, _ = measure(partial(fill_store, engine, TABLE_ROW, rows))
                print(f"{backend}: filled in {filled.best:.1f} s (not measured)")
                (read, plan_t, ser), (slices, plan, data) = plan_rounds(engine, strategy, at)
                ops = plan.operations
                got = {
                    "slices": len(slices),
                    "operations": len(ops),
                    "compacted": sum(len(o.delta_file_paths) for o in ops),
                    "links": sum(len(o.symlink_operations) for o in ops),
                }
                if got != expected:
                    print(f"{backend}: unexpected plan {got}, expected {expected}")
                    return 1
                total = min(map(sum, zip(read.seconds, plan_t.seconds, ser.seconds, strict=True)))
                results.append((backend, read.best, plan_t.best, ser.best, total))
                print(f"{backend}: plan of {len(ops):,} operations, {len(data):,} bytes serialised")

    print(f"\nbest of {RUNS}, {n:,} candidate slices:\n")
    header = ("backend", "read s", "read slices/s", "plan s", "serialise s", "total s", "total slices/s", "read/total")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for backend, read_s, plan_s, ser_s, total_s in results:
        row = (
            backend,
            f"{read_s:.3f}",
            f"{n / read_s:,.0f}",
            f"{plan_s:.3f}",
            f"{ser_s:.3f}",
            f"{total_s:.3f}",
            f"{n / total_s:,.0f}",
            f"{read_s / total_s:.2f}",
        )
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
