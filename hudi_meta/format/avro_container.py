"""Avro object container files, the on-disk form of Hudi plans and table-service metadata.

Java Hudi writes these with Avro's `DataFileWriter`: a header embedding the writer schema, then one record.
Records are read with the schema embedded in the file, so fields a newer or older writer added simply
appear or are missing in the returned dict.
"""

import functools
import io
import json
import os
from importlib import resources
from typing import Any, Literal

import fastavro

from hudi_meta.errors import CorruptFileError

Codec = Literal["null", "deflate"]


@functools.cache
def _schema_text(name: str) -> str:
    return resources.files("hudi_meta.format").joinpath("schemas", f"{name}.avsc").read_text("utf-8")


def load_schema(name: str) -> dict[str, Any]:
    """Return the parsed JSON of `schemas/<name>.avsc` (a fresh copy each call, so callers may edit it)."""
    schema: dict[str, Any] = json.loads(_schema_text(name))
    return schema


@functools.cache
def _parsed_schema(name: str) -> Any:
    return fastavro.parse_schema(load_schema(name))


def _short_name(schema: Any) -> str:
    name = schema.get("name", "") if isinstance(schema, dict) else ""
    return str(name).rsplit(".", 1)[-1]


def read_container(data: bytes, schema_name: str | None = None) -> dict[str, Any] | None:
    """Decode the first record of an Avro container file; None for empty bytes.

    With `schema_name`, the writer schema's record name must match it (namespace ignored).
    Raises CorruptFileError when the bytes are not a readable container holding such a record.
    """
    if not data:
        return None
    try:
        reader = fastavro.reader(io.BytesIO(data))
        record = next(iter(reader), None)
    except Exception as exc:  # fastavro raises many types (ValueError, EOFError, zlib.error, ...)
        raise CorruptFileError(f"not a readable Avro container file ({len(data)} bytes): {exc!r}") from exc
    found = _short_name(reader.writer_schema)
    if schema_name is not None and found != schema_name:
        raise CorruptFileError(f"Avro container holds a {found or '?'} record, expected {schema_name}")
    if not isinstance(record, dict):
        raise CorruptFileError(f"Avro container file ({found}) holds no record")
    return record


def zigzag_varint(n: int) -> bytes:
    """Avro's encoding of an int or long: zig-zag, then 7 bits a byte, low bits first."""
    return unsigned_varint((n << 1) ^ (n >> 63))


def unsigned_varint(n: int) -> bytes:
    """A non-negative int, 7 bits a byte, low bits first (protobuf's varint; Avro's after zig-zag)."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def write_container(record: dict[str, Any], schema_name: str, codec: Codec = "null") -> bytes:
    """Encode one record as an Avro container file with the named schema (Java Hudi uses the null codec)."""
    buf = io.BytesIO()
    fastavro.writer(buf, _parsed_schema(schema_name), [record], codec=codec)
    return buf.getvalue()


def write_encoded_container(datum: bytes, schema_name: str, sync_marker: bytes | None = None) -> bytes:
    """An Avro container file (null codec) of one record already encoded in the named schema: fastavro's
    header (magic, schema, codec, sync marker: random unless given), then one block of that record."""
    buf = io.BytesIO()
    fastavro.writer(buf, _parsed_schema(schema_name), [], sync_marker=sync_marker or os.urandom(16))
    header = buf.getvalue()
    return b"".join([header, zigzag_varint(1), zigzag_varint(len(datum)), datum, header[-16:]])
