"""Writers and a compaction plan (issue 25, defect 3): no plan is left pending that can never run, and no record a
writer committed is lost.

Rules (hudi_meta/write/conflicts.py, compaction_undo.plan_breakers): a hudi-meta writer whose view was taken before
a plan appends into the slice the plan compacts; at commit it finds the compaction (Java's optimistic concurrency
control) and rolls its own write back. A writer that does not check (Java or Flink without a shared lock) may leave
a log file the plan does not know in the compacted slice, or one that sorts before the plan's links in the new
slice: the run then takes the plan back, moving those files after the compacted slice's log files, and says so.
Expected records are worked out by hand (tests/compaction/core.py's merge rules).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.check.files import check_files
from hudi_meta.compaction.rollback import rollback_compaction
from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.errors import HudiMetaError, PlanTakenBackError, WriteConflictError
from hudi_meta.format.file_names import LogFileName
from hudi_meta.format.links import carry_log_name
from hudi_meta.table.table import HudiTable
from hudi_meta.write.write_targets import FileGroupTarget
from hudi_meta.write.writer import WriteClient, append_to_file_group
from tests.compaction.core import CoreTable, archive_oldest, at, foreign_commit, hudi_rs_read, rows


def three_writes(path: Path) -> CoreTable:
    t = CoreTable(path)
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    t.write(rows(("a", 3, 2.0)))  # compacted at T = 10 s
    t.write(rows(("c", 50, 1.0)))  # linked
    return t


def test_a_writer_that_opened_the_table_before_the_plan_writes_into_the_plans_slice(
    engine: Engine, tmp_path: Path
) -> None:
    t = three_writes(tmp_path / "t")
    w = WriteClient(t.table)  # opened now, begins after the plan exists
    result = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10)))
    assert result.instant is not None
    with w:
        w.begin()
        stat = w.append_log(t.partition, t.file_id or "", rows(("d", 4, 1.0)))
        w.commit()
    assert LogFileName.parse(stat.file_name).instant == result.instant  # the plan's slice, after its links
    run_compaction(t.table, result.instant)
    assert t.read() == {"a": (3, 2.0), "b": (2, 1.0), "c": (50, 1.0), "d": (4, 1.0)}
    assert hudi_rs_read(t.path, "snapshot") == t.read()


def test_a_writer_whose_files_were_planned_before_the_plan_is_rolled_back_at_commit(
    engine: Engine, tmp_path: Path
) -> None:
    t = three_writes(tmp_path / "t")
    w = WriteClient(t.table)
    w.targets()  # its files planned from the view before the plan: slice B
    result = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10)))
    assert result.instant is not None
    with w:
        w.begin()
        stat = w.append_log(t.partition, t.file_id or "", rows(("d", 4, 1.0)))
        assert LogFileName.parse(stat.file_name).instant != result.instant  # the stale view's slice B
        with pytest.raises(WriteConflictError, match=f"compaction {result.instant} took slice"):
            w.commit()
    table = t.table
    assert not table.storage.exists(str(Path(t.path, stat.path)))  # its log file is gone
    assert not table.timeline.is_completed(w.instant)
    assert w.instant not in [i.requested_time for i in table.timeline.pending()]  # rolled back
    run_compaction(table, result.instant)  # the plan is not stuck
    assert "d" not in t.read()
    t.write(rows(("d", 4, 1.0)))  # written again: into the compaction's slice
    assert t.read()["d"] == (4, 1.0) and hudi_rs_read(t.path, "snapshot") == t.read()
    assert not check_files(t.table)


def test_a_foreign_write_into_the_compacted_slice_takes_the_plan_back(engine: Engine, tmp_path: Path) -> None:
    t = three_writes(tmp_path / "t")
    result = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10)))
    assert result.instant is not None
    base = t.table.file_groups()[0].ordered_slices()[0].base_instant
    late = WriteClient(t.table, instant=str(int(result.instant) - 1))
    late.begin()
    assert t.file_id is not None
    name = LogFileName(t.file_id, base, 9, "1-0-1").name
    target = FileGroupTarget(t.partition, t.file_id, base, None, name, 0)
    late.stats.append(append_to_file_group(late.context, target, rows(("z", 3, 1.0))))
    foreign_commit(late)
    kinds = {f.kind for f in check_files(t.table)}
    assert "plan-slice-changed" in kinds  # `check` says what cannot be prevented
    with pytest.raises(PlanTakenBackError, match=f"compaction {result.instant} was taken back, nothing lost"):
        run_compaction(t.table, result.instant)
    assert not t.table.timeline.pending_compactions()
    assert t.read()["z"] == (3, 1.0) and hudi_rs_read(t.path, "snapshot") == t.read()
    again = t.compact(engine, at(10))  # scheduled again, it runs
    # the prefix up to z (at or before T) takes c (after T) along: merge order
    assert t.read("ro") == {"a": (3, 2.0), "b": (2, 1.0), "c": (50, 1.0), "z": (3, 1.0)} and again
    assert not check_files(t.table)


def test_a_foreign_write_that_takes_the_carry_log_name_is_never_deleted(engine: Engine, tmp_path: Path) -> None:
    """A Java writer appending into the pending slice before any of the plan's files exist takes version 1 with the
    rollover token 1-0-1: the carry log's name. Its records must survive, in merge order."""
    t = three_writes(tmp_path / "t")
    result = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10), exact=True))
    assert result.instant is not None and t.file_id is not None
    java = WriteClient(t.table)
    java.begin()
    name = carry_log_name(t.file_id, result.instant)
    target = FileGroupTarget(t.partition, t.file_id, result.instant, None, name, 0)
    java.stats.append(append_to_file_group(java.context, target, rows(("a", 70, 7.0))))
    foreign_commit(java)
    before = t.read()
    assert before["a"] == (70, 7.0)
    assert "plan-order-broken" in {f.kind for f in check_files(t.table)}
    with pytest.raises(PlanTakenBackError):
        run_compaction(t.table, result.instant)
    assert t.read() == before and hudi_rs_read(t.path, "snapshot") == before
    t.compact(engine, at(10), exact=True)
    assert t.read() == before and t.read("ro") == {"a": (3, 2.0), "b": (2, 1.0)}


def test_writers_and_a_scheduler_racing_lose_nothing_and_leave_no_plan_stuck(engine: Engine, tmp_path: Path) -> None:
    """The issue's loop: begin/append/commit beside schedule/run. Every committed key is read back, by us and by
    hudi-rs, and no plan stays pending."""
    t = CoreTable(tmp_path / "t")
    t.write(rows(("k0", 0, 0.0)))
    assert t.file_id is not None
    committed: list[str] = []
    stop = threading.Event()

    def writer() -> None:
        for n in range(1, 40):
            w = WriteClient(HudiTable.open(t.path))  # opened before it begins: the stale view of the issue
            try:
                with w:
                    if n % 2:
                        w.targets()  # every other write plans its files before it begins
                    w.begin()
                    w.append_log(t.partition, t.file_id or "", rows((f"k{n}", n % 20, float(n))))
                    w.commit()
                committed.append(f"k{n}")
            except WriteConflictError:
                pass  # rolled back: its key was never committed
        stop.set()

    thread = threading.Thread(target=writer)
    thread.start()
    outcomes = []
    while not stop.is_set():  # as the service's rounds: a pending compaction first, else schedule and run
        try:
            pending = t.table.timeline.pending_compactions()
            if pending:
                run_compaction(t.table, pending[0].requested_time)
                outcomes.append("ran")
            elif (result := schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10)))).instant:
                run_compaction(t.table, result.instant)
                outcomes.append("ran")
        except HudiMetaError as e:  # a pending write refuses a schedule or a run: the next round goes on
            outcomes.append(type(e).__name__)
    thread.join()
    for instant in [i.requested_time for i in t.table.timeline.pending_compactions()]:
        run_compaction(t.table, instant)  # whatever the last round left runs now
    assert not t.table.timeline.pending_compactions()
    t.write(rows(("late", 1, 1.0)))
    t.compact(engine, at(10))  # nothing stuck: the next schedule plans and runs
    committed.append("late")
    print(f"outcomes: {sorted(set(outcomes))} x {len(outcomes)}, {len(committed)} writes committed")
    keys = set(t.read())
    assert keys == {"k0", *committed}
    assert set(hudi_rs_read(t.path, "snapshot")) == keys
    assert not check_files(t.table)


def test_a_writer_whose_slice_was_rolled_back_is_rolled_back_at_commit(engine: Engine, tmp_path: Path) -> None:
    """Found by the model test: a writer planned its files into compaction C's slice, then C was rolled back
    (its slice is gone); committing would leave its records in a slice no reader reads."""
    t = three_writes(tmp_path / "t")
    done = t.compact(engine, at(10))
    w = WriteClient(t.table)
    w.targets()  # into slice `done`
    rollback_compaction(t.table, done, completed=True, dry_run=False)
    with w:
        w.begin()
        w.append_log(t.partition, t.file_id or "", rows(("d", 4, 1.0)))
        with pytest.raises(WriteConflictError, match=f"slice {done} of file group .* is gone"):
            w.commit()
    assert "d" not in t.read()
    t.write(rows(("d", 4, 1.0)))  # written again: into the slice that is newest now
    assert t.read()["d"] == (4, 1.0) and hudi_rs_read(t.path, "snapshot") == t.read()
    assert not check_files(t.table)


def test_a_writer_whose_slice_an_archived_compaction_took_is_rolled_back(engine: Engine, tmp_path: Path) -> None:
    """Found by the long model run (seed 2026): the compaction that took the writer's slice was archived before the
    writer committed; only its base file says so."""
    t = three_writes(tmp_path / "t")
    w = WriteClient(t.table)
    w.targets()  # into the first slice
    done = t.compact(engine, at(10))
    t.write(rows(("e", 70, 1.0)))
    t.write(rows(("f", 80, 1.0)))
    archived = archive_oldest(t.path, 5)  # the writes before the compaction and the compaction itself
    assert done in archived and t.table.timeline.instant(done) is None
    with w:
        w.begin()
        w.append_log(t.partition, t.file_id or "", rows(("d", 4, 1.0)))
        with pytest.raises(WriteConflictError, match=f"compaction {done} took slice"):
            w.commit()
    assert "d" not in t.read() and hudi_rs_read(t.path, "snapshot") == t.read()
