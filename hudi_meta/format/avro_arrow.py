"""Conversions between Avro schemas (as Hudi stores them in block headers and commits) and Arrow.

Hudi writes nullable fields as `["null", T]` unions; logical types map to Arrow as parquet-avro does
(decimal -> decimal128, date -> date32, timestamp-micros -> timestamp[us, UTC]).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

import pyarrow as pa

AvroSchema = Any  # a parsed Avro schema: str, dict or list


def _non_null(schema: AvroSchema) -> tuple[AvroSchema, bool]:
    """Strip a `["null", T]` union; return (T, nullable)."""
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null"]
        if len(branches) == 1:
            return branches[0], len(branches) != len(schema)
        raise ValueError(f"unsupported Avro union {schema!r}")
    return schema, False


_PRIMITIVES: dict[str, pa.DataType] = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}


def avro_to_arrow_type(schema: AvroSchema, names: dict[str, AvroSchema] | None = None) -> pa.DataType:
    names = {} if names is None else names
    schema, _ = _non_null(schema)
    if isinstance(schema, str):
        if schema in _PRIMITIVES:
            return _PRIMITIVES[schema]
        if schema in names:
            return avro_to_arrow_type(names[schema], names)
        raise ValueError(f"unknown Avro type {schema!r}")
    kind = schema["type"]
    logical = schema.get("logicalType")
    if logical == "decimal":
        return pa.decimal128(int(schema["precision"]), int(schema.get("scale", 0)))
    if logical == "date":
        return pa.date32()
    if logical in ("timestamp-micros", "local-timestamp-micros"):
        return pa.timestamp("us", tz="UTC" if logical == "timestamp-micros" else None)
    if logical in ("timestamp-millis", "local-timestamp-millis"):
        return pa.timestamp("ms", tz="UTC" if logical == "timestamp-millis" else None)
    if "name" in schema:
        names[schema["name"]] = schema
        if "namespace" in schema:
            names[f"{schema['namespace']}.{schema['name']}"] = schema
    if kind == "record":
        return pa.struct([avro_field_to_arrow(f, names) for f in schema["fields"]])
    if kind == "array":
        return pa.list_(avro_to_arrow_type(schema["items"], names))
    if kind == "map":
        return pa.map_(pa.string(), avro_to_arrow_type(schema["values"], names))
    if kind == "enum":
        return pa.string()
    if kind == "fixed":
        return pa.binary(int(schema["size"]))
    if isinstance(kind, (dict, list)) or kind in _PRIMITIVES:
        return avro_to_arrow_type(kind, names)
    raise ValueError(f"unsupported Avro type {schema!r}")


def avro_field_to_arrow(field: dict[str, Any], names: dict[str, AvroSchema]) -> pa.Field:
    _, nullable = _non_null(field["type"])
    return pa.field(field["name"], avro_to_arrow_type(field["type"], names), nullable=nullable)


@lru_cache(maxsize=256)
def arrow_schema_from_avro_json(schema_json: str) -> pa.Schema:
    """The Arrow schema of a record schema given as JSON (cached: headers repeat the same schema)."""
    schema = json.loads(schema_json)
    names: dict[str, AvroSchema] = {}
    return pa.schema([avro_field_to_arrow(f, names) for f in schema["fields"]])


def arrow_to_avro_type(dtype: pa.DataType, name: str, namespace: str) -> AvroSchema:
    """Avro type (without the null union) for an Arrow type, named as Spark's Avro converter names them."""
    if pa.types.is_boolean(dtype):
        return "boolean"
    if pa.types.is_int8(dtype) or pa.types.is_int16(dtype) or pa.types.is_int32(dtype):
        return "int"
    if pa.types.is_integer(dtype):
        return "long"
    if pa.types.is_float32(dtype):
        return "float"
    if pa.types.is_floating(dtype):
        return "double"
    if pa.types.is_string(dtype) or pa.types.is_large_string(dtype):
        return "string"
    if pa.types.is_fixed_size_binary(dtype):
        return {"type": "fixed", "name": name, "namespace": namespace, "size": dtype.byte_width}
    if pa.types.is_binary(dtype) or pa.types.is_large_binary(dtype):
        return "bytes"
    if pa.types.is_decimal(dtype):
        size = _decimal_fixed_size(dtype.precision)
        return {
            "type": "fixed",
            "name": "fixed",
            "namespace": f"{namespace}.{name}",
            "size": size,
            "logicalType": "decimal",
            "precision": dtype.precision,
            "scale": dtype.scale,
        }
    if pa.types.is_date32(dtype):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(dtype):
        unit = "millis" if dtype.unit in ("s", "ms") else "micros"
        prefix = "" if dtype.tz is not None else "local-"
        return {"type": "long", "logicalType": f"{prefix}timestamp-{unit}"}
    if pa.types.is_struct(dtype):
        return arrow_to_avro_record(pa.schema(list(dtype)), name, namespace)
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return {"type": "array", "items": _nullable(arrow_to_avro_type(dtype.value_type, name, namespace))}
    if pa.types.is_map(dtype):
        return {"type": "map", "values": _nullable(arrow_to_avro_type(dtype.item_type, name, namespace))}
    raise ValueError(f"unsupported Arrow type {dtype}")


def _decimal_fixed_size(precision: int) -> int:
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


def _nullable(avro_type: AvroSchema) -> AvroSchema:
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


def to_avro_value(value: Any, dtype: pa.DataType) -> Any:
    """Turn one `to_pylist` value into what fastavro expects (maps as dicts, nested alike)."""
    if value is None:
        return None
    if pa.types.is_map(dtype):
        return {k: to_avro_value(v, dtype.item_type) for k, v in value}
    if pa.types.is_struct(dtype):
        return {f.name: to_avro_value(value.get(f.name), f.type) for f in dtype}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return [to_avro_value(v, dtype.value_type) for v in value]
    return value


def needs_conversion(dtype: pa.DataType) -> bool:
    """True when `to_avro_value` changes values of this type (maps somewhere inside)."""
    if pa.types.is_map(dtype):
        return True
    if pa.types.is_struct(dtype):
        return any(needs_conversion(f.type) for f in dtype)
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return needs_conversion(dtype.value_type)
    return False


def from_avro_value(value: Any, dtype: pa.DataType) -> Any:
    """Turn one fastavro value into what `pa.array` accepts for `dtype` (maps as key/value pairs)."""
    if value is None:
        return None
    if pa.types.is_map(dtype):
        return [(k, from_avro_value(v, dtype.item_type)) for k, v in value.items()]
    if pa.types.is_struct(dtype):
        return {f.name: from_avro_value(value.get(f.name), f.type) for f in dtype}
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype):
        return [from_avro_value(v, dtype.value_type) for v in value]
    return value


def records_to_arrow(records: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """Build an Arrow table of `schema` from decoded Avro records (missing fields become null)."""
    columns = []
    for f in schema:
        values = [r.get(f.name) for r in records]
        if needs_conversion(f.type):
            values = [from_avro_value(v, f.type) for v in values]
        columns.append(pa.array(values, type=f.type))
    return pa.Table.from_arrays(columns, schema=schema)


def arrow_to_avro_records(table: pa.Table) -> list[dict[str, Any]]:
    """Rows of `table` as fastavro expects them (maps as dicts, nested alike)."""
    rows: list[dict[str, Any]] = table.to_pylist()
    for f in table.schema:
        if needs_conversion(f.type):
            for row in rows:
                row[f.name] = to_avro_value(row[f.name], f.type)
    return rows
