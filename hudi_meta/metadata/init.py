"""Create the metadata table (MDT) of a data table hudi-meta writes, with its `files` partition, as Java's
`HoodieBackedTableMetadataWriter.initializeFromFilesystem` does.

Steps, under the data table's lock (no write can complete meanwhile): refuse while any data-table instant is
pending (its files could not be listed as committed or not); remove what a killed earlier attempt left in
`.hoodie/metadata`; write the MDT's hoodie.properties; create the `files` partition and its one file group (the
partition metadata file, a log file holding one empty DELETE block); bulk-insert the listing of the committed files
as the group's base HFile in a deltacommit at the init instant; last, add `files` to the data table's
`hoodie.table.metadata.partitions`. Readers believe the MDT only once that property names it, so a kill at any
step leaves a table listed from storage, and running this again starts over. docs/metadata-table.md section 6.
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from hudi_meta.errors import HudiMetaError, UnsupportedTableError
from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.format.config_keys import METADATA_PARTITIONS
from hudi_meta.format.file_names import UNKNOWN_WRITE_TOKEN, BaseFileName, log_file_name
from hudi_meta.format.properties import format_properties, parse_properties, with_checksum
from hudi_meta.metadata.crash import crash_point
from hudi_meta.metadata.encoding import empty_delete_block, hfile_bytes, record_schema_json, writer_schema_json
from hudi_meta.metadata.layout import (
    INIT_WRITE_TOKEN,
    FileGroupOf,
    default_file_group_of,
    file_group_id,
    mdt_path,
    mdt_properties,
    one_x_init_instant,
    partition_metadata_text,
    v6_init_instant,
)
from hudi_meta.metadata.record import MetadataRecord
from hudi_meta.metadata.records import listing_records
from hudi_meta.storage.base import Storage
from hudi_meta.table.committed_files import committed_data_files
from hudi_meta.table.metadata_table import FILES_PARTITION
from hudi_meta.table.table import AUX_DIR, META_DIR, PROPERTIES, HudiTable
from hudi_meta.timeline.instant import Action
from hudi_meta.timeline.timeline import TimelineWriter
from hudi_meta.write.lock import table_lock
from hudi_meta.write.writer import PARTITION_METADATA, WRITE_VERSIONS

BULK_INSERT_PREPPED = "BULK_INSERT_PREPPED"  # WriteOperationType of the initial commit


class MetadataTableExistsError(HudiMetaError):
    """The data table already lists a metadata-table partition that would be created."""


@dataclass(frozen=True)
class InitReport:
    """What `create_metadata_table` made: the init instant, and the partitions and files the listing held."""

    instant: str
    partitions: tuple[str, ...]
    files: int
    base_file: str  # relative to the MDT base path


def data_table_props(table: HudiTable) -> dict[str, str]:
    """The data table's hoodie.properties as they are now (`table.config` is what they were when opened)."""
    path = posixpath.join(table.meta_path, PROPERTIES)
    return parse_properties(table.storage.read_bytes(path).decode("utf-8"))


def set_metadata_partitions(table: HudiTable, partitions: tuple[str, ...]) -> None:
    """Rewrite the data table's hoodie.properties with `hoodie.table.metadata.partitions` = `partitions` (sorted,
    as Java writes it), in one atomic replace; every other key is kept."""
    props = data_table_props(table)
    props[METADATA_PARTITIONS.name] = ",".join(sorted(partitions))
    path = posixpath.join(table.meta_path, PROPERTIES)
    table.storage.replace_atomic(path, format_properties(with_checksum(props)).encode("utf-8"))


def metadata_partitions_now(table: HudiTable) -> tuple[str, ...]:
    """The MDT partitions the data table's hoodie.properties list now."""
    text = METADATA_PARTITIONS.of(data_table_props(table)) or ""
    return tuple(p for p in (s.strip() for s in text.split(",")) if p)


def committed_files(table: HudiTable) -> dict[str, dict[str, int]]:
    """Partition path ("" for none) -> file name -> size of the committed data files
    (`hudi_meta.table.committed_files`), in every folder with a `.hoodie_partition_metadata` (Java's
    `DirectoryInfo`; a partition without files still counts)."""
    files = committed_data_files(table)
    return {
        rel: files.get(rel, {})
        for rel, path in table.partition_folders()
        if table.storage.exists(posixpath.join(path, PARTITION_METADATA))
    }


def create_metadata_table(table: HudiTable) -> InitReport:
    """Create `table`'s metadata table with its `files` partition (see the module docstring). Raises
    MetadataTableExistsError when the table already has one, HudiMetaError while a data-table instant is pending."""
    version = table.config.version
    if version not in WRITE_VERSIONS:
        raise UnsupportedTableError(f"hudi-meta writes metadata tables of table versions 6, 8 and 9 (not {version})")
    if FILES_PARTITION in metadata_partitions_now(table):
        raise MetadataTableExistsError(f"{table.base_path} already has a metadata table (files partition)")
    with table_lock(table.storage, table.meta_path, table.config.props, "create the metadata table"):
        _refuse_pending(table)
        mdt = _new_mdt(table)
        instant = _init_instant(table, mdt)
        listing = committed_files(table)
        stats = _bulk_init(table, mdt, FILES_PARTITION, 1, listing_records(listing), instant, default_file_group_of)
        set_metadata_partitions(table, (*metadata_partitions_now(table), FILES_PARTITION))
    table.reload()
    files = sum(len(f) for f in listing.values())
    return InitReport(instant, tuple(sorted(listing)), files, stats[0].path)


def initialize_partition(
    table: HudiTable,
    partition: str,
    file_group_count: int,
    records: Callable[[HudiTable], Iterable[MetadataRecord]],
    file_group_of: FileGroupOf | None = None,
) -> InitReport:
    """Add MDT partition `partition` (e.g. `column_stats`, 2 file groups) to an MDT that has `files`, bulk-inserting
    `records(table)` (called under the lock, after the pending check) as Java initializes a partition: its own init
    instant, the folder cleared of an earlier attempt, one empty log file per file group, base files for the groups
    that get records, then the partition in `hoodie.table.metadata.partitions`."""
    live = metadata_partitions_now(table)
    if FILES_PARTITION not in live:
        raise HudiMetaError(f"{table.base_path} has no metadata table: create it (the files partition) first")
    if partition in live:
        raise MetadataTableExistsError(f"{table.base_path}: metadata table partition {partition} already exists")
    if file_group_count < 1:
        raise ValueError("a metadata table partition has at least one file group")
    with table_lock(table.storage, table.meta_path, table.config.props, f"initialize metadata partition {partition}"):
        _refuse_pending(table)
        mdt = HudiTable.open(table.storage.uri(mdt_path(table)), table.storage.options)
        instant = _init_instant(table, mdt)
        _remove_tree(table.storage, posixpath.join(mdt.base_path, partition))
        rows = list(records(table))
        mapping = file_group_of or default_file_group_of
        stats = _bulk_init(table, mdt, partition, file_group_count, rows, instant, mapping)
        set_metadata_partitions(table, (*metadata_partitions_now(table), partition))
    table.reload()
    return InitReport(instant, (partition,), len(rows), stats[0].path if stats else "")


def _refuse_pending(table: HudiTable) -> None:
    table.reload()
    pending = [i for i in table.timeline.pending() if i.action != Action.INDEXING]
    if pending:
        raise HudiMetaError(
            f"{table.base_path}: {pending[0].requested_time} ({pending[0].action}) is pending; the metadata table "
            "lists committed files only: finish or roll back pending instants first"
        )


def _init_instant(table: HudiTable, mdt: HudiTable) -> str:
    """The first init instant not on the MDT timeline: 1.x `00000000000000000`, `...001`...; version 6 the latest
    completed data-table instant + `010`, `011`... (generateUniqueInstantTime in HBTMW and HBTMW6)."""
    taken = {i.requested_time for i in mdt.timeline.instants}
    completed = [i.requested_time for i in table.timeline.completed()]
    for offset in itertools.count():
        instant = v6_init_instant(completed, offset) if table.config.version == 6 else one_x_init_instant(offset)
        if instant not in taken:
            return instant
    raise AssertionError("unreachable")


def _new_mdt(table: HudiTable) -> HudiTable:
    """An empty MDT (what a killed earlier attempt left removed first): its folders and hoodie.properties."""
    storage, root = table.storage, mdt_path(table)
    _remove_tree(storage, root)
    crash_point("init-after-cleanup")
    meta = posixpath.join(root, META_DIR)
    for folder in (AUX_DIR, ".temp", ".schema") + (("timeline/history",) if table.config.version >= 8 else ()):
        storage.makedirs(posixpath.join(meta, folder))
    props = format_properties(with_checksum(mdt_properties(table)))
    storage.create_atomic(posixpath.join(meta, PROPERTIES), props.encode("utf-8"))
    crash_point("init-after-properties")
    return HudiTable.open(storage.uri(root), storage.options)


def _bulk_init(
    table: HudiTable,
    mdt: HudiTable,
    partition: str,
    count: int,
    records: list[MetadataRecord],
    instant: str,
    file_group_of: FileGroupOf,
) -> list[WriteStat]:
    """A partition's file groups (each a log file of one empty DELETE block), then a deltacommit at `instant` of
    one base HFile per file group that gets records (HBTMW.initializeFileGroups, then bulkCommit)."""
    storage = mdt.storage
    partition_dir = posixpath.join(mdt.base_path, partition)
    storage.makedirs(partition_dir)
    storage.create_atomic(
        posixpath.join(partition_dir, PARTITION_METADATA), partition_metadata_text(instant).encode("utf-8")
    )
    file_ids = [file_group_id(partition, i) for i in range(count)]
    for file_id in file_ids:
        log = log_file_name(file_id, instant, 1, INIT_WRITE_TOKEN)
        storage.create_atomic(posixpath.join(partition_dir, log), empty_delete_block(instant).data)
    crash_point("init-after-file-group")
    timeline = TimelineWriter(storage, mdt.timeline_path, mdt.config.timeline_layout, table.config.timeline_timezone)
    timeline.request(Action.DELTA_COMMIT, instant)
    timeline.start(Action.DELTA_COMMIT, instant)
    crash_point("init-after-inflight")
    by_group: dict[int, list[MetadataRecord]] = {}
    for record in records:
        if record.partition != partition or record.is_delete:
            raise ValueError(f"initializing {partition}: {record.partition} record {record.key!r} (upserts of it only)")
        by_group.setdefault(file_group_of(partition, record.key, count), []).append(record)
    stats = []
    for index in sorted(by_group):
        payload = hfile_bytes(by_group[index], writer_schema_json(), base_file=True)
        name = BaseFileName(file_ids[index], UNKNOWN_WRITE_TOKEN, instant, ".hfile").name
        storage.create_atomic(posixpath.join(partition_dir, name), payload)
        crash_point("init-after-base-file")
        n = len(by_group[index])
        stats.append(
            WriteStat(
                file_id=file_ids[index],
                path=f"{partition}/{name}",
                num_writes=n,
                num_inserts=n,
                total_write_bytes=len(payload),
                partition_path=partition,
                file_size_in_bytes=len(payload),
            )
        )
    metadata = CommitMetadata(
        partition_to_write_stats={partition: stats},
        extra_metadata={"schema": record_schema_json()},
        operation_type=BULK_INSERT_PREPPED,
    )
    timeline.complete(Action.DELTA_COMMIT, instant, metadata.to_bytes(mdt.config.timeline_layout))
    crash_point("init-after-commit")
    return stats


def _remove_tree(storage: Storage, path: str) -> None:
    """Delete every file under `path` (what a killed initialization left; folders may stay, empty)."""
    if not storage.exists(path):
        return
    for info in storage.list_dir(path):
        if info.is_dir:
            _remove_tree(storage, info.path)
        else:
            storage.delete(info.path)
