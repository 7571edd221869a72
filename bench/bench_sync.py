"""Benchmark `sync --mode hms` against a real Hive 2.3 metastore (Derby) started from the pyspark jars.

    python bench/bench_sync.py [--tables 200] [--keep DIR]

One small compacted MOR table (core writer, two partitions) is registered under `--tables` names in one
database (each name its own `_ro` and `_rt`). Building the table, indexing it and starting the metastore are
timed and printed, not measured. Then, for all names in turn:

- register: the first sync of each name (create both tables, add their partitions, publish the properties);
- unchanged: a sync with nothing to change (reads only; must write nothing);
- changed: a sync after a late write below T lowered the watermark (one alter per table).

Baseline, in the same process and on the same metastore: one `get_table` per registered table, the least a
sync must do to know a table is up to date. Figures: wall seconds per name (two tables), metastore calls per
name by Thrift method, and each phase against the baseline. Freshness is computed once per phase (index
work, not catalog work).
"""

from __future__ import annotations

import sys
import time
from collections import Counter

from workspace import T0, bench_parser, records, work_dir

from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.demo.local_servers import metastore
from hudi_meta.freshness import Freshness, freshness
from hudi_meta.index.db import make_engine
from hudi_meta.index.freshness_inputs import completed_compactions, pending_blocks
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.sync.catalog import RetryPolicy
from hudi_meta.sync.hive_sync import sync_table
from hudi_meta.sync.hms import HmsCatalog
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import WriteClient, create_table

WRITES = ("alter_table", "create_table", "add_partitions_req", "create_database")


PARTITIONS = ("p0", "p1")


def build(path: str) -> dict[str, str]:
    """One file group per partition, with a base file; returns partition path -> file id."""
    w = WriteClient(create_table(path, "events", ["id"], "ts", ["part"], event_time_field="ts"))
    w.begin()
    groups = {
        f"part={p}": w.write_base_file(f"part={p}", records([f"{p}k{i}" for i in range(20)], 1, p)).file_id
        for p in PARTITIONS
    }
    w.commit("INSERT")
    return groups


def append(path: str, groups: dict[str, str], seconds: int) -> None:
    """A write that appends a log file to every file group (its records at event time `seconds`)."""
    w = WriteClient(HudiTable.open(path))
    w.begin()
    for partition, file_id in groups.items():
        part = partition.split("=")[1]
        w.append_log(partition, file_id, records([f"{part}k{i}" for i in range(5)], seconds, part))
    w.commit()


def table_freshness(engine_url: str, path: str) -> Freshness:
    engine = make_engine(engine_url)
    indexer = Indexer(engine, HudiTable.open(path))
    indexer.run()
    assert indexer.table_id is not None
    f = freshness(completed_compactions(engine, indexer.table_id), pending_blocks(engine, indexer.table_id), 0)
    engine.dispose()
    return f


def phase(catalog: HmsCatalog, table: HudiTable, f: Freshness, names: list[str]) -> tuple[float, Counter[str]]:
    before = catalog.calls.copy()
    start = time.perf_counter()
    for name in names:
        sync_table(catalog, table, f, "bench", name)
    return time.perf_counter() - start, catalog.calls - before


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, keep="work directory to use and keep (table, store, metastore)")
    parser.add_argument("--tables", type=int, default=200, help="names to register (each a _ro and a _rt)")
    args = parser.parse_args(argv)
    if args.tables < 1:
        parser.error("--tables must be at least 1")
    with work_dir("hudi-meta-bench-sync-", args.keep) as work:
        path = str(work / "events")
        url = f"sqlite:///{work / 'store.db'}"
        start = time.perf_counter()
        groups = build(path)
        append(path, groups, 5)  # compacted
        append(path, groups, 50)  # after T: linked
        upgrade(url)
        engine = make_engine(url)
        result = schedule_compaction(engine, HudiTable.open(path), ScheduleRequest(threshold_ms=T0 + 10_000))
        assert result.instant is not None, result.reason
        run_compaction(HudiTable.open(path), result.instant)
        engine.dispose()
        server = metastore(work / "metastore").start()
        print(f"table, store and metastore ready in {time.perf_counter() - start:.1f} s (not measured)")
        try:
            catalog = HmsCatalog(f"thrift://127.0.0.1:{server.port}", RetryPolicy(), 30)
            names = [f"t{i:04d}" for i in range(args.tables)]
            table = HudiTable.open(path)
            register = phase(catalog, table, table_freshness(url, path), names)
            unchanged = phase(catalog, table, table_freshness(url, path), names)
            append(path, groups, 3)  # late data below T: the watermark drops
            table = HudiTable.open(path)
            changed = phase(catalog, table, table_freshness(url, path), names)
            before = catalog.calls.copy()
            start = time.perf_counter()
            for name in names:
                for suffix in ("_ro", "_rt"):
                    catalog.client.get_table("bench", name + suffix)
            baseline = (time.perf_counter() - start, catalog.calls - before)
            catalog.close()
        finally:
            server.stop()
    n = len(names)
    print(f"\n{n} names ({2 * n} tables) in one database, one run each:\n")
    print("| phase | s per name | calls per name | writes per name | vs baseline |")
    print("|---|---|---|---|---|")
    failed = False
    for label, (seconds, calls) in (
        ("register", register),
        ("unchanged", unchanged),
        ("changed", changed),
        ("baseline: get_table x2", baseline),
    ):
        writes = sum(calls[w] for w in WRITES)
        detail = ", ".join(f"{k} {v / n:g}" for k, v in sorted(calls.items()))
        print(f"| {label} | {seconds / n:.4f} | {detail} | {writes / n:g} | {seconds / baseline[0]:.2f}x |")
        failed |= label == "unchanged" and writes > 0
        failed |= label == "changed" and calls["alter_table"] != 2 * n
    if failed:
        print("FAILED: an unchanged sync wrote, or a changed one did not alter each table once", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
