"""Property tests for log block framing, the block writers and the header-only reader, plus file names.

Every block type the `log_writer` helpers produce is appended to a real file (LocalStorage) in random
sequences and read back with `read_blocks`; framing facts are checked against the raw bytes (§1.2 of
`docs/hudi-format.md` section 1).
"""

from __future__ import annotations

import json
import struct
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_meta.format.block_content import (
    DeleteRecord,
    decode_avro_records,
    decode_data_block,
    decode_delete_records,
    encode_avro_records,
    encode_delete_records,
)
from hudi_meta.format.file_names import BaseFileName, LogFileName, is_log_file
from hudi_meta.format.links import link_name
from hudi_meta.format.log_block import (
    LOG_FORMAT_VERSION,
    MAGIC,
    ROLLBACK_COMMAND,
    BlockType,
    HeaderKey,
    LogBlock,
    decode_header,
    encode_block,
    encode_header,
)
from hudi_meta.format.log_reader import read_blocks, read_content
from hudi_meta.format.log_writer import (
    EncodedBlock,
    append_blocks,
    avro_data_block,
    delete_block,
    parquet_data_block,
    rollback_block,
)
from hudi_meta.storage import LocalStorage
from tests.conftest import FIXTURES_DIR

# With `filterwarnings = error`, Hypothesis's failure report imports libcst (to suggest an @example patch),
# whose DeprecationWarning would turn every real failure into an INTERNALERROR or FlakyStrategyDefinition.
pytestmark = pytest.mark.filterwarnings("ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")

# Hypothesis examples share one tmp_path: every example writes its own uniquely named file.
FILE_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# ---------------------------------------------------------------- strategies

texts = st.text(st.characters(codec="utf-8"), max_size=16)
longs = st.integers(-(2**63), 2**63 - 1)
instants = st.integers(10**16, 10**17 - 1).map(str)  # 17-digit instants
min_event_times = st.none() | longs

_AVRO_TO_ARROW = {"long": pa.int64(), "string": pa.string(), "double": pa.float64(), "boolean": pa.bool_()}
_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "long": longs,
    "string": texts,
    "double": st.floats(allow_nan=False),
    "boolean": st.booleans(),
}


@dataclass(frozen=True)
class RecordSchema:
    """A flat record schema: (avro type, nullable) per field, named f0, f1, ..."""

    fields: tuple[tuple[str, bool], ...]

    @property
    def json(self) -> str:
        return json.dumps(
            {
                "type": "record",
                "name": "test_record",
                "namespace": "hoodie.test",
                "fields": [
                    {"name": f"f{i}", "type": ["null", t] if nullable else t} | ({"default": None} if nullable else {})
                    for i, (t, nullable) in enumerate(self.fields)
                ],
            }
        )

    @property
    def arrow(self) -> pa.Schema:
        return pa.schema([pa.field(f"f{i}", _AVRO_TO_ARROW[t], nullable=n) for i, (t, n) in enumerate(self.fields)])


record_schemas = st.lists(st.tuples(st.sampled_from(sorted(_VALUES)), st.booleans()), min_size=1, max_size=6).map(
    lambda fields: RecordSchema(tuple(fields))
)


@st.composite
def schema_and_records(draw: st.DrawFn, max_records: int = 8) -> tuple[RecordSchema, list[dict[str, Any]]]:
    schema = draw(record_schemas)
    record = st.fixed_dictionaries(
        {f"f{i}": (st.none() | _VALUES[t]) if nullable else _VALUES[t] for i, (t, nullable) in enumerate(schema.fields)}
    )
    return schema, draw(st.lists(record, max_size=max_records))


ordering_values = st.none() | longs | texts
delete_records = st.builds(DeleteRecord, texts, st.none() | texts, ordering_values)


@dataclass(frozen=True)
class BlockSpec:
    """What to write and what reading it back must give."""

    kind: BlockType
    instant: str
    min_event_time: int | None = None
    schema: RecordSchema | None = None
    records: tuple[Any, ...] = ()
    target_instant: str | None = None

    def encode(self) -> EncodedBlock:
        if self.kind == BlockType.AVRO_DATA:
            assert self.schema is not None
            return avro_data_block(list(self.records), self.schema.json, self.instant, self.min_event_time)
        if self.kind == BlockType.PARQUET_DATA:
            assert self.schema is not None
            table = pa.Table.from_pylist(list(self.records), schema=self.schema.arrow)
            return parquet_data_block(table, self.schema.json, self.instant, self.min_event_time)
        if self.kind == BlockType.DELETE:
            return delete_block(list(self.records), self.instant, self.min_event_time)
        assert self.kind == BlockType.COMMAND and self.target_instant is not None
        return rollback_block(self.instant, self.target_instant)

    def expected_header(self) -> dict[int, str]:
        header = {HeaderKey.INSTANT_TIME: self.instant}
        if self.kind in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA):
            assert self.schema is not None
            header[HeaderKey.SCHEMA] = self.schema.json
        if self.kind == BlockType.COMMAND:
            assert self.target_instant is not None
            header[HeaderKey.TARGET_INSTANT_TIME] = self.target_instant
            header[HeaderKey.COMMAND_BLOCK_TYPE] = ROLLBACK_COMMAND
        elif self.min_event_time is not None:
            header[HeaderKey.MIN_EVENT_TIME] = str(self.min_event_time)
        return {int(k): v for k, v in header.items()}


@st.composite
def data_block_specs(draw: st.DrawFn, kind: BlockType) -> BlockSpec:
    schema, records = draw(schema_and_records())
    return BlockSpec(kind, draw(instants), draw(min_event_times), schema, tuple(records))


avro_specs = data_block_specs(BlockType.AVRO_DATA)
parquet_specs = data_block_specs(BlockType.PARQUET_DATA)
delete_specs = st.builds(
    BlockSpec,
    st.just(BlockType.DELETE),
    instants,
    min_event_times,
    st.none(),
    st.lists(delete_records, max_size=6).map(tuple),
)
rollback_specs = st.builds(BlockSpec, st.just(BlockType.COMMAND), instants, st.none(), st.none(), st.just(()), instants)
block_specs = st.one_of(avro_specs, parquet_specs, delete_specs, rollback_specs)


# ---------------------------------------------------------------- helpers


def _log_path(directory: Path) -> str:
    return str(directory / f".{uuid.uuid4()}-0_20250101000000000.log.1_0-1-0")


def _assert_content(block: LogBlock, content: bytes, spec: BlockSpec) -> None:
    """Decoding `content` gives back exactly what `spec` wrote."""
    if spec.kind == BlockType.AVRO_DATA:
        assert spec.schema is not None and block.schema is not None
        assert decode_avro_records(content, block.schema) == list(spec.records)
        assert decode_data_block(block, content).to_pylist() == list(spec.records)
    elif spec.kind == BlockType.PARQUET_DATA:
        assert spec.schema is not None
        table = decode_data_block(block, content)
        assert table.schema.remove_metadata().equals(spec.schema.arrow)
        assert table.to_pylist() == list(spec.records)
    elif spec.kind == BlockType.DELETE:
        decoded = decode_delete_records(content)
        # None ordering is written as natural order (IntWrapper 0) and therefore decodes as 0.
        expected = [
            DeleteRecord(d.record_key, d.partition_path, 0 if d.ordering_value is None else d.ordering_value)
            for d in spec.records
        ]
        assert decoded == expected
        for d, e in zip(decoded, spec.records, strict=True):
            assert d.is_natural_order == e.is_natural_order
    else:
        assert content == b""
        assert block.is_rollback
        assert block.target_instant_time == spec.target_instant


def _framing(data: bytes) -> dict[str, Any]:
    """Parse one framed block from raw bytes, independently of the reader under test."""
    (block_size,) = struct.unpack_from(">q", data, 6)
    version, type_ordinal = struct.unpack_from(">ii", data, 14)
    header, pos = decode_header(data, 22, len(data))
    (content_length,) = struct.unpack_from(">q", data, pos)
    content_start = pos + 8
    footer_start = content_start + content_length
    (footer_count,) = struct.unpack_from(">i", data, footer_start)
    (reverse_pointer,) = struct.unpack_from(">q", data, len(data) - 8)
    return {
        "magic": data[:6],
        "block_size": block_size,
        "version": version,
        "type": type_ordinal,
        "header": header,
        "content_start": content_start,
        "content": data[content_start:footer_start],
        "footer_start": footer_start,
        "footer_count": footer_count,
        "reverse_pointer": reverse_pointer,
    }


# ---------------------------------------------------------------- (a) header map codec


@given(st.dictionaries(st.integers(0, 9), st.text(st.characters(codec="utf-8"))))
@settings(max_examples=150, deadline=None)
def test_header_round_trip(header: dict[int, str]) -> None:
    buf = encode_header(header)
    decoded, end = decode_header(buf, 0, len(buf))
    assert decoded == header
    assert end == len(buf)
    assert struct.unpack_from(">i", buf, 0)[0] == len(header)
    # Bytes after `end` are not consumed; decoding at an offset works the same.
    decoded2, end2 = decode_header(b"xx" + buf + b"trailing", 2, 2 + len(buf))
    assert (decoded2, end2) == (header, 2 + len(buf))


@given(st.dictionaries(st.integers(0, 9), st.text(st.characters(codec="utf-8"), max_size=8), min_size=1))
@settings(max_examples=100, deadline=None)
def test_header_past_end_raises_value_error(header: dict[int, str]) -> None:
    """A header that runs past `end` is rejected (the buffer itself continues past `end`)."""
    buf = encode_header(header) + b"\x00" * 64
    full = len(encode_header(header))
    for cut in range(full):
        with pytest.raises(ValueError):
            decode_header(buf, 0, cut)


def test_header_truncated_buffer_raises_value_error() -> None:
    """Also when the buffer itself ends at `end` (no struct.error; fixed in decode_header)."""
    buf = encode_header({0: "abc", 1: "x"})  # 24 bytes: count, (0, 3, abc), (1, 1, x)
    for cut in range(len(buf)):
        with pytest.raises(ValueError):
            decode_header(buf[:cut], 0, cut)


# ---------------------------------------------------------------- (b) write / read round trip


@given(specs=st.lists(block_specs, min_size=1, max_size=8), data=st.data())
@FILE_SETTINGS
def test_random_block_sequences_round_trip(tmp_path: Path, specs: list[BlockSpec], data: st.DataObject) -> None:
    storage = LocalStorage()
    path = _log_path(tmp_path)
    encoded = [s.encode() for s in specs]
    # Append in one or more batches (each batch is one durable append).
    cuts = sorted(data.draw(st.sets(st.integers(1, len(specs) - 1))) if len(specs) > 1 else set())
    written_offsets: list[int] = []
    for lo, hi in zip([0, *cuts], [*cuts, len(specs)], strict=True):
        written_offsets += append_blocks(storage, path, encoded[lo:hi])

    blocks = read_blocks(storage, path)
    size = storage.size(path)
    assert len(blocks) == len(specs)
    assert [b.block_type for b in blocks] == [s.kind for s in specs]
    assert [b.block_type for b in blocks] == [e.block_type for e in encoded]
    assert [b.offset for b in blocks] == written_offsets
    assert blocks[0].offset == 0
    for prev, nxt in zip(blocks, blocks[1:], strict=False):
        assert nxt.offset == prev.offset + prev.length
    assert sum(b.length for b in blocks) == size
    assert [b.length for b in blocks] == [len(e.data) for e in encoded]

    for block, spec, enc in zip(blocks, specs, encoded, strict=True):
        assert not block.is_corrupt
        assert block.format_version == LOG_FORMAT_VERSION
        assert block.header == spec.expected_header()
        assert block.footer == {}
        assert block.instant_time == spec.instant
        assert enc.record_count == len(spec.records)
        assert block.is_data == (spec.kind in (BlockType.AVRO_DATA, BlockType.PARQUET_DATA))
        # The header-only scan reads an Avro block's record count from its first content bytes.
        assert block.record_count == (len(spec.records) if spec.kind == BlockType.AVRO_DATA else None)
        content = read_content(storage, path, block)
        assert len(content) == block.content_length
        _assert_content(block, content, spec)


# ---------------------------------------------------------------- (c) MIN_EVENT_TIME header


@given(spec=st.one_of(avro_specs, parquet_specs, delete_specs))
@FILE_SETTINGS
def test_min_event_time_header_only_when_passed(tmp_path: Path, spec: BlockSpec) -> None:
    storage = LocalStorage()
    path = _log_path(tmp_path)
    append_blocks(storage, path, [spec.encode()])
    (block,) = read_blocks(storage, path)
    assert (HeaderKey.MIN_EVENT_TIME in block.header) == (spec.min_event_time is not None)
    assert block.min_event_time == spec.min_event_time
    if spec.min_event_time is None:
        assert set(block.header) <= {int(k) for k in HeaderKey if k != HeaderKey.MIN_EVENT_TIME}


@given(instant=instants, target=instants)
@settings(max_examples=20, deadline=None)
def test_rollback_block_has_no_min_event_time(instant: str, target: str) -> None:
    header, _ = decode_header(rollback_block(instant, target).data, 22, 10**9)
    assert HeaderKey.MIN_EVENT_TIME not in header
    assert LogBlock(0, 0, BlockType.COMMAND, header=header).min_event_time is None


def test_min_event_time_unparseable_is_none() -> None:
    block = LogBlock(0, 0, BlockType.AVRO_DATA, header={int(HeaderKey.MIN_EVENT_TIME): "not-a-number"})
    assert block.min_event_time is None


# ---------------------------------------------------------------- (d) exact framing facts


@given(spec=block_specs)
@settings(max_examples=80, deadline=None)
def test_framing_facts(spec: BlockSpec) -> None:
    data = spec.encode().data
    f = _framing(data)
    assert f["magic"] == MAGIC == b"\x23\x48\x55\x44\x49\x23"
    assert f["block_size"] == len(data) - 14
    assert f["reverse_pointer"] == f["block_size"] + 6
    assert f["footer_count"] == 0
    assert f["footer_start"] + 4 + 8 == len(data)  # footer is exactly the int32 0
    assert f["version"] == 1
    assert f["type"] == int(spec.kind)
    assert f["header"] == spec.expected_header()
    header_len = len(encode_header(spec.expected_header()))
    assert f["block_size"] == 4 + 4 + header_len + 8 + len(f["content"]) + 4 + 8
    if spec.kind == BlockType.AVRO_DATA:
        assert spec.schema is not None
        assert f["content"] == encode_avro_records(list(spec.records), spec.schema.json)
        assert struct.unpack_from(">ii", f["content"], 0) == (3, len(spec.records))
    elif spec.kind == BlockType.PARQUET_DATA:
        assert f["content"][:4] == b"PAR1" and f["content"][-4:] == b"PAR1"
    elif spec.kind == BlockType.DELETE:
        assert f["content"] == encode_delete_records(list(spec.records))
        version, payload_len = struct.unpack_from(">ii", f["content"], 0)
        assert (version, payload_len) == (3, len(f["content"]) - 8)
    else:
        assert f["content"] == b""


def test_framing_of_known_block() -> None:
    """One hand-checked block: empty-content command block with a one-entry header."""
    data = encode_block(BlockType.COMMAND, {0: "1"}, b"")
    header = struct.pack(">iii", 1, 0, 1) + b"1"
    expected = (
        MAGIC
        + struct.pack(">q", 4 + 4 + len(header) + 8 + 0 + 4 + 8)
        + struct.pack(">ii", 1, 0)
        + header
        + struct.pack(">q", 0)
        + struct.pack(">i", 0)
        + struct.pack(">q", 6 + 8 + 4 + 4 + len(header) + 8 + 0 + 4)
    )
    assert data == expected


def test_rollback_framing_matches_java_fixture() -> None:
    """Our rollback block is byte-identical to the Java-written fixture (same header values)."""
    fixture_dir = FIXTURES_DIR
    files = list((fixture_dir / "log_files" / "valid_log_rollback").glob(".*"))
    assert len(files) == 1, f"expected one rollback fixture log under {fixture_dir}, found {files}"
    java = files[0].read_bytes()
    ours = rollback_block("20250126040936578", "20250126040826878").data
    assert len(ours) == len(java)
    # Java writes HashMap order (0, 3, 1); we sort keys, so compare the decoded headers and the framing.
    assert _framing(ours)["header"] == _framing(java)["header"]
    assert ours[:22] == java[:22]
    assert ours[-20:] == java[-20:]  # content length, empty footer, reverse pointer


# ---------------------------------------------------------------- file names

file_ids = st.text("0123456789abcdef-", min_size=1, max_size=40)
write_tokens = st.tuples(*[st.integers(0, 10**6)] * 3).map(lambda t: "-".join(map(str, t)))
log_names = st.builds(
    LogFileName,
    file_id=file_ids,
    instant=st.text("0123456789", min_size=1, max_size=20),
    version=st.integers(0, 2**31 - 1),
    write_token=st.just("") | write_tokens,
    extension=st.sampled_from(["log", "archive"]),
    cdc=st.booleans(),
)
base_names = st.builds(
    BaseFileName,
    file_id=file_ids,
    write_token=write_tokens,
    instant=st.text("0123456789", min_size=1, max_size=20),
    extension=st.sampled_from([".parquet", ".orc", ".hfile", ".parquet.gz"]),
)


@given(log_names)
@settings(max_examples=100, deadline=None)
def test_log_file_name_round_trip(log: LogFileName) -> None:
    name = log.name
    parsed = LogFileName.parse(name)
    assert parsed == log
    assert parsed.name == name
    assert is_log_file(name)
    assert BaseFileName.try_parse(name) is None
    assert parsed.sort_key() == log.sort_key()


@given(log_names, st.text("0123456789", min_size=1, max_size=20), st.integers(2, 10**4))
@settings(max_examples=100, deadline=None)
def test_link_name_renames_into_the_compaction_slice(kept: LogFileName, instant: str, index: int) -> None:
    """The design's link naming: `.F_B.log.v_tok` kept from slice B is `.F_C.log.i_tok` in slice C, spelled
    out here from the parts; a name that is no log file's is refused."""
    token = f"_{kept.write_token}" if kept.write_token else ""
    assert link_name(kept.name, instant, index) == f".{kept.file_id}_{instant}.log.{index}{token}"
    with pytest.raises(ValueError, match="not a Hudi log file name"):
        link_name(kept.name[1:], instant, index)


@given(base_names)
@settings(max_examples=100, deadline=None)
def test_base_file_name_round_trip(base: BaseFileName) -> None:
    name = base.name
    parsed = BaseFileName.parse(name)
    assert parsed == base
    assert parsed.name == name
    assert not is_log_file(name)
    assert LogFileName.try_parse(name) is None


same_slice_logs = st.builds(
    LogFileName,
    file_id=st.just("abc-0"),
    instant=st.integers(20250101000000000, 20251231235959999).map(str),
    version=st.integers(1, 30),
    write_token=write_tokens,
)


@given(st.lists(same_slice_logs, max_size=12))
@settings(max_examples=60, deadline=None)
def test_log_file_sort_order(logs: list[LogFileName]) -> None:
    """Hudi orders a slice's logs by instant, then version, then write token compared as a string, no token first
    (Java's `HoodieLogFile.LogFileComparator`: `Comparator.nullsFirst(Comparator.naturalOrder())` on the token)."""
    ordered = sorted((LogFileName.parse(x.name) for x in logs), key=LogFileName.sort_key)
    keys = [(x.instant, x.version, x.write_token) for x in ordered]
    assert keys == sorted(keys)
    assert sorted(x.name for x in ordered) == sorted(x.name for x in logs)


def test_write_token_compares_as_a_string_as_java_does() -> None:
    """`1-0-10` sorts before `1-0-9` (String.compareTo), as Java and hudi-rs (`log_file/mod.rs`) sort them."""
    a = LogFileName("f-0", "20250101000000000", 1, "1-0-10")
    b = LogFileName("f-0", "20250101000000000", 1, "1-0-9")
    c = LogFileName("f-0", "20250101000000000", 2, "0-0-0")
    d = LogFileName("f-0", "20250101000000001", 1, "0-0-0")
    assert sorted([d, c, b, a], key=LogFileName.sort_key) == [a, b, c, d]
