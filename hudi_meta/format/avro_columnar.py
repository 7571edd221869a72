"""Columnar decoding of Avro data block content for flat schemas, proven to match the record-by-record decoder.

Decoding a block datum by datum in Python (fastavro) was most of a snapshot read and of a compaction. For the
schemas Hudi tables mostly have, a record of primitive fields, each maybe in a `["null", T]` union, the block's
content after its 8-byte header is read as one data block of an in-memory Avro container by polars' native
reader, into Arrow columns: the container's record schema is the block's, with a leading `fixed(4)` field that
reads each datum's int32 length prefix.

That is only right if every datum decodes from exactly its own bytes: Java reads each record from its own
length-prefixed slice and skips bytes left over after it; a container reader would read them as the next
record. So the decoded columns are checked against the framing before they are used:

1. the reader never reads past the container block (it fails instead), so it consumed at most the content;
2. the canonical (shortest) encoding of every decoded value is a lower bound of the bytes it was read from;
3. per record, the canonical sizes of its fields add up to exactly the length prefix decoded for it, and the
   prefixes and datums add up to exactly the content.

By 1-3 every field was read from exactly its canonical bytes, so every record from exactly its own slice (by
induction from the first: each length prefix was read where the framing puts it). With the positions that
gives, each union branch index and boolean byte is then checked against the value read (the reader takes any
non-zero branch index of a nullable union for the value branch, where Java and fastavro fail).

Anything else (other types, a failed check, any reader error) returns None and the caller decodes record by
record as before, which stays the authority on every error and every edge case (non-canonical varints, bytes
left over in a datum or after the last one, bad branch indices, invalid UTF-8).

polars is optional (the `fast` extra, docs/dependencies.md): without it decoding returns None at once and every
block goes record by record, with the same records (tests/format/test_avro_columnar_fallback.py; the gain is
measured by bench/bench_polars.py). Encoding is numpy alone and does not need it.
"""

from __future__ import annotations

import io
import json
import os
import struct
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_meta.format.avro_arrow import PRIMITIVE_TYPES, arrow_schema_from_avro_json
from hudi_meta.format.avro_container import zigzag_varint

# Avro primitive -> the Arrow type the reader returns it as, once Arrow's large types are made normal.
_PHYSICAL = {name: dtype for name, dtype in PRIMITIVE_TYPES.items() if name != "null"}
# varint types: (bytes of the longest varint, the largest last byte it may have: 32 bits are 4 * 7 + 4)
_VARINT_TOP = {"int": (5, 0x0F), "long": (10, 0x01)}
_FIXED_SIZE = {"float": 4, "double": 8, "boolean": 1}
_SYNC = os.urandom(16)
_STDERR_LOCK = threading.Lock()
# Below these sizes a block goes record by record: columnar work has a fixed cost per block (the reader; numpy
# per field) that small blocks do not repay. The crossovers come from bench_header_scan with --records (decoding)
# and from encoding blocks of the bench_read rows; both print the ratio of the two paths per block size.
MIN_DECODE_RECORDS = 256
MIN_ENCODE_RECORDS = 64
_LENGTH_FIELD = "hudi_meta_datum_length"  # the container's first field: each datum's int32 length prefix


@dataclass(frozen=True)
class _Field:
    name: str
    physical: str  # an Avro primitive name (a key of _PHYSICAL)
    arrow_type: pa.DataType  # the type `arrow_schema_from_avro_json` gives the field (logical types applied)
    null_index: int | None  # the branch index of "null" in a ["null", T] / [T, "null"] union; None: not a union


@dataclass(frozen=True)
class _Layout:
    fields: tuple[_Field, ...]
    header: bytes  # the container header: magic, the stripped schema, codec null, sync marker
    schema: pa.Schema


def _primitive(schema: Any) -> str | None:
    """The Avro primitive `schema` is (logical types allowed: they annotate the same bytes), else None."""
    kind = schema.get("type") if isinstance(schema, dict) else schema
    return kind if isinstance(kind, str) and kind in _PHYSICAL else None


def _container_header(schema_json: str) -> bytes:
    meta = {b"avro.schema": schema_json.encode(), b"avro.codec": b"null"}
    parts = [b"Obj\x01", zigzag_varint(len(meta))]
    for key, value in meta.items():
        parts += [zigzag_varint(len(key)), key, zigzag_varint(len(value)), value]
    return b"".join([*parts, zigzag_varint(0), _SYNC])


@lru_cache(maxsize=256)
def flat_layout(schema_json: str) -> _Layout | None:
    """The layout of a flat record schema this module decodes, or None (other schemas go record by record)."""
    try:
        schema = json.loads(schema_json)
        arrow_schema = arrow_schema_from_avro_json(schema_json)
    except Exception:  # an invalid schema: the record-by-record decoder reports it
        return None
    if not isinstance(schema, dict) or not isinstance(schema.get("fields"), list) or not schema["fields"]:
        return None
    fields: list[_Field] = []
    stripped: list[dict[str, Any]] = []
    for f, arrow_field in zip(schema["fields"], arrow_schema, strict=True):
        kind, null_index = f["type"], None
        if isinstance(kind, list):
            if len(kind) != 2 or "null" not in kind:
                return None
            null_index = kind.index("null")
            kind = kind[1 - null_index]
        physical = _primitive(kind)
        if physical is None or not _supported(arrow_field.type, physical):
            return None
        fields.append(_Field(str(f["name"]), physical, arrow_field.type, null_index))
        plain: list[Any] | str = physical
        if null_index is not None:
            plain = ["null", physical] if null_index == 0 else [physical, "null"]
        stripped.append({"name": f["name"], "type": plain})
    names = [f.name for f in fields]
    if _LENGTH_FIELD in names or len(set(names)) != len(names):
        return None
    length = {"name": _LENGTH_FIELD, "type": {"type": "fixed", "name": "length_prefix", "size": 4}}
    container_schema = json.dumps({"type": "record", "name": "r", "fields": [length, *stripped]})
    return _Layout(tuple(fields), _container_header(container_schema), arrow_schema)


def _supported(arrow_type: pa.DataType, physical: str) -> bool:
    """Arrow types reached from the physical values by a plain cast (temporal logical types) or none at all."""
    if arrow_type == _PHYSICAL[physical]:
        return True
    if physical == "int":
        return arrow_type in (pa.date32(), pa.time32("ms"))
    if physical == "long":
        return arrow_type == pa.time64("us") or bool(pa.types.is_timestamp(arrow_type))
    return False


def _varint_sizes(zigzagged: np.ndarray) -> np.ndarray:
    """Bytes of the canonical varint of each (already zigzag-encoded, unsigned) value."""
    sizes = np.ones(len(zigzagged), np.int64)
    for k in range(1, 10):
        sizes += zigzagged >= np.uint64(1 << (7 * k))
    return sizes


def _value_sizes(column: pa.Array, physical: str) -> np.ndarray:
    """Canonical encoded bytes of each value of `column` (nulls: 0)."""
    valid = _valid(column)
    if physical in _FIXED_SIZE:
        return np.where(valid, _FIXED_SIZE[physical], 0)
    if physical in ("string", "bytes"):
        lengths = _numpy(pc.fill_null(pc.binary_length(column), 0)).astype(np.int64)
        return np.where(valid, lengths + _varint_sizes((lengths << 1).astype(np.uint64)), 0)
    values = _numpy(pc.fill_null(column.cast(pa.int64()), 0)).astype(np.int64)
    zigzagged = ((values << 1) ^ (values >> 63)).view(np.uint64)
    return np.where(valid, _varint_sizes(zigzagged), 0)


def _valid(column: pa.Array) -> np.ndarray:
    if column.null_count == 0:
        return np.ones(len(column), bool)
    return np.asarray(column.is_valid().to_numpy(zero_copy_only=False), bool)


def _numpy(column: pa.Array) -> np.ndarray:
    return np.asarray(column.to_numpy(zero_copy_only=False))


def polars_module() -> Any | None:
    """polars if it is installed, else None (imported on first use: the record-by-record path and most commands
    never need it; a failed import is tried again, which costs microseconds against a block's decode)."""
    try:
        import polars
    except ImportError:
        return None
    return polars


def _read_avro(container: bytes) -> pa.Table | None:
    """The container read by polars, or None if the reader fails in any way (an error or a Rust panic).

    On some damaged bytes polars panics, and Rust prints the panic (with a backtrace if RUST_BACKTRACE is set)
    straight to file descriptor 2 before Python sees a PanicException; the record-by-record decoder then
    reports the damage in one line, so that print would only be noise in front of it. File descriptor 2 is
    captured while the reader runs (one reader at a time) and what was written to it is given back, unless the
    reader panicked (then it is the panic's text, and whatever another thread wrote in those milliseconds).
    """
    pl = polars_module()
    if pl is None:
        return None
    with _STDERR_LOCK, tempfile.TemporaryFile() as captured:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        table: pa.Table | None = None
        panicked = False
        try:
            table = pl.read_avro(io.BytesIO(container)).to_arrow()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # polars' PanicException derives from BaseException
            panicked = type(e).__name__ == "PanicException"
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            if not panicked and captured.tell():
                captured.seek(0)
                os.write(2, captured.read())
    return table


def _read_container(layout: _Layout, content: bytes) -> tuple[np.ndarray, list[pa.Array]] | None:
    """(each datum's length prefix, the decoded columns) of block content read as one container data block."""
    if len(content) < 8:
        return None
    _, count = struct.unpack_from(">ii", content, 0)
    if count <= 0:
        return None
    body = memoryview(content)[8:]
    data = b"".join([layout.header, zigzag_varint(count), zigzag_varint(len(body)), body, _SYNC])
    table = _read_avro(data)
    if table is None:
        return None
    if table.num_rows != count or table.num_columns != len(layout.fields) + 1:
        return None
    prefixes = table.column(0).combine_chunks()
    offsets = np.frombuffer(prefixes.buffers()[1], np.int64, count + 1, prefixes.offset * 8)
    if prefixes.null_count or offsets[-1] - offsets[0] != 4 * count:
        return None
    lengths = np.frombuffer(prefixes.buffers()[2], ">i4", count, int(offsets[0])).astype(np.int64)
    return lengths, [c.combine_chunks() for c in table.columns[1:]]


def _top_bits_fit(raw: np.ndarray, position: np.ndarray, sizes: np.ndarray, longest: int, top: int) -> bool:
    """Whether every varint of the longest size has no bits past its type's width in its last byte (the
    reader drops them; fastavro and Java reject such an int, fastavro such a long)."""
    last = position[sizes == longest] + longest - 1
    if len(last) and last.max() >= len(raw):
        return False
    return bool((raw[last] <= top).all())


def _bytes_equal(raw: np.ndarray, positions: np.ndarray, expected: np.ndarray) -> bool:
    """Whether the bytes of `raw` at `positions` are `expected` (False if a position is outside `raw`)."""
    if len(positions) and (positions.min() < 0 or positions.max() >= len(raw)):
        return False
    return bool(np.array_equal(raw[positions], expected.astype(np.uint8)))


def decode_flat_avro(content: bytes, schema_json: str, min_records: int = MIN_DECODE_RECORDS) -> pa.Table | None:
    """Avro data block content as Arrow, in the types `arrow_schema_from_avro_json(schema_json)` gives, or None
    when the block has fewer than `min_records` records, the schema is not flat or the checks in the module
    docstring fail (decode it record by record then)."""
    if len(content) < 8 or struct.unpack_from(">i", content, 4)[0] < min_records or polars_module() is None:
        return None
    decoded = _decode_checked(content, schema_json)
    return decoded[0] if decoded is not None else None


def decode_flat_avro_blocks(
    contents: Sequence[bytes], schema_json: str, min_records: int = MIN_DECODE_RECORDS
) -> tuple[pa.Table, list[int]] | None:
    """Several Avro data blocks of one schema decoded in one read: their records in order, and how many each
    block holds (the reader's fixed cost is paid once for the lot: blocks of a few records each cost it for
    little). Their datums are read as one content (every block's after its 8-byte header, in order), so the
    checks of the module docstring hold for all of them; then every block's first length prefix must lie
    where its bytes start, so each block's datums are exactly its own. None when they hold fewer than
    `min_records` records or any check fails."""
    counts = [struct.unpack_from(">i", c, 4)[0] if len(c) >= 8 else -1 for c in contents]
    if min(counts, default=-1) < 0 or sum(counts) < min_records or polars_module() is None:
        return None
    joined = b"".join([struct.pack(">ii", 0, sum(counts)), *(memoryview(c)[8:] for c in contents)])
    decoded = _decode_checked(joined, schema_json)
    if decoded is None:
        return None
    table, starts = decoded
    first_datum = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    own_bytes = 8 + np.concatenate([[0], np.cumsum([len(c) - 8 for c in contents])[:-1]]).astype(np.int64)
    holds = np.asarray(counts) > 0
    # a block without records must have no bytes after its header (its own start is the next block's)
    if not np.array_equal(starts[first_datum[holds]] - 4, own_bytes[holds]):
        return None
    if any(len(c) != 8 for c, n in zip(contents, counts, strict=True) if n == 0):
        return None
    return table, counts


def _decode_checked(content: bytes, schema_json: str) -> tuple[pa.Table, np.ndarray] | None:
    """(the table, each datum's first byte) of content whose framing passed every check, else None."""
    layout = flat_layout(schema_json)
    decoded = _read_container(layout, content) if layout is not None else None
    if layout is None or decoded is None:
        return None
    lengths, arrays = decoded
    if lengths.min() < 0 or 8 + int((4 + lengths).sum()) != len(content):
        return None
    starts = 8 + 4 + np.concatenate([[0], np.cumsum(4 + lengths)[:-1]])  # each datum's first byte
    raw = np.frombuffer(content, np.uint8)
    position = starts.copy()  # where the next field of each record starts
    columns: list[pa.Array] = []
    for field, decoded_array in zip(layout.fields, arrays, strict=True):
        array = decoded_array.cast(_PHYSICAL[field.physical])
        valid = _valid(array)
        if field.null_index is not None:
            expected_branch = np.where(valid, 1 - field.null_index, field.null_index) * 2  # zigzag of 0 or 1
            if not _bytes_equal(raw, position, expected_branch):
                return None
            position = position + 1
        elif not valid.all():
            return None
        if field.physical == "boolean" and not _bytes_equal(raw, position[valid], _numpy(array.drop_null())):
            return None
        sizes = _value_sizes(array, field.physical)
        if field.physical in _VARINT_TOP and not _top_bits_fit(raw, position, sizes, *_VARINT_TOP[field.physical]):
            return None
        position = position + sizes
        columns.append(array if array.type == field.arrow_type else array.cast(field.arrow_type))
    if not np.array_equal(position, starts + lengths):
        return None
    return pa.Table.from_arrays(columns, schema=layout.schema), starts


# ---- encoding ---------------------------------------------------------------------------------------------


def encode_flat_avro(table: pa.Table, schema_json: str, min_records: int = MIN_ENCODE_RECORDS) -> bytes | None:
    """Avro data block content (version 3) of `table` in the flat writer schema `schema_json`, built column by
    column: byte for byte what fastavro writes record by record (canonical varints, UTF-8, little-endian
    floats). None when the table has fewer than `min_records` rows, the schema is not flat or a column is
    missing, has another type than the schema's Arrow type, or holds a null in a field that is not nullable:
    the record-by-record encoder handles those."""
    layout = flat_layout(schema_json)
    if layout is None or not table.num_rows or table.num_rows < min_records:
        return None
    arrays: list[pa.Array] = []
    for field in layout.fields:
        if field.name not in table.column_names or table.schema.field(field.name).type != field.arrow_type:
            return None
        array = table.column(field.name).combine_chunks().cast(_PHYSICAL[field.physical])
        if field.null_index is None and array.null_count:
            return None
        arrays.append(array)
    n = table.num_rows
    field_sizes = [
        _value_sizes(a, f.physical) + (f.null_index is not None) for f, a in zip(layout.fields, arrays, strict=True)
    ]
    lengths = np.sum(field_sizes, axis=0, dtype=np.int64) if field_sizes else np.zeros(n, np.int64)
    starts = 8 + np.concatenate([[0], np.cumsum(4 + lengths)[:-1]])  # each record's length prefix
    out = np.zeros(8 + int((4 + lengths).sum()), np.uint8)
    out[:8] = np.frombuffer(struct.pack(">ii", 3, n), np.uint8)
    out[starts[:, None] + np.arange(4)] = lengths.astype(">i4").view(np.uint8).reshape(n, 4)
    position = starts + 4
    for field, array, sizes in zip(layout.fields, arrays, field_sizes, strict=True):
        valid = _valid(array)
        if field.null_index is not None:
            out[position] = np.where(valid, 1 - field.null_index, field.null_index) * 2
        value_at = (position + (field.null_index is not None))[valid]
        _put_values(out, value_at, array.drop_null() if array.null_count else array, field.physical)
        position = position + sizes
    return out.tobytes()


def _put_values(out: np.ndarray, at: np.ndarray, values: pa.Array, physical: str) -> None:
    """Write the encodings of `values` (no nulls) into `out`, the i-th at `at[i]`."""
    if physical == "boolean":
        out[at] = _numpy(values).astype(np.uint8)
    elif physical in ("float", "double"):
        width = _FIXED_SIZE[physical]
        raw = _numpy(values).astype("<f4" if width == 4 else "<f8").view(np.uint8).reshape(-1, width)
        out[at[:, None] + np.arange(width)] = raw
    elif physical in ("string", "bytes"):
        offsets = np.frombuffer(values.buffers()[1], np.int32, len(values) + 1, values.offset * 4).astype(np.int64)
        lengths = np.diff(offsets)
        data_at = at + _put_varints(out, at, (lengths << 1).astype(np.uint64))
        data = np.frombuffer(values.buffers()[2], np.uint8, int(offsets[-1] - offsets[0]), int(offsets[0]))
        first = np.repeat(data_at - (offsets[:-1] - offsets[0]), lengths)  # per data byte: where its value goes
        out[first + np.arange(len(data))] = data
    else:
        ints = _numpy(values.cast(pa.int64())).astype(np.int64)
        _put_varints(out, at, ((ints << 1) ^ (ints >> 63)).view(np.uint64))


def _put_varints(out: np.ndarray, at: np.ndarray, zigzagged: np.ndarray) -> np.ndarray:
    """Write the canonical varint of each zigzag-encoded value at `at`; returns their sizes."""
    sizes = _varint_sizes(zigzagged)
    for k in range(int(sizes.max()) if len(sizes) else 0):
        here = sizes > k
        byte = (zigzagged[here] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = (sizes[here] > k + 1).astype(np.uint64) << np.uint64(7)
        out[at[here] + k] = (byte | more).astype(np.uint8)
    return sizes
