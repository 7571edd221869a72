"""The 0.x archived timeline (table version 6), written and read (docs/archival.md section 5 names each rule's Java
source).

- entries appended in any number of calls read back equal, in order; calls append to the newest file
  `.commits_.archive.N_1-0-1`, and a new version N+1 starts where the storage cannot append or the newest file has
  reached Java's size threshold; files are read by version, numerically;
- each state file's entry holds what Java's `MetadataConversionUtils.createMetaWrapper` (0.14/0.15) puts there:
  commit metadata converted from its JSON field by field (fields the JSON lacks are null; UNKNOWN, an empty file,
  is none; a compaction's is COMPACT), clean plans and metadata, rollback metadata, compaction plans, replace
  commit metadata;
- a torn block at the end of a file (a killed append) is skipped and the next append reads; a block that cannot be
  decoded is CorruptFileError with one line;
- Java's shape: the block is an Avro data block (type 3, log format version 1) whose header holds the SCHEMA key
  alone (ordinal 2; `HoodieTimelineArchiver.writeToFile` puts nothing else there), framed as docs/hudi-format.md
  1.2 says (block size = bytes after the size field up to the reverse pointer, reverse pointer = block size + 6);
  its content is block version 3, the record count and length-prefixed datums (1.5); the schema is Java's
  `HoodieArchivedMetaEntry` (apache/hudi hudi-common/src/main/avro/HoodieArchivedMetaEntry.avsc: the field list
  below, in its order) with every nested record defined once, where it first appears, so it stands alone as
  Java's `Schema.toString()` does; Java's Avro (the jar Spark ships, which validates defaults) parses it and
  decodes every datum to its last byte, read as written and resolved against a reader schema of the fields
  Java's archived-timeline loader reads (`ArchivedTimelineV1.readCommit`: commitTime, actionType, actionState,
  stateTransitionTime), the others skipped.
"""

from __future__ import annotations

import io
import json
import struct
import tempfile
import uuid
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession

from hudi_meta.errors import CorruptFileError
from hudi_meta.format import archived_log as al
from hudi_meta.format.archived_log import ArchivedEntry, append_entries, entry_of_state_file, read_entries
from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.format.log_block import MAGIC, BlockType, HeaderKey, decode_header, encode_block
from hudi_meta.format.table_service_metadata import (
    ActionInstant,
    CleanerPlan,
    CleanMetadata,
    CompactionOperation,
    CompactionPlan,
    InstantInfo,
    RollbackMetadata,
)
from hudi_meta.storage import FsspecStorage, LocalStorage, Storage

T = "2026010100000"
JAVA_LOADER_FIELDS = ["commitTime", "actionType", "actionState", "stateTransitionTime"]
# apache/hudi HoodieArchivedMetaEntry.avsc: (name, type, default), in Java's order
JAVA_FIELDS = [
    ("hoodieCommitMetadata", "HoodieCommitMetadata", None),
    ("hoodieCleanMetadata", "HoodieCleanMetadata", None),
    ("hoodieCompactionMetadata", "HoodieCompactionMetadata", None),
    ("hoodieRollbackMetadata", "HoodieRollbackMetadata", None),
    ("hoodieSavePointMetadata", "HoodieSavepointMetadata", None),
    ("commitTime", "string", None),
    ("actionType", "string", None),
    ("version", "int", 1),
    ("hoodieCompactionPlan", "HoodieCompactionPlan", None),
    ("hoodieCleanerPlan", "HoodieCleanerPlan", None),
    ("actionState", "string", None),
    ("hoodieReplaceCommitMetadata", "HoodieReplaceCommitMetadata", None),
    ("hoodieRequestedReplaceMetadata", "HoodieRequestedReplaceMetadata", None),
    ("HoodieInflightReplaceMetadata", "HoodieCommitMetadata", None),
    ("hoodieIndexCommitMetadata", "HoodieIndexCommitMetadata", None),
    ("stateTransitionTime", "string", None),
]


@pytest.fixture(params=["local", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Storage, str]:
    """A storage and the archive folder of a table on it (object stores cannot append)."""
    if request.param == "local":
        return LocalStorage(), str(tmp_path / "t" / ".hoodie" / "archived")
    return FsspecStorage(protocol="memory"), f"/t-{uuid.uuid4().hex}/.hoodie/archived"


def commit_json(operation: str = "UPSERT", compacted: bool = False, n: int = 1) -> bytes:
    stats = [WriteStat(file_id=f"f{k}", path=f"p/.f{k}_1.log.1_1-0-1", num_writes=k, log_files=["x"]) for k in range(n)]
    return CommitMetadata({"p": stats}, compacted, {"schema": "{}"}, operation).to_json()


def sample_entries() -> list[ArchivedEntry]:
    """Every action and state archival writes, from the bytes our writers put in the state files."""
    retain = ActionInstant(f"{T}0001", "deltacommit", "COMPLETED")
    plan = CleanerPlan(earliest_instant_to_retain=retain, policy="KEEP_LATEST_COMMITS").to_bytes()
    clean = CleanMetadata(
        start_clean_time=f"{T}0004", time_taken_in_millis=3, total_files_deleted=0, earliest_commit_to_retain=""
    ).to_bytes()
    rollback = RollbackMetadata.of_one(f"{T}0005", 1, InstantInfo(f"{T}0002", "deltacommit"), {}).to_bytes()
    op = CompactionOperation(base_instant_time=f"{T}0001", file_id="f1", partition_path="p", data_file_path="b")
    compaction = CompactionPlan(operations=(op,)).to_bytes()
    return [
        entry_of_state_file(f"{T}0001", "deltacommit", "REQUESTED", b"", f"{T}0001"),
        entry_of_state_file(f"{T}0001", "deltacommit", "INFLIGHT", b"", f"{T}0002"),
        entry_of_state_file(f"{T}0001", "deltacommit", "COMPLETED", commit_json(n=2), f"{T}0003"),
        entry_of_state_file(f"{T}0003", "compaction", "REQUESTED", compaction),
        entry_of_state_file(f"{T}0003", "compaction", "INFLIGHT", compaction),
        entry_of_state_file(f"{T}0003", "commit", "COMPLETED", commit_json("COMPACT", compacted=True)),
        entry_of_state_file(f"{T}0004", "clean", "REQUESTED", plan),
        entry_of_state_file(f"{T}0004", "clean", "INFLIGHT", plan),
        entry_of_state_file(f"{T}0004", "clean", "COMPLETED", clean),
        entry_of_state_file(f"{T}0005", "rollback", "REQUESTED", b"plan bytes are not archived"),
        entry_of_state_file(f"{T}0005", "rollback", "COMPLETED", rollback),
        entry_of_state_file(f"{T}0006", "replacecommit", "INFLIGHT", commit_json("INSERT_OVERWRITE")),
        entry_of_state_file(f"{T}0006", "replacecommit", "COMPLETED", commit_json("INSERT_OVERWRITE")),
    ]


def files(storage: Storage, folder: str) -> list[str]:
    return [name for _, name in al.archive_files(storage, folder)]


# ---- round trip ----------------------------------------------------------------------------------------------------


def test_round_trip(store: tuple[Storage, str]) -> None:
    s, folder = store
    assert read_entries(s, folder) == [] and al.archived_instants(s, folder) == {}
    entries = sample_entries()
    first = append_entries(s, folder, entries[:5])
    second = append_entries(s, folder, entries[5:])
    assert first == ".commits_.archive.1_1-0-1"
    # appended to the newest file where the storage can append (Java's writer appends); else a new version
    assert second == (first if s.supports_append else ".commits_.archive.2_1-0-1")
    assert files(s, folder) == sorted({first, second})
    assert read_entries(s, folder) == entries
    assert al.archived_instants(s, folder) == {
        f"{T}0001": (f"{T}0001", "deltacommit"),  # on layout 1 an instant completes at its requested time
        f"{T}0003": (f"{T}0003", "commit"),
        f"{T}0004": (f"{T}0004", "clean"),
        f"{T}0005": (f"{T}0005", "rollback"),
        f"{T}0006": (f"{T}0006", "replacecommit"),
    }


def test_each_state_holds_what_java_puts_there() -> None:
    payloads = [(e.action_type, e.action_state, e.payload and e.payload[0]) for e in sample_entries()]
    assert payloads == [
        ("deltacommit", "REQUESTED", None),  # empty file
        ("deltacommit", "INFLIGHT", None),
        ("deltacommit", "COMPLETED", "hoodieCommitMetadata"),
        ("compaction", "REQUESTED", "hoodieCompactionPlan"),
        ("compaction", "INFLIGHT", "hoodieCompactionPlan"),  # read from the requested file
        ("commit", "COMPLETED", "hoodieCommitMetadata"),
        ("clean", "REQUESTED", "hoodieCleanerPlan"),
        ("clean", "INFLIGHT", "hoodieCleanerPlan"),
        ("clean", "COMPLETED", "hoodieCleanMetadata"),
        ("rollback", "REQUESTED", None),
        ("rollback", "COMPLETED", "hoodieRollbackMetadata"),
        ("replacecommit", "INFLIGHT", "HoodieInflightReplaceMetadata"),
        ("replacecommit", "COMPLETED", "hoodieReplaceCommitMetadata"),
    ]


def test_commit_metadata_is_converted_from_its_json_field_by_field() -> None:
    entry = entry_of_state_file(f"{T}0001", "deltacommit", "COMPLETED", commit_json(n=1))
    assert entry.payload is not None
    record = entry.payload[1]
    source = json.loads(commit_json(n=1))
    assert record["operationType"] == "UPSERT" and record["extraMetadata"] == {"schema": "{}"}
    assert record["version"] is None  # the JSON has none: Jackson's conversion leaves it null
    (stat,) = record["partitionToWriteStats"]["p"]
    (json_stat,) = source["partitionToWriteStats"]["p"]
    assert {k: v for k, v in stat.items() if v is not None} == {
        k: v for k, v in json_stat.items() if k in stat and v is not None
    }
    # UNKNOWN is what an empty file reads as: no metadata; a compaction's is COMPACT
    assert entry_of_state_file(f"{T}0001", "deltacommit", "INFLIGHT", commit_json("UNKNOWN")).payload is None
    compacted = entry_of_state_file(f"{T}0001", "commit", "COMPLETED", commit_json("UPSERT", compacted=True))
    assert compacted.payload is not None and compacted.payload[1]["operationType"] == "COMPACT"
    with pytest.raises(CorruptFileError, match="not HoodieCommitMetadata JSON"):
        entry_of_state_file(f"{T}0001", "deltacommit", "COMPLETED", b"{nope")


stats = st.builds(
    WriteStat,
    file_id=st.text("abcdef0123-", min_size=1, max_size=12),
    path=st.text(min_size=0, max_size=20),
    num_writes=st.integers(0, 2**40),
    total_write_bytes=st.integers(0, 2**62),
    log_files=st.none() | st.lists(st.text(max_size=8), max_size=3),
)
metadata = st.builds(
    CommitMetadata,
    partition_to_write_stats=st.dictionaries(st.text(max_size=10), st.lists(stats, max_size=3), max_size=3),
    compacted=st.booleans(),
    extra_metadata=st.dictionaries(st.text(max_size=8), st.text(max_size=30), max_size=3),
    operation_type=st.sampled_from(["UPSERT", "INSERT", "BULK_INSERT", "UNKNOWN"]),
)
times = st.integers(0, 10**17 - 1).map(lambda n: f"{n:017d}")
entries = st.builds(
    lambda t, action, state, moved, meta: entry_of_state_file(t, action, state, meta.to_json(), moved),
    times,
    st.sampled_from(["commit", "deltacommit"]),
    st.sampled_from(["REQUESTED", "INFLIGHT", "COMPLETED"]),
    st.none() | times,
    metadata,
)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(entries, min_size=1, max_size=4), min_size=1, max_size=3), st.sampled_from(["l", "m"]))
def test_entries_appended_in_several_calls_read_back_equal(parts: list[list[ArchivedEntry]], kind: str) -> None:
    s: Storage = LocalStorage() if kind == "l" else FsspecStorage(protocol="memory")
    with tempfile.TemporaryDirectory() as local:
        folder = f"{local}/archived" if kind == "l" else f"/a-{uuid.uuid4().hex}"
        for part in parts:
            append_entries(s, folder, part)
        assert read_entries(s, folder) == [e for part in parts for e in part]


def test_a_new_version_starts_at_the_size_threshold_and_files_read_by_version(
    store: tuple[Storage, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    s, folder = store
    entries = sample_entries()
    monkeypatch.setattr(al, "ROLL_OVER_BYTES", 1)
    for k in range(11):
        assert append_entries(s, folder, [entries[k]]) == f".commits_.archive.{k + 1}_1-0-1"
    assert read_entries(s, folder) == entries[:11]  # .10 after .9: by number, as Java sorts them


# ---- damage --------------------------------------------------------------------------------------------------------


def test_a_torn_block_is_skipped_and_the_next_append_reads(tmp_path: Path) -> None:
    s, folder = LocalStorage(), str(tmp_path / "archived")
    entries = sample_entries()
    name = append_entries(s, folder, entries[:3])
    path = Path(folder, name)
    whole = path.stat().st_size
    append_entries(s, folder, entries[3:6])
    with path.open("r+b") as f:
        f.truncate(whole + (path.stat().st_size - whole) // 2)  # a kill in the middle of the second append
    assert read_entries(s, folder) == entries[:3]
    append_entries(s, folder, entries[3:6])  # the next run writes the batch again
    assert read_entries(s, folder) == entries[:6]


def test_a_block_that_cannot_be_decoded_is_one_line(tmp_path: Path) -> None:
    s, folder = LocalStorage(), str(tmp_path / "archived")
    append_entries(s, folder, sample_entries()[:2])
    bad = encode_block(BlockType.AVRO_DATA, {int(HeaderKey.SCHEMA): al.entry_schema_json()}, b"\x00\x00\x00\x03\x00")
    s.append(f"{folder}/{al.file_name(1)}", bad)
    with pytest.raises(CorruptFileError, match=r"\.commits_\.archive\.1_1-0-1: the block at offset") as raised:
        read_entries(s, folder)
    assert len(str(raised.value).splitlines()) == 1


# ---- Java's shape --------------------------------------------------------------------------------------------------


def test_the_schema_is_javas_and_stands_alone() -> None:
    schema = json.loads(al.entry_schema_json())
    assert (schema["namespace"], schema["name"]) == ("org.apache.hudi.avro.model", "HoodieArchivedMetaEntry")
    got = []
    for f in schema["fields"]:
        branch = f["type"][1] if f["type"][0] == "null" else f["type"][0]
        got.append((f["name"], branch if isinstance(branch, str) else branch["name"], f["default"]))
    assert got == JAVA_FIELDS
    defined: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") in ("record", "enum", "fixed"):
                defined.append(node["name"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert len(defined) == len(set(defined))  # each named type defined once
    assert {"HoodieWriteStat", "HoodieCleanerPlan", "HoodieSavepointMetadata"} <= set(defined)
    fastavro.parse_schema(schema)  # no name left undefined


def test_the_block_bytes_are_javas(tmp_path: Path) -> None:
    s, folder = LocalStorage(), str(tmp_path / "archived")
    entries = sample_entries()[:3]
    name = append_entries(s, folder, entries)
    data = (tmp_path / "archived" / name).read_bytes()
    assert data[:6] == MAGIC
    (block_size,) = struct.unpack_from(">q", data, 6)
    assert len(data) == block_size + 14  # one block: magic, size field, then the block size
    assert struct.unpack_from(">ii", data, 14) == (1, 3)  # log format version 1, AVRO_DATA_BLOCK
    header, pos = decode_header(data, 22, len(data))
    assert header == {2: al.entry_schema_json()}  # SCHEMA only: no instant time
    (content_length,) = struct.unpack_from(">q", data, pos)
    content = data[pos + 8 : pos + 8 + content_length]
    assert struct.unpack_from(">ii", content, 0) == (3, len(entries))  # block version 3, record count
    footer, end = decode_header(data, pos + 8 + content_length, len(data) - 8)
    assert footer == {} and end == len(data) - 8
    assert struct.unpack_from(">q", data, end) == (block_size + 6,)
    # each datum decodes with the schema alone (what a Java reader resolves against its own)
    (length,) = struct.unpack_from(">i", content, 8)
    parsed = fastavro.parse_schema(json.loads(al.entry_schema_json()))
    first = fastavro.schemaless_reader(io.BytesIO(content[12 : 12 + length]), parsed, None)
    assert isinstance(first, dict)
    assert (first["commitTime"], first["actionType"], first["actionState"], first["version"]) == (
        f"{T}0001",
        "deltacommit",
        "REQUESTED",
        1,
    )


def test_javas_avro_reads_every_datum(tmp_path: Path, spark: SparkSession) -> None:
    s, folder = LocalStorage(), str(tmp_path / "archived")
    entries = sample_entries()
    name = append_entries(s, folder, entries)
    data = (tmp_path / "archived" / name).read_bytes()
    header, pos = decode_header(data, 22, len(data))
    (content_length,) = struct.unpack_from(">q", data, pos)
    content = data[pos + 8 : pos + 8 + content_length]
    jvm = spark._jvm
    assert jvm is not None
    writer = jvm.org.apache.avro.Schema.Parser().parse(header[2])
    loader_fields = [{"name": n, "type": ["null", "string"], "default": None} for n in JAVA_LOADER_FIELDS]
    loader = {"type": "record", "name": "HoodieArchivedMetaEntry", "namespace": "org.apache.hudi.avro.model"}
    projection = jvm.org.apache.avro.Schema.Parser().parse(json.dumps({**loader, "fields": loader_fields}))
    pos = 8
    for entry in entries:
        (length,) = struct.unpack_from(">i", content, pos)
        datum = bytearray(content[pos + 4 : pos + 4 + length])
        pos += 4 + length
        for reader_schema in (writer, projection):
            decoder = jvm.org.apache.avro.io.DecoderFactory.get().binaryDecoder(datum, None)
            record = jvm.org.apache.avro.generic.GenericDatumReader(writer, reader_schema).read(None, decoder)
            assert decoder.isEnd()
            got = [None if (v := record.get(n)) is None else str(v) for n in JAVA_LOADER_FIELDS]
            assert got == [entry.commit_time, entry.action_type, entry.action_state, entry.state_transition_time]
        whole = jvm.org.apache.avro.generic.GenericDatumReader(writer, writer).read(
            None, jvm.org.apache.avro.io.DecoderFactory.get().binaryDecoder(datum, None)
        )
        assert (whole.get(entry.payload[0]) is not None) if entry.payload else True
