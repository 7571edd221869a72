"""Keep a data table's metadata table (MDT) in step with each action hudi-meta commits on it.

Every commit path (our writer's deltacommits, compaction, clean, the rollbacks) calls one method of `MetadataSync`
with the action's metadata, under the data table's lock, right before the data-table instant completes (Java's
order: `writeTableMetadata`, then `saveAsComplete`). The method runs the MDT's own table services first
(`services.run_table_services`: clean, compaction, archival, as Java does around each deltacommit), derives the
records of every MDT partition the table has (`records.py`, facts read by `written_files.py`) and writes them as one
MDT deltacommit at the data-table instant (`writer.write_delta_commit`); a rollback rolls back the MDT's deltacommit
of its target instead (`writer.follow_data_rollback`). A partition hudi-meta cannot keep correct for an action is
refused before anything is written, in one line naming it. docs/metadata-table.md section 7.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hudi_meta.errors import UnsupportedTableError
from hudi_meta.format.commit_metadata import CommitMetadata
from hudi_meta.format.config_keys import INDEX_DEFS_PATH, METADATA_PARTITIONS_INFLIGHT
from hudi_meta.format.file_names import LogFileName
from hudi_meta.format.table_service_metadata import CleanMetadata, RollbackMetadata
from hudi_meta.metadata import records
from hudi_meta.metadata.column_ranges import file_ranges
from hudi_meta.metadata.init import data_table_props, metadata_partitions_now
from hudi_meta.metadata.integrity import refuse_damaged
from hudi_meta.metadata.keys import secondary_file_group_index
from hudi_meta.metadata.layout import default_file_group_of
from hudi_meta.metadata.record import MetadataRecord
from hudi_meta.metadata.records import (
    BLOOM_FILTERS,
    COLUMN_STATS,
    FILES,
    PARTITION_STATS,
    RECORD_INDEX,
    SECONDARY_INDEX_PREFIX,
    ColumnStatsIndex,
)
from hudi_meta.metadata.rollback import open_mdt, refuse_compacted
from hudi_meta.metadata.services import run_table_services
from hudi_meta.metadata.writer import follow_data_rollback, write_delta_commit
from hudi_meta.metadata.written_files import (
    COMPACT,
    bloom_filters,
    commit_column_ranges,
    latest_slice_files,
    write_changes,
)
from hudi_meta.table.committed_files import committed_data_files
from hudi_meta.table.metadata_table import read_files_partition
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, instant_epoch_ms
from hudi_meta.write.writer import WriteClient

# partitions whose records hudi-meta derives for every kind of action, per table version (docs section 7.1)
KEPT_ON_ONE_X = frozenset({FILES, COLUMN_STATS, PARTITION_STATS, BLOOM_FILTERS, RECORD_INDEX})
KEPT_ON_V6 = frozenset({FILES})


class MetadataPartitionError(UnsupportedTableError):
    """An MDT partition hudi-meta cannot keep correct for an action, or one the table names but does not hold."""


@dataclass(frozen=True)
class MetadataSync:
    """The MDT of one data table, as its properties name it now: `partitions` are the MDT partitions to write."""

    table: HudiTable
    partitions: tuple[str, ...]
    column_stats: ColumnStatsIndex | None
    secondary: Mapping[str, str]  # secondary index partition -> its column
    secondary_versions: Mapping[str, str]  # secondary index partition -> its index version (V1, V2)

    # ---- the commit paths --------------------------------------------------------------------------------

    def commit(self, instant: str, metadata: CommitMetadata, links: Mapping[str, Mapping[str, int]] = {}) -> None:
        """The MDT deltacommit of data-table commit `instant` (a write or a compaction): every written file, plus
        `links` (partition -> name -> size: the links and carry logs an event-time compaction places in its
        slices, files on storage like any other, which the commit's write stats do not name)."""
        run_table_services(self.table)
        out = records.listing_records(_merged(records.written_files(metadata), links))
        if COLUMN_STATS in self.partitions or PARTITION_STATS in self.partitions:
            out += self._stats_records(instant, metadata, links)
        if BLOOM_FILTERS in self.partitions:
            out += records.bloom_filter_records(
                bloom_filters(self.table.storage, self.table.base_path, metadata), instant
            )
        if metadata.operation_type != COMPACT and (RECORD_INDEX in self.partitions or self.secondary):
            out += self._key_records(instant)  # a compaction moves no record and changes no value
        self._write(instant, out)

    def clean(self, instant: str, metadata: CleanMetadata) -> None:
        """The MDT deltacommit of clean `instant`: its deleted files as tombstones in `files`, and the deleted
        files' column stats and bloom filters (`convertMetadataToRecords(HoodieCleanMetadata)`; record index,
        partition stats and secondary indexes do not change)."""
        run_table_services(self.table)
        out = records.clean_files_records(metadata)
        if self.column_stats is not None and COLUMN_STATS in self.partitions:
            out += records.clean_column_stats_records(self.column_stats, metadata)
        if BLOOM_FILTERS in self.partitions:
            out += records.clean_bloom_filter_records(metadata, instant)
        self._write(instant, out)

    def rollback(self, rollback_time: str, metadata: RollbackMetadata, moved_in: Iterable[str] = ()) -> None:
        """Bring the MDT in step with data-table rollback `rollback_time` of one instant: the MDT's deltacommit
        of that instant is rolled back (and on version 6 the rollback's own files are listed first). `moved_in`:
        the partitions where a compaction's rollback moved log files back (version 6 only)."""
        target = metadata.commits_rollback[0]
        renamed = self._renamed_log_files(moved_in) if self.table.config.version == 6 else None
        derived = records.rollback_files_records(metadata, self.table.config.version, renamed)
        follow_data_rollback(self.table, target, rollback_time, derived)

    def refuse_rollback(self, target: str) -> None:
        """Refuse, before anything is written, a data-table rollback of `target` whose MDT deltacommit an MDT
        compaction already folded into a base file (Java needs a restore there)."""
        mdt = open_mdt(self.table)
        instant = mdt.timeline.instant(target)
        if instant is not None and instant.is_completed:
            refuse_compacted(mdt, instant)

    # ---- parts -------------------------------------------------------------------------------------------

    def _renamed_log_files(self, partitions: Iterable[str]) -> dict[str, dict[str, int | None]]:
        """Partition -> log file name -> size (None: gone) of what a rename changed, found by comparing the MDT's
        listing with storage (so a rollback killed after its moves, whose journal is gone, is still recorded):
        listed log files storage no longer holds, and unlisted ones that hold a block of a committed write."""
        wanted = set(partitions)
        listing = read_files_partition(self.table)
        stored = committed_data_files(self.table, wanted)
        out: dict[str, dict[str, int | None]] = {}
        for partition in sorted(wanted):
            listed = listing.files.get(partition, {})
            logs = {n: size for n, size in stored.get(partition, {}).items() if LogFileName.try_parse(n)}
            changes: dict[str, int | None] = {n: None for n in listed if LogFileName.try_parse(n) and n not in logs}
            changes.update({n: size for n, size in logs.items() if n not in listed})
            if changes:
                out[partition] = changes
        return out

    def _stats_records(
        self, instant: str, metadata: CommitMetadata, links: Mapping[str, Mapping[str, int]]
    ) -> list[MetadataRecord]:
        index = self.column_stats
        assert index is not None
        storage, base = self.table.storage, self.table.base_path
        ranges = commit_column_ranges(storage, base, metadata, index.columns)
        for partition, names in links.items():
            ranges.setdefault(partition, []).extend(
                r for name in names for r in file_ranges(storage, posixpath.join(base, partition, name), index.columns)
            )
        out = records.column_stats_records(index, ranges) if COLUMN_STATS in self.partitions else []
        if PARTITION_STATS in self.partitions:
            latest = {
                p: [
                    r
                    for path in latest_slice_files(self.table, p, instant)
                    for r in file_ranges(storage, path, index.columns)
                ]
                for p in ranges
            }
            out += records.partition_stats_records(index, latest, tight=COLUMN_STATS in self.partitions)
        return out

    def _key_records(self, instant: str) -> list[MetadataRecord]:
        """Record-index and secondary-index records of our writer's deltacommit `instant` (still pending)."""
        changes, values = write_changes(self.table, instant, list(self.secondary.values()))
        out = []
        if RECORD_INDEX in self.partitions:
            ms = instant_epoch_ms(instant, self.table.config.timeline_timezone)
            out += records.record_index_records(changes.updates, changes.deletes, ms)
        for partition, column in self.secondary.items():
            out += records.secondary_index_records(partition, *values[column])
        return out

    def _write(self, instant: str, out: list[MetadataRecord]) -> None:
        write_delta_commit(self.table, instant, out, self._file_group_of)

    def _file_group_of(self, partition: str, key: str, count: int) -> int:
        version = self.secondary_versions.get(partition)
        if version is not None:
            return secondary_file_group_index(key, count, version)
        return default_file_group_of(partition, key, count)


def _merged(a: Mapping[str, Mapping[str, int]], b: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, int]]:
    out = {p: dict(f) for p, f in a.items()}
    for p, files in b.items():
        out.setdefault(p, {}).update(files)
    return out


def metadata_sync(table: HudiTable) -> MetadataSync | None:
    """The table's MDT as hudi-meta will keep it, None when it has none; refused (one line) as `describe_metadata`
    refuses it, or when the MDT is missing or damaged (`integrity.refuse_damaged`: it is read whole before anything
    is written)."""
    sync = describe_metadata(table)
    if sync is not None:
        refuse_damaged(table)  # everything a write reads of the MDT, read before the first write
    return sync


def describe_metadata(table: HudiTable) -> MetadataSync | None:
    """The MDT partitions hudi-meta keeps and their definitions, from the properties alone (what a reader such as
    `check` needs; writers go through `metadata_sync`); refused (one line naming the partition) when the table names
    a partition hudi-meta cannot keep or one Hudi's indexer is building."""
    partitions = metadata_partitions_now(table)
    if not partitions:
        return None
    inflight = (METADATA_PARTITIONS_INFLIGHT.of(data_table_props(table)) or "").strip()
    if inflight:
        raise MetadataPartitionError(
            f"{table.base_path}: metadata table partition {inflight.split(',')[0]!r} is being built by Hudi's indexer "
            f"({METADATA_PARTITIONS_INFLIGHT.name}); run again once it completes"
        )
    if FILES not in partitions:
        raise MetadataPartitionError(f"{table.base_path}: the metadata table has no 'files' partition: {partitions}")
    kept = KEPT_ON_V6 if table.config.version == 6 else KEPT_ON_ONE_X
    for partition in partitions:
        if partition not in kept and not (table.config.version >= 8 and partition.startswith(SECONDARY_INDEX_PREFIX)):
            raise MetadataPartitionError(
                f"{table.base_path}: hudi-meta does not keep metadata table partition {partition!r} of a version "
                f"{table.config.version} table; drop that index to change the table with hudi-meta"
            )
    path, defs = _index_definitions(table)
    column_stats = None
    if COLUMN_STATS in partitions or PARTITION_STATS in partitions:
        column_stats = ColumnStatsIndex.from_index_defs(defs)
        if column_stats is None:
            raise MetadataPartitionError(
                f"{table.base_path}: metadata table partition 'column_stats' has no definition in {path}: its "
                "columns are unknown"
            )
    secondary, versions = {}, {}
    for partition in partitions:
        if partition.startswith(SECONDARY_INDEX_PREFIX):
            definition = defs.get("indexDefinitions", {}).get(partition, {})
            fields = definition.get("sourceFields") or []
            if len(fields) != 1:
                raise MetadataPartitionError(
                    f"{table.base_path}: metadata table partition {partition!r} has no one-column definition in {path}"
                )
            secondary[partition] = fields[0]
            versions[partition] = definition.get("version") or "V1"
    return MetadataSync(table, partitions, column_stats, secondary, versions)


def _index_definitions(table: HudiTable) -> tuple[str, dict[str, Any]]:
    """The table's index definitions file (`hoodie.table.index.defs.path`) and its content ({} when absent)."""
    rel = INDEX_DEFS_PATH.or_default(table.config.props)  # relative to the base path, or absolute
    path = rel if rel.startswith("/") or "://" in rel else posixpath.join(table.base_path, rel)
    try:
        return path, json.loads(table.storage.read_bytes(path))
    except (FileNotFoundError, ValueError):
        return path, {}


def write_client(table: HudiTable, action: Action = Action.DELTA_COMMIT, instant: str = "") -> WriteClient:
    """A WriteClient of `table` (at `instant`, "" for a new one) that keeps its MDT in step."""
    sync = metadata_sync(table)
    if sync is None:
        return WriteClient(table, action=action, instant=instant)
    return WriteClient(
        table, action=action, instant=instant, metadata_writer=sync.commit, metadata_rollback=sync.rollback
    )


def rollback_hook(table: HudiTable) -> Callable[[str, RollbackMetadata], None] | None:
    """What `rollback_failed_write` calls to keep `table`'s MDT in step (None: the table has no MDT)."""
    sync = metadata_sync(table)
    return sync.rollback if sync is not None else None
