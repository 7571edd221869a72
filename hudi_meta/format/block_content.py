"""Block content codecs: Avro data (v3), Parquet data, delete (v3, Avro), decoded on demand.

Avro data content: int32 version, int32 record count, then per record int32 length + raw Avro datum
written with the SCHEMA header. Delete content: int32 version, int32 length, Avro `HoodieDeleteRecordList`.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from hudi_meta.format.avro_arrow import arrow_schema_from_avro_json, records_to_arrow
from hudi_meta.format.log_block import BLOCK_CONTENT_VERSION, BlockType, LogBlock


class BlockDecodeError(ValueError):
    """A block whose framing is valid but whose content cannot be decoded."""


@lru_cache(maxsize=256)
def parsed_schema(schema_json: str) -> Any:
    return fastavro.parse_schema(json.loads(schema_json))


# ---- Avro data blocks -------------------------------------------------------------------------------


def decode_avro_records(content: bytes, schema_json: str) -> list[dict[str, Any]]:
    """Decode Avro data block content into records (dicts), using the block's SCHEMA header."""
    try:
        version, count = struct.unpack_from(">ii", content, 0)
        schema = parsed_schema(schema_json)
        buf = io.BytesIO(content)
        pos = 8
        records: list[dict[str, Any]] = []
        for _ in range(count):
            (length,) = struct.unpack_from(">i", content, pos)
            pos += 4
            if length < 0 or pos + length > len(content):
                raise BlockDecodeError("record length past content end")
            buf.seek(pos)
            record = fastavro.schemaless_reader(buf, schema, None)
            if not isinstance(record, dict):
                raise BlockDecodeError("Avro data block record is not a record")
            records.append(record)
            pos += length
    except BlockDecodeError:
        raise
    except Exception as e:  # damaged bytes or a damaged SCHEMA header: fastavro raises many types
        raise BlockDecodeError(f"cannot decode Avro data block: {type(e).__name__}: {e}") from e
    return records


def encode_avro_records(records: list[dict[str, Any]], schema_json: str) -> bytes:
    schema = parsed_schema(schema_json)
    parts = [struct.pack(">ii", BLOCK_CONTENT_VERSION, len(records))]
    for record in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, schema, record)
        data = buf.getvalue()
        parts.append(struct.pack(">i", len(data)))
        parts.append(data)
    return b"".join(parts)


# ---- Parquet data blocks ----------------------------------------------------------------------------


def decode_parquet(content: bytes) -> pa.Table:
    try:
        table = pq.read_table(pa.BufferReader(content))
        _ = table.schema.names  # damaged column names only fail when decoded: fail here, not later
        return table
    except (pa.ArrowException, OSError, UnicodeDecodeError) as e:
        raise BlockDecodeError(f"cannot decode Parquet data block: {e}") from e


def encode_parquet(table: pa.Table, compression: str = "gzip") -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=compression)
    return bytes(sink.getvalue().to_pybytes())


# ---- Delete blocks ----------------------------------------------------------------------------------

_WRAPPERS: list[tuple[str, Any]] = [
    ("BooleanWrapper", "boolean"),
    ("IntWrapper", "int"),
    ("LongWrapper", "long"),
    ("FloatWrapper", "float"),
    ("DoubleWrapper", "double"),
    ("BytesWrapper", "bytes"),
    ("StringWrapper", "string"),
    ("DateWrapper", {"type": "int", "logicalType": "date"}),
    ("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    ("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    ("TimestampMicrosWrapper", {"type": "long", "logicalType": "timestamp-micros"}),
]
_NS = "org.apache.hudi.avro.model"


def _delete_list_schema(ordering_as_array: bool) -> Any:
    wrappers: list[Any] = [
        {"type": "record", "name": name, "namespace": _NS, "fields": [{"name": "value", "type": t}]}
        for name, t in _WRAPPERS
    ]
    ordering: Any = ["null", *wrappers]
    if ordering_as_array:  # Hudi 1.x: an array of wrapper unions (multiple ordering fields)
        ordering = ["null", {"type": "array", "items": ["null", *wrappers]}]
    record = {
        "type": "record",
        "name": "HoodieDeleteRecord",
        "namespace": _NS,
        "fields": [
            {"name": "recordKey", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "orderingVal", "type": ordering, "default": None},
        ],
    }
    schema = {
        "type": "record",
        "name": "HoodieDeleteRecordList",
        "namespace": _NS,
        "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": record}}],
    }
    return fastavro.parse_schema(schema)


# 0.14/0.15 (table version 6) write a single wrapper union; 1.1 writes an array of them.
DELETE_SCHEMA_V6 = _delete_list_schema(ordering_as_array=False)
DELETE_SCHEMA_ARRAY = _delete_list_schema(ordering_as_array=True)


@dataclass(frozen=True)
class DeleteRecord:
    """A deleted key. `ordering_value` None or 0 means natural order: the delete wins."""

    record_key: str
    partition_path: str | None
    ordering_value: Any = None

    @property
    def is_natural_order(self) -> bool:
        v = self.ordering_value
        return v is None or (isinstance(v, int) and not isinstance(v, bool) and v == 0)


def _unwrap(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, tuple):  # (record name, {"value": v}) from return_record_name
        value = value[1]
    if isinstance(value, list):
        values = [_unwrap(v) for v in value]
        return values[0] if len(values) == 1 else tuple(values)
    return value["value"] if isinstance(value, dict) else value


def _wrap(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, bool):
        name = "BooleanWrapper"
    elif isinstance(value, int):
        name = "IntWrapper" if value == 0 else "LongWrapper"  # Java writes natural order as Integer 0
    elif isinstance(value, float):
        name = "DoubleWrapper"
    elif isinstance(value, str):
        name = "StringWrapper"
    elif isinstance(value, bytes):
        name = "BytesWrapper"
    elif isinstance(value, decimal.Decimal):
        name = "DecimalWrapper"
    elif isinstance(value, dt.datetime):
        name = "TimestampMicrosWrapper"
    elif isinstance(value, dt.date):
        name = "DateWrapper"
    else:
        raise TypeError(f"unsupported ordering value {value!r}")
    return (f"{_NS}.{name}", {"value": value})


def decode_delete_records(content: bytes) -> list[DeleteRecord]:
    """Decode a delete block (content version 3); both the 0.x and the 1.x payload schemas are read."""
    try:
        version, length = struct.unpack_from(">ii", content, 0)
    except struct.error as e:
        raise BlockDecodeError("delete block shorter than its header") from e
    if version < 3:
        raise BlockDecodeError(f"delete block version {version} is Kryo-serialised (Java only); not readable")
    payload = content[8 : 8 + length]
    if len(payload) != length:
        raise BlockDecodeError("delete block payload truncated")
    last_error: Exception | None = None
    for schema in (DELETE_SCHEMA_V6, DELETE_SCHEMA_ARRAY):
        buf = io.BytesIO(payload)
        try:
            data = fastavro.schemaless_reader(buf, schema, None, return_record_name=True)
        except Exception as e:  # fastavro raises many types on bad bytes
            last_error = e
            continue
        if buf.tell() != len(payload) or not isinstance(data, dict):
            continue
        return [
            DeleteRecord(r["recordKey"], r["partitionPath"], _unwrap(r["orderingVal"]))
            for r in data["deleteRecordList"]
        ]
    raise BlockDecodeError(f"cannot decode delete block payload: {last_error}")


def encode_delete_records(records: list[DeleteRecord]) -> bytes:
    """Encode deletes the way table version 6 writers do (single wrapper union ordering value)."""
    data = {
        "deleteRecordList": [
            {
                "recordKey": r.record_key,
                "partitionPath": r.partition_path,
                "orderingVal": _wrap(0 if r.ordering_value is None else r.ordering_value),
            }
            for r in records
        ]
    }
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, DELETE_SCHEMA_V6, data)
    payload = buf.getvalue()
    return struct.pack(">ii", BLOCK_CONTENT_VERSION, len(payload)) + payload


# ---- dispatch ---------------------------------------------------------------------------------------


def decode_data_block(block: LogBlock, content: bytes, schema: pa.Schema | None = None) -> pa.Table:
    """Records of an Avro or Parquet data block as an Arrow table (in `schema` when given).

    Content comes from disk and may be damaged: every failure to decode it is a BlockDecodeError.
    """
    try:
        return _decode_data_block(block, content, schema)
    except BlockDecodeError:
        raise
    except Exception as e:  # fastavro, pyarrow and the schema parser raise many types on bad bytes
        raise BlockDecodeError(f"cannot decode {block.block_type.name} block: {type(e).__name__}: {e}") from e


def _decode_data_block(block: LogBlock, content: bytes, schema: pa.Schema | None) -> pa.Table:
    if block.block_type in (BlockType.AVRO_DATA, BlockType.CDC_DATA):
        if block.schema is None:
            raise BlockDecodeError("Avro data block without a SCHEMA header")
        records = decode_avro_records(content, block.schema)
        target = schema if schema is not None else arrow_schema_from_avro_json(block.schema)
        return records_to_arrow(records, target)
    if block.block_type == BlockType.PARQUET_DATA:
        table = decode_parquet(content)
        return table if schema is None else conform(table, schema)
    raise BlockDecodeError(f"{block.block_type.name} blocks are not supported (metadata-table HFile blocks)")


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Select and cast `table`'s columns to `schema` (missing columns become nulls)."""
    columns = []
    for f in schema:
        if f.name in table.column_names:
            col = table.column(f.name)
            columns.append(col if col.type == f.type else col.cast(f.type))
        else:
            columns.append(pa.nulls(table.num_rows, type=f.type))
    return pa.Table.from_arrays(columns, schema=schema)
