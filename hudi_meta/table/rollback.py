"""Rollback of a failed (never completed) write on a table version 6 MOR/COW table.

From the write's markers: base files it created are deleted, and every log file it appended to gets a
rollback command block targeting it (how 0.x rolls back log appends). Then the rollback instant completes
and the failed instant's files are removed. Every step is idempotent, so a rollback killed at any point is
finished by running it again.
"""

from __future__ import annotations

import posixpath
import time
from dataclasses import dataclass, field

from hudi_meta.errors import HudiMetaError
from hudi_meta.format.log_writer import append_blocks, rollback_block
from hudi_meta.format.table_service_metadata import (
    InstantInfo,
    RollbackMetadata,
    RollbackPartitionMetadata,
    RollbackPlan,
    RollbackRequest,
)
from hudi_meta.table.instant import Action, State
from hudi_meta.table.markers import APPEND, CREATE, Marker, delete_markers, list_markers
from hudi_meta.table.table import HudiTable
from hudi_meta.table.timeline import TimelineWriter, new_instant_time


@dataclass(frozen=True)
class FileAction:
    """One file operation of a rollback, reported as delta-rs reports maintenance operations."""

    operation: str  # "delete" or "append_rollback_block"
    path: str
    done: bool
    error: str | None = None


@dataclass
class RollbackReport:
    instant: str  # the rollback instant
    target: str
    dry_run: bool
    actions: list[FileAction] = field(default_factory=list)


def _plan(target: str, target_action: str, markers: list[Marker]) -> RollbackPlan:
    requests = []
    for m in markers:
        if m.kind == CREATE:
            requests.append(RollbackRequest(partition_path=m.partition, files_to_be_deleted=(m.file_name,)))
        elif m.kind == APPEND:
            requests.append(RollbackRequest(partition_path=m.partition, log_blocks_to_be_deleted={m.file_name: 0}))
    return RollbackPlan(instant_to_rollback=InstantInfo(target, target_action), rollback_requests=tuple(requests))


def rollback_failed_write(table: HudiTable, target: str, dry_run: bool = False) -> RollbackReport:
    """Roll back the pending write `target` (a deltacommit or commit that never completed)."""
    tl = table.timeline
    instant = tl.instant(target)
    if instant is None or instant.is_completed or instant.action not in (Action.DELTA_COMMIT, Action.COMMIT):
        raise ValueError(f"{target} is not a pending deltacommit or commit")
    markers = list_markers(table.storage, table.meta_path, target)
    existing = next(
        (i for i in tl.pending() if i.action == Action.ROLLBACK and _targets(table, i.requested_time) == target),
        None,
    )
    rollback_time = existing.requested_time if existing else new_instant_time(i.requested_time for i in tl.instants)
    report = RollbackReport(rollback_time, target, dry_run)
    plan = _plan(target, instant.action, markers)
    if dry_run:
        report.actions = [FileAction(_operation(m), m.path, False) for m in markers]
        return report
    writer = TimelineWriter(table.storage, table.timeline_path)
    if existing is None:
        writer.request(Action.ROLLBACK, rollback_time, plan.to_bytes())
    writer.start(Action.ROLLBACK, rollback_time)
    started = time.monotonic()
    per_partition: dict[str, RollbackPartitionMetadata] = {}
    for m in markers:
        path = posixpath.join(table.base_path, m.path)
        try:
            if m.kind == CREATE:
                table.storage.delete(path)
            elif table.storage.exists(path):
                append_blocks(table.storage, path, [rollback_block(rollback_time, target)])
            report.actions.append(FileAction(_operation(m), m.path, True))
        except OSError as e:
            report.actions.append(FileAction(_operation(m), m.path, False, str(e)))
            raise
        meta = per_partition.setdefault(m.partition, RollbackPartitionMetadata(partition_path=m.partition))
        if m.kind == CREATE:
            meta = RollbackPartitionMetadata(
                partition_path=m.partition,
                success_delete_files=(*meta.success_delete_files, m.path),
                rollback_log_files=meta.rollback_log_files,
            )
        else:
            meta = RollbackPartitionMetadata(
                partition_path=m.partition,
                success_delete_files=meta.success_delete_files,
                rollback_log_files={**meta.rollback_log_files, m.path: table.storage.size(path)},
            )
        per_partition[m.partition] = meta
    metadata = RollbackMetadata(
        start_rollback_time=rollback_time,
        time_taken_in_millis=int((time.monotonic() - started) * 1000),
        total_files_deleted=sum(len(p.success_delete_files) for p in per_partition.values()),
        commits_rollback=(target,),
        partition_metadata=per_partition,
        instants_rollback=(InstantInfo(target, instant.action),),
    )
    writer.complete(Action.ROLLBACK, rollback_time, metadata.to_bytes())
    writer.delete_pending(instant.action, target)
    delete_markers(table.storage, table.meta_path, target)
    table.reload()
    return report


def _operation(m: Marker) -> str:
    return "delete" if m.kind == CREATE else "append_rollback_block"


def _targets(table: HudiTable, rollback_time: str) -> str | None:
    try:
        plan = RollbackPlan.from_bytes(table.timeline.requested_bytes(rollback_time, Action.ROLLBACK))
    except (OSError, ValueError, HudiMetaError):
        return None
    return plan.instant_to_rollback.commit_time if plan.instant_to_rollback else None


def rollback_failed_writes(table: HudiTable) -> list[RollbackReport]:
    """Roll back every pending deltacommit/commit (single-writer tables: a pending write has failed)."""
    reports = []
    for instant in table.timeline.pending():
        if instant.action in (Action.DELTA_COMMIT, Action.COMMIT) and instant.state != State.COMPLETED:
            reports.append(rollback_failed_write(table, instant.requested_time))
    return reports
