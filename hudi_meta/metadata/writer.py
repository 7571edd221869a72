"""Write one metadata-table (MDT) deltacommit at data-table instant T, before T itself completes.

Java's order (`BaseHoodieWriteClient.commit`: `writeTableMetadata` then `saveAsComplete`; the MDT write in
`HoodieBackedTableMetadataWriter.commitInternal`): with data-table T pending, the MDT gets `T.deltacommit.requested`,
`.inflight`, one log block set per touched file group, then the completed deltacommit; only then does the caller
complete T on the data table. Readers take an MDT block only when its instant completed on the MDT and is not
pending on the data table (`getValidInstantTimestamps`), so a kill before the MDT completion leaves a pending MDT
instant nobody reads, and a kill between the two completions leaves T pending on the data table, which hides it.
When the MDT already has T (partial, or completed by an attempt whose data commit failed), T is rolled back on the
MDT first and written again (`commitInternal`).

Each record goes to file group `abs(hash(key)) % n` of its MDT partition (file groups ordered by file id). Versions
8 and 9 write one new log file per touched file group named by T (`.{fileId}_{T}.log.1_{token}`); version 6 appends
to the latest log file of the group's newest slice (named by the slice's base instant), or rolls over to the next
version where storage cannot append or the file reached `hoodie.metadata.max.logfile.size`, as 0.x's log writer
does. Upserts go in one HFILE_DATA block (keys sorted), removals in one DELETE block after it.
docs/metadata-table.md section 6.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

from hudi_meta.errors import HudiMetaError
from hudi_meta.file_group.fs_view import FileGroup
from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.format.config_keys import METADATA_PARTITIONS_INFLIGHT
from hudi_meta.format.file_names import UNKNOWN_WRITE_TOKEN, LogFileName, log_file_name
from hudi_meta.format.hfile import HFileReader
from hudi_meta.format.log_writer import EncodedBlock, append_blocks
from hudi_meta.metadata.crash import crash_point
from hudi_meta.metadata.encoding import hfile_data_block, mdt_delete_block, record_schema_json, writer_schema_json
from hudi_meta.metadata.init import data_table_props, metadata_partitions_now
from hudi_meta.metadata.layout import FileGroupOf, default_file_group_of
from hudi_meta.metadata.record import MetadataRecord
from hudi_meta.metadata.rollback import (
    MdtRollbackReport,
    mdt_timeline_writer,
    open_mdt,
    rollback_delta_commit,
    rollback_time_for,
)
from hudi_meta.table.metadata_table import FILES_PARTITION, MetadataTableError
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, Instant

UPSERT_PREPPED = "UPSERT_PREPPED"  # WriteOperationType of an MDT deltacommit
MAX_LOG_FILE_SIZE = 2 * 1024**3  # hoodie.metadata.max.logfile.size


@dataclass(frozen=True)
class DeltaCommitReport:
    """One MDT deltacommit: its instant, whether an earlier attempt of it was rolled back first, the write stats."""

    instant: Instant
    rolled_back: bool
    stats: tuple[WriteStat, ...]


def write_delta_commit(
    table: HudiTable,
    instant: str,
    records: Iterable[MetadataRecord],
    file_group_of: FileGroupOf = default_file_group_of,
) -> DeltaCommitReport:
    """Write MDT deltacommit `instant` holding `records` (see the module docstring). Data-table `instant` must be
    pending (requested or inflight) and the caller must hold the data table's lock, as Java's writers do around
    "MDT update + data commit"; the caller completes `instant` on the data table after this returns."""
    by_partition = _by_partition(table, records)
    table.reload()
    pending = table.timeline.instant(instant)
    if pending is None or pending.is_completed:
        raise HudiMetaError(
            f"metadata table deltacommit {instant}: data-table instant {instant} must be pending (the metadata "
            "table is written first, then the data commit completes)"
        )
    rolled_back = rollback_delta_commit(table, instant) is not None
    mdt = open_mdt(table)
    writer = mdt_timeline_writer(table, mdt)
    writer.request(Action.DELTA_COMMIT, instant)
    crash_point("after-requested")
    writer.start(Action.DELTA_COMMIT, instant)
    crash_point("after-inflight")
    mdt.reload()
    stats = [
        stat
        for partition, partition_records in sorted(by_partition.items())
        for stat in _write_partition(mdt, partition, partition_records, instant, file_group_of)
    ]
    metadata = CommitMetadata(extra_metadata={"schema": record_schema_json()}, operation_type=UPSERT_PREPPED)
    for stat in stats:
        metadata.partition_to_write_stats.setdefault(stat.partition_path, []).append(stat)
    crash_point("before-complete")
    completed = writer.complete(Action.DELTA_COMMIT, instant, metadata.to_bytes(mdt.config.timeline_layout))
    crash_point("after-complete")
    return DeltaCommitReport(completed, rolled_back, tuple(stats))


def _by_partition(table: HudiTable, records: Iterable[MetadataRecord]) -> dict[str, list[MetadataRecord]]:
    """The records per MDT partition, refused for a partition the data table does not list (completed or being
    indexed: Java writes to both, `getMetadataPartitionsToUpdate`)."""
    live = set(metadata_partitions_now(table))
    if FILES_PARTITION not in live:
        raise MetadataTableError(f"{table.base_path} has no metadata table (no files partition in its properties)")
    inflight = METADATA_PARTITIONS_INFLIGHT.of(data_table_props(table)) or ""
    live |= {p.strip() for p in inflight.split(",") if p.strip()}
    out: dict[str, list[MetadataRecord]] = {}
    for record in records:
        if record.partition not in live:
            raise MetadataTableError(f"metadata table partition {record.partition!r} is not initialized")
        out.setdefault(record.partition, []).append(record)
    return out


def _write_partition(
    mdt: HudiTable, partition: str, records: list[MetadataRecord], instant: str, file_group_of: FileGroupOf
) -> list[WriteStat]:
    groups = sorted((fg for fg in mdt.file_groups() if fg.partition == partition), key=lambda fg: fg.file_id)
    if not groups:
        raise MetadataTableError(f"metadata table partition {partition!r} has no file group")
    assigned: dict[int, list[MetadataRecord]] = {}
    for record in records:
        assigned.setdefault(file_group_of(partition, record.key, len(groups)), []).append(record)
    return [_write_group(mdt, groups[i], assigned[i], instant) for i in sorted(assigned)]


def _schema_of(mdt: HudiTable, fg: FileGroup) -> str:
    """The schema the group's newest base file was written in (log values must decode with it, as hudi-rs reads
    them), else ours."""
    for fs in reversed(fg.ordered_slices()):
        if fs.base_file is not None and mdt.view_inputs().is_committed(fs.base_file.parsed.instant):
            path = posixpath.join(mdt.base_path, fs.base_file.path)
            schema = HFileReader(mdt.storage.read_bytes(path), path).schema
            if schema:
                return schema
    return writer_schema_json()


def _write_group(mdt: HudiTable, fg: FileGroup, records: list[MetadataRecord], instant: str) -> WriteStat:
    schema = _schema_of(mdt, fg)
    upserts = [r for r in records if not r.is_delete]
    deletes = [r for r in records if r.is_delete]
    blocks = [hfile_data_block(upserts, schema, instant)] if upserts else []
    if deletes:
        blocks.append(mdt_delete_block(deletes, schema, instant))
    stat = _new_log_file(mdt, fg, blocks, instant) if mdt.config.version >= 8 else _append_v6(mdt, fg, blocks)
    stat.num_writes = stat.num_update_writes = len(upserts)
    stat.num_deletes = len(deletes)
    crash_point("after-log-file")
    return stat


def _new_log_file(mdt: HudiTable, fg: FileGroup, blocks: list[EncodedBlock], instant: str) -> WriteStat:
    """Versions 8 and 9: a new log file named by the deltacommit (the next free version of that name)."""
    taken = [lf.parsed.version for fs in fg.slices.values() for lf in fs.log_files if lf.parsed.instant == instant]
    name = log_file_name(fg.file_id, instant, max(taken, default=0) + 1, UNKNOWN_WRITE_TOKEN)
    data = b"".join(b.data for b in blocks)
    mdt.storage.create_atomic(posixpath.join(mdt.base_path, fg.partition, name), data)
    return WriteStat(
        file_id=fg.file_id,
        path=f"{fg.partition}/{name}",
        prev_commit=instant,
        total_write_bytes=len(data),
        partition_path=fg.partition,
        file_size_in_bytes=len(data),
        log_version=LogFileName.parse(name).version,
        log_offset=0,
        base_file="",
        log_files=[name],
    )


def _append_v6(mdt: HudiTable, fg: FileGroup, blocks: list[EncodedBlock]) -> WriteStat:
    """Version 6: append to the newest slice's latest log file, or roll over to the next version."""
    inputs = mdt.view_inputs()
    # the newest slice a reader takes: one with a committed base file, or none yet (a file group's first slice, or
    # a pending MDT compaction's); a base file of a failed compaction opens no slice
    newest = [fs for fs in fg.ordered_slices() if fs.base_file is None or inputs.is_committed(fs.base_instant)][-1]
    own = [lf for lf in newest.log_files if lf.parsed.instant == newest.base_instant]
    latest = max(own, key=lambda lf: lf.parsed.sort_key(), default=None)
    storage = mdt.storage
    if latest is not None and storage.supports_append and latest.size < MAX_LOG_FILE_SIZE:
        name = latest.name
    else:
        version = latest.parsed.version + 1 if latest is not None else 1
        name = log_file_name(fg.file_id, newest.base_instant, version, UNKNOWN_WRITE_TOKEN)
    path = posixpath.join(mdt.base_path, fg.partition, name)
    offsets = append_blocks(storage, path, blocks)
    written = sum(len(b.data) for b in blocks)
    base = newest.base_file
    return WriteStat(
        file_id=fg.file_id,
        path=f"{fg.partition}/{name}",
        prev_commit=newest.base_instant,
        total_write_bytes=written,
        partition_path=fg.partition,
        file_size_in_bytes=storage.size(path),
        log_version=LogFileName.parse(name).version,
        log_offset=offsets[0] if offsets else 0,
        base_file=base.name if base is not None else "",
        log_files=[name],
    )


def follow_data_rollback(
    table: HudiTable, target: str, data_rollback_time: str, records: Iterable[MetadataRecord] = ()
) -> MdtRollbackReport | None:
    """Bring the MDT in step with a data-table rollback at `data_rollback_time` of `target`, before that rollback
    completes. Version 6 (0.x, `HoodieBackedTableMetadataWriterTableVersionSix.update(HoodieRollbackMetadata)`):
    an MDT deltacommit at the rollback time holding `records` (the log files the rollback appended its command
    block to, with their new sizes: `HoodieTableMetadataUtil.convertMetadataToRecords(HoodieRollbackMetadata)`),
    then an MDT rollback of deltacommit `target` at that time plus `006`.
    Versions 8 and 9: an MDT rollback of `target` at the same time and no deltacommit (the data-table rollback
    deleted `target`'s files, which the MDT never listed as valid)."""
    if table.config.version == 6:  # written even without records, as processAndCommit does
        write_delta_commit(table, data_rollback_time, records)
    return rollback_delta_commit(table, target, rollback_time_for(table, data_rollback_time))
