"""`compaction validate` and `compaction repair` (issue 10 item 2): what keeps a plan from running or a table from
reading right is found, named per file, and fixed where it can be; a repair stopped at any step is finished by
running it again."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.admin import repair, validate
from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.errors import HudiMetaError
from hudi_meta.format.file_names import LogFileName
from hudi_meta.write.write_targets import FileGroupTarget
from hudi_meta.write.writer import WriteClient
from tests.compaction.core import CoreTable, at, foreign_commit, hudi_rs_read, rows
from tests.compaction.undo_helpers import (
    data_files,
    open_core,
    pending_with_appends,
    run_until,
    stopped_at_each_step_then_finished,
)


def write_into_slice(
    t: CoreTable, slice_instant: str, version: int, data: pa.Table, instant: str | None = None
) -> None:
    """A committed write whose log file lands in slice `slice_instant` as version `version`, whatever the
    view says (a writer that planned its target before something changed)."""
    assert t.file_id is not None
    w = WriteClient(t.table, instant=instant or "")
    w.begin()
    name = LogFileName(t.file_id, slice_instant, version).name
    w.targets()[(t.partition, t.file_id)] = FileGroupTarget(t.partition, t.file_id, slice_instant, None, name, 0)
    w.append_log(t.partition, t.file_id, data)
    foreign_commit(w)  # as a writer without conflict checks commits (ours roll back: test_write_conflicts.py)


VERSIONS = [6, 9]  # timeline layouts 1 and 2 (8 and 9 differ in nothing validate or repair reads)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_plan_that_can_run_is_valid(engine: Engine, tmp_path: Path, version: int) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t", version=version)
    (v,) = validate(t.table)
    assert v.instant == instant and v.state == "requested" and v.ok
    timeline = ".hoodie/timeline" if version >= 8 else ".hoodie"
    assert v.rows() == [
        {
            "instant": instant,
            "operation": "validate (requested)",
            "source": f"{timeline}/{instant}.compaction.requested",
            "target": None,
            "done": True,
            "error": None,
        }
    ]
    assert run_until(t.table, instant, "after-link")  # a running compaction's first link is in place: still valid
    assert [x.ok for x in validate(t.table, instant)] == [True]
    assert repair(t.table, instant, dry_run=False).actions == []


def test_a_log_file_appended_to_the_compacted_slice_is_repaired_by_unscheduling(engine: Engine, tmp_path: Path) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t")
    base_instant = t.table.compaction_plan(instant).operations[0].base_instant_time
    # a writer that planned its target before the plan existed lands in the old slice afterwards
    write_into_slice(t, base_instant, 9, rows(("z", 3, 1.0)), instant=str(int(instant) - 1))
    before = t.read()
    assert "z" in before
    (v,) = validate(t.table, instant)
    assert [(f.check, f.fix) for f in v.findings] == [("unplanned_log", "unschedule")]
    assert v.findings[0].path.endswith(LogFileName(t.file_id or "", base_instant, 9).name)
    # `compaction run` would take the plan back itself (tests/compaction/test_write_conflicts.py); repair does it here

    dry = repair(t.table, instant, dry_run=True)
    assert dry.actions and not any(a.done for a in dry.actions)
    report = repair(t.table, instant, dry_run=False)
    assert [a.operation for a in report.actions] == [a.operation for a in dry.actions]
    assert [Path(a.target or "").name for a in report.actions if a.operation == "move_log_file"] == [
        LogFileName(t.file_id or "", base_instant, v).name
        for v in (10, 11)  # after the late file (9)
    ]
    assert t.table.timeline.instant(instant) is None
    assert t.read() == before
    assert validate(t.table) == []
    again = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10)))
    assert again.instant is not None, again.reason
    run_compaction(t.table, again.instant)
    assert t.read() == before


@pytest.mark.parametrize("version", VERSIONS)
def test_a_wrong_link_of_a_running_compaction_is_deleted_and_made_again_by_the_run(
    engine: Engine, tmp_path: Path, version: int
) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t", version=version)
    before = t.read()
    assert run_until(t.table, instant, "after-link")
    op = t.table.compaction_plan(instant).operations[0]
    link = Path(t.path, t.partition, op.symlink_operations[0].symlink)
    assert link.is_symlink()
    link.unlink()
    link.symlink_to(op.symlink_operations[1].target)  # points at the wrong file
    (v,) = validate(t.table, instant)
    assert [(f.check, f.fix) for f in v.findings] == [("link", "delete_link")]
    assert "not at its target" in v.findings[0].problem
    report = repair(t.table, instant, dry_run=False)
    assert [(a.operation, a.done) for a in report.actions] == [("delete_link", True)]
    assert validate(t.table, instant)[0].ok
    run_compaction(t.table, instant)
    assert os.readlink(link) == op.symlink_operations[0].target
    assert t.read() == before


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("mode", ["symlink", "copy"])
def test_a_lost_or_changed_link_of_a_completed_compaction_is_made_again(
    engine: Engine, tmp_path: Path, mode: str, version: int
) -> None:
    t = CoreTable(tmp_path / "t", version=version)
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    t.write(rows(("a", 5, 2.0)))
    t.write(rows(("b", 50, 2.0)))  # linked
    t.write(rows(("c", 60, 1.0)))  # linked
    done = t.compact(engine, at(10), mode=mode)
    before = t.read()
    op = t.table.compaction_plan(done).operations[0]
    first, second = (Path(t.path, t.partition, s.symlink) for s in op.symlink_operations)
    first.unlink()  # lost
    if mode == "copy":
        second.write_bytes(second.read_bytes()[:-3])  # changed
    assert t.read() != before
    (v,) = validate(t.table, done)
    assert v.state == "completed"
    assert [(Path(f.path).name, f.fix) for f in v.findings] == [(first.name, "relink"), (second.name, "relink")][
        : 2 if mode == "copy" else 1
    ]
    report = repair(t.table, done, dry_run=False)
    assert {a.operation for a in report.actions} == {"relink"} and all(a.done for a in report.actions)
    assert validate(t.table, done)[0].ok
    assert t.read() == before
    assert hudi_rs_read(t.path, "snapshot") == before
    assert first.is_symlink() == (mode == "symlink")


@pytest.mark.parametrize("version", VERSIONS)
def test_lost_files_are_reported_not_repaired(engine: Engine, tmp_path: Path, version: int) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t", version=version)
    op = t.table.compaction_plan(instant).operations[0]
    Path(t.path, t.partition, op.delta_file_paths[0]).unlink()
    (v,) = validate(t.table, instant)
    assert [(f.check, f.fix) for f in v.findings] == [("input_file", None)]
    files = data_files(t.path)
    report = repair(t.table, instant, dry_run=False)
    assert report.actions == [] and [f.check for f in report.unrepaired] == ["input_file"]
    assert data_files(t.path) == files


def test_log_files_misplaced_after_an_unschedule_move_into_the_slice_before(engine: Engine, tmp_path: Path) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t")
    base_instant = t.table.compaction_plan(instant).operations[0].base_instant_time
    unschedule_compaction(t.table, instant, dry_run=False)
    # a writer that took its target while the plan existed writes into the plan's slice after it is gone
    write_into_slice(t, instant, 6, rows(("y", 90, 1.0), ("a", 91, 5.0)))
    assert sorted(t.read()) == ["a", "y"]  # readers stop at that slice: everything before it is skipped
    validations = validate(t.table)
    assert [(v.instant, v.state) for v in validations] == [(instant, "none")]
    assert [(f.check, Path(f.target or "").name) for f in validations[0].findings] == [
        ("misplaced_log", LogFileName(t.file_id or "", base_instant, 6).name)  # after B's five log files
    ]
    report = repair(t.table, instant, dry_run=False)
    assert [a.operation for a in report.actions] == ["move_log_file"]
    assert validate(t.table) == []
    after = t.read()
    assert after["y"] == (90, 1.0) and after["a"] == (91, 5.0) and {"b", "d", "e"} <= set(after)
    assert hudi_rs_read(t.path, "snapshot") == after


def test_a_pending_older_write_is_reported(engine: Engine, tmp_path: Path) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t")
    late = WriteClient(t.table, instant=str(int(instant) - 1))
    late.begin()  # started before the plan, still running
    (v,) = validate(t.table, instant)
    assert [(f.check, f.fix) for f in v.findings] == [("pending_write", None)]
    assert late.instant in v.findings[0].problem


def test_unknown_instants_are_refused(engine: Engine, tmp_path: Path) -> None:
    t, _ = pending_with_appends(engine, tmp_path / "t")
    with pytest.raises(HudiMetaError, match="no instant 20990101000000000"):
        validate(t.table, "20990101000000000")
    first = t.table.timeline.instants[0].requested_time
    with pytest.raises(HudiMetaError, match="is a deltacommit, not a compaction"):
        repair(t.table, first, dry_run=False)


@pytest.mark.parametrize("case", ["misplaced", "relink", "unschedule"])
def test_a_repair_stopped_after_any_step_is_finished_by_running_it_again(
    engine: Engine, tmp_path: Path, case: str
) -> None:
    source, instant = pending_with_appends(engine, tmp_path / "source")
    base_instant = source.table.compaction_plan(instant).operations[0].base_instant_time
    if case == "misplaced":
        unschedule_compaction(source.table, instant, dry_run=False)
        write_into_slice(source, instant, 6, rows(("y", 90, 1.0)))
        write_into_slice(source, instant, 7, rows(("y", 92, 2.0)))
    elif case == "relink":
        assert run_until(source.table, instant, "after-link")
        run_compaction(source.table, instant)
        for s in source.table.compaction_plan(instant).operations[0].symlink_operations:
            Path(source.path, source.partition, s.symlink).unlink()
    else:
        assert run_until(source.table, instant, "after-base-file")  # a run stopped before the late file came
        write_into_slice(source, base_instant, 9, rows(("z", 3, 1.0)), instant=str(int(instant) - 1))
    steps = stopped_at_each_step_then_finished(source, tmp_path, lambda table: repair(table, instant, dry_run=False))
    assert steps >= 2 and validate(open_core(tmp_path / "reference").table) == []


def test_a_writer_file_at_a_lost_link_name_is_reported_never_replaced(engine: Engine, tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    t.write(rows(("a", 5, 2.0)))
    t.write(rows(("b", 50, 2.0)))  # linked (version 2)
    t.write(rows(("c", 60, 1.0)))  # linked (version 3)
    done = t.compact(engine, at(10))
    last = Path(t.path, t.partition, t.table.compaction_plan(done).operations[0].symlink_operations[-1].symlink)
    last.unlink()  # lost
    writer = t.write(rows(("d", 70, 1.0)))  # a writer takes the free name
    assert Path(writer.stats[0].path).name == last.name and not last.is_symlink()
    (v,) = validate(t.table, done)
    assert [(f.check, f.fix) for f in v.findings] == [("link", None)]
    assert f"holds blocks of {writer.instant}" in v.findings[0].problem
    content = last.read_bytes()
    report = repair(t.table, done, dry_run=False)
    assert report.actions == [] and [f.check for f in report.unrepaired] == ["link"]
    assert last.read_bytes() == content and "d" in t.read()


@pytest.mark.parametrize("version", [8, 9])
def test_a_1x_write_requested_before_the_plan_is_repaired_by_unscheduling(
    engine: Engine, tmp_path: Path, version: int
) -> None:
    """Versions 8 and 9: a writer without our lock requests its delta commit before compaction C and completes it
    after C was planned. Its log file joins slice C by its completion time and sorts before C's links
    (docs/hudi-1x.md 4.3): validate names it, repair unschedules C, and as a 1.x log file names its own delta commit
    nothing moves; every read is as before, and the table compacts again."""
    t, instant = pending_with_appends(engine, tmp_path / "t", version=version)
    late = WriteClient(t.table, instant=str(int(instant) - 1))  # requested before C, unknown to the scheduler
    late.begin()
    assert t.file_id is not None
    late.append_log(t.partition, t.file_id, rows(("z", 3, 1.0)))
    foreign_commit(late)
    before = t.read()
    assert "z" in before and before == hudi_rs_read(t.path, "snapshot")
    (v,) = validate(t.table, instant)
    assert [f.fix for f in v.findings] == ["unschedule"], v.findings
    assert v.findings[0].path.endswith(LogFileName(t.file_id, late.instant, 1).name)
    files = data_files(t.path)
    report = repair(t.table, instant, dry_run=False)
    assert all(a.done for a in report.actions) and "move_log_file" not in {a.operation for a in report.actions}
    assert t.table.timeline.instant(instant) is None
    assert data_files(t.path) == files  # nothing to move on 1.x
    assert t.read() == before == hudi_rs_read(t.path, "snapshot")
    assert validate(t.table) == []
    again = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10)))
    assert again.instant is not None, again.reason
    run_compaction(t.table, again.instant)
    assert t.read() == before == hudi_rs_read(t.path, "snapshot")
