"""Benchmark taking compactions back: `compaction unschedule`, rollback of an inflight compaction, `validate`.

    python bench/bench_unschedule.py [--file-groups 1000] [--partitions 4] [--keep DIR]

A v6 MOR table (core writer, local file system) with `--file-groups` file groups spread over `--partitions`
partitions: a base file and three log files per group (one write each), an event-time compaction scheduled
that merges the first log file of every slice and links the other two, then two more writes that append a
log file to every group's pending slice. Building is timed and printed, not measured. Then, each on its own
copy of the table:

- validate: `validate(table)` of the pending plan (lists every partition once, checks every input).
- unschedule: `unschedule_compaction` of the requested plan: per group two appended log files moved back
  (copy + delete each, written down in the move journal first), then the plan file deleted.
- rollback: the plan run until right before its commit (base files and links made, not timed), then
  `rollback_compaction`: per group the new base file and two links deleted, two log files moved back, a
  rollback instant written.

Figures are wall seconds of one run each and files acted on per second. The script checks (not timed) that
every copy reads the same records as before and exits non-zero otherwise.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from workspace import T0, records

from hudi_meta.compaction.admin import validate
from hudi_meta.compaction.rollback import rollback_compaction
from hudi_meta.compaction.run import run_compaction, set_crash_hook
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.index.db import make_engine
from hudi_meta.index.migrate import upgrade
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import WriteClient, create_table


def build(path: Path, file_groups: int, partitions: int, store_url: str) -> str:
    table = create_table(str(path), "bench", ["id"], "ts", ["part"], event_time_field="ts")
    groups: list[tuple[str, str, list[str]]] = []
    w = WriteClient(table)
    w.begin()
    for g in range(file_groups):
        part = str(g % partitions)
        keys = [f"g{g}-{i}" for i in range(5)]
        groups.append((f"part={part}", w.write_base_file(f"part={part}", records(keys, 1, part)).file_id, keys))
    w.commit("INSERT")

    def write_all(seconds: int) -> None:
        c = WriteClient(HudiTable.open(str(path)))
        c.begin()
        for partition, file_id, keys in groups:
            c.append_log(partition, file_id, records(keys[:2], seconds, partition.split("=")[1]))
        c.commit()
        c.close()

    for seconds in (5, 50, 60):  # merged (<= T), then two linked
        write_all(seconds)
    engine = make_engine(store_url)
    result = schedule_compaction(engine, HudiTable.open(str(path)), ScheduleRequest(threshold_ms=T0 + 10_000))
    engine.dispose()
    assert result.instant is not None, result.reason
    for seconds in (70, 80):  # appended into the plan's slices
        write_all(seconds)
    return result.instant


class StopBeforeCommit(Exception):
    pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file-groups", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--keep", help="build in this folder and keep it (default: a temporary folder)")
    args = parser.parse_args()
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-unschedule-"))
    root.mkdir(parents=True, exist_ok=True)
    source = root / "source"
    store = f"sqlite:///{root / 'store.db'}"
    upgrade(store)
    started = time.perf_counter()
    instant = build(source, args.file_groups, args.partitions, store)
    print(f"built {args.file_groups} file groups in {time.perf_counter() - started:.1f} s (not measured)")
    expected = HudiTable.open(str(source)).read().sort_by("id")
    failures = 0

    def copy(name: str) -> HudiTable:
        shutil.copytree(source, root / name, symlinks=True)
        return HudiTable.open(str(root / name))

    def check(table: HudiTable, what: str) -> None:
        nonlocal failures
        if not HudiTable.open(table.base_path).read().sort_by("id").equals(expected):
            print(f"FAILED: {what} changed the snapshot", file=sys.stderr)
            failures += 1

    table = copy("validate")
    started = time.perf_counter()
    (v,) = validate(table)
    took = time.perf_counter() - started
    print(f"validate: {took:.2f} s, {args.file_groups / took:.0f} operations/s, ok={v.ok}")

    table = copy("unschedule")
    started = time.perf_counter()
    report = unschedule_compaction(table, instant, dry_run=False)
    took = time.perf_counter() - started
    moved = sum(a.operation == "move_log_file" for a in report.actions)
    print(f"unschedule (requested): {took:.2f} s, {moved} log files moved, {len(report.actions) / took:.0f} files/s")
    check(table, "unschedule")

    table = copy("rollback")

    def stop(step: str) -> None:
        if step == "before-commit":
            raise StopBeforeCommit

    set_crash_hook(stop)
    try:
        run_compaction(table, instant)
    except StopBeforeCommit:
        pass
    finally:
        set_crash_hook(None)
    table = HudiTable.open(table.base_path)
    started = time.perf_counter()
    rolled = rollback_compaction(table, instant, dry_run=False)
    took = time.perf_counter() - started
    deleted = sum(a.operation.startswith("delete_") for a in rolled.actions)
    moved = sum(a.operation == "move_log_file" for a in rolled.actions)
    print(
        f"rollback (inflight): {took:.2f} s, {deleted} files deleted, {moved} log files moved, "
        f"{len(rolled.actions) / took:.0f} files/s"
    )
    check(table, "rollback")
    if not args.keep:
        shutil.rmtree(root)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
