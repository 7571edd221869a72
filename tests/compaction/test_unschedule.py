"""`compaction unschedule` (issue 10 item 2): a plan with log files appended into its slice is taken back so that
our reader and hudi-rs read the same snapshot, a new schedule plans the table again, and a kill at any point
(of the run before, or of the unschedule itself) is finished by running the unschedule again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.run import CRASH_POINTS, run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.undo import CRASH_AT_ENV
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.errors import HudiMetaError
from hudi_meta.format.file_names import LogFileName
from hudi_meta.format.links import LinkMode, carry_log_name
from hudi_meta.format.table_service_metadata import RollbackMetadata
from hudi_meta.timeline.instant import Action
from hudi_meta.write.file_actions import FileAction
from tests.compaction.core import (
    DEFAULT_PAYLOAD,
    EVENT_TIME_PAYLOAD,
    OVERWRITE_PAYLOAD,
    CoreTable,
    at,
    hudi_rs_read,
    rows,
)
from tests.compaction.undo_helpers import (
    copy_table,
    count_steps,
    data_files,
    leftovers,
    open_core,
    pending_with_appends,
    run_until,
    stopped_at_each_step_then_finished,
    timeline_files,
)


@pytest.mark.parametrize(
    ("payload", "mode"),
    [(DEFAULT_PAYLOAD, "symlink"), (OVERWRITE_PAYLOAD, "copy"), (EVENT_TIME_PAYLOAD, "symlink")],
)
def test_appended_log_files_move_back_and_the_table_reads_the_same(
    engine: Engine, tmp_path: Path, payload: str, mode: str
) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t", payload, mode)
    never, _ = pending_with_appends(None, tmp_path / "never", payload)  # the same writes, never compacted
    stock = hudi_rs_read(never.path, "snapshot")  # what hudi-rs reads of them (its merge rules are its own)
    before, ro = t.read(), t.read("ro")
    assert never.read() == before
    assert before["a"] == (60, 3.0) and "c" not in before  # the appended and the linked files count
    plan = t.table.compaction_plan(instant)
    base_instant = plan.operations[0].base_instant_time

    report = unschedule_compaction(t.table, instant, dry_run=False)

    assert report.rollback_instant is None  # nothing ran: no rollback instant, as Java's unschedule
    moves = [(a.path, a.target) for a in report.actions if a.operation == "move_log_file"]
    assert [LogFileName.parse(Path(s).name).version for s, _ in moves] == [4, 5]  # after 1 (carry) and 2, 3 (links)
    assert [LogFileName.parse(Path(d or "").name) for _, d in moves] == [
        LogFileName(t.file_id or "", base_instant, v)
        for v in (4, 5)  # after L1..L3, in their order
    ]
    assert all(a.done and a.error is None for a in report.actions)
    assert t.table.timeline.instant(instant) is None
    assert not [f for f in data_files(t.path) if instant in f]
    assert leftovers(t.path) == []
    assert t.read() == before
    assert t.read("ro") == ro
    assert hudi_rs_read(t.path, "snapshot") == stock
    assert hudi_rs_read(t.path, "ro") == ro

    again = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10), mode=LinkMode(mode)))
    assert again.instant is not None and again.plan is not None, again.reason
    op = again.plan.operations[0]
    # the moved A2 holds e at 7 s (<= T): every log file of the slice, the moved ones too, is compacted now
    assert op.base_instant_time == base_instant and len(op.delta_file_paths) == 5 and not op.symlink_operations
    run_compaction(t.table, again.instant)
    assert t.read() == before
    assert hudi_rs_read(t.path, "ro") == before  # every log file merged: the base file is the snapshot


def test_a_dry_run_writes_nothing_and_reports_the_same_steps(engine: Engine, tmp_path: Path) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t", mode=LinkMode.COPY)
    assert run_until(t.table, instant, "after-link")  # a base file, a carry log (maybe) and one copy exist
    files, timeline = data_files(t.path), timeline_files(t.path)
    dry = unschedule_compaction(t.table, instant, dry_run=True)
    assert data_files(t.path) == files and timeline_files(t.path) == timeline
    assert dry.actions and not any(a.done for a in dry.actions)
    done = unschedule_compaction(t.table, instant, dry_run=False)

    def steps(actions: list[FileAction]) -> list[tuple[str, str, str | None]]:  # the rollback's time is new
        return [
            (a.operation, Path(a.path).name[17:] if a.operation == "write_instant" else a.path, a.target)
            for a in actions
        ]

    assert steps(done.actions) == steps(dry.actions)
    ops = [a.operation for a in done.actions]
    assert ops[0] == "write_instant" and ops[-1] == "write_instant"  # a rollback instant around the steps
    assert {"delete_base_file", "delete_copy", "move_log_file", "delete_instant"} <= set(ops)


@pytest.mark.parametrize("step", CRASH_POINTS)
def test_unschedule_after_a_run_killed_at_each_crash_point(engine: Engine, tmp_path: Path, step: str) -> None:
    source, instant = pending_with_appends(engine, tmp_path / "source")
    before = source.read()
    reference = open_core(copy_table(source.path, tmp_path / "reference"))
    unschedule_compaction(reference.table, instant, dry_run=False)

    crashed = open_core(copy_table(source.path, tmp_path / "crashed"))
    assert run_until(crashed.table, instant, step)
    assert crashed.read() == before
    report = unschedule_compaction(crashed.table, instant, dry_run=False)

    assert report.rollback_instant is not None  # the run had started: a rollback instant records it
    assert data_files(crashed.path) == data_files(reference.path)
    assert timeline_files(crashed.path) == sorted(
        [*timeline_files(reference.path), "R.rollback", "R.rollback.inflight", "R.rollback.requested"]
    )
    meta = RollbackMetadata.from_bytes(
        Path(crashed.path, ".hoodie", f"{report.rollback_instant}.rollback").read_bytes()
    )
    assert meta.commits_rollback == (instant,) and meta.instants_rollback[0].action == Action.COMPACTION
    deleted = {f for p in meta.partition_metadata.values() for f in p.success_delete_files}
    assert any(f.endswith(f"_{instant}.parquet") for f in deleted)
    assert crashed.read() == before
    assert hudi_rs_read(crashed.path, "snapshot") == before
    assert leftovers(crashed.path) == []


def test_a_writer_appending_after_a_killed_run_loses_nothing(engine: Engine, tmp_path: Path) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t")
    assert run_until(t.table, instant, "after-link")
    t.write(rows(("f", 70, 1.0), ("a", 71, 4.0)))  # lands in the running compaction's slice
    before = t.read()
    assert before["a"] == (71, 4.0)
    unschedule_compaction(t.table, instant, dry_run=False)
    assert t.read() == before
    assert hudi_rs_read(t.path, "snapshot") == before


@pytest.mark.parametrize("ran", [False, True], ids=["requested", "inflight"])
def test_stopped_after_any_step_then_run_again(engine: Engine, tmp_path: Path, ran: bool) -> None:
    source, instant = pending_with_appends(engine, tmp_path / "source")
    if ran:
        assert run_until(source.table, instant, "before-commit")  # every file of the run exists
    before = source.read()
    # readers see the same records at every point; the last step (the plan's requested file deleted) is final
    steps = stopped_at_each_step_then_finished(
        source, tmp_path, lambda table: unschedule_compaction(table, instant, dry_run=False), reads_while_stopped=before
    )
    assert steps >= (12 if ran else 6)
    assert source.read() == before


@pytest.mark.slow
def test_kill_9_mid_unschedule_then_run_again(engine: Engine, tmp_path: Path) -> None:
    source, instant = pending_with_appends(engine, tmp_path / "source")
    assert run_until(source.table, instant, "after-link")
    before = source.read()
    reference = open_core(copy_table(source.path, tmp_path / "reference"))
    steps = count_steps(lambda: unschedule_compaction(reference.table, instant, dry_run=False))
    for n in sorted({1, steps // 2, steps - 1}):
        t = copy_table(source.path, tmp_path / f"killed-{n}")
        args = [sys.executable, "-m", "hudi_meta.cli.main", "compaction", "unschedule", str(t), instant, "--execute"]
        env = {**os.environ, CRASH_AT_ENV: f"undo:{n}", "XDG_DATA_HOME": str(tmp_path / "data")}
        killed = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert open_core(t).read() == before
        env.pop(CRASH_AT_ENV)
        again = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
        assert again.returncode == 0, again.stderr
        assert data_files(t) == data_files(reference.path), n
        assert timeline_files(t) == timeline_files(reference.path), n
        assert open_core(t).read() == before


def test_refused_with_nothing_written(engine: Engine, tmp_path: Path) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t")
    files, timeline = data_files(t.path), timeline_files(t.path)
    writing = t.write(rows(("z", 80, 1.0)), commit=False)  # a writer is running
    files, timeline = data_files(t.path), timeline_files(t.path)
    with pytest.raises(HudiMetaError, match=f"deltacommit {writing.instant} is still inflight.*stop the writers"):
        unschedule_compaction(t.table, instant, dry_run=False)
    with pytest.raises(HudiMetaError, match="no instant 20990101000000000"):
        unschedule_compaction(t.table, "20990101000000000", dry_run=False)
    first = t.table.timeline.instants[0].requested_time
    with pytest.raises(HudiMetaError, match=f"{first} is a deltacommit, not a compaction"):
        unschedule_compaction(t.table, first, dry_run=False)
    assert data_files(t.path) == files and timeline_files(t.path) == timeline
    writing.commit()
    unschedule_compaction(t.table, instant, dry_run=False)
    done = t.compact(engine, at(10))
    with pytest.raises(HudiMetaError, match=f"compaction {done} is completed.*roll it back as a completed compaction"):
        unschedule_compaction(t.table, done, dry_run=False)


def test_an_exact_plan_that_ran_takes_its_carry_log_back(engine: Engine, tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    t.write(rows(("a", 5, 2.0), ("b", 20, 2.0)))  # compacted; b's update is after T: exact mode carries it
    t.write(rows(("c", 50, 1.0)))  # linked
    result = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10), exact=True))
    assert result.instant is not None
    t.write(rows(("d", 60, 1.0), ("a", 61, 3.0)))  # appended (b's carried version stays b's newest)
    assert run_until(t.table, result.instant, "before-commit")
    assert t.file_id is not None
    carry = Path(t.path, t.partition, carry_log_name(t.file_id, result.instant))
    assert carry.exists()  # the run wrote the carry log, a base file and the link
    before = t.read()
    report = unschedule_compaction(t.table, result.instant, dry_run=False)
    assert {"delete_carry_log", "delete_base_file", "delete_link"} <= {a.operation for a in report.actions}
    assert not carry.exists()
    assert t.read() == before
    assert hudi_rs_read(t.path, "snapshot") == before
    done = t.compact(engine, at(10), exact=True)
    assert t.read() == before
    assert t.read("ro") == {"a": (5, 2.0), "b": (2, 1.0)}  # as of T
    assert done


def test_a_damaged_copy_is_deleted_not_moved(engine: Engine, tmp_path: Path) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t", mode=LinkMode.COPY)
    assert run_until(t.table, instant, "before-commit")  # both copies made
    op = t.table.compaction_plan(instant).operations[0]
    damaged = Path(t.path, t.partition, op.symlink_operations[0].symlink)
    damaged.write_bytes(damaged.read_bytes()[:-5])  # a copy cut short
    before = t.read()
    report = unschedule_compaction(t.table, instant, dry_run=False)
    assert ("delete_copy", f"{t.partition}/{damaged.name}") in [(a.operation, a.path) for a in report.actions]
    assert t.read() == before
