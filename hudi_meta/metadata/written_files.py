"""What the metadata-table records of a commit need from the files it wrote, read through our Storage.

Column ranges per written file (`column_ranges`), bloom filters from new base files' footers, and the record
keys the record index moves or removes: keys of new base files, deleted keys of log files' DELETE blocks.
`records.py` turns these into records; this module only reads.
"""

from __future__ import annotations

import dataclasses
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_meta.format.block_content import decode_delete_records
from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.format.log_block import BlockType
from hudi_meta.format.log_reader import read_blocks, read_contents
from hudi_meta.metadata.column_ranges import ColumnRange, file_ranges
from hudi_meta.metadata.records import BloomFilter, RecordLocation
from hudi_meta.storage.base import Storage
from hudi_meta.table.table import HudiTable, Query, QueryKind
from hudi_meta.timeline.instant import Action

BLOOM_FILTER_FOOTER_KEY = b"org.apache.hudi.bloomfilter"  # HoodieAvroWriteSupport.HOODIE_AVRO_BLOOM_FILTER_METADATA_KEY
BLOOM_TYPE_FOOTER_KEY = b"hoodie_bloom_filter_type_code"
RECORD_KEY_FIELD = "_hoodie_record_key"
COMPACT = "COMPACT"
CLUSTER = "CLUSTER"


def secondary_values(table: HudiTable, column: str, as_of: str | None) -> dict[str, Any]:
    """Record key -> value of `column` in a snapshot of `table` as of an instant (None: before any write):
    the before and after of a write's secondary-index changes."""
    if as_of is None:
        return {}
    read = table.read(Query(QueryKind.TIME_TRAVEL, as_of=as_of), columns=[RECORD_KEY_FIELD, column])
    return dict(zip(read.column(RECORD_KEY_FIELD).to_pylist(), read.column(column).to_pylist(), strict=True))


FILE_NAME_FIELD = "_hoodie_file_name"
PARTITION_FIELD = "_hoodie_partition_path"


def snapshot_with(table: HudiTable, instant: str | None, columns: list[str]) -> pa.Table:
    """The snapshot as it reads once pending data-table instant `instant` completes (None: as it reads now), read
    before it completes: what a write's record-index and secondary-index changes are the difference of."""
    table.reload()
    if instant is not None:
        inputs = table.view_inputs()
        as_if = dataclasses.replace(inputs, completed={**inputs.completed, instant: instant})
        table.__dict__["_view_inputs"] = as_if  # the cached view inputs of this reload
    try:
        return (
            table.read(QueryKind.SNAPSHOT, columns=columns) if table.timeline.completed() or instant else pa.table({})
        )
    finally:
        table.reload()


def write_changes(
    table: HudiTable, instant: str, secondary_columns: Sequence[str]
) -> tuple[RecordIndexChanges, dict[str, tuple[dict[str, Any], dict[str, Any]]]]:
    """What our writer's deltacommit `instant` changes, from the snapshots without and with it: record-index
    locations (a key new, or now in another file group) and deleted keys; and per secondary column the values
    before and after, of the keys whose value changed. Java derives the same from its write statuses."""
    columns = [RECORD_KEY_FIELD, PARTITION_FIELD, FILE_NAME_FIELD, *dict.fromkeys(secondary_columns)]
    before, after = (_by_key(snapshot_with(table, t, columns)) for t in (None, instant))
    updates = [
        RecordLocation(key, row[PARTITION_FIELD] or "", _file_id(row[FILE_NAME_FIELD]))
        for key, row in after.items()
        if key not in before or _file_id(before[key][FILE_NAME_FIELD]) != _file_id(row[FILE_NAME_FIELD])
    ]
    deletes = sorted(set(before) - set(after))
    secondary = {}
    for column in secondary_columns:
        changed = {
            k
            for k in before.keys() | after.keys()
            if before.get(k, {}).get(column, _GONE) != after.get(k, {}).get(column, _GONE)
        }
        secondary[column] = (
            {k: before[k][column] for k in changed if k in before},
            {k: after[k][column] for k in changed if k in after},
        )
    return RecordIndexChanges(tuple(updates), tuple(deletes)), secondary


_GONE = object()


def _by_key(read: pa.Table) -> dict[str, dict[str, Any]]:
    return {r[RECORD_KEY_FIELD]: r for r in read.to_pylist()} if read.num_columns else {}


def _file_id(file_name: str) -> str:
    parsed = BaseFileName.try_parse(file_name) or LogFileName.try_parse(file_name)
    return parsed.file_id if parsed is not None else file_name


def _full(base_path: str, stat: WriteStat) -> str:
    return posixpath.join(base_path, stat.path)


def _is_log(stat: WriteStat) -> bool:
    return posixpath.basename(stat.path).startswith(".")


def commit_column_ranges(
    storage: Storage, base_path: str, metadata: CommitMetadata, columns: tuple[str, ...]
) -> dict[str, list[ColumnRange]]:
    """Partition path -> ranges of the indexed columns of every file the commit wrote (once per file, however many
    write stats name it)."""
    return {
        partition: [
            r
            for path in dict.fromkeys(_full(base_path, stat) for stat in stats if stat.path)
            for r in file_ranges(storage, path, columns)
        ]
        for partition, stats in metadata.partition_to_write_stats.items()
    }


def bloom_filters(storage: Storage, base_path: str, metadata: CommitMetadata) -> list[BloomFilter]:
    """The bloom filter of every new Parquet base file (the footer entries Hudi's writer adds)."""
    out = []
    for partition, stats in metadata.partition_to_write_stats.items():
        for stat in stats:
            if not stat.path or _is_log(stat):
                continue
            with storage.open_arrow(_full(base_path, stat)) as f:
                footer = pq.ParquetFile(f).metadata.metadata or {}
            if BLOOM_FILTER_FOOTER_KEY in footer:
                code = footer.get(BLOOM_TYPE_FOOTER_KEY, b"").decode("utf-8")
                text = footer[BLOOM_FILTER_FOOTER_KEY].decode("utf-8")
                out.append(BloomFilter(partition, stat.file_name, code, text))
    return out


def base_file_keys(storage: Storage, path: str) -> list[str]:
    """The record keys of a Parquet base file, from its `_hoodie_record_key` column."""
    with storage.open_arrow(path) as f:
        table = pq.read_table(f, columns=[RECORD_KEY_FIELD])
    return [str(k) for k in table.column(RECORD_KEY_FIELD).to_pylist() if k is not None]


def deleted_keys(storage: Storage, path: str) -> list[str]:
    """The keys of a log file's DELETE blocks."""
    blocks = [b for b in read_blocks(storage, path) if b.block_type == BlockType.DELETE]
    return [d.record_key for c in read_contents(storage, path, blocks) for d in decode_delete_records(c)]


def _latest_base(storage: Storage, folder: str, file_id: str, upto: str) -> str | None:
    """The newest base file of a file group written at or before instant `upto`."""
    found: dict[str, str] = {}
    for info in storage.list_dir(folder):
        name = BaseFileName.try_parse(info.name)
        if name is not None and name.file_id == file_id and name.instant <= upto:
            found[name.instant] = info.name
    return posixpath.join(folder, found[max(found)]) if found else None


def _replaced_keys(storage: Storage, base_path: str, metadata: CommitMetadata, instant: str) -> set[str]:
    """Keys of the file groups a replacecommit replaced (their latest base files)."""
    keys: set[str] = set()
    for partition, file_ids in metadata.partition_to_replace_file_ids.items():
        folder = posixpath.join(base_path, partition)
        for file_id in file_ids:
            path = _latest_base(storage, folder, file_id, instant)
            keys.update(base_file_keys(storage, path) if path else ())
    return keys


def _previous_base(storage: Storage, base_path: str, stat: WriteStat) -> str | None:
    """The base file the stat's file group had before this write (the same group at `prevCommit`)."""
    if stat.prev_commit in ("", "null", None) or _is_log(stat):
        return None
    folder = posixpath.dirname(_full(base_path, stat))
    for info in storage.list_dir(folder):
        name = info.name
        if name.startswith(stat.file_id + "_") and name.endswith(f"_{stat.prev_commit}.parquet"):
            return posixpath.join(folder, name)
    return None


@dataclass(frozen=True)
class RecordIndexChanges:
    """What a commit changes in the record index: new locations and removed keys."""

    updates: tuple[RecordLocation, ...]
    deletes: tuple[str, ...]


def record_index_changes(
    storage: Storage, base_path: str, metadata: CommitMetadata, instant: str
) -> RecordIndexChanges:
    """Inserts and moves from new base files (a rewritten base file: only keys its previous version lacked,
    and the keys it dropped are deletes); deletes from log files' DELETE blocks; for a replacecommit, the keys
    of the replaced file groups no new file holds are deletes; nothing for a compaction, which moves no record
    (Java returns early on `COMPACT`)."""
    if metadata.operation_type == COMPACT:
        return RecordIndexChanges((), ())
    updates: list[RecordLocation] = []
    deletes: list[str] = []
    for partition, stats in metadata.partition_to_write_stats.items():
        for stat in stats:
            if not stat.path:
                continue
            if _is_log(stat):
                deletes += deleted_keys(storage, _full(base_path, stat))
                continue
            keys = base_file_keys(storage, _full(base_path, stat))
            previous = None if metadata.operation_type == CLUSTER else _previous_base(storage, base_path, stat)
            old = set(base_file_keys(storage, previous)) if previous else set()
            updates += [RecordLocation(k, partition, stat.file_id) for k in keys if k not in old]
            deletes += sorted(old - set(keys))
    if metadata.operation_type != CLUSTER:
        written = {u.record_key for u in updates}
        deletes += sorted(_replaced_keys(storage, base_path, metadata, instant) - written)
    return RecordIndexChanges(tuple(updates), tuple(deletes))


def latest_slice_files(table: HudiTable, partition: str, upto: str, history: bool = False) -> list[str]:
    """Paths of the files of `partition`'s latest file slices as instant `upto` commits (what Java merges into
    partition stats, computed before `upto` completes): per file group not replaced by an earlier replacecommit (the
    groups `upto` itself replaces still count), its newest committed base file and the log files named at or after
    it; `upto`'s own files count as committed. `history`: `upto` is an instant of the past, and instants after it
    do not count (the golden tests read each commit of a Java table so)."""
    inputs = table.view_inputs()

    def committed(instant: str) -> bool:
        return instant == upto or (inputs.is_committed(instant) and not (history and instant > upto))

    replaced = {
        fid
        for i in table.timeline.completed()
        if i.action == Action.REPLACE_COMMIT and i.requested_time < upto
        for fid in table.timeline.commit_metadata(i).partition_to_replace_file_ids.get(partition, [])
    }
    bases: dict[str, tuple[str, str]] = {}
    logs: dict[str, list[tuple[str, str]]] = {}
    for info in table.storage.list_dir(posixpath.join(table.base_path, partition)):
        base = BaseFileName.try_parse(info.name)
        log = LogFileName.try_parse(info.name) if base is None else None
        if base is not None and committed(base.instant) and base.file_id not in replaced:
            if base.file_id not in bases or bases[base.file_id][0] < base.instant:
                bases[base.file_id] = (base.instant, info.path)
        elif log is not None and committed(log.instant) and log.file_id not in replaced:
            logs.setdefault(log.file_id, []).append((log.instant, info.path))
    out = [path for _, path in bases.values()]
    for fid, entries in logs.items():
        since = bases[fid][0] if fid in bases else ""
        out += [path for t, path in entries if t >= since]
    return sorted(out)
