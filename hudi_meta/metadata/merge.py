"""How two records of one MDT key combine, per record type (Java's `HoodieMetadataPayload.preCombine` and
`HoodieTableMetadataUtil.mergeColumnStatsRecords`): what a compaction of the metadata table folds into its base
HFiles, with the two-stage order of `hudi_meta.table.metadata_table` (logs among themselves, then the base).
docs/metadata-table.md section 7.3 gives each rule with its source.

- files (types 1 and 2): `combine_files_records` (a tombstone removes a live entry, sizes take the larger);
- column_stats (3) and partition_stats (6): a tombstone on either side, or a newer tight bound, takes the newer
  record; else min of the minimums, max of the maximums (nulls ignored), counts and sizes summed;
- bloom_filters (4), record_index (5), secondary indexes (7): the newer record.

A compaction writes what readers would return, so a record readers drop is left out of the new base file: a
secondary-index entry marked deleted (Java's payload is then a deleted record). A column-stats or bloom-filter
tombstone stays (Java keeps it; readers skip it).
"""

from __future__ import annotations

from typing import Any

from hudi_meta.format.block_content import KeyedRecord
from hudi_meta.table.metadata_table import FilesRecord, combine_files_records

TYPE_COLUMN_STATS = 3
TYPE_PARTITION_STATS = 6
TYPE_SECONDARY_INDEX = 7
_SUMMED = ("valueCount", "nullCount", "totalSize", "totalUncompressedSize")


def combine(older: KeyedRecord, newer: KeyedRecord) -> KeyedRecord:
    """`newer` over `older` (same key). Raises ValueError for records of different types."""
    kind = int(newer.record["type"])
    if int(older.record["type"]) != kind:
        raise ValueError(f"cannot merge MDT record {newer.key!r} of type {kind} into type {older.record['type']}")
    if kind in (1, 2):
        files = combine_files_records(_files(older), _files(newer))
        entries = {n: {"size": i.size, "isDeleted": i.is_deleted} for n, i in files.files.items()}
        return KeyedRecord(newer.key, {**newer.record, "filesystemMetadata": entries})
    if kind in (TYPE_COLUMN_STATS, TYPE_PARTITION_STATS):
        stats = _merge_column_stats(older.record["ColumnStatsMetadata"], newer.record["ColumnStatsMetadata"])
        return KeyedRecord(newer.key, {**newer.record, "ColumnStatsMetadata": stats})
    return newer


def kept_in_base(record: KeyedRecord) -> bool:
    """Whether a compaction writes `record` into the new base file (see the module docstring)."""
    if int(record.record["type"]) != TYPE_SECONDARY_INDEX:
        return True
    info = record.record.get("SecondaryIndexMetadata") or {}
    return not info.get("isDeleted", False)


def _files(record: KeyedRecord) -> FilesRecord:
    return FilesRecord.from_avro(record.key, record.record)


def _merge_column_stats(older: dict[str, Any], newer: dict[str, Any]) -> dict[str, Any]:
    if older.get("isDeleted") or newer.get("isDeleted") or newer.get("isTightBound"):
        return newer
    low = [w for w in (older.get("minValue"), newer.get("minValue")) if _unwrap(w) is not None]
    high = [w for w in (older.get("maxValue"), newer.get("maxValue")) if _unwrap(w) is not None]
    merged = dict(newer)
    merged["minValue"] = min(low, key=_unwrap) if low else None
    merged["maxValue"] = max(high, key=_unwrap) if high else None
    for field in _SUMMED:
        merged[field] = (older.get(field) or 0) + (newer.get(field) or 0)
    return merged


def _unwrap(wrapper: Any) -> Any:
    """The value inside a tagged value wrapper (`(name, {"value": v})`), None for none."""
    if wrapper is None:
        return None
    value = wrapper[1] if isinstance(wrapper, tuple) else wrapper
    return value.get("value") if isinstance(value, dict) else value
