"""Strategies and plans as pure functions (hypothesis over random slices)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.compaction import triggers
from hudi_meta.compaction.plan import build_plan
from hudi_meta.compaction.plan_records import LogFileInfo, SliceInfo
from hudi_meta.compaction.strategies import (
    EventTimeBasedCompactionStrategy,
    LogFileSizeBasedCompactionStrategy,
    UnBoundedCompactionStrategy,
    achieved_threshold,
    plan_operations,
)
from hudi_meta.compaction.triggers import Trigger
from hudi_meta.format.file_names import LogFileName
from hudi_meta.format.table_service_metadata import CompactionPlan

B, C = "20260101000000000", "20260102000000000"


@st.composite
def slices(draw: st.DrawFn) -> SliceInfo:
    file_id = draw(st.sampled_from(["f1-0", "f2-0", "f3-0"])) + str(draw(st.integers(0, 99)))
    n = draw(st.integers(0, 8))
    mins = draw(st.lists(st.one_of(st.none(), st.integers(0, 100)), min_size=n, max_size=n))
    pending_from = draw(st.integers(0, n + 1))
    logs = tuple(
        LogFileInfo(LogFileName(file_id, B, v + 1, "1-0-1").name, v + 1, 100 * (v + 1), m, committed=v < pending_from)
        for v, m in enumerate(mins)
    )
    return SliceInfo("p", file_id, B, f"{file_id}_1-0-1_{B}.parquet", logs)


@given(slices(), st.integers(0, 100))
def test_event_time_prefix_rule(s: SliceInfo, threshold: int) -> None:
    to_compact, to_keep = EventTimeBasedCompactionStrategy(threshold_ms=threshold).filter_log_files(s)
    assert to_compact + to_keep == s.log_files  # a prefix and the rest, order kept
    assert all(f.committed for f in to_compact)
    committed = [f for f in s.log_files if f.committed]
    if len(committed) == len(s.log_files):
        # no log file older than T is left outside the merge
        assert all(f.min_event_time is None or f.min_event_time > threshold for f in to_keep)
    if to_compact:
        assert to_compact[-1].min_event_time is not None and to_compact[-1].min_event_time <= threshold


@given(st.lists(slices(), max_size=6, unique_by=lambda s: s.file_id), st.integers(0, 100), st.booleans())
def test_plan_links_follow_the_contract(all_slices: list[SliceInfo], threshold: int, exact: bool) -> None:
    strategy = EventTimeBasedCompactionStrategy(threshold_ms=threshold)
    ops = plan_operations(all_slices, strategy)
    assert all(op.to_compact for op in ops)
    plan = build_plan(ops, strategy, C, "symlink", exact)
    assert CompactionPlan.from_bytes(plan.to_bytes()) == plan
    for op, planned in zip(ops, plan.operations, strict=True):
        assert planned.delta_file_paths == tuple(f.name for f in op.to_compact)
        versions = [LogFileName.parse(s.symlink).version for s in planned.symlink_operations]
        assert versions == list(range(2, 2 + len(op.to_keep)))  # version 1 is the carry log's
        for link, kept in zip(planned.symlink_operations, op.to_keep, strict=True):
            parsed = LogFileName.parse(link.symlink)
            assert (parsed.file_id, parsed.instant) == (op.slice.file_id, C)
            assert parsed.write_token == LogFileName.parse(kept.name).write_token
            assert link.target == kept.physical
    assert plan.strategy is not None and plan.strategy.strategy_params["threshold"] == str(threshold)


def test_links_point_at_physical_files() -> None:
    link_from_before = LogFileInfo(f".f-0_{B}.log.1_1-0-1", 1, 10, 50, target=".f-0_20250101000000000.log.3_1-0-1")
    s = SliceInfo("p", "f-0", B, None, (LogFileInfo(f".f-0_{B}.log.2_1-0-1", 2, 10, 5), link_from_before))
    s = SliceInfo("p", "f-0", B, None, (s.log_files[0], link_from_before))
    plan = build_plan(
        plan_operations([s], EventTimeBasedCompactionStrategy(threshold_ms=10)),
        EventTimeBasedCompactionStrategy(threshold_ms=10),
        C,
    )
    assert plan.operations[0].symlink_operations[0].target == ".f-0_20250101000000000.log.3_1-0-1"


def test_whole_slice_strategies() -> None:
    logs = tuple(LogFileInfo(LogFileName("f-0", B, v, "1-0-1").name, v, 1000 * v, 0) for v in (1, 2, 3))
    s = SliceInfo("p", "f-0", B, None, logs)
    assert UnBoundedCompactionStrategy().filter_log_files(s) == (logs, ())
    assert plan_operations([s], LogFileSizeBasedCompactionStrategy(threshold_bytes=10_000)) == []
    assert len(plan_operations([s], LogFileSizeBasedCompactionStrategy(threshold_bytes=6_000))) == 1


def test_triggers() -> None:
    idle = triggers.TriggerFacts((), (), 3, None)
    busy = triggers.TriggerFacts(("20260101000000000",), (), 3, 10.0)
    assert triggers.decide(Trigger.EVENT_TIME, idle).allowed
    assert not triggers.decide(Trigger.EVENT_TIME, busy).allowed
    assert not triggers.decide(Trigger.NUM_COMMITS, idle, max_delta_commits=5).allowed
    assert triggers.decide(Trigger.NUM_COMMITS, idle, max_delta_commits=3).allowed
    assert triggers.decide(Trigger.TIME_ELAPSED, idle).allowed
    assert not triggers.decide(Trigger.TIME_ELAPSED, busy, max_delta_seconds=60).allowed


# ---- the threshold a plan records (issue 8, defect 7) ------------------------------------------------------


def _log(v: int, m: int | None, committed: bool = True, known: bool = True) -> LogFileInfo:
    return LogFileInfo(LogFileName("f", B, v, "1-0-1").name, v, 10, m, committed=committed, event_time_known=known)


def test_threshold_is_lowered_below_a_log_file_left_after_an_uncommitted_one() -> None:
    # L2 is uncommitted and cuts the prefix: L3 (min 5 <= T) stays un-merged, so T = 10 cannot hold
    s = SliceInfo("p", "f", B, None, (_log(1, 3), _log(2, None, committed=False), _log(3, 5)))
    strategy = EventTimeBasedCompactionStrategy(threshold_ms=10)
    ops = plan_operations([s], strategy)
    assert [f.name for f in ops[0].to_compact] == [s.log_files[0].name]
    assert achieved_threshold([s], ops, 10).threshold_ms == 4  # every record <= 4 is merged, 5 is not


def test_threshold_as_requested_when_everything_left_is_later() -> None:
    s = SliceInfo("p", "f", B, None, (_log(1, 3), _log(2, 12), _log(3, 11)))
    ops = plan_operations([s], EventTimeBasedCompactionStrategy(threshold_ms=10))
    assert achieved_threshold([s], ops, 10).threshold_ms == 10


def test_unknown_event_times_are_never_linked_as_after_t_nor_allow_a_threshold() -> None:
    s = SliceInfo("p", "f", B, None, (_log(1, 3), _log(2, None, known=False), _log(3, 4)))
    ops = plan_operations([s], EventTimeBasedCompactionStrategy(threshold_ms=10))
    assert [f.name for f in ops[0].to_compact] == [s.log_files[0].name]  # the unknown file ends the prefix
    result = achieved_threshold([s], ops, 10)
    assert result.threshold_ms is None and "unresolved event times" in result.reason


def test_an_unplanned_slice_counts_too() -> None:
    # a slice with nothing <= T is not planned, but a slice with a log file at 7 that is cut off lowers T
    planned = SliceInfo("p", "f", B, None, (_log(1, 3),))
    cut = SliceInfo("p", "g", B, None, (_log(1, None, committed=False), _log(2, 7)))
    ops = plan_operations([planned, cut], EventTimeBasedCompactionStrategy(threshold_ms=10))
    assert [op.slice.file_id for op in ops] == ["f"]
    assert achieved_threshold([planned, cut], ops, 10).threshold_ms == 6
