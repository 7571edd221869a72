"""Conversions between Avro schemas (as Hudi stores them in block headers and commits) and Arrow.

Every Avro type maps to Arrow; logical types map as parquet-avro does (decimal -> decimal128/256, date -> date32,
time-millis -> time32[ms], time-micros -> time64[us], timestamp-* -> timestamp[unit, UTC], local-timestamp-* ->
timestamp[unit], duration -> month_day_nano_interval, uuid -> string). A logical type on the wrong physical type is
ignored, as Avro's Java library ignores it. Enums read as strings, fixed as fixed-size binary.

Hudi writes nullable fields as `["null", T]` unions. A union with two or more non-null branches becomes a struct
with one nullable field per non-null branch, `member0`, `member1`, ... in branch order, exactly one of them set:
the shape parquet-avro writes such a union in Parquet and Spark's Avro reader gives it, so a compacted base file
holds it the way Java's would (Arrow's own union types cannot be written to Parquet). Member fields carry
`UNION_MEMBER` metadata so that the writer turns the struct back into the union.

Decoding reads the raw physical values of date/time/timestamp/uuid/duration (fastavro would build Python objects,
and fails on values outside `datetime`'s range that Java reads fine) and wraps each branch of a multi-branch union
in a one-field record, which has the same binary encoding, so that fastavro reports the branch it read.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import pyarrow as pa

from hudi_meta.errors import AvroSchemaError, BlockDecodeError, UnsupportedContentError

AvroSchema = Any  # a parsed Avro schema: str, dict or list

UNION_MEMBER = b"hudi_meta.avro.union.member"  # field metadata key: the member's branch index
_BRANCH_RECORD = "hudi_meta_union_branch"  # name prefix of the decoding wrappers: <prefix>_<union>_<branch>
_NAMED = ("record", "error", "enum", "fixed")
PRIMITIVE_TYPES: dict[str, pa.DataType] = {  # Avro primitive -> Arrow type
    "null": pa.null(),
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}
# Logical types read as their physical value (see the module docstring), with the physical type they annotate.
_RAW_LOGICAL: dict[str, tuple[str, ...]] = {
    "date": ("int",),
    "time-millis": ("int",),
    "time-micros": ("long",),
    "timestamp-millis": ("long",),
    "timestamp-micros": ("long",),
    "timestamp-nanos": ("long",),
    "local-timestamp-millis": ("long",),
    "local-timestamp-micros": ("long",),
    "local-timestamp-nanos": ("long",),
    "uuid": ("string", "fixed"),
    "duration": ("fixed",),
}


# ---- Avro -> Arrow types ------------------------------------------------------------------------------


@dataclass
class _Names:
    """Named types seen so far by full name, and the ones being converted (Arrow has no recursive types)."""

    schemas: dict[str, AvroSchema]
    open: set[str]


def _full_name(schema: dict[str, Any], namespace: str) -> tuple[str, str]:
    """(full name, namespace for the type's children) of a named type, per the Avro spec."""
    name = str(schema["name"])
    if "." in name:
        return name, name.rsplit(".", 1)[0]
    ns = schema.get("namespace", namespace)
    ns = "" if ns is None else str(ns)
    return (f"{ns}.{name}" if ns else name), ns


def _branches(union: list[Any]) -> list[Any]:
    return [b for b in union if b != "null"]


def _logical_kind(schema: dict[str, Any]) -> str | None:
    """The schema's logical type when valid on its physical type (Java ignores invalid ones), else None."""
    logical = schema.get("logicalType")
    kind = schema.get("type")
    if logical == "decimal" and kind in ("bytes", "fixed"):
        precision, scale = schema.get("precision"), schema.get("scale", 0)
        if not isinstance(precision, int) or not isinstance(scale, int) or not 0 <= scale <= precision:
            return None
        if precision <= 0 or (kind == "fixed" and precision > _max_fixed_precision(int(schema["size"]))):
            return None
        return "decimal"
    if isinstance(logical, str) and kind in _RAW_LOGICAL.get(logical, ()):
        if logical == "uuid" and kind == "fixed" and schema.get("size") != 16:
            return None
        if logical == "duration" and schema.get("size") != 12:
            return None
        return logical
    return None


def _max_fixed_precision(size: int) -> int:
    digits = 0
    while 10 ** (digits + 1) <= 2 ** (8 * size - 1) - 1:
        digits += 1
    return digits


def _logical_arrow_type(schema: dict[str, Any], logical: str) -> pa.DataType:
    if logical == "decimal":
        precision, scale = int(schema["precision"]), int(schema.get("scale", 0))
        return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    if logical == "date":
        return pa.date32()
    if logical == "time-millis":
        return pa.time32("ms")
    if logical == "time-micros":
        return pa.time64("us")
    if logical == "uuid":
        return pa.string() if schema["type"] == "string" else pa.binary(16)
    if logical == "duration":
        return pa.month_day_nano_interval()
    local, unit = logical.startswith("local-"), logical.rsplit("-", 1)[1]
    return pa.timestamp({"millis": "ms", "micros": "us", "nanos": "ns"}[unit], tz=None if local else "UTC")


def _to_arrow(schema: AvroSchema, names: _Names, namespace: str) -> pa.DataType:
    if isinstance(schema, list):
        branches = _branches(schema)
        if not branches:
            return pa.null()
        if len(branches) == 1:
            return _to_arrow(branches[0], names, namespace)
        return pa.struct(
            [
                pa.field(f"member{i}", _to_arrow(b, names, namespace), metadata={UNION_MEMBER: str(i).encode()})
                for i, b in enumerate(branches)
            ]
        )
    if isinstance(schema, str):
        if schema in PRIMITIVE_TYPES:
            return PRIMITIVE_TYPES[schema]
        for full in (f"{namespace}.{schema}" if namespace and "." not in schema else schema, schema):
            if full in names.schemas:
                if full in names.open:
                    raise UnsupportedContentError(f"recursive Avro type {full} has no Arrow equivalent")
                return _to_arrow(names.schemas[full], names, full.rsplit(".", 1)[0] if "." in full else "")
        raise AvroSchemaError(f"unknown Avro type {schema!r}")
    if not isinstance(schema, dict) or "type" not in schema:
        raise AvroSchemaError(f"not an Avro schema: {schema!r}")
    kind = schema["type"]
    if isinstance(kind, (dict, list)):
        return _to_arrow(kind, names, namespace)
    logical = _logical_kind(schema)
    full = ""
    if kind in _NAMED:
        if "name" not in schema:
            raise AvroSchemaError(f"Avro {kind} without a name")
        full, namespace = _full_name(schema, namespace)
        names.schemas[full] = schema
    if logical is not None:
        return _logical_arrow_type(schema, logical)
    if kind in ("record", "error"):
        if not isinstance(schema.get("fields"), list):
            raise AvroSchemaError(f"Avro record {full} without fields")
        names.open.add(full)
        try:
            return pa.struct([_field_to_arrow(f, names, namespace) for f in schema["fields"]])
        finally:
            names.open.discard(full)
    if kind == "array":
        return pa.list_(_to_arrow(schema["items"], names, namespace))
    if kind == "map":
        return pa.map_(pa.string(), _to_arrow(schema["values"], names, namespace))
    if kind == "enum":
        return pa.string()
    if kind == "fixed":
        return pa.binary(int(schema["size"]))
    if kind in PRIMITIVE_TYPES:
        return PRIMITIVE_TYPES[kind]
    raise AvroSchemaError(f"unknown Avro type {kind!r}")


def _nullable_avro(schema: AvroSchema) -> bool:
    if isinstance(schema, list):
        return "null" in schema
    if isinstance(schema, dict) and isinstance(schema.get("type"), list):
        return "null" in schema["type"]
    return schema == "null" or (isinstance(schema, dict) and schema.get("type") == "null")


def _field_to_arrow(field: dict[str, Any], names: _Names, namespace: str) -> pa.Field:
    if not isinstance(field, dict) or "name" not in field or "type" not in field:
        raise AvroSchemaError(f"not an Avro record field: {field!r}")
    dtype = _to_arrow(field["type"], names, namespace)
    return pa.field(field["name"], dtype, nullable=_nullable_avro(field["type"]) or pa.types.is_null(dtype))


@lru_cache(maxsize=256)
def arrow_schema_from_avro_json(schema_json: str) -> pa.Schema:
    """The Arrow schema of a record schema given as JSON (cached: headers repeat the same schema).

    A header that is not a valid record schema raises AvroSchemaError (a BlockDecodeError).
    """
    try:
        schema = json.loads(schema_json)
        struct_type = _to_arrow(schema, _Names({}, set()), "")
    except BlockDecodeError:
        raise
    except Exception as e:  # malformed JSON or a malformed schema
        raise AvroSchemaError(f"invalid Avro schema: {type(e).__name__}: {e}") from e
    if not pa.types.is_struct(struct_type) or not isinstance(schema, dict) or schema.get("type") != "record":
        raise AvroSchemaError("the SCHEMA header is not an Avro record")
    return pa.schema(list(struct_type))


# ---- the schema fastavro decodes with ----------------------------------------------------------------


def decoding_schema(schema: AvroSchema) -> AvroSchema:
    """The writer schema as fastavro should read it: same bytes, raw temporal values, union branches tagged.

    Each non-null branch of a multi-branch union becomes a record `<prefix>_<k>_<i>` with one field `v` (a
    record's encoding is its fields' encodings, so the bytes read are the same); read with
    `return_record_name=True`, fastavro then returns `(name, {"v": value})`, naming branch i exactly even where
    values alone cannot (int or long, float or double). The wrapper has no namespace of its own, so the types
    defined inside it keep their full names.
    """
    counter = iter(range(1 << 62))
    return _decoding(schema, counter)


def _decoding(schema: AvroSchema, counter: Iterator[int]) -> AvroSchema:
    if isinstance(schema, list):
        branches = _branches(schema)
        if len(branches) < 2:
            return [_decoding(b, counter) for b in schema]
        k = next(counter)
        out: list[Any] = []
        i = 0
        for b in schema:
            if b == "null":
                out.append("null")
                continue
            wrapped = _decoding(b, counter)
            out.append(
                {"type": "record", "name": f"{_BRANCH_RECORD}_{k}_{i}", "fields": [{"name": "v", "type": wrapped}]}
            )
            i += 1
        return out
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if isinstance(kind, (dict, list)):
        return {**schema, "type": _decoding(kind, counter)}
    out_schema = dict(schema)
    logical = _logical_kind(schema)
    if logical is not None and logical != "decimal":
        del out_schema["logicalType"]
    elif "logicalType" in schema and logical is None:
        del out_schema["logicalType"]  # invalid: read the physical value, as Java does
    if kind in ("record", "error") and isinstance(schema.get("fields"), list):
        out_schema["fields"] = [
            {**f, "type": _decoding(f["type"], counter)} if isinstance(f, dict) and "type" in f else f
            for f in schema["fields"]
        ]
    elif kind == "array" and "items" in schema:
        out_schema["items"] = _decoding(schema["items"], counter)
    elif kind == "map" and "values" in schema:
        out_schema["values"] = _decoding(schema["values"], counter)
    return out_schema


def branch_index(tag: str) -> int:
    """The branch index in a decoding wrapper's (full) record name."""
    name = tag.rsplit(".", 1)[-1]
    if not name.startswith(_BRANCH_RECORD + "_"):
        raise BlockDecodeError(f"unexpected union branch {tag!r}")
    return int(name.rsplit("_", 1)[1])


# ---- Arrow -> Avro types ------------------------------------------------------------------------------


def is_union(dtype: pa.DataType) -> bool:
    """True for the struct a multi-branch Avro union reads as (its members carry UNION_MEMBER metadata)."""
    if not pa.types.is_struct(dtype) or dtype.num_fields < 2:
        return False
    return all(f.metadata is not None and UNION_MEMBER in f.metadata for f in dtype)


def arrow_to_avro_type(dtype: pa.DataType, name: str, namespace: str) -> AvroSchema:
    """Avro type (without the null union) for an Arrow type, named as Spark's Avro converter names them."""
    if pa.types.is_null(dtype):
        return "null"
    if pa.types.is_boolean(dtype):
        return "boolean"
    if pa.types.is_int8(dtype) or pa.types.is_int16(dtype) or pa.types.is_int32(dtype) or pa.types.is_uint8(dtype):
        return "int"
    if pa.types.is_uint16(dtype):
        return "int"
    if pa.types.is_integer(dtype):
        return "long"
    if pa.types.is_float16(dtype) or pa.types.is_float32(dtype):
        return "float"
    if pa.types.is_floating(dtype):
        return "double"
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype) or pa.types.is_string_view(dtype):
        return "string"
    if pa.types.is_fixed_size_binary(dtype):
        return {"type": "fixed", "name": name, "namespace": namespace, "size": dtype.byte_width}
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype) or pa.types.is_binary_view(dtype):
        return "bytes"
    if pa.types.is_decimal(dtype):
        return {
            "type": "fixed",
            "name": "fixed",
            "namespace": f"{namespace}.{name}",
            "size": _decimal_fixed_size(dtype.precision),
            "logicalType": "decimal",
            "precision": dtype.precision,
            "scale": dtype.scale,
        }
    if pa.types.is_date(dtype):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_time32(dtype):
        return {"type": "int", "logicalType": "time-millis"}
    if pa.types.is_time64(dtype):
        return {"type": "long", "logicalType": "time-micros"}
    if pa.types.is_timestamp(dtype):
        # nanos are written as micros: Hudi's Java (Avro 1.10/1.11) and Spark do not know timestamp-nanos
        unit = "millis" if dtype.unit in ("s", "ms") else "micros"
        prefix = "" if dtype.tz is not None else "local-"
        return {"type": "long", "logicalType": f"{prefix}timestamp-{unit}"}
    if dtype == pa.month_day_nano_interval():
        return {"type": "fixed", "name": name, "namespace": namespace, "size": 12, "logicalType": "duration"}
    if is_union(dtype):
        child_ns = f"{namespace}.{name}"
        branches = [arrow_to_avro_type(f.type, f.name, child_ns) for f in dtype]
        kinds = [_branch_kind(b) for b in branches]
        for i, kind in enumerate(kinds):
            if kind in kinds[:i]:  # e.g. a uuid string and an enum both become `string`: the branch would be lost
                raise ValueError(
                    f"union {name}: members {kinds.index(kind)} and {i} are both {kind} in Avro; a union with "
                    "indistinct branches cannot be written back exactly"
                )
        return branches
    if pa.types.is_struct(dtype):
        return arrow_to_avro_record(pa.schema(list(dtype)), name, namespace)
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_fixed_size_list(dtype):
        return {"type": "array", "items": _nullable(arrow_to_avro_type(dtype.value_type, name, namespace))}
    if pa.types.is_map(dtype):
        return {"type": "map", "values": _nullable(arrow_to_avro_type(dtype.item_type, name, namespace))}
    if pa.types.is_dictionary(dtype):
        return arrow_to_avro_type(dtype.value_type, name, namespace)
    raise ValueError(f"unsupported Arrow type {dtype}")


def _branch_kind(branch: AvroSchema) -> str:
    """What tells union branches apart in Avro: a named type's name, else the type."""
    if isinstance(branch, dict):
        kind = str(branch.get("type"))
        return str(branch["name"]) if kind in ("record", "enum", "fixed") else kind
    return str(branch)


def _decimal_fixed_size(precision: int) -> int:
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


def _nullable(avro_type: AvroSchema) -> AvroSchema:
    if avro_type == "null":
        return "null"
    if isinstance(avro_type, list):  # a union already: null joins its branches (unions do not nest)
        return ["null", *avro_type]
    return ["null", avro_type]


def arrow_to_avro_record(schema: pa.Schema, name: str, namespace: str) -> dict[str, Any]:
    """A record schema with every field nullable, the way Hudi's Spark writer declares them."""
    child_ns = f"{namespace}.{name}"
    fields = []
    for f in schema:
        fields.append(
            {"name": f.name, "type": _nullable(arrow_to_avro_type(f.type, f.name, child_ns)), "default": None}
        )
    return {"type": "record", "name": name, "namespace": namespace, "fields": fields}


def table_record_schema(schema: pa.Schema, table_name: str) -> dict[str, Any]:
    """The record schema Hudi's Spark writer declares for table `table_name`: `<name>_record` in the Avro namespace
    `hoodie.<name>` (AvroConversionUtils.getAvroRecordNameAndNamespace; a namespace, not a config key)."""
    return arrow_to_avro_record(schema, f"{table_name}_record", f"hoodie.{table_name}")


# ---- values -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AvroUnionBranch:
    """A value for branch `index` (counting non-null branches) of a multi-branch union.

    The encoder (block_content.encode_avro_records) turns it into fastavro's `(type name, value)` notation; the
    branch is then exact, where fastavro's own choice by value would write 5 of a `long` member as `int`.
    """

    index: int
    value: Any


_DURATION = struct.Struct("<III")
_INT32_MAX = 2**31 - 1


def _duration_bytes(value: Any) -> bytes:
    months, days, nanos = value.months, value.days, value.nanoseconds
    millis, rest = divmod(nanos, 1_000_000)
    if rest or not all(0 <= v < 2**32 for v in (months, days, millis)):
        raise ValueError(f"interval {value} is not an Avro duration (unsigned months, days and whole millis)")
    return _DURATION.pack(months, days, millis)


def to_avro_value(value: Any, dtype: pa.DataType) -> Any:
    """Turn one `to_pylist` value into what fastavro expects (maps as dicts, unions as branches, nested alike)."""
    if value is None:
        return None
    if pa.types.is_map(dtype):
        return {k: to_avro_value(v, dtype.item_type) for k, v in value}
    if is_union(dtype):
        set_members = [(i, f) for i, f in enumerate(dtype) if value.get(f.name) is not None]
        if not set_members:
            return None
        if len(set_members) > 1:
            raise ValueError(f"union value {value!r} sets more than one member")
        i, f = set_members[0]
        return AvroUnionBranch(i, to_avro_value(value[f.name], f.type))
    if pa.types.is_struct(dtype):
        return {f.name: to_avro_value(value.get(f.name), f.type) for f in dtype}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_fixed_size_list(dtype):
        return [to_avro_value(v, dtype.value_type) for v in value]
    if dtype == pa.month_day_nano_interval():
        return _duration_bytes(value)
    return value


def needs_conversion(dtype: pa.DataType) -> bool:
    """True when values of this type differ between Arrow and fastavro (maps, unions, durations inside)."""
    if pa.types.is_map(dtype) or dtype == pa.month_day_nano_interval():
        return True
    if pa.types.is_struct(dtype):
        return is_union(dtype) or any(needs_conversion(f.type) for f in dtype)
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_fixed_size_list(dtype):
        return needs_conversion(dtype.value_type)
    return False


def from_avro_value(value: Any, dtype: pa.DataType) -> Any:
    """Turn one decoded value (see `decoding_schema`) into what `pa.array` accepts for `dtype`."""
    if value is None:
        return None
    if isinstance(value, tuple) and pa.types.is_struct(dtype):  # a tagged union branch
        index = branch_index(value[0])
        if index >= dtype.num_fields:
            raise BlockDecodeError(f"union branch {index} has no member in {dtype}")
        member = dtype.field(index)
        return {member.name: from_avro_value(value[1]["v"], member.type)}
    if pa.types.is_map(dtype):
        return [(k, from_avro_value(v, dtype.item_type)) for k, v in value.items()]
    if pa.types.is_struct(dtype):
        return {f.name: from_avro_value(value.get(f.name), f.type) for f in dtype}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return [from_avro_value(v, dtype.value_type) for v in value]
    if dtype == pa.month_day_nano_interval() and isinstance(value, bytes):
        months, days, millis = _DURATION.unpack(value)
        if months > _INT32_MAX or days > _INT32_MAX:  # Avro's are unsigned, Arrow's interval fields signed
            raise ValueError(f"Avro duration ({months} months, {days} days) is beyond Arrow's interval range")
        return (months, days, millis * 1_000_000)
    return value


def _decoded_needs_conversion(dtype: pa.DataType) -> bool:
    """Like needs_conversion, for decoded values: any struct may be a tagged union (even if its metadata got lost)."""
    if pa.types.is_struct(dtype):
        return True
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return _decoded_needs_conversion(dtype.value_type)
    return needs_conversion(dtype)


def records_to_arrow(records: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """Build an Arrow table of `schema` from decoded Avro records (missing fields become null)."""
    columns = []
    for f in schema:
        values = [r.get(f.name) for r in records]
        if _decoded_needs_conversion(f.type):
            values = [from_avro_value(v, f.type) for v in values]
        columns.append(pa.array(values, type=f.type))
    return pa.Table.from_arrays(columns, schema=schema)


# Temporal columns are written as their Avro storage value (an int in Avro's unit): exact for every value,
# where Python's datetime covers years 1-9999 only. fastavro's logical writers pass ints through.
def _avro_unit_type(dtype: pa.DataType) -> pa.DataType:
    """`dtype` with temporal units converted to the ones Avro stores (ms for time32, us for time64, ...)."""
    if pa.types.is_date(dtype):
        return pa.date32()
    if pa.types.is_time32(dtype):
        return pa.time32("ms")
    if pa.types.is_time64(dtype):
        return pa.time64("us")
    if pa.types.is_timestamp(dtype):
        return pa.timestamp({"s": "ms", "ns": "us"}.get(dtype.unit, dtype.unit), tz=dtype.tz)
    return _map_children(dtype, _avro_unit_type)


def _storage_type(dtype: pa.DataType) -> pa.DataType:
    """`_avro_unit_type(dtype)` with temporal types replaced by the integers that hold them."""
    if pa.types.is_date32(dtype) or pa.types.is_time32(dtype):
        return pa.int32()
    if pa.types.is_time64(dtype) or pa.types.is_timestamp(dtype):
        return pa.int64()
    return _map_children(dtype, _storage_type)


def _map_children(dtype: pa.DataType, fn: Any) -> pa.DataType:
    if pa.types.is_struct(dtype):
        return pa.struct([f.with_type(fn(f.type)) for f in dtype])
    if pa.types.is_list(dtype):
        return pa.list_(dtype.value_field.with_type(fn(dtype.value_type)))
    if pa.types.is_large_list(dtype):
        return pa.large_list(dtype.value_field.with_type(fn(dtype.value_type)))
    if pa.types.is_map(dtype):
        return pa.map_(dtype.key_field, dtype.item_field.with_type(fn(dtype.item_type)))
    return dtype


def _to_storage(column: Any) -> Any:
    """A column with its temporal values as the integers Avro stores (sub-unit digits truncated, as Spark does)."""
    unit_type = _avro_unit_type(column.type)
    if unit_type != column.type:
        column = column.cast(unit_type, safe=False)
    storage = _storage_type(unit_type)
    return column if storage == unit_type else column.cast(storage)


def arrow_to_avro_records(table: pa.Table) -> list[dict[str, Any]]:
    """Rows of `table` as fastavro expects them (maps as dicts, unions as branches, temporal values as ints)."""
    converted = pa.Table.from_arrays([_to_storage(c) for c in table.columns], names=table.column_names)
    rows: list[dict[str, Any]] = converted.to_pylist()
    for f, stored in zip(table.schema, converted.schema, strict=True):
        if needs_conversion(stored.type):
            for row in rows:
                row[f.name] = to_avro_value(row[f.name], stored.type)
    return rows
