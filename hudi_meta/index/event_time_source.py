"""Where a block's min event time comes from, in order: the MIN_EVENT_TIME header, the deltacommit
write stat of its log file, or one scan of its records (stored; the file is never rewritten).

Delete blocks: the min of their ordering values when the ordering field is the event-time field (natural
order zeros carry no time), else the block's instant time. Command blocks carry none.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pyarrow as pa

from hudi_meta.format.block_content import BlockDecodeError, decode_data_block, decode_delete_records
from hudi_meta.format.log_block import BlockType, LogBlock
from hudi_meta.table.event_time import min_max_epoch_ms, to_epoch_ms

HEADER = "header"
WRITE_STAT = "write_stat"
RECORD_SCAN = "record_scan"
INSTANT_TIME = "instant_time"
UNAVAILABLE = "unavailable"  # no event-time field, or undecodable content: not retried


@dataclass(frozen=True)
class EventTimes:
    min_ms: int | None
    max_ms: int | None
    source: str


def instant_to_epoch_ms(instant: str) -> int:
    """An instant time `yyyyMMddHHmmss[SSS]` as epoch ms (UTC)."""
    base = dt.datetime.strptime(instant[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
    millis = int(instant[14:17] or 0)
    return int(base.timestamp() * 1000) + millis


def from_records(
    block: LogBlock, content: bytes, event_time_field: str | None, ordering_field: str | None
) -> EventTimes:
    """Scan a block's records once for its min and max event time."""
    try:
        if block.block_type == BlockType.DELETE:
            return _from_deletes(block, content, event_time_field, ordering_field)
        if event_time_field is None:
            return EventTimes(None, None, UNAVAILABLE)
        table = decode_data_block(block, content)
    except BlockDecodeError:
        return EventTimes(None, None, UNAVAILABLE)
    if event_time_field not in table.column_names:
        return EventTimes(None, None, UNAVAILABLE)
    column: pa.ChunkedArray = table.column(event_time_field)
    lo, hi = min_max_epoch_ms(column)
    return EventTimes(lo, hi, RECORD_SCAN if lo is not None else UNAVAILABLE)


def _from_deletes(
    block: LogBlock, content: bytes, event_time_field: str | None, ordering_field: str | None
) -> EventTimes:
    if event_time_field is not None and event_time_field == ordering_field:
        deletes = decode_delete_records(content)
        times = [to_epoch_ms(d.ordering_value) for d in deletes if not d.is_natural_order]
        found = [t for t in times if t is not None]
        if found:
            return EventTimes(min(found), max(found), RECORD_SCAN)
    if block.instant_time is None:
        return EventTimes(None, None, UNAVAILABLE)
    at = instant_to_epoch_ms(block.instant_time)
    return EventTimes(at, at, INSTANT_TIME)
