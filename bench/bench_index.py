"""Benchmark the incremental indexer on a synthetic MOR table with many small log blocks.

    python bench/bench_index.py [--blocks 100000] [--backends sqlite,postgresql] [--keep DIR]

One v6 MOR table (few log files, many Avro blocks each) is generated once; its generation time is printed
but is not part of the measurement. For each backend (a SQLite file; a fresh PostgreSQL database created
through $HUDI_META_TEST_PG, default postgresql+psycopg://root@127.0.0.1:5432/postgres, and dropped at the
end) the store is upgraded to the newest schema, then three runs are timed, each opening the table afresh:

- full: the first `Indexer.run("ts")`, which reads every block header and resolves every block's min event
  time from the deltacommits' write stats; best of `--full-runs` (default 3), each into a fresh store.
  blocks/s = blocks / full seconds.
- no-change: a second run right after, with nothing new on disk. Its ratio to the full run is the fixed
  cost of an idle run (timeline load, listing, reading the store's rows back); it should be small.
- incremental: after all backends ran the two above, one deltacommit appends a block to 1% of the log
  files; each store then indexes it. Its ratio to the full run should stay near the no-change ratio.
- baseline, header scan: `read_blocks` over every log file of the same table (framing and header maps only,
  no store, no timeline), best of 3, in the same process. "scan/full" is the header scan's seconds over the
  full run's: the share of a full index run that the unavoidable reading of the headers accounts for (1.0
  would mean the indexer adds nothing to it; issue 15 asks for at least 0.5).
- floor, the store's insert: the full run's `log_block` rows read back from the store and inserted, with
  the indexer's own `insert_ignore_tuples`, into a fresh store that already holds their log files (loaded, not
  timed); best of `--full-runs`. "floor" is scan / (scan + insert): the most scan/full could reach if a run
  did nothing but read the headers and store the rows.

Figures only: the script asserts what each run did (blocks added, files scanned), never how long it took.
Wall times depend on the machine; compare ratios within one run of the script.
"""

from __future__ import annotations

import math
import sys
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
from sqlalchemy import Engine, select
from timing import Timings, measure
from workspace import bench_parser, fill_store, parse_backends, store, work_dir

from hudi_meta.demo.synthetic import SyntheticSpec, write_synthetic_table
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.index.files import BlockRow
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.models import hudi_table, log_block_table, metadata
from hudi_meta.index.run_stats import IndexRunStats
from hudi_meta.index.sql import insert_ignore_tuples
from hudi_meta.storage import LocalStorage
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import WriteClient

PARTITIONS, GROUPS, COMMITS = 4, 50, 10  # 200 log files; blocks per commit scales with --blocks
PARENTS = ("file_group", "file_slice", "log_file")  # what a block's row needs in the store before it


def spec_for(blocks: int) -> SyntheticSpec:
    per_commit = max(1, math.ceil(blocks / (PARTITIONS * GROUPS * COMMITS)))
    return SyntheticSpec(
        partitions=PARTITIONS,
        file_groups_per_partition=GROUPS,
        commits=COMMITS,
        blocks_per_commit=per_commit,
        records_per_block=2,
    )


def index_run(engine: Engine, path: str) -> IndexRunStats:
    """One run as a fresh process would do it: open the table (timeline, listing), index."""
    return Indexer(engine, HudiTable.open(path)).run("ts")


def table_shape(path: str) -> str:
    files = [p for p in Path(path).rglob("*") if p.is_file() and ".hoodie" not in p.parts]
    logs = [p for p in files if ".log." in p.name]
    bases = [p for p in files if p.suffix == ".parquet"]
    size = sum(p.stat().st_size for p in logs)
    return f"{len(logs)} log files ({size:,} bytes), {len(bases)} base files"


def header_scan(path: str) -> int:
    """The baseline: every log file's block headers read (no store, no timeline); returns the blocks read."""
    storage = LocalStorage()
    return sum(len(read_blocks(storage, str(p))) for p in sorted(Path(path).rglob("*.log.*")))


def stored_rows(engine: Engine) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]], list[BlockRow]]:
    """What a full run stored: the table's row, its file groups, slices and log files, and its blocks' rows
    (without their ids, as the indexer inserts them)."""
    b = log_block_table
    with engine.connect() as conn:
        table_row = dict(conn.execute(select(hudi_table)).mappings().one())
        parents = {name: [dict(r) for r in conn.execute(select(metadata.tables[name])).mappings()] for name in PARENTS}
        blocks = [BlockRow(*r) for r in conn.execute(select(*(b.c[name] for name in BlockRow._fields)))]
    return table_row, parents, blocks


def bare_insert(engine: Engine, blocks: list[BlockRow]) -> None:
    """The blocks' rows stored as the indexer stores them: one transaction, `insert_ignore_tuples`."""
    with engine.begin() as conn:
        insert_ignore_tuples(conn, log_block_table, BlockRow._fields, blocks)


def append_one_percent(path: str) -> int:
    """One deltacommit appending a 2-record block to 1% of the log files; returns the files touched."""
    table = HudiTable.open(path)
    groups = table.file_groups()
    touched = groups[::100]  # every 100th file group, across partitions
    client = WriteClient(table)
    client.begin()
    for fg in touched:
        data = pa.table(
            {
                "id": [f"{fg.file_id}-new-{i}" for i in range(2)],
                "ts": pa.array([1_767_300_000_000 + i for i in range(2)], pa.int64()),
                "value": [1.0, 2.0],
                "part": [fg.partition.split("=")[1]] * 2,
            }
        )
        client.append_log(fg.partition, fg.file_id, data)
    client.commit()
    return len(touched)


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(
        __doc__, keep="write the table and SQLite file here and keep them (and the PostgreSQL database)"
    )
    parser.add_argument("--blocks", type=int, default=100_000, help="log blocks to generate (at least)")
    parser.add_argument("--backends", default="sqlite,postgresql", help="stores to index into, comma-separated")
    parser.add_argument("--full-runs", type=int, default=3, help="full runs per backend, each on a fresh store (best)")
    args = parser.parse_args(argv)
    if args.full_runs < 1:
        parser.error(f"--full-runs: expected at least 1, got {args.full_runs}")
    backends = parse_backends(parser, args.backends)
    keep = args.keep is not None

    with ExitStack() as stack:
        root = stack.enter_context(work_dir("bench-index-", args.keep))
        table_path = str(root / "table")
        spec = spec_for(args.blocks)
        generate, _ = measure(lambda: write_synthetic_table(table_path, spec))
        print(
            f"generated in {generate.best:.1f} s (not measured): {spec.total_blocks:,} blocks "
            f"= {spec.partitions} partitions x {spec.file_groups_per_partition} file groups x "
            f"{spec.commits} commits x {spec.blocks_per_commit} blocks; {table_shape(table_path)}"
        )

        scan_t, scanned = measure(partial(header_scan, table_path), runs=3)
        assert scanned == spec.total_blocks, scanned
        print(f"baseline: header scan of every log file {scan_t.best:.2f} s (best of 3)")

        results: dict[str, dict[str, float]] = {}
        engines: dict[str, Engine] = {}
        for backend in backends:
            work = root / backend
            work.mkdir(exist_ok=True)
            full_t = Timings()
            for trial in range(args.full_runs - 1):  # on stores of their own, dropped after
                trial_work = work / f"trial-{trial}"
                trial_work.mkdir(exist_ok=True)
                with store(backend, trial_work) as trial_engine:
                    full = full_t.run(partial(index_run, trial_engine, table_path))
                    assert full.blocks_added == spec.total_blocks, full
            engines[backend] = engine = stack.enter_context(store(backend, work, keep))
            full = full_t.run(partial(index_run, engine, table_path))
            assert full.blocks_added == spec.total_blocks, full
            assert full.blocks_event_time_resolved == spec.total_blocks, full
            idle_t, idle = measure(partial(index_run, engine, table_path))
            assert idle.blocks_added == 0 and idle.log_files_scanned == 0, idle
            assert idle.blocks_event_time_resolved == 0, idle
            table_row, parents, blocks = stored_rows(engine)
            insert_t = Timings()
            for trial in range(args.full_runs):
                trial_work = work / f"insert-{trial}"
                trial_work.mkdir(exist_ok=True)
                with store(backend, trial_work) as trial_engine:
                    fill_store(trial_engine, table_row, parents)
                    insert_t.run(partial(bare_insert, trial_engine, blocks))
            results[backend] = {"full": full_t.best, "idle": idle_t.best, "insert": insert_t.best}
            print(
                f"{backend}: full {full_t.best:.2f} s (best of {args.full_runs}), no-change {idle_t.best:.3f} s, "
                f"bare insert of the {len(blocks):,} block rows {insert_t.best:.2f} s"
            )

        touched = append_one_percent(table_path)
        for backend, engine in engines.items():
            incr_t, incr = measure(partial(index_run, engine, table_path))
            assert incr.blocks_added == touched and incr.log_files_scanned == touched, incr
            assert incr.blocks_event_time_resolved == touched, incr
            results[backend]["incr"] = incr_t.best

        print(
            f"\nincremental: one deltacommit appending 1 block to {touched} of "
            f"{spec.partitions * spec.file_groups_per_partition} log files\n"
        )
        header = (
            "backend",
            "blocks",
            "full s",
            "blocks/s",
            "no-change s",
            "no-change/full",
            "incr s",
            "incr/full",
            "scan/full",
            "insert s",
            "floor",
        )
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for backend, r in results.items():
            full_s, idle_s, incr_s, insert_s = r["full"], r["idle"], r["incr"], r["insert"]
            row = (
                backend,
                f"{spec.total_blocks:,}",
                f"{full_s:.2f}",
                f"{spec.total_blocks / full_s:,.0f}",
                f"{idle_s:.3f}",
                f"{idle_s / full_s:.4f}",
                f"{incr_s:.3f}",
                f"{incr_s / full_s:.4f}",
                f"{scan_t.best / full_s:.2f}",
                f"{insert_s:.2f}",
                f"{scan_t.best / (scan_t.best + insert_s):.2f}",
            )
            print("| " + " | ".join(row) + " |")
        if keep:
            print(f"\nkept {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
