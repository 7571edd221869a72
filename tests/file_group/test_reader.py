"""The columnar merge gives exactly what the record-by-record fold gives (issue 15).

`merge_slice` merges a key with one log record, a data record, in Arrow, and folds the others record by record
in log order; with a `keep_log` filter every key folds. The fold is the rule as Java applies it (see
`MergeMode`; the fixture, golden-compaction and hudi-rs tests check it against Java's and Rust's output), so a
filter that keeps everything gives the oracle. Slices are random: repeated keys across data and delete blocks,
null, equal and NaN ordering values, delete ordering values of Java's kinds (none, 0, a value), deleted flags,
a base file with and without the keys, and a `keep_base` mask, under every merge mode.
"""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_meta.file_group.merge.records import LogMerge, LogPart, MergedSlice, SliceRecords, merge_rows, merge_slice
from hudi_meta.file_group.merge.rules import MergeMode, MergeSpec
from hudi_meta.file_group.record_keys import IS_DELETED_COLUMN, RECORD_KEY_COLUMN, record_key_array
from hudi_meta.format.block_content import DeleteRecord

KEYS = st.sampled_from([f"k{i}" for i in range(8)])
ORDERING_TYPES = {
    "long": (pa.int64(), st.none() | st.integers(-3, 3)),
    "double": (pa.float64(), st.none() | st.sampled_from([-1.5, 0.0, 2.0, math.nan])),
    "string": (pa.string(), st.none() | st.sampled_from(["", "a", "b", "é"])),
}


@st.composite
def slices(draw: st.DrawFn, flagged_base: bool = True) -> tuple[SliceRecords, MergeSpec, pa.Array | None]:
    """A random slice, its merge spec and maybe a keep_base mask; `flagged_base=False`: no base record is
    flagged `_hoodie_is_deleted` (as in base files a compaction or Java wrote)."""
    dtype, values = ORDERING_TYPES[draw(st.sampled_from(sorted(ORDERING_TYPES)))]
    with_flag = draw(st.booleans())
    fields = [pa.field(RECORD_KEY_COLUMN, pa.string()), pa.field("ts", dtype), pa.field("v", pa.int64())]
    if with_flag:
        fields.append(pa.field(IS_DELETED_COLUMN, pa.bool_()))
    schema = pa.schema(fields)
    spec = MergeSpec(("id",), "ts", merge_mode=draw(st.sampled_from(list(MergeMode))))
    serial = iter(range(10**6))

    def rows(n: int, flags: bool = True) -> pa.Table:
        keys = draw(st.lists(KEYS, min_size=n, max_size=n, unique=True))
        columns: dict[str, Any] = {
            RECORD_KEY_COLUMN: keys,
            "ts": [draw(values) for _ in keys],
            "v": [next(serial) for _ in keys],
        }
        if with_flag:
            choices = [None, False, False, True] if flags else [None, False]
            columns[IS_DELETED_COLUMN] = [draw(st.sampled_from(choices)) for _ in keys]
        return pa.table(columns, schema=schema)

    base = rows(draw(st.integers(0, 8)), flags=flagged_base) if draw(st.booleans()) else None
    parts: list[LogPart] = []
    tables: list[pa.Table] = []
    start = 0
    for b in range(draw(st.integers(0, 5))):
        instant = f"2026010100000{b}000"
        if draw(st.integers(0, 3)) == 0:
            deletes = [
                DeleteRecord(
                    k,
                    "",
                    draw(
                        st.none() | st.just(0) | st.integers(-3, 3) if dtype == pa.int64() else st.none() | st.just(0)
                    ),
                )
                for k in draw(st.lists(KEYS, min_size=1, max_size=4, unique=True))
            ]
            parts.append(LogPart(instant, start, start, tuple(deletes)))
        else:
            table = rows(draw(st.integers(1, 6)))
            parts.append(LogPart(instant, start, start + table.num_rows))
            tables.append(table)
            start += table.num_rows
    log_rows = pa.concat_tables(tables) if tables else None
    keys = record_key_array(log_rows, spec) if log_rows is not None else pa.array([], pa.string())
    records = SliceRecords(schema, base, log_rows, parts, keys, spec)
    keep_base = None
    if base is not None and draw(st.booleans()):
        keep_base = pa.array(draw(st.lists(st.booleans(), min_size=base.num_rows, max_size=base.num_rows)))
    return records, spec, keep_base


def summary(merged: MergedSlice) -> tuple[Any, ...]:
    return (
        merged.table.column("v").to_pylist() if merged.table.num_columns else [],
        merged.base_rows.to_pylist(),
        merged.log_rows.to_pylist(),
        sorted((k, d.row, repr(d.ordering)) for k, d in merged.deletes.items()),
    )


@settings(max_examples=1500, deadline=None)
@given(slices())
def test_columnar_merge_equals_the_fold(case: tuple[SliceRecords, MergeSpec, pa.Array | None]) -> None:
    records, spec, keep_base = case
    oracle = merge_slice(records, spec, keep_base, keep_log=lambda _: True)
    assert summary(merge_slice(records, spec, keep_base)) == summary(oracle)


@settings(max_examples=800, deadline=None)
@given(slices(), st.data())
def test_merging_the_base_batch_by_batch_gives_the_same_rows(
    case: tuple[SliceRecords, MergeSpec, pa.Array | None], data: st.DataObject
) -> None:
    """A compaction streams a large base file through `LogMerge` in batches; the rows kept must be those the
    whole-file merge keeps (record keys are unique in a base file, as the generator makes them)."""
    records, spec, keep_base = case
    whole = merge_rows(records, spec, keep_base)
    base = records.base
    if base is None or records.schema is None:
        return
    cuts = sorted(data.draw(st.lists(st.integers(0, base.num_rows), max_size=4)))
    bounds = list(zip([0, *cuts], [*cuts, base.num_rows], strict=True))
    merge = LogMerge(records, spec)
    masks = [
        merge.merge_base(base.slice(a, b - a), keep_base.slice(a, b - a) if keep_base is not None else None)
        for a, b in bounds
    ]
    kept = pa.concat_arrays([m for m in masks if len(m)]) if any(len(m) for m in masks) else pa.array([], pa.bool_())
    assert pc.indices_nonzero(kept).to_pylist() == whole.base_rows.to_pylist()
    assert merge.log_rows().to_pylist() == whole.log_rows.to_pylist()
    assert merge.deletes().keys() == whole.deletes.keys()
