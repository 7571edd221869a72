"""Freshness (docs/event-time.md section 6) against a small model of slices: the rule under test is the promise
itself, "every committed record with an event time below the watermark is in the read-optimized view"."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.freshness import CompletedCompaction, PendingBlock, freshness, last_event_time_compaction

times = st.integers(0, 1000)
blocks = st.lists(st.lists(times, min_size=1, max_size=4), max_size=5)  # a slice's blocks, each its event times


@given(
    st.lists(blocks, min_size=1, max_size=4),
    times,
    st.lists(st.tuples(st.lists(times, min_size=1, max_size=3), st.booleans()), max_size=3),
)
def test_every_record_below_the_watermark_is_in_ro(
    slices: list[list[list[int]]], t: int, late: list[tuple[list[int], bool]]
) -> None:
    # an event-time compaction at T merges, per slice, the blocks up to the last one whose min is <= T
    ro: list[int] = []
    pending: list[PendingBlock] = []
    for s, slice_blocks in enumerate(slices):
        k = max((i + 1 for i, b in enumerate(slice_blocks) if min(b) <= t), default=0)
        for b in slice_blocks[:k]:
            ro.extend(b)
        for i, b in enumerate(slice_blocks[k:]):
            pending.append(PendingBlock(f"s{s}/f{i}", f"s{s}", "20250101000000000", min(b), len(b), 100))
    # late data: committed after the compaction into the same slices, each block counted by the indexer or not
    for i, (b, counted) in enumerate(late):
        below = sum(1 for x in b if x < t) if counted else None
        pending.append(
            PendingBlock(
                f"late/{i}", "s0", "20250102000000000", min(b), len(b), 10, True, t if counted else None, below
            )
        )
    f = freshness([CompletedCompaction("20250101120000000", t, False)], pending, now_ms=2000)
    assert f.watermark_ms is not None and f.threshold_ms == t
    committed = ro + [x for b in slices for blk in b for x in blk] + [x for b, _ in late for x in b]
    assert all(x in ro for x in committed if x < f.watermark_ms)
    # late records are the records committed after the compaction with event times below T, one by one
    late_records = sum(1 for b, _ in late for x in b if x < t)
    holding = [(b, counted) for b, counted in late if min(b) < t]
    assert f.late_blocks == len(holding)
    if all(counted for _, counted in holding):
        assert f.late_records == f.late_records_at_most == late_records
    else:  # a block not counted: the figure is not known, the bound takes all its records
        assert f.late_records is None
        bound = sum(sum(1 for x in b if x < t) if counted else len(b) for b, counted in holding)
        assert f.late_records_at_most == bound >= late_records
    assert f.lag_ms == 2000 - f.watermark_ms


def test_late_records_are_records_below_t_not_the_records_of_late_blocks() -> None:
    """A block committed after the compaction with event times 5, 60 and 70 holds one late record at T = 50; a
    count made at another threshold does not hold for this one."""
    compaction = [CompletedCompaction("20250101000000000", 50, False)]
    block = PendingBlock("p/a", "p/f/c1", "20250102000000000", 5, 3, 30, True, 50, 1)
    f = freshness(compaction, [block], now_ms=1000)
    assert (f.late_blocks, f.late_records, f.late_records_at_most, f.latest_late_instant) == (1, 1, 1, block.instant)
    stale = freshness(compaction, [replace(block, counted_threshold_ms=40)], now_ms=1000)
    assert (stale.late_blocks, stale.late_records, stale.late_records_at_most) == (1, None, 3)
    none_below = freshness(compaction, [replace(block, min_event_time=50, records_below=None)], now_ms=1000)
    assert (none_below.late_blocks, none_below.late_records) == (0, 0)  # its min is not below T: nothing to count
    unknown = replace(block, min_event_time=None, counted_threshold_ms=None, records_below=None)
    g = freshness(compaction, [block, unknown], now_ms=1000)  # event times unknown: it may hold late records
    assert (g.late_blocks, g.late_records, g.late_records_at_most, g.unknown_event_time_blocks) == (1, None, 4, 1)
    before = freshness(compaction, [replace(block, instant="20241231000000000")], now_ms=1000)
    assert (before.late_blocks, before.late_records) == (0, 0)  # committed before the compaction: not late


def test_an_unknown_event_time_leaves_no_watermark() -> None:
    pending = [PendingBlock("p/a", "p", "20250102000000000", None, 3, 10)]
    f = freshness([CompletedCompaction("20250101000000000", 500, True)], pending, now_ms=1000)
    assert f.threshold_ms == 500 and f.watermark_ms is None and f.unknown_event_time_blocks == 1


def test_freshness_comes_from_the_latest_completed_event_time_compaction() -> None:
    done = [
        CompletedCompaction("20250101000000000", 100, False),
        CompletedCompaction("20250103000000000", None, False),  # not event-time: publishes nothing
        CompletedCompaction("20250102000000000", 200, True),
    ]
    last = last_event_time_compaction(done)
    assert last is not None and last.instant == "20250102000000000"
    # rolled back: its commit is gone from the completed ones, and the previous threshold is current again
    f = freshness([c for c in done if c.instant != "20250102000000000"], [], now_ms=1000)
    assert (f.threshold_ms, f.watermark_ms, f.exact) == (100, 100, False)
    assert freshness([], [], now_ms=0).watermark_ms is None


def test_ro_is_complete_before_t_only_when_the_watermark_is_at_or_after_t() -> None:
    from hudi_meta.freshness import view_for_complete_before

    f = freshness([CompletedCompaction("c1", 1_000, False)], [PendingBlock("p/l", "p/f/c1", "d2", 600, 1, 10)], 0)
    assert f.watermark_ms == 600  # a record at 600 ms is not in a base file yet
    assert view_for_complete_before(f, 600) is None  # every record before 600 ms is in RO
    assert view_for_complete_before(f, 601) == (
        "the read-optimized view holds all data before 1970-01-01T00:00:00.600Z only, "
        "not all data before 1970-01-01T00:00:00.601Z"
    )
    none = freshness([], [], 0)
    assert "no freshness guarantee (no event-time compaction)" in (view_for_complete_before(none, 0) or "")


def test_a_delete_left_over_counts_as_a_leftover_but_does_not_bound_the_watermark() -> None:
    """RO lacks no record because of a pending delete (it holds one the snapshot no longer has), so the watermark
    stays at T; the log file is still not compacted, and counts."""
    compaction = [CompletedCompaction("20250101000000000", 500, False)]
    deletes = [PendingBlock("p/d", "p/f/c1", "20250102000000000", 100, 4, 70, is_data=False)]
    f = freshness(compaction, deletes, now_ms=1000)
    assert (f.watermark_ms, f.min_pending_event_time_ms, f.late_blocks, f.late_records) == (500, None, 0, 0)
    assert (f.leftover_files, f.leftover_bytes, f.leftover_slices) == (1, 70, 1)
    data = PendingBlock("p/a", "p/f/c1", "20250102000000000", 300, 2, 30, True, 500, 2)
    with_data = freshness(compaction, [*deletes, data], 0)
    assert (with_data.watermark_ms, with_data.leftover_files, with_data.late_records) == (300, 2, 2)


def test_exact_holds_only_until_a_newer_base_file_is_committed() -> None:
    """An exact compaction's flag stands while no base file newer than it is committed: a later insert, clustering
    or compaction of any strategy may put records after T into RO (docs/event-time.md section 6, issue 36 item 6).
    Base files of the compaction itself and older ones do not count; a compaction not exact stays not exact."""
    exact = [CompletedCompaction("20250102000000000", 200, True)]
    assert freshness(exact, [], 0, ["20250101000000000", "20250102000000000"]).exact
    assert not freshness(exact, [], 0, ["20250102000000000", "20250102000000001"]).exact
    assert not freshness([CompletedCompaction("20250102000000000", 200, False)], [], 0, []).exact
    # an exact compaction after the base file restores it (the later one is the published one)
    later = [*exact, CompletedCompaction("20250103000000000", 300, True)]
    assert freshness(later, [], 0, ["20250102000000001", "20250103000000000"]).exact
