"""Roll back metadata-table (MDT) deltacommit T: what re-applying T, a data-table rollback of T, or taking back
a compaction of T needs.

As Java's rollback does (`BaseRollbackActionExecutor`, the MDT being a MOR table of the data table's version):
a rollback instant is requested with its plan and started; a completed T is unpublished (its completed file
deleted, `revertToInflight`); T's files go: on versions 8 and 9 its log files, each named by T, are deleted; on
version 6, where T appended blocks to a file slice's log file, that file gets a rollback command block targeting T
(or is deleted when it holds T's blocks alone, as on storage without append); base files named by T are deleted;
the rollback completes; T's inflight and requested files are deleted. From the unpublish on, T is pending on the
MDT, so readers skip its blocks (valid-instants rule); a rollback killed at any step is finished by running it again
(the pending rollback of T is found and completed). docs/metadata-table.md section 6.
"""

from __future__ import annotations

import posixpath
import time
from dataclasses import dataclass

from hudi_meta.errors import HudiMetaError
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.format.log_reader import read_blocks, written_only_by
from hudi_meta.format.log_writer import append_blocks, rollback_block
from hudi_meta.format.table_service_metadata import (
    InstantInfo,
    RollbackMetadata,
    RollbackPartitionMetadata,
    RollbackPlan,
    RollbackRequest,
)
from hudi_meta.metadata.crash import crash_point
from hudi_meta.metadata.layout import V6_ROLLBACK_SUFFIX, mdt_path
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, Instant
from hudi_meta.timeline.timeline import TimelineWriter, new_instant_time
from hudi_meta.write.failed_writes import pending_rollback_of


@dataclass(frozen=True)
class MdtRollbackReport:
    """One MDT rollback: its instant, the deltacommit it took back, the files it deleted and the log files that
    got a rollback block (paths relative to the MDT)."""

    instant: str
    target: str
    deleted: tuple[str, ...]
    rollback_blocks: tuple[str, ...]


def open_mdt(table: HudiTable) -> HudiTable:
    return HudiTable.open(table.storage.uri(mdt_path(table)), table.storage.options)


def mdt_timeline_writer(table: HudiTable, mdt: HudiTable) -> TimelineWriter:
    """The MDT's timeline writer, in the data table's zone (Java's MDT writer takes the data table's time
    generator config)."""
    return TimelineWriter(mdt.storage, mdt.timeline_path, mdt.config.timeline_layout, table.config.timeline_timezone)


def rollback_time_for(table: HudiTable, data_rollback_time: str) -> str:
    """The MDT rollback instant of a data-table rollback at `data_rollback_time`: the same time on versions 8 and 9,
    that time plus `006` on version 6 (`HoodieTableMetadataUtil.createRollbackTimestamp`)."""
    return data_rollback_time + V6_ROLLBACK_SUFFIX if table.config.version == 6 else data_rollback_time


def rollback_delta_commit(table: HudiTable, target: str, rollback_time: str | None = None) -> MdtRollbackReport | None:
    """Roll back MDT deltacommit `target` (completed or not) at `rollback_time` (a fresh MDT instant when None);
    None when the MDT holds no such instant. A rollback of `target` that started earlier is finished instead.
    Refused for a deltacommit an MDT compaction already folded into a base file (Java's `validateRollback`: that
    needs a restore). The caller holds the data table's lock."""
    mdt = open_mdt(table)
    instant = mdt.timeline.instant(target)
    if instant is not None and instant.action != Action.DELTA_COMMIT:
        raise HudiMetaError(f"metadata table instant {target} is a {instant.action}, not a deltacommit")
    existing = pending_rollback_of(mdt, target)
    if instant is None and existing is None:
        return None
    if instant is not None and instant.is_completed:
        refuse_compacted(mdt, instant)
    if existing is not None:
        rollback_time = existing.requested_time
    elif rollback_time is None:
        times = [t for i in mdt.timeline.instants for t in (i.requested_time, i.completion_time) if t]
        rollback_time = new_instant_time(times, zone=table.config.timeline_timezone)
    return _run(table, mdt, target, instant, rollback_time, existing is None)


def rollback_inflight_compaction(table: HudiTable, mdt: HudiTable, target: str) -> MdtRollbackReport:
    """Roll back MDT compaction `target` that started and did not complete (an inflight file, whoever wrote it),
    so that it can be run again from its plan: the base files named by `target` are deleted under a rollback
    instant and the compaction goes back to requested. Java does this before it runs any inflight compaction
    (`BaseHoodieTableServiceClient.compact` -> `HoodieTable.rollbackInflightCompaction`): a compaction killed after
    writing some base files, or one whose completed file is lost, would otherwise get a second base file of the same
    instant in a file group, which no reader accepts. A rollback of `target` that started earlier is finished."""
    existing = pending_rollback_of(mdt, target)
    rollback_time = existing.requested_time if existing is not None else fresh_mdt_instant(table, mdt)
    return _run(table, mdt, target, None, rollback_time, existing is None, Action.COMPACTION)


def fresh_mdt_instant(table: HudiTable, mdt: HudiTable) -> str:
    """A new instant time after every requested and completion time of both timelines (a 1.x MDT service's)."""
    times = [
        t
        for tl in (table.timeline, mdt.timeline)
        for i in tl.instants
        for t in (i.requested_time, i.completion_time)
        if t
    ]
    return new_instant_time(times, zone=table.config.timeline_timezone)


def refuse_compacted(mdt: HudiTable, instant: Instant) -> None:
    """Refuse to roll back MDT deltacommit `instant` once an MDT compaction folded it into a base file."""
    compactions = [i.requested_time for i in mdt.timeline.completed() if i.action == Action.COMMIT]
    done = instant.completion_time or instant.requested_time
    latest = max(compactions, default=None)
    # 1.x compares the completion time with the compaction's (same-length times only); 0.x the requested time,
    # where the compaction time is a deltacommit's plus `001`
    comparable = mdt.config.version == 6 or (latest is not None and len(latest) == len(instant.requested_time))
    if latest is not None and comparable and done <= latest:
        raise HudiMetaError(
            f"metadata table deltacommit {instant.requested_time} is older than the metadata table's compaction "
            f"{latest}: it cannot be rolled back (Java needs a restore here)"
        )


def _touched_files(mdt: HudiTable, target: str) -> tuple[list[str], list[str]]:
    """(files to delete, log files to give a rollback block), relative to the MDT: on version 8 and 9 T's own
    log files, on version 6 the log files holding a block of T; on every version base files named by T."""
    deletes: list[str] = []
    blocks: list[str] = []
    storage = mdt.storage
    for partition in sorted(i.name for i in storage.list_dir(mdt.base_path) if i.is_dir and i.name[0] != "."):
        for info in storage.list_dir(posixpath.join(mdt.base_path, partition)):
            rel = f"{partition}/{info.name}"
            log = LogFileName.try_parse(info.name)
            if log is None:
                base = BaseFileName.try_parse(info.name)
                if base is not None and base.instant == target:
                    deletes.append(rel)
            elif mdt.config.version >= 8:
                if log.instant == target:
                    deletes.append(rel)
            elif any(b.instant_time == target and not b.is_rollback for b in read_blocks(storage, info.path)):
                only_target = not storage.supports_append and written_only_by(storage, info.path, target)
                (deletes if only_target else blocks).append(rel)
    return deletes, blocks


def _plan(target: str, deletes: list[str], blocks: list[str], action: Action) -> RollbackPlan:
    requests = [RollbackRequest(partition_path=p.split("/")[0], files_to_be_deleted=(p,)) for p in deletes]
    requests += [RollbackRequest(partition_path=p.split("/")[0], log_blocks_to_be_deleted={p: 0}) for p in blocks]
    return RollbackPlan(instant_to_rollback=InstantInfo(target, action.value), rollback_requests=tuple(requests))


def _run(
    table: HudiTable,
    mdt: HudiTable,
    target: str,
    instant: Instant | None,
    rollback_time: str,
    new: bool,
    action: Action = Action.DELTA_COMMIT,
) -> MdtRollbackReport:
    """Roll back `target` (an `action`): a deltacommit's instant files go at the end, a compaction goes back to
    requested (its plan is run again)."""
    started = time.monotonic()
    writer = mdt_timeline_writer(table, mdt)
    deletes, blocks = _touched_files(mdt, target)
    if new:
        writer.request(Action.ROLLBACK, rollback_time, _plan(target, deletes, blocks, action).to_bytes())
    writer.start(Action.ROLLBACK, rollback_time)
    crash_point("rollback-after-requested")
    if instant is not None and instant.is_completed:
        mdt.storage.delete(mdt.timeline.path_of(instant))  # unpublish: T is pending from here on
    crash_point("rollback-after-unpublish")
    per_partition: dict[str, RollbackPartitionMetadata] = {}
    for rel in deletes:
        mdt.storage.delete(posixpath.join(mdt.base_path, rel))
        _note(per_partition, rel, deleted=True, size=0)
    for rel in blocks:
        path = posixpath.join(mdt.base_path, rel)
        append_blocks(mdt.storage, path, [rollback_block(rollback_time, target)])
        _note(per_partition, rel, deleted=False, size=mdt.storage.size(path))
    crash_point("rollback-after-files")
    taken_ms = int((time.monotonic() - started) * 1000)
    info = InstantInfo(target, action.value)
    writer.complete(
        Action.ROLLBACK, rollback_time, RollbackMetadata.of_one(rollback_time, taken_ms, info, per_partition).to_bytes()
    )
    if action == Action.COMPACTION:
        writer.revert_to_requested(action, target)
    else:
        writer.delete_pending(action, target)
    crash_point("rollback-after-complete")
    return MdtRollbackReport(rollback_time, target, tuple(deletes), tuple(blocks))


def _note(per_partition: dict[str, RollbackPartitionMetadata], rel: str, deleted: bool, size: int) -> None:
    partition = rel.split("/")[0]
    meta = per_partition.get(partition) or RollbackPartitionMetadata(partition_path=partition)
    if deleted:
        meta = RollbackPartitionMetadata(
            partition_path=partition,
            success_delete_files=(*meta.success_delete_files, rel),
            rollback_log_files=meta.rollback_log_files,
        )
    else:
        meta = RollbackPartitionMetadata(
            partition_path=partition,
            success_delete_files=meta.success_delete_files,
            rollback_log_files={**meta.rollback_log_files, rel: size},
        )
    per_partition[partition] = meta
