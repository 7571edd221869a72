"""Read the metadata table's `files` partition: the data table's partitions and each partition's files, as
Java and hudi-rs list them when the metadata table is on (read-only).

The partition has one file group. Its latest file slice (the metadata table's own file-system view) is read:
the base HFile, then the HFILE_DATA and DELETE blocks of its log files in log order, keeping only blocks whose
instant is a completed metadata-table deltacommit that is not pending on the data table (Java's
`HoodieTableMetadataUtil.getValidInstantTimestamps`). Records merge as Java merges them, in two stages: log
records among themselves in log order, then the base record with that result (`combineFileSystemMetadata`).
docs/metadata-table.md gives each rule with its Java source.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol, TypeVar

from hudi_meta.errors import CorruptFileError, HudiMetaError
from hudi_meta.file_group.fs_view import latest_slice_for_snapshot
from hudi_meta.file_group.reader import ReadStats, visible_blocks
from hudi_meta.format.block_content import (
    BlockDecodeError,
    KeyedRecord,
    decode_delete_records,
    decode_hfile_records,
    hfile_records,
    undecodable_block_error,
)
from hudi_meta.format.hfile import HFileReader
from hudi_meta.format.log_block import BlockType, LogBlock
from hudi_meta.format.log_reader import read_blocks, read_contents
from hudi_meta.table.table import META_DIR, HudiTable, Listing
from hudi_meta.timeline.instant import Action

METADATA_DIR = "metadata"  # <base>/.hoodie/metadata
FILES_PARTITION = "files"
ALL_PARTITIONS_KEY = "__all_partitions__"  # HoodieTableMetadata.RECORDKEY_PARTITION_LIST
NON_PARTITIONED_KEY = "."  # HoodieTableMetadata.NON_PARTITIONED_NAME: the key of a non-partitioned table's files
TYPE_PARTITION_LIST = 1
TYPE_FILE_LIST = 2


class MetadataTableError(HudiMetaError):
    """The metadata table cannot be read as Java would read it (missing, or its files partition is malformed)."""


@dataclass(frozen=True)
class FileInfo:
    """One entry of a files-partition record: a file's size, or a tombstone."""

    size: int
    is_deleted: bool


@dataclass(frozen=True)
class FilesRecord:
    """A files-partition record: `__all_partitions__` (type 1) or one partition's files (type 2)."""

    key: str
    type: int
    files: Mapping[str, FileInfo]

    @classmethod
    def from_avro(cls, key: str, record: Mapping[str, Any]) -> FilesRecord:
        entries = record.get("filesystemMetadata") or {}
        files = {name: FileInfo(int(e["size"]), bool(e["isDeleted"])) for name, e in entries.items()}
        return cls(key, int(record["type"]), MappingProxyType(files))

    def live(self) -> dict[str, int]:
        """Name -> size of the entries that are not tombstones (what Java's readers return)."""
        return {name: info.size for name, info in self.files.items() if not info.is_deleted}


def combine_files_records(older: FilesRecord, newer: FilesRecord) -> FilesRecord:
    """`newer` merged over `older` (HoodieTableMetadataUtil.combineFileSystemMetadata): a tombstone removes a
    live entry and is dropped with it, else it is kept (so a later base merge still removes the file); a live
    entry takes the larger of the two sizes. Raises ValueError when keys or types differ, or a live entry of
    `newer` has no size (Java's `validatePayload`)."""
    if (older.key, older.type) != (newer.key, newer.type):
        raise ValueError(f"cannot merge files record {newer.key!r}/{newer.type} into {older.key!r}/{older.type}")
    merged = dict(older.files)
    for name, info in newer.files.items():
        if not info.is_deleted and info.size <= 0 and newer.type == TYPE_FILE_LIST:
            raise ValueError(f"files record {newer.key!r}: live file {name!r} has size {info.size}")
        old = merged.get(name)
        if old is None:
            merged[name] = info
        elif info.is_deleted:
            if old.is_deleted:
                merged[name] = info
            else:
                del merged[name]
        else:
            merged[name] = FileInfo(max(info.size, old.size), False)
    return FilesRecord(newer.key, newer.type, MappingProxyType(merged))


_DELETED = None  # a key a DELETE block removed, in the merged log records


class Keyed(Protocol):
    @property
    def key(self) -> str: ...


R = TypeVar("R", bound=Keyed)


def merge_log_records(records: Iterable[R | str], combine: Callable[[R, R], R]) -> dict[str, R | None]:
    """Stage one: log records merged among themselves in log order by `combine(older, newer)`; a `str` is a
    deleted key (None in the result). A record after a delete starts afresh (HoodieMetadataPayload.preCombine
    over a deleted record)."""
    merged: dict[str, R | None] = {}
    for record in records:
        if isinstance(record, str):
            merged[record] = _DELETED
            continue
        previous = merged.get(record.key)
        merged[record.key] = record if previous is None else combine(previous, record)
    return merged


def merge_with_base(base: Mapping[str, R], log: Mapping[str, R | None], combine: Callable[[R, R], R]) -> dict[str, R]:
    """Stage two: each base record with the merged log record of its key; deleted keys are gone."""
    merged = dict(base)
    for key, record in log.items():
        if record is None:
            merged.pop(key, None)
        elif key in merged:
            merged[key] = combine(merged[key], record)
        else:
            merged[key] = record
    return merged


@dataclass(frozen=True)
class FilesListing:
    """What the files partition says: the data partitions ("" for a non-partitioned table) and their files."""

    partitions: tuple[str, ...]
    files: Mapping[str, Mapping[str, int]]  # partition path -> file name -> size
    base_file: str | None  # the files partition's base HFile read (relative to the metadata table)
    log_files: tuple[str, ...]


def metadata_table_path(table: HudiTable) -> str:
    return posixpath.join(table.base_path, META_DIR, METADATA_DIR)


def valid_instants(table: HudiTable, mdt: HudiTable) -> Callable[[str], bool]:
    """Whether a metadata-table block's instant counts: a completed (or archived) metadata-table instant that
    is not pending on the data table (Java's `getValidInstantTimestamps`: a data-table write whose metadata
    deltacommit completed but which itself did not complete is invisible)."""
    mdt_inputs = mdt.view_inputs()
    pending = {i.requested_time for i in table.timeline.pending()}
    return lambda instant: mdt_inputs.is_committed(instant) and instant not in pending


def read_files_partition(table: HudiTable) -> FilesListing:
    """The data table's listing as its metadata table's `files` partition holds it."""
    path = metadata_table_path(table)
    if not table.storage.exists(path):
        raise MetadataTableError(f"{table.base_path} has no metadata table ({path} does not exist)")
    mdt = HudiTable.open(table.storage.uri(path), table.storage.options)
    groups = [fg for fg in mdt.file_groups() if fg.partition == FILES_PARTITION]
    if len(groups) != 1:
        raise MetadataTableError(f"{path}/{FILES_PARTITION} has {len(groups)} file groups: expected exactly one")
    picked = latest_slice_for_snapshot(groups[0], mdt.view_inputs())
    base, logs = picked if picked is not None else (None, [])
    is_valid = valid_instants(table, mdt)
    in_base, in_logs = slice_records(mdt, base.path if base else None, [lf.path for lf in logs], is_valid)
    files_base = {k: _files_record(r) for k, r in in_base.items()}
    files_logs = [r if isinstance(r, str) else _files_record(r) for r in in_logs]
    merged = merge_with_base(files_base, merge_log_records(files_logs, combine_files_records), combine_files_records)
    return _listing(merged, base.path if base else None, tuple(lf.path for lf in logs))


def listing_through_metadata(table: HudiTable) -> Listing:
    """The table's data files as its metadata table's `files` partition lists them: a few reads of the MDT instead
    of one listing request per partition folder (what the index uses on object stores, `index --through-metadata`).

    Refused (MetadataTableError, one line) where that listing would not be the table's: without a metadata table;
    on a store with symbolic links (a link's target is read from storage, and a clean must know it); while a
    clean or rollback is pending (the MDT lags storage by what they delete or rename until they complete, and a
    version-6 compaction planned without a renamed log file would drop its records). Files of writes still
    pending are not listed: the MDT lists committed files only, and the next index run adds them once committed.
    """
    if table.storage.supports_symlinks:
        raise MetadataTableError(
            f"{table.base_path}: listing through the metadata table is for object stores; on a file system with "
            "symbolic links the index reads each link's target from storage"
        )
    busy = [i for i in table.timeline.pending() if i.action in (Action.CLEAN, Action.ROLLBACK)]
    if busy:
        raise MetadataTableError(
            f"{table.base_path}: {busy[0].action} {busy[0].requested_time} is pending, and the metadata table lags "
            "storage until it completes: finish it, or index without --through-metadata"
        )
    listing: Listing = ([], [])
    for partition, files in read_files_partition(table).files.items():
        for name, size in files.items():
            table.add_data_file(listing, partition, name, size, None)
    return listing


def slice_records(
    mdt: HudiTable, base: str | None, logs: list[str], is_valid: Callable[[str], bool]
) -> tuple[dict[str, KeyedRecord], list[KeyedRecord | str]]:
    """The records of one MDT file slice (paths relative to the MDT): its base HFile's by key, and its log files'
    in log order (a `str` for a key a DELETE block removed), blocks of instants `is_valid` refuses and rolled-back
    blocks left out. Unions of several records decode tagged (`(name, value)`), so a record encodes back to the
    same branch (what a compaction rewrites)."""
    return (_base_records(mdt, base) if base else {}), _log_records(mdt, logs, is_valid)


def _base_records(mdt: HudiTable, rel: str) -> dict[str, KeyedRecord]:
    full = posixpath.join(mdt.base_path, rel)
    hfile = HFileReader(mdt.storage.read_bytes(full), full)
    if hfile.schema is None:
        raise CorruptFileError(f"{full}: HFile without a `schema` file info entry")
    return {r.key: r for r in hfile_records(hfile, hfile.schema, tagged=True)}


def _log_records(mdt: HudiTable, paths: list[str], is_valid: Callable[[str], bool]) -> list[KeyedRecord | str]:
    blocks: list[tuple[str, LogBlock]] = []
    for rel in paths:
        full = posixpath.join(mdt.base_path, rel)
        blocks.extend((full, b) for b in read_blocks(mdt.storage, full))
    out: list[KeyedRecord | str] = []
    kept = visible_blocks(blocks, is_valid, ReadStats())
    for full in dict.fromkeys(p for p, _ in kept):
        in_file = [b for p, b in kept if p == full]
        for block, content in zip(in_file, read_contents(mdt.storage, full, in_file), strict=True):
            try:
                out.extend(_block_records(block, content))
            except BlockDecodeError as e:
                raise undecodable_block_error(full, block, e) from e
    return out


def _block_records(block: LogBlock, content: bytes) -> list[KeyedRecord | str]:
    if block.block_type == BlockType.HFILE_DATA:
        return list(decode_hfile_records(content, block.schema, tagged=True))
    if block.block_type == BlockType.DELETE:
        return [d.record_key for d in decode_delete_records(content)]
    raise BlockDecodeError(f"a {block.block_type.name} block in the metadata table (Java writes HFile blocks)")


def _files_record(record: KeyedRecord) -> FilesRecord:
    return FilesRecord.from_avro(record.key, record.record)


def _listing(merged: Mapping[str, FilesRecord], base: str | None, logs: tuple[str, ...]) -> FilesListing:
    all_partitions = merged.get(ALL_PARTITIONS_KEY)
    partitions = sorted(all_partitions.live()) if all_partitions is not None else []
    files: dict[str, Mapping[str, int]] = {}
    for key, record in merged.items():
        if record.type == TYPE_FILE_LIST:
            files["" if key == NON_PARTITIONED_KEY else key] = MappingProxyType(record.live())
    names = tuple("" if p == NON_PARTITIONED_KEY else p for p in partitions)
    return FilesListing(names, MappingProxyType(files), base, logs)
