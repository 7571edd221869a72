"""The columnar Avro decoder gives exactly what the record-by-record decoder gives, or declines (issue 15).

The oracle is fastavro reading each length-prefixed datum on its own, as Java does (`decode_avro_records` and
`records_to_arrow`, which the fixture and type tests check against Java-written blocks). Blocks are encoded
here with fastavro directly. Rules tested, from the module's contract:

- a valid block of a flat schema (primitives and temporal logical types, each maybe nullable) decodes
  columnar, equal to the oracle; so does a run of such blocks decoded together, block by block;
- whatever the bytes, when the columnar decoder returns a table the oracle decodes the same bytes to the
  same table: damaged or unusual bytes may only make it decline, never differ (a run: every block's);
- the framing cases a container reader gets wrong are declined: bytes left over inside a datum or after
  the last one, a non-canonical varint, a nullable union's branch index other than 0 or 1, a boolean byte
  other than 0 or 1;
- the columnar encoder writes byte for byte what fastavro writes record by record (so encoding the decoded
  table gives back the very bytes), and declines what it cannot write exactly.
"""

from __future__ import annotations

import io
import json
import math
import struct
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_meta.errors import BlockDecodeError
from hudi_meta.format.avro_arrow import arrow_schema_from_avro_json
from hudi_meta.format.avro_columnar import decode_flat_avro, decode_flat_avro_blocks, encode_flat_avro, flat_layout
from hudi_meta.format.block_content import decode_avro_records, decode_data_block
from hudi_meta.format.log_block import BlockType, HeaderKey, LogBlock

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
# (Avro type, values): every primitive, and the temporal logical types read as their stored integers
KINDS: dict[str, tuple[Any, st.SearchStrategy[Any]]] = {
    "boolean": ("boolean", st.booleans()),
    "int": ("int", INT32),
    "long": ("long", INT64),
    "float": ("float", st.floats(width=32, allow_nan=False)),
    "double": ("double", st.floats(allow_nan=False)),
    "bytes": ("bytes", st.binary(max_size=40)),
    "string": ("string", st.text(max_size=20)),
    "date": ({"type": "int", "logicalType": "date"}, st.integers(-(10**6), 10**6)),
    "time-millis": ({"type": "int", "logicalType": "time-millis"}, st.integers(0, 86_399_999)),
    "time-micros": ({"type": "long", "logicalType": "time-micros"}, st.integers(0, 86_399_999_999)),
    "timestamp-millis": ({"type": "long", "logicalType": "timestamp-millis"}, INT64),
    "timestamp-micros": ({"type": "long", "logicalType": "timestamp-micros"}, INT64),
    "local-timestamp-micros": ({"type": "long", "logicalType": "local-timestamp-micros"}, INT64),
}


@st.composite
def flat_schemas(draw: st.DrawFn) -> tuple[dict[str, Any], st.SearchStrategy[dict[str, Any]]]:
    """A random flat record schema and a strategy for its records."""
    n_fields = draw(st.integers(1, 6))
    fields, values = [], []
    for i in range(n_fields):
        avro_type, strategy = KINDS[draw(st.sampled_from(sorted(KINDS)))]
        nullable = draw(st.sampled_from([None, "first", "last"]))
        if nullable is not None:
            avro_type = ["null", avro_type] if nullable == "first" else [avro_type, "null"]
            strategy = st.none() | strategy
        fields.append({"name": f"f{i}", "type": avro_type})
        values.append(strategy)
    schema = {"type": "record", "name": "rec", "namespace": "hoodie.t", "fields": fields}
    records = st.tuples(*values).map(lambda r: {f"f{i}": v for i, v in enumerate(r)})
    return schema, records


@st.composite
def flat_blocks(draw: st.DrawFn) -> tuple[str, bytes]:
    """(schema JSON, Avro data block content) of a random flat schema and 0-30 records."""
    schema, records = draw(flat_schemas())
    return json.dumps(schema), encode(schema, draw(st.lists(records, min_size=0, max_size=30)))


@st.composite
def flat_runs(draw: st.DrawFn) -> tuple[str, list[bytes]]:
    """(schema JSON, the contents of 1-6 Avro data blocks of it, 0-12 records each)."""
    schema, records = draw(flat_schemas())
    blocks = draw(st.lists(st.lists(records, max_size=12), min_size=1, max_size=6))
    return json.dumps(schema), [encode(schema, block) for block in blocks]


def split(decoded: tuple[pa.Table, list[int]] | None) -> list[pa.Table] | None:
    """A run decoded together, as one table per block."""
    if decoded is None:
        return None
    table, counts = decoded
    starts = [sum(counts[:i]) for i in range(len(counts))]
    return [table.slice(start, n) for start, n in zip(starts, counts, strict=True)]


def encode(schema: dict[str, Any], records: list[dict[str, Any]]) -> bytes:
    parsed = fastavro.parse_schema(schema)
    return b"".join([struct.pack(">ii", 3, len(records)), *(prefixed(datum(parsed, r)) for r in records)])


def datum(parsed: Any, record: dict[str, Any]) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parsed, record)
    return buf.getvalue()


def prefixed(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


def oracle(content: bytes, schema_json: str) -> pa.Table:
    from hudi_meta.format.avro_arrow import records_to_arrow

    return records_to_arrow(decode_avro_records(content, schema_json), arrow_schema_from_avro_json(schema_json))


def equal(a: pa.Table, b: pa.Table) -> bool:
    """Tables equal, NaN equal to NaN (a flipped bit may make one); temporal values compared as stored."""
    if a.schema != b.schema:
        return False
    return all(values(ca) == values(cb) for ca, cb in zip(a.columns, b.columns, strict=True))


def values(column: pa.ChunkedArray) -> list[Any]:
    if pa.types.is_temporal(column.type):  # a damaged date may be past Python's datetime range
        column = column.cast(pa.int32() if column.type.bit_width == 32 else pa.int64())
    return [("nan" if isinstance(v, float) and math.isnan(v) else v) for v in column.to_pylist()]


def damage(data: st.DataObject, content: bytes, header: bool) -> bytes:
    """1-3 random changes: flipped, inserted or deleted bytes after the 8-byte header; with `header`, also a
    flipped header byte or a new record count."""
    damaged = bytearray(content)
    for _ in range(data.draw(st.integers(1, 3))):
        action = data.draw(st.sampled_from(["flip", "insert", "delete", *(["count"] if header else [])]))
        at = data.draw(st.integers(0 if header and action == "flip" else 8, max(8, len(damaged))))
        if action == "count":
            struct.pack_into(">i", damaged, 4, data.draw(st.integers(-1, 14)))
        elif action == "flip" and at < len(damaged):
            damaged[at] ^= data.draw(st.integers(1, 255))
        elif action == "insert":
            damaged[at:at] = data.draw(st.binary(min_size=1, max_size=4))
        elif at < len(damaged):
            del damaged[at]
    return bytes(damaged)


@settings(max_examples=200, deadline=None)
@given(flat_blocks())
def test_valid_flat_blocks_decode_columnar_as_the_oracle(block: tuple[str, bytes]) -> None:
    schema_json, content = block
    expected = oracle(content, schema_json)
    columnar = decode_flat_avro(content, schema_json, min_records=1)
    if expected.num_rows == 0:
        assert columnar is None  # nothing to gain: an empty block goes the plain way
        return
    assert columnar is not None
    assert columnar.equals(expected)


@settings(max_examples=200, deadline=None)
@given(flat_runs())
def test_valid_runs_of_blocks_decode_together_as_each_alone(run: tuple[str, list[bytes]]) -> None:
    schema_json, contents = run
    together = split(decode_flat_avro_blocks(contents, schema_json, min_records=1))
    expected = [oracle(content, schema_json) for content in contents]
    if sum(t.num_rows for t in expected) == 0:
        assert together is None
        return
    assert together is not None
    assert [t.num_rows for t in together] == [t.num_rows for t in expected]
    assert all(a.equals(b) for a, b in zip(together, expected, strict=True))


@settings(max_examples=1000, deadline=None)
@given(flat_runs(), st.data())
def test_a_damaged_block_never_decodes_differently_together(run: tuple[str, list[bytes]], data: st.DataObject) -> None:
    """Damage anywhere in one block of a run, its header included, and maybe records moved from one block's
    count to another's (the run's total still right): the run decodes as each block alone would, or is
    declined."""
    schema_json, contents = run
    which = data.draw(st.integers(0, len(contents) - 1))
    contents = [*contents[:which], damage(data, contents[which], header=True), *contents[which + 1 :]]
    if len(contents) > 1 and data.draw(st.booleans()):
        # records moved from one block's count to another's: the run's total and its bytes still agree
        other = data.draw(st.sampled_from([i for i in range(len(contents)) if i != which]))
        moved = data.draw(st.integers(1, 3))
        for i, change in ((which, -moved), (other, moved)):
            changed = bytearray(contents[i])
            if len(changed) >= 8:
                struct.pack_into(">i", changed, 4, struct.unpack_from(">i", changed, 4)[0] + change)
            contents[i] = bytes(changed)
    together = split(decode_flat_avro_blocks(contents, schema_json, min_records=1))
    if together is not None:
        for i, (content, table) in enumerate(zip(contents, together, strict=True)):
            try:
                expected = oracle(content, schema_json)
            except BlockDecodeError as e:
                pytest.fail(f"block {i} decoded together, alone it is rejected: {e}")
            assert equal(table, expected), f"block {i}"


@settings(max_examples=1000, deadline=None)
@given(flat_blocks(), st.data())
def test_damaged_bytes_never_decode_differently(block: tuple[str, bytes], data: st.DataObject) -> None:
    schema_json, content = block
    damaged = damage(data, content, header=False)
    columnar = decode_flat_avro(damaged, schema_json, min_records=1)
    if columnar is not None:
        try:
            expected = oracle(damaged, schema_json)
        except BlockDecodeError as e:
            pytest.fail(f"columnar decoded bytes the record-by-record decoder rejects: {e}")
        assert equal(columnar, expected)


SCHEMA = {
    "type": "record",
    "name": "rec",
    "fields": [
        {"name": "key", "type": ["null", "string"]},
        {"name": "ts", "type": "long"},
        {"name": "deleted", "type": ["boolean", "null"]},
    ],
}
SCHEMA_JSON = json.dumps(SCHEMA)
ROWS: list[dict[str, Any]] = [{"key": "a", "ts": 1, "deleted": False}, {"key": None, "ts": -70, "deleted": True}]


def datums() -> list[bytes]:
    parsed = fastavro.parse_schema(SCHEMA)
    return [datum(parsed, r) for r in ROWS]


def block_of(parts: list[bytes], trailing: bytes = b"") -> bytes:
    return b"".join([struct.pack(">ii", 3, len(parts)), *(prefixed(p) for p in parts), trailing])


def test_the_plain_block_decodes_columnar() -> None:
    content = block_of(datums())
    columnar = decode_flat_avro(content, SCHEMA_JSON, min_records=1)
    assert columnar is not None and columnar.to_pylist() == ROWS
    # a small block is not worth the columnar path's fixed cost: the record-by-record decoder takes it
    assert decode_flat_avro(content, SCHEMA_JSON) is None
    assert decode_flat_avro(block_of(datums() * 200), SCHEMA_JSON) is not None


def test_a_record_split_across_two_blocks_is_declined() -> None:
    """Bytes that read as one stream but not block by block: the second record of the first block runs on into
    the next block (which claims no records), so the first block alone is rejected; so is the run."""
    parts = datums()
    first = struct.pack(">ii", 3, 2) + b"".join(prefixed(p) for p in parts[:2])
    cut = len(first) - 2
    run = [first[:cut], struct.pack(">ii", 3, 0) + first[cut:], block_of(parts[2:])]
    with pytest.raises(BlockDecodeError):
        oracle(run[0], SCHEMA_JSON)
    assert decode_flat_avro_blocks(run, SCHEMA_JSON, min_records=1) is None
    whole = [struct.pack(">ii", 3, 2) + b"".join(prefixed(p) for p in parts[:2]), block_of(parts[2:])]
    together = decode_flat_avro_blocks(whole, SCHEMA_JSON, min_records=1)
    assert together is not None and together[1] == [2, len(parts) - 2]


@pytest.mark.parametrize(
    "case",
    [
        "bytes left in a datum",
        "bytes after the last datum",
        "non-canonical varint",
        "branch index 3",
        "negative branch index",
        "boolean byte 2",
    ],
)
def test_what_a_container_reader_misreads_is_declined(case: str) -> None:
    first, second = datums()
    trailing = b""
    if case == "bytes left in a datum":
        first += b"\x02\x02"  # Java skips them; read as a stream they would be the next record
    elif case == "bytes after the last datum":
        trailing = b"\x00\x00"
    elif case == "non-canonical varint":
        first = first[:-3] + b"\x82\x00" + first[-2:]  # ts 1 as two bytes: same value, one byte more
    elif case == "branch index 3":
        first = b"\x06" + first[1:]
    elif case == "negative branch index":
        first = b"\x01" + first[1:]
    elif case == "bits past 64 in a long":  # ts -70 (zigzag 139) as ten bytes, plus 2 ** 64
        first = first[:-3] + bytes([0x8B, 0x81, *[0x80] * 7, 0x02]) + first[-2:]
    elif case == "boolean byte 2":
        first = first[:-1] + b"\x02"
    content = block_of([first, second], trailing)
    assert decode_flat_avro(content, SCHEMA_JSON, min_records=1) is None
    try:
        expected = oracle(content, SCHEMA_JSON)
    except BlockDecodeError:
        return  # undecodable: the reader's normal path reports it
    block = LogBlock(0, len(content), BlockType.AVRO_DATA, {HeaderKey.SCHEMA: SCHEMA_JSON})
    assert decode_data_block(block, content).equals(expected)  # the record-by-record path still decodes it


def test_schemas_it_does_not_take() -> None:
    def schema(*types: Any) -> str:
        return json.dumps(
            {"type": "record", "name": "r", "fields": [{"name": f"f{i}", "type": t} for i, t in enumerate(types)]}
        )

    assert flat_layout(schema("long", ["null", "string"])) is not None
    assert flat_layout(schema(["null", "long", "string"])) is None  # a multi-branch union
    assert flat_layout(schema({"type": "array", "items": "long"})) is None
    assert flat_layout(schema({"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2})) is None
    assert flat_layout(schema({"type": "enum", "name": "e", "symbols": ["A"]})) is None
    assert flat_layout(schema({"type": "fixed", "name": "x", "size": 4})) is None
    assert flat_layout("not json") is None


def test_a_reader_panic_declines_quietly(capfd: pytest.CaptureFixture[str]) -> None:
    """polars panics reading past the block's end here (count 2, one datum and 3 bytes); Rust's panic text
    must not reach stderr: the record-by-record decoder reports the damage in one line."""
    first, _ = datums()
    content = block_of([first], trailing=b"\x00\x00\x00")
    content = struct.pack(">ii", 3, 2) + content[8:]
    assert decode_flat_avro(content, SCHEMA_JSON, min_records=1) is None
    block = LogBlock(0, len(content), BlockType.AVRO_DATA, {HeaderKey.SCHEMA: SCHEMA_JSON})
    with pytest.raises(BlockDecodeError):
        decode_data_block(block, content)
    assert capfd.readouterr().err == ""


@settings(max_examples=500, deadline=None)
@given(flat_blocks())
def test_the_columnar_encoder_writes_fastavros_bytes(block: tuple[str, bytes]) -> None:
    schema_json, content = block
    table = oracle(content, schema_json)
    if not table.num_rows:
        assert encode_flat_avro(table, schema_json, min_records=1) is None
        return
    assert encode_flat_avro(table, schema_json, min_records=1) == content


def test_the_columnar_encoder_declines_what_it_cannot_write_exactly() -> None:
    table = pa.table({"key": ["a", None], "ts": pa.array([1, 2], pa.int64()), "deleted": [True, None]})
    assert encode_flat_avro(table, SCHEMA_JSON, min_records=1) is not None
    assert (
        encode_flat_avro(table.drop_columns(["deleted"]), SCHEMA_JSON, min_records=1) is None
    )  # a field without a column
    assert (
        encode_flat_avro(table.set_column(1, "ts", pa.array([1, 2], pa.int32())), SCHEMA_JSON, min_records=1) is None
    )  # int
    assert (
        encode_flat_avro(table.set_column(1, "ts", pa.array([1, None], pa.int64())), SCHEMA_JSON, min_records=1) is None
    )
