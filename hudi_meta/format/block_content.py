"""Block content codecs: Avro data (v3), Parquet data, HFile data, delete (v3, Avro), decoded on demand.

Avro data content: int32 version, int32 record count, then per record int32 length + raw Avro datum
written with the SCHEMA header. HFile data content (the metadata table's log blocks): a complete HFile whose
cells are (record key, Avro datum with the `key` field left empty). Delete content: int32 version, int32
length, Avro `HoodieDeleteRecordList`.

Content that cannot be decoded raises BlockDecodeError (UnsupportedContentError for content this package does
not read). A reader must not skip such a block as if it were corrupt (Java fails on it too): it raises
`undecodable_block_error(path, block, error)`, an UndecodableBlockError naming the file, offset and reason.
Only framing damage (log_reader's CORRUPT blocks) is skipped.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import itertools
import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from hudi_meta.errors import BlockDecodeError, UndecodableBlockError, UnsupportedContentError
from hudi_meta.format.avro_arrow import (
    AvroUnionBranch,
    arrow_schema_from_avro_json,
    decoding_schema,
    records_to_arrow,
)
from hudi_meta.format.avro_columnar import decode_flat_avro, decode_flat_avro_blocks
from hudi_meta.format.hfile import HFileReader
from hudi_meta.format.log_block import AVRO_BLOCK_TYPES, BLOCK_CONTENT_VERSION, BlockType, LogBlock
from hudi_meta.format.parquet_file import encode_parquet

__all__ = [
    "BlockDecodeError",
    "DeleteRecord",
    "KeyedRecord",
    "UnsupportedContentError",
    "decode_avro_blocks_together",
    "decode_avro_records",
    "decode_data_block",
    "decode_data_block_at",
    "decode_delete_block_at",
    "decode_delete_records",
    "decode_hfile_records",
    "hfile_records",
    "decode_parquet",
    "encode_avro_records",
    "encode_delete_records",
    "encode_parquet",
    "undecodable_block_error",
]


@lru_cache(maxsize=256)
def parsed_schema(schema_json: str) -> Any:
    return fastavro.parse_schema(json.loads(schema_json))


@lru_cache(maxsize=256)
def _parsed_decoding_schema(schema_json: str) -> Any:
    return fastavro.parse_schema(decoding_schema(json.loads(schema_json)))


# ---- Avro data blocks -------------------------------------------------------------------------------


def decode_avro_records(content: bytes, schema_json: str) -> list[dict[str, Any]]:
    """Decode Avro data block content into records, using the block's SCHEMA header.

    Records come in the form `records_to_arrow` takes (see avro_arrow.decoding_schema): temporal logical types
    as their stored integers, multi-branch unions as `(branch tag, {"v": value})`. Each record is read from its
    own length-prefixed slice, as Java reads it: a datum running past its length is an error, bytes left over
    after it are skipped (Java skips them too).
    """
    try:
        version, count = struct.unpack_from(">ii", content, 0)
        schema = _parsed_decoding_schema(schema_json)
        if count < 0:
            raise BlockDecodeError(f"negative record count {count}")
        pos = 8
        records: list[dict[str, Any]] = []
        for _ in range(count):
            (length,) = struct.unpack_from(">i", content, pos)
            pos += 4
            if length < 0 or pos + length > len(content):
                raise BlockDecodeError("record length past content end")
            records.append(_read_datum(content[pos : pos + length], schema, tagged=True))
            pos += length
    except BlockDecodeError:
        raise
    except Exception as e:  # damaged bytes or a damaged SCHEMA header: fastavro raises many types
        raise BlockDecodeError(f"cannot decode Avro data block: {type(e).__name__}: {e}") from e
    return records


def _read_datum(datum: bytes, schema: Any, tagged: bool) -> dict[str, Any]:
    """One Avro datum as a record; `tagged`: unions as `decode_avro_records` gives them (its decoding schema)."""
    record = fastavro.schemaless_reader(
        io.BytesIO(datum), schema, None, return_record_name=tagged, return_record_name_override=tagged
    )
    if not isinstance(record, dict):
        raise BlockDecodeError("Avro datum is not a record")
    return record


def encode_avro_records(records: list[dict[str, Any]], schema_json: str) -> bytes:
    """Avro data block content (version 3) of `records` in the writer schema `schema_json`.

    Values may hold AvroUnionBranch (from avro_arrow.to_avro_value): they are written to exactly that branch.
    """
    schema = parsed_schema(schema_json)
    if _has_multi_union(schema_json):
        named = schema.get("__named_schemas", {})
        records = [_resolve_branches(r, schema, named) for r in records]
    parts = [struct.pack(">ii", BLOCK_CONTENT_VERSION, len(records))]
    for record in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, schema, record)
        data = buf.getvalue()
        parts.append(struct.pack(">i", len(data)))
        parts.append(data)
    return b"".join(parts)


@lru_cache(maxsize=256)
def _has_multi_union(schema_json: str) -> bool:
    return "hudi_meta_union_branch" in json.dumps(decoding_schema(json.loads(schema_json)))


def _branch_name(schema: Any) -> str:
    """The name fastavro's `(name, value)` union notation uses for a (parsed) branch schema."""
    if isinstance(schema, str):
        return schema
    kind = schema["type"]
    if kind in ("record", "error", "enum", "fixed"):
        return str(schema["name"])
    return str(kind)


def _resolve_branches(value: Any, schema: Any, named: dict[str, Any]) -> Any:
    """`value` with every AvroUnionBranch replaced by fastavro's `(branch name, value)` notation."""
    if value is None:
        return None
    if isinstance(schema, str):
        return _resolve_branches(value, named[schema], named) if schema in named else value
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null"]
        if isinstance(value, AvroUnionBranch):
            if not 0 <= value.index < len(branches):
                raise ValueError(f"union branch {value.index} not in {schema}")
            branch = branches[value.index]
            return (_branch_name(branch), _resolve_branches(value.value, branch, named))
        if len(branches) == 1:  # named too: fastavro cannot pick a branch by value around a tagged one
            return (_branch_name(branches[0]), _resolve_branches(value, branches[0], named))
        return value
    kind = schema["type"]
    if isinstance(kind, (dict, list)):
        return _resolve_branches(value, kind, named)
    if kind in ("record", "error") and isinstance(value, dict):
        types = {f["name"]: f["type"] for f in schema["fields"]}
        return {k: _resolve_branches(v, types[k], named) if k in types else v for k, v in value.items()}
    if kind == "array" and isinstance(value, list):
        return [_resolve_branches(v, schema["items"], named) for v in value]
    if kind == "map" and isinstance(value, dict):
        return {k: _resolve_branches(v, schema["values"], named) for k, v in value.items()}
    return value


# ---- HFile data blocks -----------------------------------------------------------------------------

KEY_FIELD = "key"  # HoodieMetadataRecord's key field: stored empty, the cell row holds the key


@dataclass(frozen=True)
class KeyedRecord:
    """One cell of an HFile data block: the record key and its Avro record (with `key` filled in)."""

    key: str
    record: dict[str, Any]


def _open_hfile(content: bytes, schema_json: str | None) -> tuple[HFileReader, str]:
    """The HFile of a block's content and the schema its datums are written in: the HFile's own `schema` file
    info entry, else the block's SCHEMA header (Java writes the same text in both)."""
    hfile = HFileReader(content, "HFILE_DATA block")
    schema = hfile.schema or schema_json
    if schema is None:
        raise BlockDecodeError("HFile data block without a schema (no file info `schema`, no SCHEMA header)")
    return hfile, schema


def _with_key(record: dict[str, Any], key: bytes) -> dict[str, Any]:
    if KEY_FIELD in record:
        record[KEY_FIELD] = key.decode("utf-8")
    return record


def decode_hfile_records(content: bytes, schema_json: str | None = None, tagged: bool = False) -> list[KeyedRecord]:
    """The records of an HFILE_DATA block's content, in key order, as plain fastavro records.

    Each cell's value is an Avro binary datum (no container) in the HFile's writer schema; its `key` field is
    written as "" and is set here from the cell's row key, as Hudi's HFile readers do.
    """
    try:
        return hfile_records(*_open_hfile(content, schema_json), tagged=tagged)
    except BlockDecodeError:
        raise
    except Exception as e:  # HFile damage (CorruptFileError), fastavro and UTF-8 errors on damaged bytes
        raise BlockDecodeError(f"cannot decode HFile data block: {type(e).__name__}: {e}") from e


def hfile_records(hfile: HFileReader, schema_json: str, tagged: bool = False) -> list[KeyedRecord]:
    """Every cell of `hfile` decoded as a record of `schema_json` (a base file's or a block's writer schema);
    `tagged`: a union of several records as `(name, value)`, what fastavro writes back to the same branch."""
    parsed = parsed_schema(schema_json)
    return [KeyedRecord(k.decode("utf-8"), _with_key(_read_datum(v, parsed, tagged), k)) for k, v in hfile.items()]


def _decode_hfile_block(content: bytes, schema_json: str | None, schema: pa.Schema | None) -> pa.Table:
    hfile, writer_schema = _open_hfile(content, schema_json)
    decoding = _parsed_decoding_schema(writer_schema)
    records = [_with_key(_read_datum(v, decoding, True), k) for k, v in hfile.items()]
    return records_to_arrow(records, schema if schema is not None else arrow_schema_from_avro_json(writer_schema))


# ---- Parquet data blocks ----------------------------------------------------------------------------


def decode_parquet(content: bytes) -> pa.Table:
    try:
        table = pq.ParquetFile(pa.BufferReader(content), pre_buffer=False).read()
        _ = table.schema.names  # damaged column names only fail when decoded: fail here, not later
        return table
    except (pa.ArrowException, OSError, UnicodeDecodeError) as e:
        raise BlockDecodeError(f"cannot decode Parquet data block: {e}") from e


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
        raise UnsupportedContentError(f"delete block version {version} is Kryo-serialised (Java only); not readable")
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
    """Records of an Avro, Parquet or HFile data block as an Arrow table (in `schema` when given).

    Content comes from disk and may be damaged: every failure to decode it is a BlockDecodeError.
    """
    try:
        return _decode_data_block(block, content, schema)
    except BlockDecodeError:
        raise
    except Exception as e:  # fastavro, pyarrow and the schema parser raise many types on bad bytes
        raise BlockDecodeError(f"cannot decode {block.block_type.name} block: {type(e).__name__}: {e}") from e


def _decode_data_block(block: LogBlock, content: bytes, schema: pa.Schema | None) -> pa.Table:
    if block.block_type in AVRO_BLOCK_TYPES:
        if block.schema is None:
            raise BlockDecodeError("Avro data block without a SCHEMA header")
        target = schema if schema is not None else arrow_schema_from_avro_json(block.schema)
        columnar = decode_flat_avro(content, block.schema)
        if columnar is not None and (table := _in_schema(columnar, target)) is not None:
            return table
        return records_to_arrow(decode_avro_records(content, block.schema), target)
    if block.block_type == BlockType.PARQUET_DATA:
        table = decode_parquet(content)
        return table if schema is None else conform(table, schema)
    if block.block_type == BlockType.HFILE_DATA:
        return _decode_hfile_block(content, block.schema, schema)
    raise UnsupportedContentError(f"{block.block_type.name} blocks hold no records")


def decode_avro_blocks_together(
    blocks: Sequence[LogBlock], contents: Sequence[bytes], schema: pa.Schema | None = None
) -> list[pa.Table] | None:
    """What `decode_data_block` gives for each of these Avro data blocks, from one columnar read of them all
    (`decode_flat_avro_blocks`), or None when that read does not apply to them (different SCHEMA headers, too
    few records, a schema that is not flat) or any of its checks fails: decode them one by one then, which
    stays the authority on every error."""
    header = blocks[0].schema if blocks else None
    if header is None or any(b.block_type not in AVRO_BLOCK_TYPES or b.schema != header for b in blocks):
        return None
    try:
        target = schema if schema is not None else arrow_schema_from_avro_json(header)
        decoded = decode_flat_avro_blocks(contents, header)
    except Exception:  # anything the single decoder would report, it reports for the block it is on
        return None
    if decoded is None:
        return None
    whole, counts = decoded
    table = _in_schema(whole, target)
    if table is None:
        return None
    starts = itertools.accumulate(counts, initial=0)
    return [table.slice(start, n) for start, n in zip(starts, counts, strict=False)]


def _in_schema(table: pa.Table, schema: pa.Schema) -> pa.Table | None:
    """`table` as `records_to_arrow` would build it in `schema`: missing fields null; None if a type differs."""
    columns = []
    for f in schema:
        if f.name not in table.column_names:
            columns.append(pa.nulls(table.num_rows, type=f.type))
        elif table.schema.field(f.name).type == f.type:
            columns.append(table.column(f.name))
        else:
            return None
    return pa.Table.from_arrays(columns, schema=schema)


def undecodable_block_error(path: str, block: LogBlock, error: BlockDecodeError) -> UndecodableBlockError:
    """The error a reader raises (`raise undecodable_block_error(...) from error`) instead of skipping the block."""
    return UndecodableBlockError(path, block.offset, block.block_type.name, str(error))


def decode_data_block_at(path: str, block: LogBlock, content: bytes, schema: pa.Schema | None = None) -> pa.Table:
    """decode_data_block for the block at `block.offset` of `path`: failures are UndecodableBlockError."""
    try:
        return decode_data_block(block, content, schema)
    except BlockDecodeError as e:
        raise undecodable_block_error(path, block, e) from e


def decode_delete_block_at(path: str, block: LogBlock, content: bytes) -> list[DeleteRecord]:
    """decode_delete_records for the block at `block.offset` of `path`: failures are UndecodableBlockError."""
    try:
        return decode_delete_records(content)
    except BlockDecodeError as e:
        raise undecodable_block_error(path, block, e) from e


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
