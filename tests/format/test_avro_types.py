"""Every Avro type and logical type decodes from an Avro data block, and survives a rewrite (issue 8, defect 3).

Blocks are written with fastavro directly (not our encoder) and the expected values come from fastavro's own
decoding of the same bytes, put in the Arrow shape the mapping documents (a multi-branch union is a struct of
`member<i>` fields with the written branch set, as parquet-avro and Spark give it). Our decoder must never call
such a valid block corrupt or fail on it; content that cannot be decoded stops with a one-line
UndecodableBlockError naming file and offset, and framing damage is logged where it is skipped.
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import io
import json
import logging
import struct
import uuid
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_meta.errors import BlockDecodeError, UndecodableBlockError, UnsupportedContentError
from hudi_meta.format.avro_arrow import (
    UNION_MEMBER,
    arrow_schema_from_avro_json,
    arrow_to_avro_record,
    arrow_to_avro_records,
)
from hudi_meta.format.block_content import (
    decode_data_block,
    decode_data_block_at,
    decode_delete_block_at,
    encode_avro_records,
)
from hudi_meta.format.log_block import BlockType, HeaderKey, LogBlock, encode_block
from hudi_meta.format.log_reader import read_blocks, read_content
from hudi_meta.format.log_writer import avro_data_block
from hudi_meta.storage import LocalStorage

pytestmark = pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")

INSTANT = "20260101000000000"


def fastavro_content(schema: dict[str, Any], records: list[Any]) -> tuple[bytes, list[bytes]]:
    """Avro data block content (docs/hudi-format.md section 1) with each datum written by fastavro itself."""
    parsed = fastavro.parse_schema(schema)
    datums = []
    for record in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, record)
        datums.append(buf.getvalue())
    content = struct.pack(">ii", 3, len(datums)) + b"".join(struct.pack(">i", len(d)) + d for d in datums)
    return content, datums


def fastavro_decoded(schema: dict[str, Any], datums: list[bytes]) -> list[Any]:
    parsed = fastavro.parse_schema(schema)
    return [fastavro.schemaless_reader(io.BytesIO(d), parsed, None) for d in datums]


def block_for(schema: dict[str, Any] | str) -> LogBlock:
    schema_json = schema if isinstance(schema, str) else json.dumps(schema)
    return LogBlock(
        0, 0, BlockType.AVRO_DATA, header={int(HeaderKey.SCHEMA): schema_json, int(HeaderKey.INSTANT_TIME): INSTANT}
    )


def write_log(path: Path, schema: dict[str, Any], content: bytes, prefix: bytes = b"") -> LogBlock:
    """A log file holding `prefix` then one Avro data block with `content`; the block as the reader finds it."""
    header = {int(HeaderKey.INSTANT_TIME): INSTANT, int(HeaderKey.SCHEMA): json.dumps(schema)}
    path.write_bytes(prefix + encode_block(BlockType.AVRO_DATA, header, content))
    blocks = read_blocks(LocalStorage(), str(path))
    assert not blocks[-1].is_corrupt
    return blocks[-1]


def record(*fields: tuple[str, Any]) -> dict[str, Any]:
    return {"type": "record", "name": "r", "namespace": "ns", "fields": [{"name": n, "type": t} for n, t in fields]}


# ---- the two regressions filed, through a real log file ----------------------------------------------------


def test_a_duration_beyond_arrows_range_is_a_clear_error() -> None:
    """Avro durations are unsigned 32-bit months, days and millis; Arrow's interval has signed months and days:
    a value past 2**31 - 1 cannot be represented and the block is undecodable (never silently wrapped)."""
    dur = {"type": "fixed", "name": "dur", "size": 12, "logicalType": "duration"}
    schema = record(("v", dur))
    content, _ = fastavro_content(schema, [{"v": struct.pack("<III", 0, 2**31, 0)}])
    with pytest.raises(BlockDecodeError, match="beyond Arrow's interval range"):
        decode_data_block(block_for(schema), content)


def test_time_micros_column_decodes(tmp_path: Path) -> None:
    """Regression: a time-micros column made the block undecodable, and the reader skipped it as corrupt."""
    schema = record(("key", "string"), ("t", {"type": "long", "logicalType": "time-micros"}))
    written = [{"key": "a", "t": dt.time(0, 0)}, {"key": "b", "t": dt.time(23, 59, 59, 999_999)}]
    content, datums = fastavro_content(schema, written)
    path = tmp_path / f".f-0_{INSTANT}.log.1_1-0-1"
    block = write_log(path, schema, content)
    table = decode_data_block(block, read_content(LocalStorage(), str(path), block))
    assert table.schema.field("t").type == pa.time64("us")
    assert table.to_pylist() == fastavro_decoded(schema, datums)


def test_union_of_two_non_null_branches_decodes(tmp_path: Path) -> None:
    """Regression: ["null", "long", "string"] was 'unsupported' and the block was skipped as corrupt."""
    schema = record(("key", "string"), ("v", ["null", "long", "string"]))
    written = [{"key": "a", "v": 5}, {"key": "b", "v": "x"}, {"key": "c", "v": None}]
    content, datums = fastavro_content(schema, written)
    path = tmp_path / f".f-0_{INSTANT}.log.1_1-0-1"
    block = write_log(path, schema, content)
    table = decode_data_block(block, read_content(LocalStorage(), str(path), block))
    by_type = {int: "member0", str: "member1"}  # branch order of the non-null branches
    expected = [
        {**r, "v": None if r["v"] is None else {"member0": None, "member1": None, by_type[type(r["v"])]: r["v"]}}
        for r in fastavro_decoded(schema, datums)
    ]
    assert table.to_pylist() == expected


def test_union_branch_is_kept_where_the_value_cannot_tell() -> None:
    """5 written as `long` in ["int", "long"] reads as member1, and is rewritten to the `long` branch."""
    schema = record(("v", ["int", "long"]), ("f", ["null", "float", "double"]))
    written = [{"v": ("long", 5), "f": ("float", 1.5)}, {"v": ("int", 5), "f": ("double", 1.5)}]
    content, datums = fastavro_content(schema, written)
    table = decode_data_block(block_for(schema), content)
    assert table.to_pylist() == [
        {"v": {"member0": None, "member1": 5}, "f": {"member0": 1.5, "member1": None}},
        {"v": {"member0": 5, "member1": None}, "f": {"member0": None, "member1": 1.5}},
    ]
    rewritten = json.dumps(arrow_to_avro_record(table.schema, "r", "ns"))
    assert [f["type"] for f in json.loads(rewritten)["fields"]] == [
        ["null", "int", "long"],
        ["null", "float", "double"],
    ]
    again = encode_avro_records(arrow_to_avro_records(table), rewritten)
    assert decode_data_block(block_for(rewritten), again).to_pylist() == table.to_pylist()
    # Each datum starts with the zig-zag branch index of ["null", "int", "long"]: 2 (long) -> 4, 1 (int) -> 2.
    assert [d[0] for d in _datums(again)] == [4, 2]
    assert [r["v"] for r in fastavro_decoded(json.loads(rewritten), _datums(again))] == [5, 5]


def _datums(content: bytes) -> list[bytes]:
    (count,) = struct.unpack_from(">i", content, 4)
    pos, out = 8, []
    for _ in range(count):
        (length,) = struct.unpack_from(">i", content, pos)
        out.append(content[pos + 4 : pos + 4 + length])
        pos += 4 + length
    return out


# ---- every type Hudi writes, one by one ---------------------------------------------------------------------

UTC = dt.UTC
LOGICAL_CASES: list[tuple[str, Any, Any, pa.DataType]] = [
    ("date", {"type": "int", "logicalType": "date"}, dt.date(2024, 2, 29), pa.date32()),
    ("time-millis", {"type": "int", "logicalType": "time-millis"}, dt.time(12, 0, 1, 5000), pa.time32("ms")),
    ("time-micros", {"type": "long", "logicalType": "time-micros"}, dt.time(12, 0, 1, 5), pa.time64("us")),
    (
        "timestamp-millis",
        {"type": "long", "logicalType": "timestamp-millis"},
        dt.datetime(2024, 1, 2, 3, 4, 5, 6000, tzinfo=UTC),
        pa.timestamp("ms", "UTC"),
    ),
    (
        "timestamp-micros",
        {"type": "long", "logicalType": "timestamp-micros"},
        dt.datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
        pa.timestamp("us", "UTC"),
    ),
    (
        "local-timestamp-millis",
        {"type": "long", "logicalType": "local-timestamp-millis"},
        dt.datetime(2024, 1, 2, 3, 4, 5, 6000),
        pa.timestamp("ms"),
    ),
    (
        "local-timestamp-micros",
        {"type": "long", "logicalType": "local-timestamp-micros"},
        dt.datetime(2024, 1, 2, 3, 4, 5, 6),
        pa.timestamp("us"),
    ),
    (
        "decimal-bytes",
        {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 3},
        decimal.Decimal("-1234567.891"),
        pa.decimal128(10, 3),
    ),
    (
        "decimal-fixed",
        {"type": "fixed", "name": "d", "size": 9, "logicalType": "decimal", "precision": 20, "scale": 2},
        decimal.Decimal("123456789012345678.90"),
        pa.decimal128(20, 2),
    ),
    (
        "decimal-wide",
        {"type": "bytes", "logicalType": "decimal", "precision": 50, "scale": 5},
        decimal.Decimal("-123456789012345678901234567890123456789012.34567"),
        pa.decimal256(50, 5),
    ),
    ("uuid", {"type": "string", "logicalType": "uuid"}, uuid.UUID(int=2**127 + 5), pa.string()),
    (
        "duration",
        {"type": "fixed", "name": "dur", "size": 12, "logicalType": "duration"},
        struct.pack("<III", 14, 3, 86_399_999),
        pa.month_day_nano_interval(),
    ),
    ("enum", {"type": "enum", "name": "e", "symbols": ["A", "B"]}, "B", pa.string()),
    ("fixed", {"type": "fixed", "name": "fx", "size": 3}, b"\x00\xff\x01", pa.binary(3)),
    ("bytes", "bytes", b"\x00\x01", pa.binary()),
    ("float", "float", 1.5, pa.float32()),
    ("boolean", "boolean", True, pa.bool_()),
    ("null", "null", None, pa.null()),
]


def _arrow_form(value: Any, arrow_type: pa.DataType) -> Any:
    """fastavro's decoded value in the Arrow shape of the documented mapping."""
    if value is None:
        return None
    if isinstance(value, uuid.UUID):
        return str(value)
    if arrow_type == pa.month_day_nano_interval():
        months, days, millis = struct.unpack("<III", value)
        return pa.MonthDayNano([months, days, millis * 1_000_000])
    return value


@pytest.mark.parametrize(("name", "avro_type", "value", "arrow_type"), LOGICAL_CASES, ids=[c[0] for c in LOGICAL_CASES])
def test_each_type_decodes_and_round_trips(name: str, avro_type: Any, value: Any, arrow_type: pa.DataType) -> None:
    again_type = avro_type["name"] if isinstance(avro_type, dict) and "name" in avro_type else avro_type
    schema = record(("v", avro_type), ("n", ["null", again_type] if avro_type != "null" else "null"))
    content, datums = fastavro_content(schema, [{"v": value, "n": None}, {"v": value, "n": value}])
    table = decode_data_block(block_for(schema), content)
    assert table.schema.field("v").type == arrow_type
    expected = [{k: _arrow_form(v, arrow_type) for k, v in r.items()} for r in fastavro_decoded(schema, datums)]
    assert table.to_pylist() == expected
    # the rewrite: Arrow -> Avro schema and records -> our encoder -> our decoder gives the same table
    rewritten = json.dumps(arrow_to_avro_record(table.schema, "r", "ns"))
    again = decode_data_block(block_for(rewritten), encode_avro_records(arrow_to_avro_records(table), rewritten))
    assert again.to_pylist() == expected
    assert again.schema.field("v").type == arrow_type


def test_timestamps_outside_python_datetime_decode_as_java_reads_them() -> None:
    """fastavro fails on timestamp-micros 2**62 (past year 9999); Java reads the long: we read it too."""
    schema = record(
        ("t", {"type": "long", "logicalType": "timestamp-micros"}), ("d", {"type": "int", "logicalType": "date"})
    )
    raw = record(("t", "long"), ("d", "int"))  # the same bytes, read without the logical types
    content, datums = fastavro_content(raw, [{"t": 2**62, "d": -(2**31)}, {"t": -(2**63), "d": 2**31 - 1}])
    with pytest.raises(OverflowError):
        fastavro_decoded(schema, datums)
    table = decode_data_block(block_for(schema), content)
    assert table.schema.field("t").type == pa.timestamp("us", "UTC")
    ints = pa.table([table.column("t").cast(pa.int64()), table.column("d").cast(pa.int32())], names=["t", "d"])
    assert ints.to_pylist() == fastavro_decoded(raw, datums)
    rewritten = json.dumps(arrow_to_avro_record(table.schema, "r", "ns"))
    again = decode_data_block(block_for(rewritten), encode_avro_records(arrow_to_avro_records(table), rewritten))
    assert again.column("t").cast(pa.int64()).equals(table.column("t").cast(pa.int64()))
    assert again.column("d").cast(pa.int32()).equals(table.column("d").cast(pa.int32()))


def test_union_branches_referring_to_named_types_keep_their_names() -> None:
    """Branch wrappers must not change the full names of types defined inside them or referred to from them."""
    point = {"type": "record", "name": "Point", "fields": [{"name": "x", "type": "int"}]}
    schema = record(
        ("a", ["null", point, "string"]),  # defines ns.Point inside a union branch
        ("b", ["null", "Point", {"type": "enum", "name": "E", "namespace": "other", "symbols": ["S"]}]),
        ("c", ["null", "ns.Point", "other.E", {"type": "array", "items": ["null", "int", "string"]}]),
    )
    written = [
        {"a": {"x": 1}, "b": ("other.E", "S"), "c": [1, "two", None]},
        {"a": "s", "b": ("ns.Point", {"x": 2}), "c": ("other.E", "S")},
    ]
    content, datums = fastavro_content(schema, written)
    table = decode_data_block(block_for(schema), content)
    nil3 = {"member0": None, "member1": None, "member2": None}
    assert table.to_pylist() == [
        {
            "a": {"member0": {"x": 1}, "member1": None},
            "b": {"member0": None, "member1": "S"},
            "c": {**nil3, "member2": [{"member0": 1, "member1": None}, {"member0": None, "member1": "two"}, None]},
        },
        {
            "a": {"member0": None, "member1": "s"},
            "b": {"member0": {"x": 2}, "member1": None},
            "c": {**nil3, "member1": "S"},
        },
    ]
    assert [r["a"] for r in fastavro_decoded(schema, datums)] == [{"x": 1}, "s"]


def test_union_column_survives_a_parquet_base_file(tmp_path: Path) -> None:
    """Compaction writes the union struct into Parquet; read back, it is still written as the union."""
    schema = record(("v", ["null", "long", "string"]))
    content, _ = fastavro_content(schema, [{"v": 1}, {"v": "x"}])
    table = decode_data_block(block_for(schema), content)
    pq.write_table(table, tmp_path / "base.parquet")
    base = pq.read_table(tmp_path / "base.parquet")
    assert base.to_pylist() == table.to_pylist()
    assert all(f.metadata == {UNION_MEMBER: str(i).encode()} for i, f in enumerate(base.schema.field("v").type))
    assert arrow_to_avro_record(base.schema, "r", "ns")["fields"][0]["type"] == ["null", "long", "string"]


def test_arrow_table_with_every_mapped_type_round_trips_through_a_log_file(tmp_path: Path) -> None:
    """A table built in Arrow (as a compaction's exact log would hold it) is written and read back unchanged."""
    member = {UNION_MEMBER: b"0"}
    union = pa.struct(
        [
            pa.field("member0", pa.int64(), metadata=member),
            pa.field("member1", pa.string(), metadata={UNION_MEMBER: b"1"}),
        ]
    )
    table = pa.table(
        {
            "key": ["a", "b"],
            "t": pa.array([dt.time(1, 2, 3, 4), None], pa.time64("us")),
            "tm": pa.array([dt.time(1, 2, 3, 4000), dt.time(0)], pa.time32("ms")),
            "ts": pa.array([dt.datetime(2024, 1, 1, tzinfo=UTC), None], pa.timestamp("us", "UTC")),
            "lts": pa.array([dt.datetime(2024, 1, 1), None], pa.timestamp("ms")),
            "d": pa.array([dt.date(1, 1, 1), dt.date(9999, 12, 31)], pa.date32()),
            "dec": pa.array([decimal.Decimal("1.25"), None], pa.decimal128(5, 2)),
            "dur": pa.array([(1, 2, 3_000_000), None], pa.month_day_nano_interval()),
            "u": pa.array([{"member0": 7, "member1": None}, {"member0": None, "member1": "s"}], union),
            "lu": pa.array([[{"member0": None, "member1": "z"}], []], pa.list_(union)),
            "m": pa.array([[("k", {"member0": 1, "member1": None})], None], pa.map_(pa.string(), union)),
        }
    )
    schema_json = json.dumps(arrow_to_avro_record(table.schema, "r", "ns"))
    path = tmp_path / f".f-0_{INSTANT}.log.1_1-0-1"
    path.write_bytes(avro_data_block(arrow_to_avro_records(table), schema_json, INSTANT).data)
    (block,) = read_blocks(LocalStorage(), str(path))
    decoded = decode_data_block(block, read_content(LocalStorage(), str(path), block), table.schema)
    assert decoded.to_pylist() == table.to_pylist()
    as_read = decode_data_block(block, read_content(LocalStorage(), str(path), block))
    assert as_read.to_pylist() == table.to_pylist()
    # fastavro, reading our bytes with the header schema, sees the union branches we meant
    rows = fastavro_decoded(json.loads(schema_json), _datums(read_content(LocalStorage(), str(path), block)))
    assert [r["u"] for r in rows] == [7, "s"] and rows[0]["m"] == {"k": 1}


# ---- property: random schemas and values ---------------------------------------------------------------

_INT32 = st.integers(-(2**31), 2**31 - 1)
_INT64 = st.integers(-(2**63), 2**63 - 1)
_DATETIMES = st.datetimes(min_value=dt.datetime(1000, 1, 1), max_value=dt.datetime(9000, 1, 1))

# (Avro type, physical kind for union uniqueness or None when named, value strategy)
_LEAVES: list[tuple[Any, str | None, st.SearchStrategy[Any]]] = [
    ("boolean", "boolean", st.booleans()),
    ("int", "int", _INT32),
    ("long", "long", _INT64),
    ("float", "float", st.floats(width=32, allow_nan=False)),
    ("double", "double", st.floats(allow_nan=False)),
    ("bytes", "bytes", st.binary(max_size=6)),
    ("string", "string", st.text(max_size=6)),
    ({"type": "int", "logicalType": "date"}, "int", st.dates()),
    (
        {"type": "int", "logicalType": "time-millis"},
        "int",
        st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)),
    ),
    ({"type": "long", "logicalType": "time-micros"}, "long", st.times()),
    (
        {"type": "long", "logicalType": "timestamp-millis"},
        "long",
        _DATETIMES.map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000, tzinfo=UTC)),
    ),
    ({"type": "long", "logicalType": "timestamp-micros"}, "long", _DATETIMES.map(lambda d: d.replace(tzinfo=UTC))),
    (
        {"type": "long", "logicalType": "local-timestamp-millis"},
        "long",
        _DATETIMES.map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)),
    ),
    ({"type": "long", "logicalType": "local-timestamp-micros"}, "long", _DATETIMES),
    (
        {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 4},
        "bytes",
        st.decimals(min_value=-(10**8) + 1, max_value=10**8 - 1, places=4),
    ),
    ({"type": "string", "logicalType": "uuid"}, "string", st.uuids().map(str)),
    (
        {"type": "fixed", "size": 16, "logicalType": "decimal", "precision": 30, "scale": 0},
        None,
        st.decimals(min_value=-(10**30) + 1, max_value=10**30 - 1, places=0),
    ),
    (
        {"type": "fixed", "size": 12, "logicalType": "duration"},
        None,
        # months and days beyond Arrow's signed int32: test_a_duration_beyond_arrows_range_is_a_clear_error
        st.tuples(st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1), st.integers(0, 2**32 - 1)).map(
            lambda t: struct.pack("<III", *t)
        ),
    ),
    ({"type": "enum", "symbols": ["A", "B", "C"]}, None, st.sampled_from(["A", "B", "C"])),
    ({"type": "fixed", "size": 3}, None, st.binary(min_size=3, max_size=3)),
]


def _leaf() -> st.SearchStrategy[tuple[Any, str | None]]:
    return st.sampled_from([(t, k) for t, k, _ in _LEAVES])


def _types(depth: int) -> st.SearchStrategy[tuple[Any, str | None]]:
    """(Avro type without names yet, union kind); unions are built only by `_with_unions`."""
    if depth == 0:
        return _leaf()
    sub = _with_unions(depth - 1)
    return st.one_of(
        _leaf(),
        sub.map(lambda t: ({"type": "array", "items": t}, "array")),
        sub.map(lambda t: ({"type": "map", "values": t}, "map")),
        st.lists(sub, min_size=1, max_size=3).map(
            lambda ts: ({"type": "record", "fields": [{"name": f"f{i}", "type": t} for i, t in enumerate(ts)]}, None)
        ),
    )


def _with_unions(depth: int) -> st.SearchStrategy[Any]:
    """A field type: plain, nullable, or a union of 2-3 non-null branches of distinct kinds (Avro's rule)."""

    def union(branches: list[tuple[Any, str | None]], nullable: bool) -> Any:
        kinds = [k for _, k in branches if k is not None]
        if len(set(kinds)) != len(kinds):
            return ["null", branches[0][0]]
        return (["null"] if nullable else []) + [t for t, _ in branches]

    plain = _types(depth)
    return st.one_of(
        plain.map(lambda t: t[0]),
        plain.map(lambda t: ["null", t[0]]),
        st.builds(union, st.lists(plain, min_size=2, max_size=3), st.booleans()),
    )


def _name_types(schema: Any, counter: list[int]) -> Any:
    """Copy of `schema` with unique full names on records, enums and fixed (gen.T<k>)."""
    if isinstance(schema, list):
        return [_name_types(b, counter) for b in schema]
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if out["type"] in ("record", "enum", "fixed"):
        counter[0] += 1
        out["name"] = f"gen.T{counter[0]}"
    if out["type"] == "record":
        out["fields"] = [{**f, "type": _name_types(f["type"], counter)} for f in out["fields"]]
    elif out["type"] == "array":
        out["items"] = _name_types(out["items"], counter)
    elif out["type"] == "map":
        out["values"] = _name_types(out["values"], counter)
    return out


_LEAF_VALUES = {json.dumps(t, sort_keys=True): s for t, _, s in _LEAVES}


def _values(schema: Any) -> st.SearchStrategy[Any]:
    """Values of `schema` as fastavro writes them: a union value names its branch (fastavro's tuple notation)."""
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null"]
        options: list[st.SearchStrategy[Any]] = [st.none()] if "null" in schema else []
        # always name the branch: fastavro cannot pick one by value around a named one
        options += [_values(b).map(functools.partial(_tagged, _fastavro_name(b))) for b in branches]
        return st.one_of(options)
    if isinstance(schema, dict) and schema["type"] == "record":
        return st.fixed_dictionaries({f["name"]: _values(f["type"]) for f in schema["fields"]})
    if isinstance(schema, dict) and schema["type"] == "array":
        return st.lists(_values(schema["items"]), max_size=3)
    if isinstance(schema, dict) and schema["type"] == "map":
        return st.dictionaries(st.text(max_size=3), _values(schema["values"]), max_size=3)
    key = dict(schema) if isinstance(schema, dict) else schema
    if isinstance(key, dict):
        key.pop("name", None)
    return _LEAF_VALUES[json.dumps(key, sort_keys=True)]


def _tagged(name: str, value: Any) -> tuple[str, Any]:
    return (name, value)


def _fastavro_name(branch: Any) -> str:
    if isinstance(branch, str):
        return branch
    return str(branch["name"]) if branch["type"] in ("record", "enum", "fixed") else str(branch["type"])


def _expected(schema: Any, written: Any, decoded: Any) -> Any:
    """fastavro's decoded value in the Arrow shape, with the union branch taken from what was written."""
    if decoded is None:
        return None
    if isinstance(schema, list):
        branches = [b for b in schema if b != "null"]
        name, inner = written
        if len(branches) == 1:
            return _expected(branches[0], inner, decoded)
        index = [_fastavro_name(b) for b in branches].index(name)
        out: dict[str, Any] = {f"member{i}": None for i in range(len(branches))}
        out[f"member{index}"] = _expected(branches[index], inner, decoded)
        return out
    if isinstance(schema, dict) and schema["type"] == "record":
        return {f["name"]: _expected(f["type"], written[f["name"]], decoded[f["name"]]) for f in schema["fields"]}
    if isinstance(schema, dict) and schema["type"] == "array":
        return [_expected(schema["items"], w, d) for w, d in zip(written, decoded, strict=True)]
    if isinstance(schema, dict) and schema["type"] == "map":
        return [(k, _expected(schema["values"], written[k], d)) for k, d in decoded.items()]
    if isinstance(schema, dict) and schema.get("logicalType") == "duration":
        return _arrow_form(decoded, pa.month_day_nano_interval())
    return _arrow_form(decoded, pa.null())


@st.composite
def _schemas_and_rows(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    fields = draw(st.lists(_with_unions(2), min_size=1, max_size=4))
    schema = _name_types(
        {"type": "record", "fields": [{"name": f"c{i}", "type": t} for i, t in enumerate(fields)]}, [0]
    )
    schema["name"] = "gen.Row"
    rows = draw(st.lists(_values(schema), max_size=3))
    return schema, rows


@given(case=_schemas_and_rows())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_random_schemas_decode_as_fastavro_and_survive_a_rewrite(case: tuple[dict[str, Any], list[Any]]) -> None:
    schema, rows = case
    content, datums = fastavro_content(schema, rows)
    table = decode_data_block(block_for(schema), content)
    expected = [_expected(schema, w, d) for w, d in zip(rows, fastavro_decoded(schema, datums), strict=True)]
    assert table.to_pylist() == expected
    assert table.schema == arrow_schema_from_avro_json(json.dumps(schema))
    try:
        rewritten = json.dumps(arrow_to_avro_record(table.schema, "Row", "gen"))
    except ValueError as e:  # two branches that Arrow reads alike (a uuid string and an enum): refused, not guessed
        assert "indistinct branches" in str(e)
        return
    again = decode_data_block(block_for(rewritten), encode_avro_records(arrow_to_avro_records(table), rewritten))
    assert again.to_pylist() == expected
    # same types and union members; the rewrite declares every field nullable, as Hudi's Spark writer does
    assert _loose(again.schema).equals(_loose(table.schema), check_metadata=True)


def _loose(schema: pa.Schema) -> pa.Schema:
    """`schema` with every field nullable (metadata kept): the rewrite declares all fields nullable."""

    def loose_type(t: pa.DataType) -> pa.DataType:
        if pa.types.is_struct(t):
            return pa.struct([f.with_type(loose_type(f.type)).with_nullable(True) for f in t])
        if pa.types.is_list(t):
            return pa.list_(t.value_field.with_type(loose_type(t.value_type)).with_nullable(True))
        if pa.types.is_map(t):
            return pa.map_(t.key_type, t.item_field.with_type(loose_type(t.item_type)).with_nullable(True))
        return t

    return pa.schema([f.with_type(loose_type(f.type)).with_nullable(True) for f in schema])


# ---- content that cannot be decoded, framing that is damaged ----------------------------------------------


def test_undecodable_content_names_file_offset_and_reason(tmp_path: Path) -> None:
    schema = record(("v", "long"))
    content = struct.pack(">iii", 3, 2, 5) + b"\xff" * 5  # a long whose varint never ends
    first = encode_block(BlockType.COMMAND, {3: "1"}, b"")  # a rollback-style block before it: offset > 0
    path = tmp_path / f".f-0_{INSTANT}.log.1_1-0-1"
    block = write_log(path, schema, content, prefix=first)
    assert block.offset == len(first)
    with pytest.raises(UndecodableBlockError) as raised:
        decode_data_block_at(str(path), block, read_content(LocalStorage(), str(path), block))
    e = raised.value
    assert (e.path, e.offset, e.block_type) == (str(path), len(first), "AVRO_DATA")
    assert f"offset {len(first)} of {path}" in str(e) and "\n" not in str(e)
    assert isinstance(e.__cause__, BlockDecodeError)


def test_unsupported_content_is_undecodable_not_corrupt(tmp_path: Path) -> None:
    """A recursive record (valid Avro, no Arrow equivalent) and an old Kryo delete block stop a reader."""
    linked = {
        "type": "record",
        "name": "Node",
        "fields": [{"name": "v", "type": "long"}, {"name": "next", "type": ["null", "Node"]}],
    }
    content, _ = fastavro_content(linked, [{"v": 1, "next": {"v": 2, "next": None}}])
    path = tmp_path / f".f-0_{INSTANT}.log.1_1-0-1"
    block = write_log(path, linked, content)
    with pytest.raises(UndecodableBlockError, match="recursive Avro type Node") as raised:
        decode_data_block_at(str(path), block, content)
    assert isinstance(raised.value.__cause__, UnsupportedContentError)
    delete = LogBlock(7, 0, BlockType.DELETE)
    with pytest.raises(UndecodableBlockError, match=f"DELETE block at offset 7 of {path}: .*Kryo"):
        decode_delete_block_at(str(path), delete, struct.pack(">ii", 2, 0))


def test_invalid_schema_header_is_a_block_decode_error() -> None:
    """The reader converts the header before decoding: a malformed one must be a BlockDecodeError there too."""
    for bad in ("{not json", '{"type":"record","name":"r","fields":[{"name":"a","type":"Nope"}]}', '"long"'):
        with pytest.raises(BlockDecodeError):
            arrow_schema_from_avro_json(bad)


def test_each_skipped_corrupt_block_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    schema = record(("v", "long"))
    content, _ = fastavro_content(schema, [{"v": 1}])
    good = encode_block(
        BlockType.AVRO_DATA, {int(HeaderKey.INSTANT_TIME): INSTANT, int(HeaderKey.SCHEMA): json.dumps(schema)}, content
    )
    torn = good[: len(good) - 3]  # a crash mid-append
    path = tmp_path / f".f-0_{INSTANT}.log.1_1-0-1"
    path.write_bytes(good + torn)
    with caplog.at_level(logging.WARNING, logger="hudi_meta"):
        blocks = read_blocks(LocalStorage(), str(path))
    assert [b.is_corrupt for b in blocks] == [False, True]
    (rec,) = [r for r in caplog.records if r.name.startswith("hudi_meta.")]
    assert rec.levelno == logging.WARNING
    assert str(path) in rec.getMessage() and f"offset {len(good)}" in rec.getMessage()
    assert "runs past the end of the file" in rec.getMessage()


def test_a_union_whose_branches_read_alike_is_refused_on_rewrite_not_guessed() -> None:
    """Found by the property test above: a union of a uuid string and an enum reads as two string members, and
    writing it back wrote the enum's value to the string branch. Rule: a rewrite never changes a value's branch,
    so such a union is refused with one clear error; reading it stays exact."""
    schema = {
        "type": "record",
        "name": "gen.Row",
        "fields": [
            {
                "name": "c0",
                "type": [
                    {"type": "string", "logicalType": "uuid"},
                    {"type": "enum", "name": "gen.T3", "symbols": ["A", "B"]},
                ],
            }
        ],
    }
    content, _ = fastavro_content(schema, [{"c0": ("gen.T3", "A")}])
    table = decode_data_block(block_for(schema), content)
    assert table.to_pylist() == [{"c0": {"member0": None, "member1": "A"}}]
    with pytest.raises(ValueError, match="indistinct branches"):
        arrow_to_avro_record(table.schema, "Row", "gen")
