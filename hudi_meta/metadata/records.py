"""The metadata-table records a data-table action writes, per MDT partition, as Java derives them.

Pure functions over plain data: commit metadata (commit, deltacommit, compaction commit, replacecommit), clean
metadata, rollback metadata, and the facts read from the written files (column ranges, bloom filters, record
keys: `column_ranges.py`, `written_files.py`). Payloads are `HoodieMetadataRecord` Avro datums (HoodieMetadata.avsc
field names); a union of wrapper records is written in fastavro's `(full name, value)` notation so an encoder
picks the branch Java picked. docs/metadata-table.md says what each action writes and how it was checked.
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hudi_meta.format.commit_metadata import CommitMetadata
from hudi_meta.format.table_service_metadata import CleanMetadata, RollbackMetadata, file_name
from hudi_meta.metadata.column_ranges import ColumnRange, ValueType, merge_all
from hudi_meta.metadata.keys import (
    NON_PARTITIONED_ID,
    bloom_filter_key,
    column_stats_key,
    partition_stats_key,
    secondary_index_key,
)
from hudi_meta.metadata.record import MetadataRecord
from hudi_meta.table.metadata_table import ALL_PARTITIONS_KEY, FILES_PARTITION, TYPE_FILE_LIST, TYPE_PARTITION_LIST

FILES = FILES_PARTITION
COLUMN_STATS = "column_stats"
PARTITION_STATS = "partition_stats"
BLOOM_FILTERS = "bloom_filters"
RECORD_INDEX = "record_index"

TYPE_COLUMN_STATS = 3
TYPE_BLOOM_FILTER = 4
TYPE_RECORD_INDEX = 5
TYPE_PARTITION_STATS = 6

_MODEL = "org.apache.hudi.avro.model."
_EMPTY_PAYLOAD: dict[str, Any] = {
    "filesystemMetadata": None,
    "BloomFilterMetadata": None,
    "ColumnStatsMetadata": None,
    "recordIndexMetadata": None,
    "SecondaryIndexMetadata": None,
}


def _payload(key: str, kind: int, **fields: Any) -> dict[str, Any]:
    return {"key": key, "type": kind, **_EMPTY_PAYLOAD, **fields}


def _partition_key(partition_path: str) -> str:
    """The files-partition key of a data partition: `.` for the non-partitioned table's empty path."""
    return partition_path or NON_PARTITIONED_ID


# ---- files ------------------------------------------------------------------------------------------------


def _file_info(size: int, deleted: bool) -> dict[str, Any]:
    return {"size": size, "isDeleted": deleted}


def _partition_list(partitions: Iterable[str], deleted: bool) -> MetadataRecord:
    listing = {_partition_key(p): _file_info(0, deleted) for p in partitions}
    return MetadataRecord(
        FILES, ALL_PARTITIONS_KEY, _payload(ALL_PARTITIONS_KEY, TYPE_PARTITION_LIST, filesystemMetadata=listing)
    )


def _file_list(partition_path: str, files: Mapping[str, dict[str, Any]]) -> MetadataRecord:
    key = _partition_key(partition_path)
    return MetadataRecord(FILES, key, _payload(key, TYPE_FILE_LIST, filesystemMetadata=dict(files)))


def written_files(metadata: CommitMetadata) -> dict[str, dict[str, int]]:
    """Partition -> file name -> size of every file a commit wrote (its write stats' paths and CDC files); a
    file named by several stats takes the largest size (`convertMetadataToFilesPartitionRecords`)."""
    out: dict[str, dict[str, int]] = {}
    for partition, stats in metadata.partition_to_write_stats.items():
        files = out.setdefault(partition, {})
        for stat in stats:
            named = [(stat.path, stat.file_size_in_bytes)] if stat.path else []
            named += list((stat.cdc_stats or {}).items())
            for path, size in named:
                name = file_name(path)
                files[name] = max(size, files.get(name, size))
    return out


def files_records(metadata: CommitMetadata) -> list[MetadataRecord]:
    """A commit of any kind: the partitions it touched, and each partition's written files. Nothing is marked
    deleted: files a compaction or clustering replaced stay listed until a clean removes them."""
    return listing_records(written_files(metadata))


def listing_records(listing: Mapping[str, Mapping[str, int]]) -> list[MetadataRecord]:
    """`__all_partitions__` naming every partition of `listing` (partition -> file name -> size), and one file list
    per partition (`HoodieMetadataPayload.createPartitionListRecord` / `createPartitionFilesRecord`): what a commit
    adds, and the initial bulk insert of a new metadata table."""
    return [_partition_list(listing, False)] + [
        _file_list(p, {n: _file_info(s, False) for n, s in f.items()}) for p, f in listing.items()
    ]


def clean_files_records(clean: CleanMetadata) -> list[MetadataRecord]:
    """A clean: per cleaned partition its deleted files as tombstones; deleted partitions leave the list."""
    records = []
    dropped = []
    for partition, meta in clean.partition_metadata.items():
        tombstones = {file_name(p): _file_info(0, True) for p in meta.delete_path_patterns}
        if tombstones:
            records.append(_file_list(partition, tombstones))
        if meta.is_partition_deleted:
            dropped.append(partition)
    return ([_partition_list(dropped, True)] if dropped else []) + records


def rollback_files_records(
    rollback: RollbackMetadata, table_version: int, renamed: Mapping[str, Mapping[str, int | None]] | None = None
) -> list[MetadataRecord]:
    """A rollback. Table versions 8 and 9 write none: the metadata table rolls back its own deltacommit of the
    rolled-back instant instead. Version 6 (UNVERIFIED, no fixture) lists the rollback's log files and the failed
    commit's log files as present and its deleted files as tombstones (`processRollbackMetadata`); and, hudi-meta's
    own, `renamed` (partition -> file name -> size, None for gone): the log files a compaction's rollback moved
    back into the slice before it, under their new names."""
    if table_version >= 8:
        return []
    changes: dict[str, dict[str, dict[str, Any]]] = {}
    for partition, meta in rollback.partition_metadata.items():
        files = changes.setdefault(partition, {})
        files.update({file_name(p): _file_info(0, True) for p in meta.success_delete_files})
        for path, size in {**meta.log_files_from_failed_commit, **meta.rollback_log_files}.items():
            files[file_name(path)] = _file_info(size, False)
    for partition, names in (renamed or {}).items():
        files = changes.setdefault(partition, {})
        files.update({n: _file_info(0, True) if s is None else _file_info(s, False) for n, s in names.items()})
    records = [_file_list(p, files) for p, files in changes.items() if files]
    return ([_partition_list([p for p, f in changes.items() if f], False)] if records else []) + records


# ---- column_stats and partition_stats ------------------------------------------------------------------------


def _two_complement(n: int) -> bytes:
    """Java's `BigInteger.toByteArray`: the shortest big-endian two's complement."""
    size = (n.bit_length() if n >= 0 else (~n).bit_length()) // 8 + 1
    return n.to_bytes(size, "big", signed=True)


def _unscaled(value: decimal.Decimal, scale: int) -> int:
    return int(value.scaleb(scale).to_integral_value())


_V2_WRAPPER = {
    ValueType.BOOLEAN: "BooleanWrapper",
    ValueType.INT: "IntWrapper",
    ValueType.LONG: "LongWrapper",
    ValueType.FLOAT: "FloatWrapper",
    ValueType.DOUBLE: "DoubleWrapper",
    ValueType.STRING: "StringWrapper",
    ValueType.BYTES: "BytesWrapper",
    ValueType.FIXED: "BytesWrapper",
    ValueType.DECIMAL: "BytesWrapper",
    ValueType.UUID: "StringWrapper",
    ValueType.DATE: "IntWrapper",
    ValueType.TIME_MILLIS: "IntWrapper",
}


def _v2_value(value: Any, value_type: ValueType, info: str | None) -> tuple[str, dict[str, Any]]:
    """A value as index V2 writes it: the primitive wrapper of its ValueType (`ValueType.wrapValue`)."""
    if value_type == ValueType.DECIMAL:
        scale = int((info or "0,0").split(",")[1])
        value = _two_complement(_unscaled(value, scale))
    return _MODEL + _V2_WRAPPER.get(value_type, "LongWrapper"), {"value": value}


_V1_DECIMAL_SCALE = 15  # DecimalWrapper: bytes, decimal(30, 15)


def _v1_value(value: Any, value_type: ValueType) -> tuple[str, dict[str, Any]]:
    """A value as index V1 (table version 8) writes it (`wrapValueIntoAvro`); only strings, longs and doubles
    are checked against a fixture, the logical types follow the wrapper names (UNVERIFIED)."""
    if value_type == ValueType.DECIMAL:
        return _MODEL + "DecimalWrapper", {"value": value.quantize(decimal.Decimal(1).scaleb(-_V1_DECIMAL_SCALE))}
    if value_type == ValueType.DATE:
        return _MODEL + "DateWrapper", {"value": value}
    if value_type in (ValueType.TIMESTAMP_MICROS, ValueType.LOCAL_TIMESTAMP_MICROS):
        return _MODEL + "TimestampMicrosWrapper", {"value": value}
    if value_type == ValueType.TIME_MICROS:
        return _MODEL + "TimeMicrosWrapper", {"value": value}
    return _MODEL + _V2_WRAPPER.get(value_type, "LongWrapper"), {"value": value}


@dataclass(frozen=True)
class ColumnStatsIndex:
    """The column_stats index definition: the indexed columns, and `V1` (table version 8) or `V2` (version 9:
    values wrapped by ValueType, `valueType` recorded)."""

    columns: tuple[str, ...]
    version: str = "V1"

    @classmethod
    def from_index_defs(cls, index_json: Mapping[str, Any]) -> ColumnStatsIndex | None:
        """From `.hoodie/.index_defs/index.json`; None when it defines no column_stats index."""
        definition = index_json.get("indexDefinitions", {}).get(COLUMN_STATS)
        if definition is None:
            return None
        return cls(tuple(definition.get("sourceFields") or ()), definition.get("version") or "V1")

    def wrap(self, value: Any, r: ColumnRange) -> tuple[str, dict[str, Any]] | None:
        if value is None:
            return None
        return _v2_value(value, r.value_type, r.type_info) if self.version == "V2" else _v1_value(value, r.value_type)

    def stats(self, r: ColumnRange, file_name: str, tight: bool, deleted: bool = False) -> dict[str, Any]:
        """A `HoodieMetadataColumnStats` datum of one range."""
        out: dict[str, Any] = {
            "fileName": file_name,
            "columnName": r.column,
            "minValue": self.wrap(r.min_value, r),
            "maxValue": self.wrap(r.max_value, r),
            "valueCount": r.value_count,
            "nullCount": r.null_count,
            "totalSize": r.total_size,
            "totalUncompressedSize": r.total_uncompressed_size,
            "isDeleted": deleted,
            "isTightBound": tight,
        }
        if self.version == "V2":
            out["valueType"] = {"typeOrdinal": int(r.value_type), "additionalInfo": r.type_info}
        return out


def column_stats_records(
    index: ColumnStatsIndex, ranges_by_partition: Mapping[str, Iterable[ColumnRange]]
) -> list[MetadataRecord]:
    """One record per indexed column of each written file (partition path -> that partition's ranges)."""
    out = []
    for partition, ranges in ranges_by_partition.items():
        for r in ranges:
            if r.column not in index.columns:
                continue
            key = column_stats_key(r.column, partition, r.file_name)
            stats = index.stats(r, r.file_name, tight=False)
            out.append(MetadataRecord(COLUMN_STATS, key, _payload(key, TYPE_COLUMN_STATS, ColumnStatsMetadata=stats)))
    return out


def cleaned_files(clean: CleanMetadata) -> Iterator[tuple[str, str]]:
    """(partition path, file name) of every file a clean deleted (its `deletePathPatterns`)."""
    for partition, meta in clean.partition_metadata.items():
        for path in meta.delete_path_patterns:
            yield partition, file_name(path)


def clean_column_stats_records(index: ColumnStatsIndex, clean: CleanMetadata) -> list[MetadataRecord]:
    """A clean: a deleted stub per indexed column of each cleaned file (`isDeleted`, no values)."""
    out = []
    for partition, name in cleaned_files(clean):
        for column in index.columns:
            key = column_stats_key(column, partition, name)
            stub = ColumnRange(name, column, None, None, 0, 0, 0, 0, ValueType.NULL)
            stats = index.stats(stub, name, tight=False, deleted=True)
            if index.version == "V2":
                stats["valueType"] = None
            out.append(MetadataRecord(COLUMN_STATS, key, _payload(key, TYPE_COLUMN_STATS, ColumnStatsMetadata=stats)))
    return out


def partition_stats_records(
    index: ColumnStatsIndex, ranges_by_partition: Mapping[str, Iterable[ColumnRange]], tight: bool = True
) -> list[MetadataRecord]:
    """One record per indexed column of each touched partition, merged over the ranges of every file of the
    partition's latest file slices (the written files included). `tight` when column_stats is live, as Java
    then recomputes the bound from column_stats (`isTightBound`)."""
    out = []
    for partition, ranges in ranges_by_partition.items():
        merged = merge_all(r for r in ranges if r.column in index.columns)
        for column, r in merged.items():
            key = partition_stats_key(column, partition)
            stats = index.stats(r, partition, tight=tight)
            out.append(
                MetadataRecord(PARTITION_STATS, key, _payload(key, TYPE_PARTITION_STATS, ColumnStatsMetadata=stats))
            )
    return out


# ---- bloom_filters -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BloomFilter:
    """A base file's bloom filter as its footer holds it: type code and `serializeToString()` text."""

    partition_path: str
    base_file_name: str
    type_code: str
    serialized: str


def bloom_filter_records(filters: Iterable[BloomFilter], instant: str) -> list[MetadataRecord]:
    """One record per new base file (log files get none)."""
    out = []
    for f in filters:
        key = bloom_filter_key(f.partition_path, f.base_file_name)
        bloom = {
            "type": f.type_code,
            "timestamp": instant,
            "bloomFilter": f.serialized.encode("utf-8"),
            "isDeleted": False,
        }
        out.append(MetadataRecord(BLOOM_FILTERS, key, _payload(key, TYPE_BLOOM_FILTER, BloomFilterMetadata=bloom)))
    return out


def clean_bloom_filter_records(clean: CleanMetadata, instant: str) -> list[MetadataRecord]:
    """A clean: a deleted entry per cleaned base file (log files have no bloom filter record)."""
    out = []
    for partition, name in cleaned_files(clean):
        if name.startswith("."):
            continue
        key = bloom_filter_key(partition, name)
        bloom = {"type": "", "timestamp": instant, "bloomFilter": b"", "isDeleted": True}
        out.append(MetadataRecord(BLOOM_FILTERS, key, _payload(key, TYPE_BLOOM_FILTER, BloomFilterMetadata=bloom)))
    return out


# ---- record_index -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordLocation:
    """Where a record now lives: the data partition ("" for a non-partitioned table) and file group."""

    record_key: str
    partition_path: str
    file_id: str


def _signed64(n: int) -> int:
    return n - (1 << 64) if n >= 1 << 63 else n


def record_index_info(partition_path: str, file_id: str, instant_ms: int) -> dict[str, Any]:
    """`HoodieRecordIndexInfo` of a location: a `<uuid>-<n>` file id as UUID bits and index (encoding 0),
    anything else as the raw file id (encoding 1) (`createRecordIndexUpdate`)."""
    try:
        head, index = (
            (file_id, -1) if len(file_id) == 36 else (file_id.rsplit("-", 1)[0], int(file_id.rsplit("-", 1)[1]))
        )
        parsed = uuid.UUID(head)
    except (ValueError, IndexError):
        parsed = None
    common = {"partitionName": partition_path, "instantTime": instant_ms, "position": None}
    if parsed is None:
        return {
            **common,
            "fileIdHighBits": -1,
            "fileIdLowBits": -1,
            "fileIndex": -1,
            "fileId": file_id,
            "fileIdEncoding": 1,
        }
    high, low = parsed.int >> 64, parsed.int & ((1 << 64) - 1)
    return {
        **common,
        "fileIdHighBits": _signed64(high),
        "fileIdLowBits": _signed64(low),
        "fileIndex": index,
        "fileId": "",
        "fileIdEncoding": 0,
    }


def record_index_records(
    updates: Iterable[RecordLocation], deletes: Iterable[str], instant_ms: int
) -> list[MetadataRecord]:
    """New locations (inserts, records moved to another file group) and deleted keys (None payloads, written
    as DELETE-block entries). A key both deleted and inserted again keeps its new location."""
    placed = {u.record_key: u for u in updates}
    out = [
        MetadataRecord(
            RECORD_INDEX,
            key,
            _payload(
                key, TYPE_RECORD_INDEX, recordIndexMetadata=record_index_info(u.partition_path, u.file_id, instant_ms)
            ),
        )
        for key, u in placed.items()
    ]
    out += [MetadataRecord(RECORD_INDEX, key, None) for key in dict.fromkeys(deletes) if key not in placed]
    return out


def by_partition(records: Sequence[MetadataRecord]) -> dict[str, list[MetadataRecord]]:
    """Records grouped by MDT partition, in order."""
    out: dict[str, list[MetadataRecord]] = {}
    for r in records:
        out.setdefault(r.partition, []).append(r)
    return out


# ---- secondary indexes --------------------------------------------------------------------------------------

SECONDARY_INDEX_PREFIX = "secondary_index_"
TYPE_SECONDARY_INDEX = 7
_EPOCH_DAY = dt.date(1970, 1, 1)


def secondary_value_text(value: Any) -> str | None:
    """A secondary value as the index key holds it: Java's `toString` of the Avro value (a date as its day
    number, checked; booleans, integers and strings follow Java's text; other types UNVERIFIED)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        return str((value - dt.datetime(1970, 1, 1, tzinfo=value.tzinfo)) // dt.timedelta(microseconds=1))
    if isinstance(value, dt.date):
        return str((value - _EPOCH_DAY).days)
    return str(value)


def _secondary_record(partition: str, value: str | None, record_key: str, deleted: bool) -> MetadataRecord:
    key = secondary_index_key(value, record_key)
    if deleted:
        return MetadataRecord(partition, key, None)
    return MetadataRecord(
        partition, key, _payload(key, TYPE_SECONDARY_INDEX, SecondaryIndexMetadata={"isDeleted": False})
    )


def secondary_index_records(
    partition: str, before: Mapping[str, Any], after: Mapping[str, Any]
) -> list[MetadataRecord]:
    """What a write changes in secondary index `partition` (`secondary_index_<name>`), from each record key's
    secondary value before and after it: a new key is added, a removed key deleted, a changed value deletes the
    old entry and adds the new one (removals are DELETE-block entries); unchanged records write nothing."""
    out = []
    for record_key, old in before.items():
        new_text, old_text = secondary_value_text(after.get(record_key)), secondary_value_text(old)
        if record_key not in after or new_text != old_text:
            out.append(_secondary_record(partition, old_text, record_key, deleted=True))
    for record_key, new in after.items():
        new_text = secondary_value_text(new)
        if record_key not in before or secondary_value_text(before[record_key]) != new_text:
            out.append(_secondary_record(partition, new_text, record_key, deleted=False))
    return out
