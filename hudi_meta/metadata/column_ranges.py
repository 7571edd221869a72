"""Column ranges of written data files: what the column_stats and partition_stats partitions record per file.

A range is a column's min, max, null count, value count and on-disk sizes in one file, with the value type
Java's column-stats index V2 records (`org.apache.hudi.metadata.stats.ValueType`, whose ordinals are written as
`valueType.typeOrdinal`). Base files: merged over the Parquet footer's row groups (Java's
`readColumnStatsFromMetadata`). Log files: computed from the records of their data blocks, sizes 0 (Java's
`getLogFileColumnRangeMetadata`). Values are kept as primitives: ints (also dates in days, times and timestamps in
their unit), floats, bools, str, bytes, and Decimal for decimals. `merge_ranges` is pure; the readers at the end
take our Storage.
"""

from __future__ import annotations

import decimal
import json
import math
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_meta.format.block_content import decode_data_block
from hudi_meta.format.log_reader import read_blocks, read_contents
from hudi_meta.storage.base import Storage


class ValueType(IntEnum):
    """Java's `ValueType` in declaration order: the ordinal is what v9 tables write as `typeOrdinal`."""

    V1 = 0
    NULL = 1
    BOOLEAN = 2
    INT = 3
    LONG = 4
    FLOAT = 5
    DOUBLE = 6
    STRING = 7
    BYTES = 8
    FIXED = 9
    DECIMAL = 10
    UUID = 11
    DATE = 12
    TIME_MILLIS = 13
    TIME_MICROS = 14
    TIMESTAMP_MILLIS = 15
    TIMESTAMP_MICROS = 16
    TIMESTAMP_NANOS = 17
    LOCAL_TIMESTAMP_MILLIS = 18
    LOCAL_TIMESTAMP_MICROS = 19
    LOCAL_TIMESTAMP_NANOS = 20


@dataclass(frozen=True)
class ColumnRange:
    """One column of one file (`HoodieColumnRangeMetadata`); `type_info` is `"precision,scale"` for decimals
    (`valueType.additionalInfo`). min/max are None when the column holds no non-null value."""

    file_name: str
    column: str
    min_value: Any
    max_value: Any
    null_count: int
    value_count: int
    total_size: int
    total_uncompressed_size: int
    value_type: ValueType
    type_info: str | None = None


def _order(value: Any) -> Any:
    """Sort key of a value as Java compares it: `Double.compareTo` puts -0.0 before 0.0."""
    return (value, math.copysign(1.0, value)) if isinstance(value, float) else value


def _pick(a: Any, b: Any, take_min: bool) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b, key=_order) if take_min else max(a, b, key=_order)


def merge_ranges(older: ColumnRange, newer: ColumnRange) -> ColumnRange:
    """Two ranges of one column as one (row groups of a file, files of a partition): min of mins, max of
    maxes, counts and sizes summed (`HoodieColumnRangeMetadata.merge`). The file name and type are `newer`'s."""
    return replace(
        newer,
        min_value=_pick(older.min_value, newer.min_value, True),
        max_value=_pick(older.max_value, newer.max_value, False),
        null_count=older.null_count + newer.null_count,
        value_count=older.value_count + newer.value_count,
        total_size=older.total_size + newer.total_size,
        total_uncompressed_size=older.total_uncompressed_size + newer.total_uncompressed_size,
    )


def merge_all(ranges: Iterable[ColumnRange]) -> dict[str, ColumnRange]:
    """Column name -> the merge of every range of that column, in order."""
    out: dict[str, ColumnRange] = {}
    for r in ranges:
        out[r.column] = merge_ranges(out[r.column], r) if r.column in out else r
    return out


# ---- Parquet footers --------------------------------------------------------------------------------------

_PHYSICAL = {
    "BOOLEAN": ValueType.BOOLEAN,
    "INT32": ValueType.INT,
    "INT64": ValueType.LONG,
    "FLOAT": ValueType.FLOAT,
    "DOUBLE": ValueType.DOUBLE,
    "BYTE_ARRAY": ValueType.BYTES,
    "FIXED_LEN_BYTE_ARRAY": ValueType.FIXED,
}


_UNITS = {"milliseconds": "MILLIS", "microseconds": "MICROS", "nanoseconds": "NANOS"}


def _timestamp_type(utc: bool, unit: str) -> ValueType:
    prefix = "TIMESTAMP" if utc else "LOCAL_TIMESTAMP"
    return ValueType[f"{prefix}_{_UNITS[unit]}"]


def parquet_value_type(column: pq.ColumnSchema) -> tuple[ValueType, str | None]:
    """The ValueType Java derives from a Parquet column (`ValueType.fromParquetPrimitiveType`)."""
    logical = json.loads(column.logical_type.to_json()) if column.logical_type is not None else {}
    kind = logical.get("Type", "None")
    if kind == "String" or kind == "Enum" or kind == "Json":
        return ValueType.STRING, None
    if kind == "Decimal":
        return ValueType.DECIMAL, f"{column.precision},{column.scale}"
    if kind == "Date":
        return ValueType.DATE, None
    if kind == "UUID":
        return ValueType.UUID, None
    if kind == "Time":
        return ValueType[f"TIME_{_UNITS[logical['timeUnit']]}"], None
    if kind == "Timestamp":
        return _timestamp_type(bool(logical["isAdjustedToUTC"]), logical["timeUnit"]), None
    return _PHYSICAL[column.physical_type], None


def _raw_value(raw: Any, value_type: ValueType, scale: int) -> Any:
    """A footer statistic (`min_raw`/`max_raw`) as the primitive of `value_type`."""
    if value_type == ValueType.STRING:
        return raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if value_type in (ValueType.FLOAT, ValueType.DOUBLE) and raw == 0:
        return raw  # the sign of a zero is fixed by the caller
    if value_type == ValueType.DECIMAL:
        unscaled = int.from_bytes(raw, "big", signed=True) if isinstance(raw, bytes) else int(raw)
        return decimal.Decimal(unscaled).scaleb(-scale)
    return raw


def parquet_ranges(metadata: pq.FileMetaData, file_name: str, columns: Sequence[str]) -> list[ColumnRange]:
    """Ranges of the top-level `columns` present in a Parquet footer, each merged over the row groups. A float
    min of zero is -0.0 and a max of zero +0.0, as Parquet writers store them (PARQUET-1222) and Java reads them
    back (pyarrow's statistics drop the sign)."""
    schema = metadata.schema
    index = {schema.column(i).path: i for i in range(len(schema))}
    out: list[ColumnRange] = []
    for name in columns:
        if name not in index:
            continue
        col = schema.column(index[name])
        value_type, info = parquet_value_type(col)
        scale = col.scale if value_type == ValueType.DECIMAL else 0
        merged: ColumnRange | None = None
        for g in range(metadata.num_row_groups):
            chunk = metadata.row_group(g).column(index[name])
            stats = chunk.statistics
            has = stats is not None and stats.has_min_max
            low = _raw_value(stats.min_raw, value_type, scale) if has else None
            high = _raw_value(stats.max_raw, value_type, scale) if has else None
            part = ColumnRange(
                file_name,
                name,
                -0.0 if isinstance(low, float) and low == 0 else low,
                0.0 if isinstance(high, float) and high == 0 else high,
                stats.null_count if stats is not None and stats.has_null_count else 0,
                chunk.num_values,
                chunk.total_compressed_size,
                chunk.total_uncompressed_size,
                value_type,
                info,
            )
            merged = part if merged is None else merge_ranges(merged, part)
        if merged is not None:
            out.append(merged)
    return out


def base_file_ranges(storage: Storage, path: str, columns: Sequence[str]) -> list[ColumnRange]:
    """Ranges of a Parquet base file, from its footer only."""
    with storage.open_arrow(path) as f:
        metadata = pq.ParquetFile(f).metadata
    return parquet_ranges(metadata, posixpath.basename(path), columns)


# ---- log files ------------------------------------------------------------------------------------------

_AVRO_LOGICAL = {
    "date": ValueType.DATE,
    "uuid": ValueType.UUID,
    "time-millis": ValueType.TIME_MILLIS,
    "time-micros": ValueType.TIME_MICROS,
    "timestamp-millis": ValueType.TIMESTAMP_MILLIS,
    "timestamp-micros": ValueType.TIMESTAMP_MICROS,
    "timestamp-nanos": ValueType.TIMESTAMP_NANOS,
    "local-timestamp-millis": ValueType.LOCAL_TIMESTAMP_MILLIS,
    "local-timestamp-micros": ValueType.LOCAL_TIMESTAMP_MICROS,
    "local-timestamp-nanos": ValueType.LOCAL_TIMESTAMP_NANOS,
}
_AVRO_PRIMITIVE = {
    "null": ValueType.NULL,
    "boolean": ValueType.BOOLEAN,
    "int": ValueType.INT,
    "long": ValueType.LONG,
    "float": ValueType.FLOAT,
    "double": ValueType.DOUBLE,
    "string": ValueType.STRING,
    "bytes": ValueType.BYTES,
    "fixed": ValueType.FIXED,
}


def avro_value_type(schema: Any) -> tuple[ValueType, str | None] | None:
    """The ValueType of an Avro field type (`ValueType.fromSchema`); None for types the index skips
    (records, arrays, maps, enums, unions of two non-null types)."""
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null"]
        return avro_value_type(branches[0]) if len(branches) == 1 else None
    if isinstance(schema, str):
        kind = _AVRO_PRIMITIVE.get(schema)
        return (kind, None) if kind is not None else None
    logical = schema.get("logicalType")
    if logical == "decimal":
        return ValueType.DECIMAL, f"{schema['precision']},{schema.get('scale', 0)}"
    if logical in _AVRO_LOGICAL:
        return _AVRO_LOGICAL[logical], None
    return avro_value_type(schema["type"]) if isinstance(schema["type"], (str, list)) else None


def _arrow_min_max(column: pa.ChunkedArray) -> tuple[Any, Any]:
    if pa.types.is_timestamp(column.type) or pa.types.is_time(column.type):
        column = column.cast(pa.int64())
    elif pa.types.is_date32(column.type):
        column = column.cast(pa.int32())
    if column.null_count == len(column):
        return None, None
    result = pc.min_max(column)
    return result["min"].as_py(), result["max"].as_py()


def table_ranges(
    table: pa.Table, file_name: str, types: Mapping[str, tuple[ValueType, str | None]]
) -> list[ColumnRange]:
    """Ranges of the typed columns of records read from a log file (sizes 0, as Java writes for logs)."""
    out = []
    for name, (value_type, info) in types.items():
        if name not in table.column_names:
            continue
        column = table.column(name)
        low, high = _arrow_min_max(column)
        out.append(ColumnRange(file_name, name, low, high, column.null_count, len(column), 0, 0, value_type, info))
    return out


def _field_types(schema_json: str, columns: Sequence[str]) -> dict[str, tuple[ValueType, str | None]]:
    fields = {f["name"]: f["type"] for f in json.loads(schema_json)["fields"]}
    out = {}
    for name in columns:
        typed = avro_value_type(fields[name]) if name in fields else None
        if typed is not None:
            out[name] = typed
    return out


def empty_ranges(file_name: str, columns: Sequence[str]) -> list[ColumnRange]:
    """What Java records for a log file without data records (only deletes): every column, no values,
    counts 0, value type NULL."""
    return [ColumnRange(file_name, c, None, None, 0, 0, 0, 0, ValueType.NULL) for c in columns]


def log_file_ranges(storage: Storage, path: str, columns: Sequence[str]) -> list[ColumnRange]:
    """Ranges over the records of a log file's data blocks (delete and command blocks hold no values); a
    log file with no data block gets `empty_ranges`."""
    file_name = posixpath.basename(path)
    blocks = [b for b in read_blocks(storage, path) if b.is_data]
    if not blocks:
        return empty_ranges(file_name, columns)
    merged: dict[str, ColumnRange] = {}
    for block, content in zip(blocks, read_contents(storage, path, blocks), strict=True):
        types = _field_types(block.schema, columns) if block.schema else {}
        for r in table_ranges(decode_data_block(block, content), file_name, types):
            merged[r.column] = merge_ranges(merged[r.column], r) if r.column in merged else r
    return [merged[c] for c in columns if c in merged]


def file_ranges(storage: Storage, path: str, columns: Sequence[str]) -> list[ColumnRange]:
    """Ranges of a written data file: a log file (its name starts with a dot) or a Parquet base file."""
    if posixpath.basename(path).startswith("."):
        return log_file_ranges(storage, path, columns)
    return base_file_ranges(storage, path, columns)
