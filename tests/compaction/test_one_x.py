"""Event-time compaction on Hudi 1.x tables (versions 8 and 9), tested from the rules in docs/hudi-1x.md section 4
and docs/event-time.md, with answers worked out by hand and hudi-rs reading every result:

- the plan is `<C>.compaction.requested` (Avro, every operation with TOTAL_LOG_FILES_SIZE), the inflight file is
  empty, the commit is `<C>_<c>.commit` (Avro, compacted, operation COMPACT) with `c` after every time before it;
- the base file holds every record with event time <= T; later log files stay visible in the new slice as links
  named by the compaction instant (`.F_C.log.i_tok`), which completion-time slicing puts in slice C;
- snapshot reads are unchanged by scheduling, running and taking back a compaction;
- a write while the compaction is pending is named by its own delta commit and completes into slice C.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.check.files import check_files
from hudi_meta.clean.run import run_clean
from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.strategies import Strategy
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.errors import CleanedDataError, PlanTakenBackError
from hudi_meta.format.commit_metadata import CommitMetadata
from hudi_meta.format.file_names import LogFileName
from hudi_meta.format.table_service_metadata import CleanerPlan, CleanMetadata, CompactionPlan
from hudi_meta.table.table import Query
from hudi_meta.timeline.instant import Action, Instant, State
from hudi_meta.write.clean_plan import KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, CleanPolicy
from hudi_meta.write.writer import WriteClient
from tests.compaction.core import (
    CoreTable,
    TwoRegions,
    at,
    by_id,
    compact_three_times,
    foreign_commit,
    hudi_rs_read,
    rows,
)

VERSIONS = [8, 9]


def written(tmp_path: Path, version: int) -> CoreTable:
    """One file group: a base file (a, b, c at 10-30 s), then one log file per write: a at 40 s, b and d at 50 and
    60 s, c at 90 s."""
    t = CoreTable(tmp_path / "t", version=version)
    t.write(rows(("a", 10, 1.0), ("b", 20, 2.0), ("c", 30, 3.0)))
    t.write(rows(("a", 40, 1.1)))
    t.write(rows(("b", 50, 2.1), ("d", 60, 4.0)))
    t.write(rows(("c", 90, 3.1)))
    return t


def schedule(engine: Engine, t: CoreTable, threshold_s: int) -> str:
    request = ScheduleRequest(threshold_ms=at(threshold_s), strategy=Strategy.EVENT_TIME)
    result = schedule_compaction(engine, t.table, request)
    assert result.instant is not None, result.reason
    return result.instant


def timeline_names(t: CoreTable) -> list[str]:
    return sorted(p.name for p in (Path(t.path) / ".hoodie" / "timeline").iterdir() if p.is_file())


@pytest.mark.parametrize("version", VERSIONS)
def test_an_event_time_compaction_of_a_1x_table(engine: Engine, tmp_path: Path, version: int) -> None:
    t = written(tmp_path, version)
    snapshot = {"a": (40, 1.1), "b": (50, 2.1), "c": (90, 3.1), "d": (60, 4.0)}
    assert t.read() == snapshot == hudi_rs_read(t.path, "snapshot")
    instant = schedule(engine, t, 70)
    assert t.read() == snapshot == hudi_rs_read(t.path, "snapshot")  # a pending plan changes no read

    plan = CompactionPlan.from_bytes(
        (Path(t.path) / ".hoodie" / "timeline" / f"{instant}.compaction.requested").read_bytes()
    )
    (op,) = plan.operations
    assert len(op.delta_file_paths) == 2 and len(op.symlink_operations) == 1  # the 40 s and 50/60 s files merged
    assert op.metrics["TOTAL_LOG_FILES_SIZE"] > 0

    run_compaction(t.table, instant)
    # RO: every record with event time <= T = 70 s, merged; c's 90 s version stays in the linked log file
    assert t.read("ro") == {"a": (40, 1.1), "b": (50, 2.1), "c": (30, 3.0), "d": (60, 4.0)}
    assert t.read("ro") == hudi_rs_read(t.path, "ro")
    assert t.read() == snapshot == hudi_rs_read(t.path, "snapshot")

    names = timeline_names(t)
    assert f"{instant}.compaction.inflight" in names
    assert (Path(t.path) / ".hoodie" / "timeline" / f"{instant}.compaction.inflight").read_bytes() == b""
    done = next(i for n in names if (i := Instant.parse(n)) and i.requested_time == instant and i.is_completed)
    assert done.action == Action.COMMIT and done.completion_time is not None
    assert done.completion_time > max(x for n in names if n != done.file_name(2) for x in n.split(".")[0].split("_"))
    content = (Path(t.path) / ".hoodie" / "timeline" / done.file_name(2)).read_bytes()
    assert content[:4] == b"Obj\x01"
    metadata = CommitMetadata.from_bytes(content)
    assert metadata.compacted and metadata.operation_type == "COMPACT"

    (link,) = [lf for fg in t.table.file_groups() for s in fg.ordered_slices() for lf in s.log_files if lf.link_target]
    assert LogFileName.parse(link.name).instant == instant  # named by the compaction, so it belongs to slice C
    newest = t.table.file_groups()[0].ordered_slices()[-1]
    assert newest.base_instant == instant and [lf.name for lf in newest.log_files] == [link.name]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_write_during_a_pending_compaction_joins_its_slice(engine: Engine, tmp_path: Path, version: int) -> None:
    t = written(tmp_path, version)
    instant = schedule(engine, t, 70)
    w = t.write(rows(("e", 100, 5.0), ("a", 110, 1.2)))  # named by its own delta commit, completed after C
    assert w.instant > instant
    expected = {"a": (110, 1.2), "b": (50, 2.1), "c": (90, 3.1), "d": (60, 4.0), "e": (100, 5.0)}
    assert t.read() == expected == hudi_rs_read(t.path, "snapshot")
    run_compaction(t.table, instant)
    assert t.read() == expected == hudi_rs_read(t.path, "snapshot")
    newest = t.table.file_groups()[0].ordered_slices()[-1]
    assert newest.base_instant == instant
    assert {LogFileName.parse(lf.name).instant for lf in newest.log_files} == {instant, w.instant}
    assert t.read("ro") == {"a": (40, 1.1), "b": (50, 2.1), "c": (30, 3.0), "d": (60, 4.0)}
    assert t.read("ro") == hudi_rs_read(t.path, "ro")


@pytest.mark.parametrize("version", VERSIONS)
def test_taking_a_pending_1x_compaction_back_moves_nothing(engine: Engine, tmp_path: Path, version: int) -> None:
    """On 1.x a log file belongs to the slice its write completed in: once the plan is gone the files written into
    slice C fall back into the slice before it, without being renamed (docs/hudi-1x.md section 4)."""
    t = written(tmp_path, version)
    instant = schedule(engine, t, 70)
    w = t.write(rows(("e", 100, 5.0)))
    files = sorted(p.name for p in Path(t.path, "region=eu").iterdir())
    report = unschedule_compaction(t.table, instant, dry_run=False)
    assert not [a for a in report.actions if a.operation == "move_log_file"]
    assert sorted(p.name for p in Path(t.path, "region=eu").iterdir()) == files
    assert not [n for n in timeline_names(t) if n.startswith(instant)]
    expected = {"a": (40, 1.1), "b": (50, 2.1), "c": (90, 3.1), "d": (60, 4.0), "e": (100, 5.0)}
    assert t.read() == expected == hudi_rs_read(t.path, "snapshot")
    assert [s.base_instant for s in t.table.file_groups()[0].ordered_slices()] == [
        t.table.timeline.instants[0].requested_time
    ]
    assert w.instant in {
        LogFileName.parse(lf.name).instant for lf in t.table.file_groups()[0].ordered_slices()[0].log_files
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_an_exact_compaction_of_a_1x_table(engine: Engine, tmp_path: Path, version: int) -> None:
    """Exact mode: RO holds all data before T and nothing after it; the versions after T go to the carry log."""
    t = written(tmp_path, version)
    request = ScheduleRequest(threshold_ms=at(45), strategy=Strategy.EVENT_TIME, exact=True)
    result = schedule_compaction(engine, t.table, request)
    assert result.instant is not None, result.reason
    run_compaction(t.table, result.instant)
    assert t.read("ro") == {"a": (40, 1.1), "b": (20, 2.0), "c": (30, 3.0)}
    assert t.read("ro") == hudi_rs_read(t.path, "ro")
    assert t.read() == {"a": (40, 1.1), "b": (50, 2.1), "c": (90, 3.1), "d": (60, 4.0)}
    assert t.read() == hudi_rs_read(t.path, "snapshot")
    assert t.table.timeline.instant(result.instant) == Instant(
        result.instant, Action.COMMIT, State.COMPLETED, t.table.timeline.completion_time(result.instant)
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_a_foreign_write_requested_before_the_plan_takes_it_back(engine: Engine, tmp_path: Path, version: int) -> None:
    """A writer that does not share the lock (Java or Flink with non-blocking concurrency control) requested its
    delta commit before compaction C and completed it after C was planned: by the completion-time rule its log file
    is in slice C, and as it is named by an instant before C it sorts before C's links, whose records are older.
    The run takes the plan back (nothing lost, docs/hudi-1x.md section 4); `check` says so before any run."""
    t = written(tmp_path, version)
    instant = schedule(engine, t, 70)
    late = WriteClient(t.table, instant=str(int(instant) - 1))  # requested before C, unknown to the scheduler
    late.begin()
    assert t.file_id is not None
    late.append_log(t.partition, t.file_id, rows(("c", 80, 3.5), ("z", 75, 9.0)))
    foreign_commit(late)
    assert "plan-order-broken" in {f.kind for f in check_files(t.table)}
    with pytest.raises(PlanTakenBackError, match=f"compaction {instant} was taken back, nothing lost"):
        run_compaction(t.table, instant)
    assert not t.table.timeline.pending_compactions()
    # Java's log order (requested time): the late write (c at 80 s) merges before the 90 s write; event-time
    # ordering keeps c at 90 s either way
    expected = {"a": (40, 1.1), "b": (50, 2.1), "c": (90, 3.1), "d": (60, 4.0), "z": (75, 9.0)}
    assert t.read() == expected == hudi_rs_read(t.path, "snapshot")
    again = schedule(engine, t, 70)
    run_compaction(t.table, again)
    assert t.read() == expected == hudi_rs_read(t.path, "snapshot")
    # merged: the 40 s and 50/60 s files; linked: the 90 s file and the late one (75/80 s), both after T
    assert t.read("ro") == {"a": (40, 1.1), "b": (50, 2.1), "c": (30, 3.0), "d": (60, 4.0)}
    assert t.read("ro") == hudi_rs_read(t.path, "ro")
    assert not check_files(t.table)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    "policy",
    [
        CleanPolicy(KEEP_LATEST_COMMITS, commits_retained=2),
        CleanPolicy(KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1),
    ],
    ids=["commits", "file-versions"],
)
def test_a_clean_of_a_1x_table_compacted_three_times(
    engine: Engine, tmp_path: Path, version: int, policy: CleanPolicy
) -> None:
    """Clean keeps every read (ours and hudi-rs) and every link target; its instant is written in layout 2: the
    Avro plan, an empty inflight file, `<t>_<c>.clean` (docs/hudi-1x.md section 5)."""
    t = TwoRegions(tmp_path / "t", version=version)
    compact_three_times(t, engine)
    table = t.table
    before = {q: t.read(q) for q in ("snapshot", "ro")}
    for q, rows_before in before.items():
        assert hudi_rs_read(t.path, q) == rows_before, q
    outcome = run_clean(engine, table, policy, dry_run=False)
    assert outcome.instant is not None and outcome.plan is not None and outcome.plan.deletions
    assert all(r.done and r.error is None for r in outcome.reports)
    for q, rows_before in before.items():
        assert t.read(q) == rows_before == hudi_rs_read(t.path, q), q
    assert not [p for p in Path(t.path).rglob("*") if p.is_symlink() and not p.exists()]
    timeline = Path(t.path) / ".hoodie" / "timeline"
    c = outcome.instant
    plan = CleanerPlan.from_bytes((timeline / f"{c}.clean.requested").read_bytes())
    assert plan.version == 2 and plan.file_paths_to_be_deleted_per_partition
    assert (timeline / f"{c}.clean.inflight").read_bytes() == b""
    (done,) = [p for p in timeline.iterdir() if p.name.startswith(f"{c}_") and p.name.endswith(".clean")]
    metadata = CleanMetadata.from_bytes(done.read_bytes())
    assert metadata.total_files_deleted == len(outcome.plan.deletions)
    # a 1.x log file does not name its slice: a read as of an instant before what the clean retained is refused
    retained = metadata.earliest_commit_to_retain or c
    first = t.table.timeline.instants[0].requested_time
    assert first < retained
    with pytest.raises(CleanedDataError, match=f"read as of {retained} or later"):
        t.table.read(Query("time-travel", as_of=first))
    assert by_id(t.table.read(Query("time-travel", as_of=retained))) is not None
