"""A compaction's layout leaves the snapshot as it was (docs/event-time.md sections 4 and 8), in every mode.

Rule tested: merging the new base file, then the carry log, then the rest of the slice gives the same records
as merging the old base file, the compacted log files and the rest. The reader (`merge_slice`) is the judge;
the layout is computed by `plan_layout`, whose common case (not exact) merges in Arrow and whose other keys go
through the candidate search one by one. Slices are random (see tests/file_group/test_reader.py): the
same few keys in base, compacted logs and rest, data and deletes, every merge mode, exact or not, carrying
allowed or not, with and without a threshold.
"""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_meta.compaction.layout import plan_layout
from hudi_meta.file_group.merge.records import LogPart, SliceRecords, merge_slice
from hudi_meta.file_group.merge.rules import MergeSpec
from hudi_meta.file_group.record_keys import record_key_array
from hudi_meta.format.block_content import DeleteRecord
from tests.file_group.test_reader import slices


def with_logs(base: pa.Table | None, spec: MergeSpec, *logs: SliceRecords) -> SliceRecords:
    """A slice of `base` and the log records of `logs`, in that order."""
    schema = next((s.schema for s in logs if s.schema is not None), base.schema if base is not None else None)
    tables: list[pa.Table] = []
    parts: list[LogPart] = []
    start = 0
    for s in logs:
        for p in s.parts:
            parts.append(LogPart(p.instant, start + p.start, start + p.stop, p.deletes))
        if s.log_rows is not None and s.log_rows.num_rows:
            tables.append(s.log_rows)
            start += s.log_rows.num_rows
    rows = pa.concat_tables(tables) if tables else None
    keys = record_key_array(rows, spec) if rows is not None else pa.array([], pa.string())
    return SliceRecords(schema, base, rows, parts, keys, spec)


def carry_log(carry: pa.Table, deletes: tuple[DeleteRecord, ...], spec: MergeSpec) -> SliceRecords:
    """The carry log as the executor writes it: one data block, then the deletes."""
    parts = [LogPart("c", 0, carry.num_rows)] if carry.num_rows else []
    if deletes:
        parts.append(LogPart("c", carry.num_rows, carry.num_rows, deletes))
    rows = carry if carry.num_rows else None
    keys = record_key_array(rows, spec) if rows is not None else pa.array([], pa.string())
    return SliceRecords(carry.schema, None, rows, parts, keys, spec)


def snapshot(records: SliceRecords, spec: MergeSpec) -> list[int]:
    merged = merge_slice(records, spec).table
    return sorted(merged.column("v").to_pylist()) if merged.num_columns else []


@settings(max_examples=1500, deadline=None)
@given(slices(flagged_base=False), slices(), st.booleans(), st.booleans(), st.none() | st.integers(-2, 3))
def test_the_layout_keeps_the_snapshot(
    compacted: tuple[SliceRecords, MergeSpec, pa.Array | None],
    kept: tuple[SliceRecords, MergeSpec, pa.Array | None],
    exact: bool,
    carry_allowed: bool,
    threshold: int | None,
) -> None:
    records, spec, _ = compacted
    rest = kept[0] if kept[0].schema == records.schema else None
    if rest is not None:  # the rest is log files only, read with the table's merge spec
        rest = with_logs(None, spec, rest)
    event_time_field = "ts" if records.schema is not None and records.schema.field("ts").type == pa.int64() else None
    try:
        layout = plan_layout(
            records,
            rest,
            spec,
            "",
            exact=exact,
            carry_allowed=carry_allowed or exact,  # exact plans always have a carry log
            event_time_field=event_time_field,
            threshold_ms=threshold,
        )
    except AssertionError:
        if carry_allowed or exact:
            raise
        return  # a plan without a carry log (scheduled before carry logs existed) may have no layout for a key
    if records.schema is None:
        return
    before = with_logs(records.base, spec, records, *([rest] if rest is not None else []))
    empty = records.schema.empty_table()
    held = carry_log(
        layout.held if layout.held is not None and layout.held.num_columns else empty, layout.held_deletes, spec
    )
    carry = carry_log(layout.carry if layout.carry.num_columns else empty, layout.carry_deletes, spec)
    after = with_logs(layout.base, spec, held, carry, *([rest] if rest is not None else []))  # the executor's order
    assert snapshot(after, spec) == snapshot(before, spec)
