"""Freshness of the read-optimized view (docs/event-time.md section 6), as pure functions over index data.

`threshold` is T of the last completed event-time compaction (as its commit published it: the executor lowers
it when a base file cannot hold everything before T). `watermark` = min(T, the smallest min event time over
committed log blocks that are not in a base file yet): every committed record with an event time below the
watermark is in the read-optimized view. Late data are the records committed after that compaction with an
event time below T, as the indexer counted them per block (`PendingBlock.records_before`); a block whose records
were not counted (event times unknown, or an index not brought up to date) makes the count unknown, and
`late_records_at_most` then takes all its records. Only completed instants count, so a compaction rolled back
(its commit gone) moves freshness back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hudi_meta.table.times import format_time_ms


@dataclass(frozen=True)
class CompletedCompaction:
    """A completed compaction as its commit says: `threshold_ms` None for one that was not event-time."""

    instant: str
    threshold_ms: int | None
    exact: bool


@dataclass(frozen=True)
class PendingBlock:
    """A committed log block whose records are not in a base file yet (it sits in a latest slice's log files;
    a linked file counts once, under its physical file). Delete blocks count as leftovers; only data blocks
    bound the watermark: a pending delete leaves RO holding a record the snapshot no longer has, never lacking
    one."""

    log_file: str  # partition/name of the physical file
    slice_key: str  # partition/file id/base instant of the latest slice it belongs to
    instant: str
    min_event_time: int | None  # None: unknown (the watermark cannot be above what is unknown)
    records: int
    size: int  # the block's bytes
    is_data: bool = True  # False: a delete block (left over, but it holds no record RO could lack)
    counted_threshold_ms: int | None = None  # the threshold `records_below` was counted at (None: not counted)
    records_below: int | None = None  # records with an event time below counted_threshold_ms (None: unknown)

    def records_before(self, threshold_ms: int) -> int | None:
        """Records with an event time below `threshold_ms`: as counted at that threshold, or none when the
        block's min event time is not below it; None when that is not known."""
        if self.counted_threshold_ms == threshold_ms and self.records_below is not None:
            return self.records_below
        if self.min_event_time is not None and self.min_event_time >= threshold_ms:
            return 0
        return None


@dataclass(frozen=True)
class Freshness:
    threshold_ms: int | None
    watermark_ms: int | None
    compaction_instant: str | None
    exact: bool
    lag_ms: int | None  # now - watermark
    leftover_files: int
    leftover_bytes: int
    leftover_slices: int
    min_pending_event_time_ms: int | None
    unknown_event_time_blocks: int
    late_blocks: int  # blocks known to hold late records
    late_records: int | None  # records committed after the compaction below its T; None: not all counted
    late_records_at_most: int  # late_records when known, else a bound: counted records plus uncounted blocks'
    latest_late_instant: str | None

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def last_event_time_compaction(compactions: Sequence[CompletedCompaction]) -> CompletedCompaction | None:
    """The latest completed compaction that published a threshold (instants sort in time order)."""
    with_threshold = [c for c in compactions if c.threshold_ms is not None]
    return max(with_threshold, key=lambda c: c.instant) if with_threshold else None


@dataclass(frozen=True)
class LateBlock:
    """A data block committed after the last event-time compaction holding records below its threshold T."""

    block: PendingBlock
    late_records: int | None  # its records below T; None: not counted (at most `block.records`)


@dataclass(frozen=True)
class LateData:
    """The late data of a table: its blocks (by instant and log file), the records below T (None when a block
    committed after the compaction was not counted) and a bound that always holds."""

    blocks: list[LateBlock]
    records: int | None
    records_at_most: int


def late_data(last: CompletedCompaction | None, pending: Iterable[PendingBlock]) -> LateData:
    """The records of data blocks committed after `last` with an event time below its threshold. A block not
    counted counts with all its records in the bound; it is listed when its min event time is below T (it holds
    at least that record), not when its event times are unknown (those are `unknown_event_time_blocks`)."""
    if last is None or last.threshold_ms is None:
        return LateData([], 0, 0)
    threshold = last.threshold_ms
    blocks: list[LateBlock] = []
    exact, bound = True, 0
    for b in pending:
        if not b.is_data or b.instant <= last.instant:
            continue
        below = b.records_before(threshold)
        if below is None:
            exact = False
            bound += b.records
            if b.min_event_time is not None:
                blocks.append(LateBlock(b, None))
        elif below:
            bound += below
            blocks.append(LateBlock(b, below))
    blocks.sort(key=lambda x: (x.block.instant, x.block.log_file))
    return LateData(blocks, bound if exact else None, bound)


@dataclass(frozen=True)
class Histogram:
    """Records of blocks not yet in a base file, by min event time: bin i holds [start + i*width, + width)."""

    start_ms: int
    width_ms: int
    records: list[int]
    unknown_records: int  # records of blocks whose event times are unknown (not in any bin)

    @property
    def end_ms(self) -> int:
        return self.start_ms + self.width_ms * len(self.records)


def event_time_histogram(
    pending: Iterable[PendingBlock], bins: int = 40, marks: Iterable[int | None] = ()
) -> Histogram:
    """Bin the records of `pending` by their block's min event time over a range that also covers `marks`
    (the threshold and the watermark, so a chart can draw them). Pure."""
    blocks = [b for b in pending if b.is_data]
    known = [b for b in blocks if b.min_event_time is not None]
    points = [b.min_event_time for b in known if b.min_event_time is not None] + [m for m in marks if m is not None]
    unknown = sum(b.records for b in blocks if b.min_event_time is None)
    if not points:
        return Histogram(0, 1, [], unknown)
    low, high = min(points), max(points)
    width = max(1, -(-(high - low + 1) // bins))
    counts = [0] * bins
    for b in known:
        assert b.min_event_time is not None
        counts[min(bins - 1, (b.min_event_time - low) // width)] += b.records
    return Histogram(low, width, counts, unknown)


def still_exact(last: CompletedCompaction | None, base_file_instants: Iterable[str]) -> bool:
    """Whether RO still holds no record after the threshold of `last`, an exact compaction: no base file written
    since (by an insert, a clustering or another compaction) may have brought one in. A base file written since
    counts whatever it holds: the index keeps no event times of base files (docs/event-time.md section 6)."""
    return last is not None and last.exact and all(i <= last.instant for i in base_file_instants)


def freshness(
    compactions: Sequence[CompletedCompaction],
    pending: Iterable[PendingBlock],
    now_ms: int,
    base_file_instants: Iterable[str] = (),
) -> Freshness:
    """Freshness from the completed compactions, the committed blocks not yet in a base file and the instants of the
    committed base files (`base_file_instants`: without them, `exact` is the last compaction's flag alone)."""
    last = last_event_time_compaction(compactions)
    blocks = list(pending)
    data = [b for b in blocks if b.is_data]
    known = [b.min_event_time for b in data if b.min_event_time is not None]
    unknown = sum(1 for b in data if b.min_event_time is None)
    min_pending = min(known) if known else None
    threshold = last.threshold_ms if last is not None else None
    watermark: int | None = None
    if threshold is not None and not unknown:  # a block of unknown event times may hold any time: no watermark
        watermark = min([threshold, *([min_pending] if min_pending is not None else [])])
    late = late_data(last, data)
    sizes: dict[str, int] = {}
    for b in blocks:
        sizes[b.log_file] = sizes.get(b.log_file, 0) + b.size
    return Freshness(
        threshold_ms=threshold,
        watermark_ms=watermark,
        compaction_instant=last.instant if last is not None else None,
        exact=still_exact(last, base_file_instants),
        lag_ms=now_ms - watermark if watermark is not None else None,
        leftover_files=len(sizes),
        leftover_bytes=sum(sizes.values()),
        leftover_slices=len({b.slice_key for b in blocks}),
        min_pending_event_time_ms=min_pending,
        unknown_event_time_blocks=unknown,
        late_blocks=len(late.blocks),
        late_records=late.records,
        late_records_at_most=late.records_at_most,
        latest_late_instant=max((x.block.instant for x in late.blocks), default=None),
    )


def view_for_complete_before(f: Freshness, complete_before_ms: int) -> str | None:
    """None when the read-optimized view holds every record with an event time before `complete_before_ms`
    (the watermark is at or after it), else why not: the reader then falls back to the snapshot view."""
    if f.watermark_ms is not None and f.watermark_ms >= complete_before_ms:
        return None
    held = (
        f"all data before {format_time_ms(f.watermark_ms)} only"
        if f.watermark_ms is not None
        else "no freshness guarantee"
        + (" (blocks of unknown event time)" if f.unknown_event_time_blocks else " (no event-time compaction)")
    )
    return f"the read-optimized view holds {held}, not all data before {format_time_ms(complete_before_ms)}"
