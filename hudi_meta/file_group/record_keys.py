"""Record keys and ordering values of Arrow records, as Hudi's key generators build keys, and the soft-delete
flag: what the merge rules (`file_group.merge.rules`) compare, read from the records."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_meta.file_group.merge.rules import MergeSpec

RECORD_KEY_COLUMN = "_hoodie_record_key"
IS_DELETED_COLUMN = "_hoodie_is_deleted"


def record_keys(table: pa.Table, spec: MergeSpec, use_meta_column: bool = True) -> list[str]:
    """Record keys of `table`: the meta column, or built from the key fields as the key generators do."""
    keys = _key_array(table, spec, use_meta_column)
    return keys.to_pylist() if keys is not None else _keys_one_by_one(table, spec)


def record_key_array(table: pa.Table, spec: MergeSpec, use_meta_column: bool = True) -> pa.Array:
    """`record_keys` as an Arrow string array: a null key reads "None", as `str` of it does there."""
    keys = _key_array(table, spec, use_meta_column)
    return keys if keys is not None else pa.array(_keys_one_by_one(table, spec), pa.string())


def _key_array(table: pa.Table, spec: MergeSpec, use_meta_column: bool) -> pa.Array | None:
    """The keys built with Arrow compute, or None where a key field's type is not spelt by Arrow as `str` spells
    it in Python (floats, booleans, timestamps: those go `_keys_one_by_one`)."""
    if use_meta_column and spec.populate_meta_fields and RECORD_KEY_COLUMN in table.column_names:
        return pc.fill_null(table.column(RECORD_KEY_COLUMN).combine_chunks().cast(pa.string()), "None")
    texts = [_as_text(table.column(f)) for f in spec.record_key_fields]
    if any(t is None for t in texts):
        return None
    if not spec.complex_key and len(texts) == 1:
        return texts[0]
    pairs = [
        pc.binary_join_element_wise(f"{name}:", text, "")
        for name, text in zip(spec.record_key_fields, texts, strict=True)
    ]
    return pc.binary_join_element_wise(*pairs, ",")


def _as_text(column: pa.ChunkedArray) -> pa.Array | None:
    """`str(value)` of each value (None: "None") for text and integer columns, else None."""
    kind = column.type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind)):
        return None
    return pc.fill_null(column.combine_chunks().cast(pa.string()), "None")


def _keys_one_by_one(table: pa.Table, spec: MergeSpec) -> list[str]:
    columns = [table.column(f).to_pylist() for f in spec.record_key_fields]
    if not spec.complex_key and len(columns) == 1:
        return [str(v) for v in columns[0]]
    return [
        ",".join(f"{name}:{value}" for name, value in zip(spec.record_key_fields, values, strict=True))
        for values in zip(*columns, strict=True)
    ]


def drop_soft_deleted(table: pa.Table) -> pa.Table:
    """`table` without the records flagged `_hoodie_is_deleted`: they merge like data, but a base file never
    holds one (Java's writers drop them there; readers of base files alone would show them)."""
    if IS_DELETED_COLUMN not in table.column_names or not table.num_rows:
        return table
    return table.filter(pc.invert(pc.fill_null(table.column(IS_DELETED_COLUMN), False)))


def ordering_values(table: pa.Table, spec: MergeSpec) -> list[Any]:
    if spec.ordering_field and spec.ordering_field in table.column_names:
        return list(table.column(spec.ordering_field).to_pylist())
    return [None] * table.num_rows
