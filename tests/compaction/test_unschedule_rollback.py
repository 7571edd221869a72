"""`rollback TABLE INSTANT` of compactions (issue 10 item 2): an inflight compaction is rolled back with a Hudi
rollback instant; a completed one only when asked explicitly, which moves the published threshold back to the
compaction before it, and only when that loses and changes no record."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.admin import published_threshold
from hudi_meta.compaction.rollback import rollback_compaction
from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.errors import CompletedCompactionError, HudiMetaError
from hudi_meta.format.links import THRESHOLD_KEY, carry_log_name
from hudi_meta.format.table_service_metadata import RollbackMetadata, RollbackPlan
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.queries import plan_rows, timeline_rows
from hudi_meta.index.registry import table_id_of
from hudi_meta.timeline.instant import Action
from tests.compaction.core import DEFAULT_PAYLOAD, OVERWRITE_PAYLOAD, CoreTable, at, hudi_rs_read, rows
from tests.compaction.undo_helpers import (
    data_files,
    leftovers,
    open_core,
    pending_with_appends,
    run_until,
    stopped_at_each_step_then_finished,
    timeline_files,
)


def two_compactions(engine: Engine, path: Path, payload: str = DEFAULT_PAYLOAD) -> tuple[CoreTable, str, str]:
    """C1 (T = 10 s), writes into its slice, then C2 (T = 30 s) on the same file group, the newest commit."""
    t = CoreTable(path, payload)
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0), ("c", 3, 1.0)))
    t.write(rows(("a", 5, 2.0), ("e", 6, 1.0)))  # compacted by C1
    t.write(rows(("b", 50, 2.0)))  # linked by C1
    c1 = t.compact(engine, at(10))
    t.write(rows(("a", 20, 3.0), ("d", 61, 1.0)))  # into C1's slice, after C1 completed
    t.write(None, deletes=["c"])
    c2 = t.compact(engine, at(30))
    return t, c1, c2


def test_an_inflight_compaction_is_rolled_back_with_a_rollback_instant(engine: Engine, tmp_path: Path) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t")
    assert run_until(t.table, instant, "before-commit")
    before = t.read()
    report = rollback_compaction(t.table, instant, dry_run=False)
    assert t.table.timeline.instant(instant) is None
    rollback = t.table.timeline.instant(report.instant)
    assert rollback is not None and rollback.is_completed and rollback.action == Action.ROLLBACK
    plan = RollbackPlan.from_bytes(t.table.timeline.requested_bytes(report.instant, Action.ROLLBACK))
    assert plan.instant_to_rollback is not None and plan.instant_to_rollback.commit_time == instant
    meta = RollbackMetadata.from_bytes(Path(t.path, ".hoodie", f"{report.instant}.rollback").read_bytes())
    deleted = sorted(f for p in meta.partition_metadata.values() for f in p.success_delete_files)
    assert deleted == sorted(
        a.path
        for a in report.actions
        if a.operation.startswith("delete_") and "/" in a.path and not a.path.startswith(".hoodie")
    )
    assert meta.total_files_deleted == len(deleted) >= 3  # the base file and the two links
    assert t.read() == before
    assert hudi_rs_read(t.path, "snapshot") == before
    assert leftovers(t.path) == []


def test_a_requested_compaction_is_unscheduled_not_rolled_back(engine: Engine, tmp_path: Path) -> None:
    t, instant = pending_with_appends(engine, tmp_path / "t")
    files, timeline = data_files(t.path), timeline_files(t.path)
    with pytest.raises(HudiMetaError, match="only requested.*unschedule it instead"):
        rollback_compaction(t.table, instant, dry_run=False)
    assert data_files(t.path) == files and timeline_files(t.path) == timeline


def test_a_completed_compaction_needs_the_flag_and_moves_the_threshold_back(engine: Engine, tmp_path: Path) -> None:
    t, c1, c2 = two_compactions(engine, tmp_path / "t")
    before = t.read()
    tl = t.table.timeline
    first = int(tl.commit_metadata(tl.instant(c1)).extra_metadata[THRESHOLD_KEY])  # type: ignore[arg-type]
    assert published_threshold(tl) == (c2, int(tl.commit_metadata(tl.instant(c2)).extra_metadata[THRESHOLD_KEY]))  # type: ignore[arg-type]
    files, timeline = data_files(t.path), timeline_files(t.path)
    with pytest.raises(CompletedCompactionError, match="pass completed_compaction"):
        rollback_compaction(t.table, c2, dry_run=False)
    assert data_files(t.path) == files and timeline_files(t.path) == timeline  # nothing written

    with pytest.raises(HudiMetaError, match=f"compaction {c2} compacted file group .* take {c2} back first"):
        rollback_compaction(t.table, c1, completed=True, dry_run=False)

    report = rollback_compaction(t.table, c2, completed=True, dry_run=False)
    assert report.actions[1].operation == "delete_instant" and report.actions[1].path == f".hoodie/{c2}.commit"
    assert published_threshold(t.table.timeline) == (c1, first)  # C1's commit publishes again
    assert t.read() == before
    assert t.read("ro") == {"a": (5, 2.0), "b": (2, 1.0), "c": (3, 1.0), "e": (6, 1.0)}  # C1's base file again
    assert hudi_rs_read(t.path, "snapshot") == before
    assert hudi_rs_read(t.path, "ro") == t.read("ro")
    meta = RollbackMetadata.from_bytes(Path(t.path, ".hoodie", f"{report.instant}.rollback").read_bytes())
    assert meta.instants_rollback[0].commit_time == c2 and meta.instants_rollback[0].action == Action.COMMIT

    # the store follows: C2 and its plan leave it, C1's threshold is the newest one it holds
    Indexer(engine, t.table).run()
    table_id = table_id_of(engine, t.table.base_path)
    assert table_id is not None
    instants = {r["requested_time"]: r for r in timeline_rows(engine, table_id)}
    assert c2 not in instants and instants[c1]["summary"]["threshold"] == str(first)
    assert [p["instant"] for p in plan_rows(engine, table_id)] == [c1]

    # C1 is the newest compaction now, but writes after it appended to its slice: it stays (Java would need
    # those commits rolled back first), and the table plans again
    with pytest.raises(HudiMetaError, match=f"writes after compaction {c1} appended to its slice"):
        rollback_compaction(t.table, c1, completed=True, dry_run=False)
    assert published_threshold(t.table.timeline) == (c1, first)
    again = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(30)))
    assert again.instant is not None, again.reason
    run_compaction(t.table, again.instant)
    assert t.read() == before


def test_a_completed_compaction_whose_inputs_were_cleaned_is_refused(engine: Engine, tmp_path: Path) -> None:
    t, c1, _ = two_compactions(engine, tmp_path / "t")
    t2 = CoreTable(tmp_path / "t2")
    t2.write(rows(("a", 1, 1.0)))
    t2.write(rows(("a", 2, 2.0)))
    done = t2.compact(engine)
    compacted = t2.table.compaction_plan(done).operations[0].delta_file_paths[0]
    Path(t2.path, t2.partition, compacted).unlink()  # a cleaner removed the old slice's log file
    with pytest.raises(HudiMetaError, match=f"{compacted} of slice .* is gone .*would lose its records"):
        rollback_compaction(t2.table, done, completed=True, dry_run=False)


def test_a_completed_compaction_is_kept_once_a_later_write_appended_to_its_slice(
    engine: Engine, tmp_path: Path
) -> None:
    """Rule (as Java: later commits are rolled back first): a later write's stats name the compaction's base file
    and log file names, so moving that write back under other names would leave stock readers (hudi-rs) looking
    for files that are gone. Found by the model test: hudi-rs failed with "Object ... not found"."""
    t = CoreTable(tmp_path / "t", OVERWRITE_PAYLOAD)
    t.write(rows(("a", 5, 1.0)))
    t.write(rows(("a", 3, 2.0)))
    done = t.compact(engine, at(10))
    t.write(rows(("a", 2, 3.0)))
    before = t.read()
    files, timeline = data_files(t.path), timeline_files(t.path)
    with pytest.raises(HudiMetaError, match=f"writes after compaction {done} appended to its slice"):
        rollback_compaction(t.table, done, completed=True, dry_run=False)
    assert data_files(t.path) == files and timeline_files(t.path) == timeline
    assert t.read() == before == hudi_rs_read(t.path, "snapshot")


def test_a_completed_rollback_stopped_after_any_step_is_finished_by_running_it_again(
    engine: Engine, tmp_path: Path
) -> None:
    source, _, c2 = two_compactions(engine, tmp_path / "source")
    before = source.read()
    steps = stopped_at_each_step_then_finished(
        source,
        tmp_path,
        lambda table: rollback_compaction(table, c2, completed=True, dry_run=False),
        reads_while_stopped=before,
        through_last=True,
    )
    assert steps >= 5  # rollback instant, commit, base file, links, plan files
    assert open_core(tmp_path / "reference").read() == before


def test_a_write_that_took_an_unused_carry_log_name_keeps_the_compaction(engine: Engine, tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    t.write(rows(("b", 2, 1.0)))
    done = t.compact(engine, at(10))  # nothing to carry: version 1 of its slice stays free
    assert t.file_id is not None
    name = Path(t.write(rows(("c", 3, 1.0))).stats[0].path).name
    assert name == carry_log_name(t.file_id, done)  # after the commit a writer takes it
    before, files = t.read(), data_files(t.path)
    with pytest.raises(HudiMetaError, match=f"appended to its slice .*{name}"):
        rollback_compaction(t.table, done, completed=True, dry_run=False)
    assert data_files(t.path) == files  # the writer's file is neither deleted nor moved
    assert t.read() == before == hudi_rs_read(t.path, "snapshot")
