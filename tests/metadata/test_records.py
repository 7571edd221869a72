"""Golden tests: the MDT records hudi-meta derives for each data-table instant of the Java-written fixtures equal,
byte for byte (Avro datum in the block's writer schema), the records Java wrote in the MDT deltacommit of that
instant, partition by partition; plus unit tests of the pure parts."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro
import pytest

from hudi_meta.format.block_content import decode_delete_records, parsed_schema
from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.format.hfile import HFileReader
from hudi_meta.format.log_block import BlockType
from hudi_meta.format.log_reader import read_blocks, read_contents
from hudi_meta.format.table_service_metadata import CleanMetadata, CleanPartitionMetadata, RollbackMetadata
from hudi_meta.metadata.column_ranges import ColumnRange, file_ranges
from hudi_meta.metadata.keys import secondary_file_group_index
from hudi_meta.metadata.record import MetadataRecord
from hudi_meta.metadata.records import (
    COLUMN_STATS,
    FILES,
    PARTITION_STATS,
    RECORD_INDEX,
    SECONDARY_INDEX_PREFIX,
    ColumnStatsIndex,
    bloom_filter_records,
    clean_column_stats_records,
    clean_files_records,
    column_stats_records,
    files_records,
    partition_stats_records,
    record_index_records,
    rollback_files_records,
    secondary_index_records,
)
from hudi_meta.metadata.written_files import (
    bloom_filters,
    commit_column_ranges,
    latest_slice_files,
    record_index_changes,
    secondary_values,
)
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, Instant, instant_epoch_ms
from tests.conftest import FIXTURES_DIR

META_TABLES = [
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip",
    "sample_table/mor/avro/v9_txns_simple_meta.zip",
    "sample_table/mor/avro/v9_txns_nonpart_meta.zip",
    "sample_table/mor/avro/v9_txns_complex_meta.zip",
    "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle.zip",
    "sample_table/mor/avro/v9_nonpartitioned_rollback.zip",
    "sample_table/mor/avro/v9_txns_simple_overwrite.zip",
    "sample_table/cow/v9_txns_simple_meta.zip",
    "sample_table/cow/v9_txns_simple_overwrite.zip",
]
# Java reads instant times in the JVM's zone (unless hoodie.table.timeline.timezone=UTC) for the record index's
# instantTime, and the fixtures do not record it: their record-index values show these zones.
UTC_MINUS_6 = dt.timezone(dt.timedelta(hours=-6))
WRITTEN_IN_UTC_MINUS_6 = ("v9_txns_simple_meta", "v9_txns_nonpart_meta", "v9_txns_complex_meta")  # the others: UTC


def writer_zone(base: Path) -> dt.tzinfo:
    return UTC_MINUS_6 if base.name in WRITTEN_IN_UTC_MINUS_6 else dt.UTC


Encoded = dict[str, dict[str, bytes | None]]  # MDT partition -> key -> Avro datum (None: a DELETE-block key)


def _java_records(mdt_path: Path, instant: str) -> tuple[Encoded, dict[str, str]]:
    """What Java wrote to each MDT partition at `instant` (log blocks of that instant), and each partition's
    writer schema."""
    mdt = HudiTable.open(str(mdt_path))
    out: Encoded = {}
    schemas: dict[str, str] = {}
    for partition_dir in sorted(p for p in mdt_path.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for log in sorted(partition_dir.glob(".*.log.*")):
            path = str(log)
            blocks = [b for b in read_blocks(mdt.storage, path) if b.instant_time == instant]
            for block, content in zip(blocks, read_contents(mdt.storage, path, blocks), strict=True):
                got = out.setdefault(partition_dir.name, {})
                if block.block_type == BlockType.HFILE_DATA:
                    hfile = HFileReader(content, path)
                    schemas[partition_dir.name] = hfile.schema or block.schema or ""
                    got.update((k.decode(), v) for k, v in hfile.items())
                elif block.block_type == BlockType.DELETE:
                    got.update((d.record_key, None) for d in decode_delete_records(content))
    return out, schemas


def _encode(payload: dict[str, Any], schema_json: str) -> bytes:
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, parsed_schema(schema_json), {**payload, "key": ""})
    return buf.getvalue()


def _decode(datum: bytes | None, schema_json: str) -> Any:
    if datum is None:
        return None
    return fastavro.schemaless_reader(
        io.BytesIO(datum), parsed_schema(schema_json), None, return_record_name=True, return_record_name_override=True
    )


def _assert_partition(partition: str, ours: list[MetadataRecord], java: Encoded, schemas: dict[str, str]) -> None:
    expected = java.get(partition, {})
    schema = schemas.get(partition, "")
    got = {r.key: None if r.payload is None else _encode(r.payload, schema) for r in ours} if ours else {}
    if got != expected:  # decoded, for a readable difference
        assert {k: _decode(v, schema) for k, v in got.items()} == {k: _decode(v, schema) for k, v in expected.items()}
    assert got == expected


def _writes(table: HudiTable) -> list[Instant]:
    return [
        i for i in table.timeline.completed() if i.action in (Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT)
    ]


def _index(table: HudiTable) -> ColumnStatsIndex:
    defs = json.loads((Path(table.base_path) / ".hoodie/.index_defs/index.json").read_text())
    index = ColumnStatsIndex.from_index_defs(defs)
    assert index is not None
    return index


def _partition_ranges(
    table: HudiTable, metadata: CommitMetadata, upto: str, columns: tuple[str, ...]
) -> dict[str, list[ColumnRange]]:
    return {
        p: [
            r
            for path in latest_slice_files(table, p, upto, history=True)
            for r in file_ranges(table.storage, path, columns)
        ]
        for p in metadata.partition_to_write_stats
    }


def _cases() -> list[Any]:
    return [pytest.param(FIXTURES_DIR / rel, id=rel.removesuffix(".zip")) for rel in META_TABLES]


@pytest.mark.parametrize("archive", _cases())
def test_records_equal_javas(archive: Path, fixture_table: Callable[[Path], Path]) -> None:
    base = fixture_table(archive)
    table = HudiTable.open(str(base))
    mdt_path = base / ".hoodie" / "metadata"
    live = set(table.config.props.get("hoodie.table.metadata.partitions", "").split(","))
    index = _index(table)
    for instant in _writes(table):
        java, schemas = _java_records(mdt_path, instant.requested_time)
        metadata = table.timeline.commit_metadata(instant)
        _assert_partition(FILES, files_records(metadata), java, schemas)
        ranges = commit_column_ranges(table.storage, table.base_path, metadata, index.columns)
        _assert_partition(COLUMN_STATS, column_stats_records(index, ranges), java, schemas)
        if PARTITION_STATS in live:
            upto = instant.requested_time
            ours = partition_stats_records(index, _partition_ranges(table, metadata, upto, index.columns))
            _assert_partition(PARTITION_STATS, ours, java, schemas)
        if RECORD_INDEX in live:
            changes = record_index_changes(table.storage, table.base_path, metadata, instant.requested_time)
            ms = instant_epoch_ms(instant.requested_time, writer_zone(base))
            _assert_partition(RECORD_INDEX, record_index_records(changes.updates, changes.deletes, ms), java, schemas)


def _secondary_indexes(table: HudiTable) -> dict[str, dict[str, Any]]:
    defs = json.loads((Path(table.base_path) / ".hoodie/.index_defs/index.json").read_text())["indexDefinitions"]
    return {name: d for name, d in defs.items() if name.startswith(SECONDARY_INDEX_PREFIX)}


def _creation(mdt: HudiTable, partition_dir: Path) -> tuple[str, str]:
    """The MDT instant that built a secondary index (its base files' instant), and the data-table time it was
    built at: the instant itself for an `indexing` instant, the completion time of an `000…` MDT instant."""
    built = min(
        name.rsplit("_", 1)[-1].removesuffix(".hfile") for name in os.listdir(partition_dir) if name.endswith(".hfile")
    )
    cutoff = mdt.timeline.completion_time(built) if built.startswith("00000000000000") else built
    assert cutoff is not None
    return built, cutoff


def _last_write_before(table: HudiTable, cutoff: str) -> str | None:
    earlier = [i.requested_time for i in _writes(table) if i.requested_time < cutoff]
    return earlier[-1] if earlier else None


SI_TABLES = [
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip",
    "sample_table/mor/avro/v9_txns_simple_meta.zip",
    "sample_table/mor/avro/v9_txns_nonpart_meta.zip",
    "sample_table/mor/avro/v9_txns_complex_meta.zip",
    "sample_table/cow/v9_txns_simple_meta.zip",
]


@pytest.mark.parametrize("archive", [pytest.param(FIXTURES_DIR / r, id=r.removesuffix(".zip")) for r in SI_TABLES])
def test_secondary_index_records_equal_javas(archive: Path, fixture_table: Callable[[Path], Path]) -> None:
    """The initial build (base HFiles, per file group) and every later write's records."""
    base = fixture_table(archive)
    table = HudiTable.open(str(base))
    mdt_path = base / ".hoodie" / "metadata"
    mdt = HudiTable.open(str(mdt_path))
    for name, definition in _secondary_indexes(table).items():
        column = definition["sourceFields"][0]
        version = definition.get("version") or "V1"
        built, cutoff = _creation(mdt, mdt_path / name)
        snapshot = secondary_values(table, column, _last_write_before(table, cutoff))
        groups = sorted({n.split("_")[0].lstrip(".") for n in os.listdir(mdt_path / name) if "-0" in n})
        java_groups: dict[str, set[str]] = {g: set() for g in groups}
        for f in (mdt_path / name).glob(f"*_{built}.hfile"):
            java_groups[f.name.split("_")[0]] |= {k.decode() for k in HFileReader(f.read_bytes(), str(f)).row_keys()}
        ours_groups: dict[str, set[str]] = {g: set() for g in groups}
        for r in secondary_index_records(name, {}, snapshot):
            ours_groups[groups[secondary_file_group_index(r.key, len(groups), version)]].add(r.key)
        assert ours_groups == java_groups
        for instant in _writes(table):
            if instant.requested_time <= cutoff:
                continue
            java, schemas = _java_records(mdt_path, instant.requested_time)
            before = secondary_values(table, column, _last_write_before(table, instant.requested_time))
            after = secondary_values(table, column, instant.requested_time)
            _assert_partition(name, secondary_index_records(name, before, after), java, schemas)


def test_rollback_writes_no_mdt_deltacommit(fixture_table: Callable[[Path], Path]) -> None:
    """Table versions 8/9: a rollback writes no records (the MDT rolls back its own deltacommit instead)."""
    base = fixture_table(FIXTURES_DIR / "sample_table/mor/avro/v9_nonpartitioned_rollback.zip")
    table = HudiTable.open(str(base))
    rollbacks = [i for i in table.timeline.completed() if i.action == Action.ROLLBACK]
    assert rollbacks
    for instant in rollbacks:
        rollback = RollbackMetadata.from_bytes(table.timeline.read_bytes(instant))
        java, _ = _java_records(base / ".hoodie" / "metadata", instant.requested_time)
        assert java == {}
        assert rollback_files_records(rollback, 9) == []


def test_clean_records() -> None:
    """No fixture has a clean: the shapes follow HoodieTableMetadataUtil's clean conversions."""
    clean = CleanMetadata(
        start_clean_time="20260101000000000",
        time_taken_in_millis=1,
        total_files_deleted=2,
        earliest_commit_to_retain="20260101000000000",
        partition_metadata={
            "p=1": CleanPartitionMetadata(
                partition_path="p=1", policy="KEEP_LATEST_COMMITS", delete_path_patterns=("a_1-0-1_1.parquet",)
            ),
            "p=2": CleanPartitionMetadata(
                partition_path="p=2", policy="KEEP_LATEST_COMMITS", is_partition_deleted=True
            ),
        },
    )
    files = {r.key: r.payload for r in clean_files_records(clean)}
    assert files["p=1"] is not None and files["p=1"]["filesystemMetadata"] == {
        "a_1-0-1_1.parquet": {"size": 0, "isDeleted": True}
    }
    assert files["__all_partitions__"] is not None
    assert files["__all_partitions__"]["filesystemMetadata"] == {"p=2": {"size": 0, "isDeleted": True}}
    stubs = clean_column_stats_records(ColumnStatsIndex(("a", "b"), "V2"), clean)
    assert [r.payload["ColumnStatsMetadata"]["isDeleted"] for r in stubs if r.payload] == [True, True]


def test_files_records_take_largest_size() -> None:
    stat = WriteStat(path="p/.f_1.log.1_0-1-1", file_size_in_bytes=10)
    again = WriteStat(path="p/.f_1.log.1_0-1-1", file_size_in_bytes=30)
    records = files_records(CommitMetadata({"p": [stat, again]}))
    listing = {r.key: r.payload for r in records}
    assert listing["p"] is not None and listing["p"]["filesystemMetadata"] == {
        ".f_1.log.1_0-1-1": {"size": 30, "isDeleted": False}
    }


def test_record_index_delete_then_insert_keeps_location() -> None:
    from hudi_meta.metadata.records import RecordLocation

    loc = RecordLocation("k", "", "not-a-uuid")
    records = record_index_records([loc], ["k", "gone"], 0)
    assert [(r.key, r.is_delete) for r in records] == [("k", False), ("gone", True)]
    payload = records[0].payload
    assert payload is not None and payload["recordIndexMetadata"]["fileIdEncoding"] == 1


def test_secondary_value_change_deletes_old_entry() -> None:
    """A changed value (no fixture write changes one): the old entry is deleted, the new one added."""
    records = secondary_index_records(
        "secondary_index_x", {"k": "a", "gone": None}, {"k": "b", "new": dt.date(1970, 1, 2)}
    )
    assert [(r.key, r.is_delete) for r in records] == [
        ("a$k", True),
        ("\0$gone", True),
        ("b$k", False),
        ("1$new", False),
    ]


def test_bloom_filter_records_from_footers(fixture_table: Callable[[Path], Path]) -> None:
    """No fixture has a bloom_filters partition: the filters come from the new base files' footers (every Java
    base file carries one) and the records encode in the fixture's MDT writer schema."""
    base = fixture_table(FIXTURES_DIR / "sample_table/mor/avro/v9_txns_simple_meta.zip")
    table = HudiTable.open(str(base))
    first = _writes(table)[0]
    metadata = table.timeline.commit_metadata(first)
    filters = bloom_filters(table.storage, table.base_path, metadata)
    assert len(filters) == sum(len(s) for s in metadata.partition_to_write_stats.values())
    assert {f.type_code for f in filters} == {"DYNAMIC_V0"}
    _, schemas = _java_records(base / ".hoodie" / "metadata", first.requested_time)
    for record in bloom_filter_records(filters, first.requested_time):
        assert record.payload is not None
        decoded = _decode(_encode(record.payload, schemas[FILES]), schemas[FILES])
        assert decoded["BloomFilterMetadata"]["bloomFilter"].decode() in {f.serialized for f in filters}
