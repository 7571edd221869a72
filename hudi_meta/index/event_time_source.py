"""Where a block's min event time comes from, in order: the MIN_EVENT_TIME header, the deltacommit
write stat of its log file, or one scan of its records (stored; the file is never rewritten).

The header and the write stat were computed on the table's own event-time field
(`hoodie.payload.event.time.field`): they only count when the field registered for the table is that field;
otherwise the records are scanned.

Delete blocks: the min of their ordering values when the ordering field is the event-time field (natural
order zeros carry no time), else the block's instant time. Command blocks carry none.

`min_event_time_source` says what the index knows about a block's min event time:
- NULL: not resolved yet (the block is uncommitted, or was just indexed);
- HEADER, WRITE_STAT, RECORD_SCAN, INSTANT_TIME: known, `min_event_time` holds it;
- NO_EVENT_TIME: known to have none: no record carries a non-null value of the event-time field;
- UNAVAILABLE: unknown and not retried (no event-time field registered, undecodable content, or a value
  that is no time); it must block a threshold like NULL does.

A field given for a table must be a top-level column of its schema (`check_event_time_field`): records are read
by column name, so any other name finds no values in any block and every min event time would read as "none".
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_meta.errors import BadValueError
from hudi_meta.format.block_content import BlockDecodeError, decode_data_block, decode_delete_records
from hudi_meta.format.log_block import BlockType, LogBlock
from hudi_meta.spelling import closest
from hudi_meta.table.event_time import MILLIS_BELOW, SECONDS_BELOW, to_epoch_ms
from hudi_meta.table.schema import nested_field, table_schema
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import instant_epoch_ms
from hudi_meta.write.writer import META_COLUMNS

HEADER = "header"
WRITE_STAT = "write_stat"
RECORD_SCAN = "record_scan"
INSTANT_TIME = "instant_time"
NO_EVENT_TIME = "none"  # resolved: the block holds no record with an event time
UNAVAILABLE = "unavailable"  # unknown: no event-time field, undecodable content, or a value that is no time

KNOWN = (HEADER, WRITE_STAT, RECORD_SCAN, INSTANT_TIME)
DATA_TYPES = ("avro_data", "parquet_data", "cdc_data", "delete")  # stored block types that carry event times


@dataclass(frozen=True)
class EventTimes:
    min_ms: int | None
    max_ms: int | None
    source: str


class _NotATime(ValueError):
    """A non-null value that `to_epoch_ms` cannot read as a time."""


def column_min_max(column: pa.ChunkedArray | pa.Array) -> tuple[int | None, int | None]:
    """Exact (min, max) epoch ms over the non-null values of `column`, each value read by `to_epoch_ms`.

    Numbers are split at the unit edges first: the rule is monotonic within each unit, not across them
    (5e10 seconds is later than 1.7e12 ms), so the min of raw numbers is not the min time. Raises
    `_NotATime` when a non-null value is not a time.
    """
    values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    values = values.drop_null()
    if len(values) == 0:
        return None, None
    kind = values.type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        magnitude = pc.abs(values)
        buckets = [
            pc.less(magnitude, SECONDS_BELOW),
            pc.and_(pc.greater_equal(magnitude, SECONDS_BELOW), pc.less(magnitude, MILLIS_BELOW)),
            pc.greater_equal(magnitude, MILLIS_BELOW),
        ]
        found: list[int] = []
        for mask in buckets:
            part = values.filter(mask)
            if len(part):
                mm = pc.min_max(part)
                found.extend(_ms(v) for v in (mm["min"].as_py(), mm["max"].as_py()))
        return min(found), max(found)
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        mm = pc.min_max(values)
        return _temporal_ms(mm["min"], kind), _temporal_ms(mm["max"], kind)
    times = [_ms(v) for v in values.to_pylist()]
    return min(times), max(times)


def count_before(column: pa.ChunkedArray | pa.Array, threshold_ms: int) -> int:
    """How many values of `column` are event times before `threshold_ms`, each read as `column_min_max` reads
    it (nulls are no time: not counted). Compared in each value's own unit, so no value is rounded. Raises
    `_NotATime` when a non-null value is not a time."""
    values = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    values = values.drop_null()
    if len(values) == 0:
        return 0
    kind = values.type
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        whole = pc.trunc(values) if pa.types.is_floating(kind) else values  # to_epoch_ms reads int(value)
        magnitude = pc.abs(whole)
        # epoch ms of v below T, per unit of `number_to_epoch_ms`: s: v*1000 < T; ms: v < T; us: v // 1000 < T
        units = [
            (pc.less(magnitude, SECONDS_BELOW), -(-threshold_ms // 1000)),
            (pc.and_(pc.greater_equal(magnitude, SECONDS_BELOW), pc.less(magnitude, MILLIS_BELOW)), threshold_ms),
            (pc.greater_equal(magnitude, MILLIS_BELOW), threshold_ms * 1000),
        ]
        return sum(_count_less(whole.filter(mask), below) for mask, below in units)
    if pa.types.is_date32(kind):
        return _count_less(values.cast(pa.int32()), -(-threshold_ms // 86_400_000))
    if pa.types.is_date64(kind):
        return _count_less(values.cast(pa.int64()), threshold_ms)
    if pa.types.is_timestamp(kind):
        per_ms = _PER_MS[kind.unit]
        below = -(-threshold_ms // 1000) if per_ms is None else threshold_ms * per_ms
        return _count_less(values.cast(pa.int64()), below)
    return sum(1 for v in values.to_pylist() if _ms(v) < threshold_ms)


def _count_less(values: pa.Array, below: int) -> int:
    if len(values) == 0:
        return 0
    if pa.types.is_floating(values.type) and abs(below) > 2**53:  # beyond exact floats: compare as Python ints
        return sum(1 for v in values.to_pylist() if int(v) < below)
    return int(pc.sum(pc.less(values, below).cast(pa.int64())).as_py() or 0)


def _ms(value: Any) -> int:
    found = to_epoch_ms(value)
    if found is None:
        raise _NotATime(repr(value))
    return found


_PER_MS = {"s": None, "ms": 1, "us": 1000, "ns": 1_000_000}


def _temporal_ms(scalar: pa.Scalar, kind: pa.DataType) -> int:
    """Epoch ms of a timestamp or date scalar from its integer value (no Python datetime range limits)."""
    if pa.types.is_date32(kind):
        return int(scalar.cast(pa.int32()).as_py()) * 86_400_000
    if pa.types.is_date64(kind):
        return int(scalar.cast(pa.int64()).as_py())
    raw = int(scalar.cast(pa.int64()).as_py())
    per_ms = _PER_MS[kind.unit]
    return raw * 1000 if per_ms is None else raw // per_ms


def from_records(
    block: LogBlock,
    content: bytes,
    event_time_field: str | None,
    ordering_field: str | None,
    zone: dt.tzinfo = dt.UTC,
) -> EventTimes:
    """Scan a block's records once for its min and max event time (`zone`: the timeline's, for instant times)."""
    try:
        if block.block_type == BlockType.DELETE:
            return _from_deletes(block, content, event_time_field, ordering_field, zone)
        if event_time_field is None:
            return EventTimes(None, None, UNAVAILABLE)
        table = decode_data_block(block, content)
    except BlockDecodeError:
        return EventTimes(None, None, UNAVAILABLE)
    if event_time_field not in table.column_names:
        return EventTimes(None, None, NO_EVENT_TIME)  # records written before the field existed: no values
    try:
        lo, hi = column_min_max(table.column(event_time_field))
    except _NotATime:
        return EventTimes(None, None, UNAVAILABLE)
    if lo is None:
        return EventTimes(None, None, NO_EVENT_TIME)
    return EventTimes(lo, hi, RECORD_SCAN)


def records_before(block: LogBlock, content: bytes, event_time_field: str | None, threshold_ms: int) -> int | None:
    """How many records of a data block have an event time before `threshold_ms`; None when that cannot be
    known (no event-time field, undecodable content, a value that is no time). Records without the field, or
    with a null in it, carry no event time and are not counted."""
    if event_time_field is None:
        return None
    try:
        table = decode_data_block(block, content)
    except BlockDecodeError:
        return None
    if event_time_field not in table.column_names:
        return 0
    try:
        return count_before(table.column(event_time_field), threshold_ms)
    except _NotATime:
        return None


def _from_deletes(
    block: LogBlock, content: bytes, event_time_field: str | None, ordering_field: str | None, zone: dt.tzinfo
) -> EventTimes:
    if event_time_field is not None and event_time_field == ordering_field:
        deletes = decode_delete_records(content)
        timed = [d.ordering_value for d in deletes if not d.is_natural_order]
        if timed:
            try:
                times = [_ms(v) for v in timed]
            except _NotATime:
                return EventTimes(None, None, UNAVAILABLE)
            return EventTimes(min(times), max(times), RECORD_SCAN)
    if block.instant_time is None:
        return EventTimes(None, None, UNAVAILABLE)
    at = instant_epoch_ms(block.instant_time, zone)
    return EventTimes(at, at, INSTANT_TIME)


def stat_applies(registered_field: str | None, table_field: str | None) -> bool:
    """Header and write-stat times were computed on the table's field: they only count for that field."""
    return registered_field is not None and registered_field == table_field


def check_event_time_field(table: HudiTable, field_name: str) -> str | None:
    """Refuse (`BadValueError`, one line naming the closest column) an event-time field that is not a top-level
    column of the table's schema (`hudi_meta.table.schema`): a nested field (`a.b`) too, as records are read by
    top-level column. A table without a schema yet (created, never written) cannot be checked: the field is
    accepted and the warning to show is returned (the indexer checks it again once the table has a schema)."""
    found = table_schema(table)
    name = table.config.name
    if found is None:
        return (
            f"table {name} has no schema yet (no commit records one, no hoodie.table.create.schema, no base "
            f"file): event-time field {field_name!r} is not checked until it has one"
        )
    columns = [n for n in found.schema.names if n not in META_COLUMNS]
    if field_name in columns or (field_name in META_COLUMNS and table.config.populate_meta_fields):
        return None
    record = nested_field(found.schema, field_name)
    if record is not None:
        raise BadValueError(
            f"event-time field {field_name!r} is nested in record {record!r} of table {name}: hudi-meta reads "
            "event times from top-level columns only"
        )
    near = closest(field_name, columns)
    hint = f"did you mean {near!r}?" if near else f"its columns: {_listed(columns)}"
    raise BadValueError(f"event-time field {field_name!r} is not a column of table {name} ({found.source}): {hint}")


def _listed(columns: list[str], most: int = 12) -> str:
    shown = ", ".join(columns[:most])
    return shown + (f" and {len(columns) - most} more" if len(columns) > most else "")
