"""Rollback of a failed (never completed) write on a MOR/COW table of version 6, 8 or 9.

From the write's markers: files it created (CREATE: base files, and on versions 8 and 9 its log files, each
named by the write) are deleted, and every log file it appended to (APPEND, version 6) gets a rollback command
block targeting it (how 0.x rolls back log appends; 1.x rollback is deletion only, docs/hudi-1x.md section 5).
Then the rollback instant completes and the failed instant's files are removed. Every step is idempotent, so a
rollback killed at any point is finished by running it again.

Several writers may share a table (Java's LAZY failed-writes cleaning): a pending write is failed only when
its writer's heartbeat expired (`heartbeat.py`), so `rollback_failed_writes` never touches a live writer's
instant. A rollback that already started is always finished, whatever the heartbeat says.

A compaction is rolled back by `compaction.rollback`, with this module's report and pending-rollback lookup.
"""

from __future__ import annotations

import contextlib
import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from hudi_meta.errors import HudiMetaError, LiveWriterError
from hudi_meta.format.log_reader import written_only_by
from hudi_meta.format.log_writer import append_blocks, rollback_block
from hudi_meta.format.table_service_metadata import (
    InstantInfo,
    RollbackMetadata,
    RollbackPartitionMetadata,
    RollbackPlan,
    RollbackRequest,
)
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, Instant, State
from hudi_meta.write.file_actions import FileAction
from hudi_meta.write.heartbeat import HeartbeatConfig, delete_heartbeat, is_expired
from hudi_meta.write.lock import table_lock
from hudi_meta.write.markers import APPEND, CREATE, Marker, delete_markers, list_markers


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


def rollback_failed_write(
    table: HudiTable,
    target: str,
    dry_run: bool = True,
    force: bool = False,
    heartbeat: HeartbeatConfig | None = None,
    metadata_writer: Callable[[str, RollbackMetadata], None] | None = None,
) -> RollbackReport:
    """Roll back the pending write `target` (a deltacommit or commit that never completed).

    Refused while its writer's heartbeat is live, unless `force` (an operator who knows the writer is gone).
    `metadata_writer(rollback time, rollback metadata)` brings the metadata table in step (hudi_meta.metadata: it
    rolls back the metadata table's deltacommit of `target`) right before the rollback completes, as Java's
    rollback writes the metadata table first; a table with a metadata table is rolled back only with one.
    """
    if metadata_writer is None:
        table.config.refuse_without_metadata_writer(table.base_path, "roll back writes")
    tl = table.timeline
    instant = tl.instant(target)
    if instant is None or instant.is_completed or instant.action not in (Action.DELTA_COMMIT, Action.COMMIT):
        raise HudiMetaError(f"{target} is not a pending deltacommit or commit")
    markers = list_markers(table.storage, table.meta_path, target)
    existing = pending_rollback_of(table, target)
    config = heartbeat or HeartbeatConfig.from_props(dict(table.config.props))
    if (
        existing is None
        and not force
        and not is_expired(table.storage, table.meta_path, target, config, zone=table.config.timeline_timezone)
    ):
        raise LiveWriterError(f"{target} has a live heartbeat: its writer is still running; not rolling it back")
    rollback_time = existing.requested_time if existing else table.new_instant_time()
    report = RollbackReport(rollback_time, target, dry_run)
    plan = _plan(target, instant.action, markers)
    if dry_run:
        report.actions = [FileAction(_operation(m), m.path, False) for m in markers]
        return report
    writer = table.timeline_writer()
    if existing is None:
        writer.request(Action.ROLLBACK, rollback_time, plan.to_bytes())
    writer.start(Action.ROLLBACK, rollback_time)
    started = time.monotonic()
    per_partition = _undo_markers(table, markers, target, rollback_time, report)
    taken_ms = int((time.monotonic() - started) * 1000)
    metadata = RollbackMetadata.of_one(rollback_time, taken_ms, InstantInfo(target, instant.action), per_partition)
    with table_lock(table.storage, table.meta_path, table.config.props, f"roll back {target}"):
        if metadata_writer is not None:
            metadata_writer(rollback_time, metadata)
        writer.complete(Action.ROLLBACK, rollback_time, metadata.to_bytes())
    writer.delete_pending(instant.action, target)
    delete_markers(table.storage, table.meta_path, target)
    delete_heartbeat(table.storage, table.meta_path, target)
    table.reload()
    return report


def _undo_markers(
    table: HudiTable, markers: list[Marker], target: str, rollback_time: str, report: RollbackReport
) -> dict[str, RollbackPartitionMetadata]:
    """Undo each marked file (delete it, or append a rollback command block), recording every action in
    `report`; what the rollback metadata lists per partition."""
    per_partition: dict[str, RollbackPartitionMetadata] = {}
    for m in markers:
        path = posixpath.join(table.base_path, m.path)
        deletes = _deletes(table, m, path, target)
        # A writer killed between its marker and its first byte leaves a marker for a log file that does not exist:
        # nothing of the failed write is in it, so there is nothing to roll back there.
        never_written = not deletes and not table.storage.exists(path)
        try:
            if deletes:
                table.storage.delete(path)
            elif not never_written:
                append_blocks(table.storage, path, [rollback_block(rollback_time, target)])
            report.actions.append(FileAction("delete" if deletes else _operation(m), m.path, True))
        except OSError as e:
            report.actions.append(FileAction("delete" if deletes else _operation(m), m.path, False, str(e)))
            raise
        meta = per_partition.setdefault(m.partition, RollbackPartitionMetadata(partition_path=m.partition))
        if deletes:
            meta = RollbackPartitionMetadata(
                partition_path=m.partition,
                success_delete_files=(*meta.success_delete_files, m.path),
                rollback_log_files=meta.rollback_log_files,
            )
        elif not never_written:
            meta = RollbackPartitionMetadata(
                partition_path=m.partition,
                success_delete_files=meta.success_delete_files,
                rollback_log_files={**meta.rollback_log_files, m.path: table.storage.size(path)},
            )
        per_partition[m.partition] = meta
    return per_partition


def _deletes(table: HudiTable, m: Marker, path: str, target: str) -> bool:
    """Whether rolling `m` back deletes its file: a file the write created, or, on storage without appends
    (object stores, where every write creates its log files whole), a log file that holds only the failed
    write's blocks (a file also holding committed blocks cannot exist there). Elsewhere a log file gets a
    rollback command block, as Java writes it."""
    if m.kind == CREATE:
        return True
    if table.storage.supports_append:
        return False
    return not table.storage.exists(path) or written_only_by(table.storage, path, target)


def _operation(m: Marker) -> str:
    return "delete" if m.kind == CREATE else "append_rollback_block"


def rollback_target(table: HudiTable, rollback_time: str) -> str | None:
    """The instant a pending rollback takes back (None when its plan cannot be read)."""
    info = _rolled_back(table, rollback_time)
    return info.commit_time if info else None


def interrupted_compaction_rollbacks(table: HudiTable) -> list[str]:
    """Pending compactions whose rollback started and stopped after removing their plan (a version-6 take-back
    that renames log files, killed before it completed): running them again finishes the rollback."""
    out = []
    for i in table.timeline.pending():
        info = _rolled_back(table, i.requested_time) if i.action == Action.ROLLBACK else None
        if info and info.action == Action.COMPACTION and table.timeline.instant(info.commit_time) is None:
            out.append(info.commit_time)
    return sorted(out)


def _rolled_back(table: HudiTable, rollback_time: str) -> InstantInfo | None:
    try:
        plan = RollbackPlan.from_bytes(table.timeline.requested_bytes(rollback_time, Action.ROLLBACK))
    except (OSError, ValueError, HudiMetaError):
        return None
    return plan.instant_to_rollback


def pending_rollback_of(table: HudiTable, target: str) -> Instant | None:
    """A rollback of `target` that started and did not complete."""
    return next(
        (
            i
            for i in table.timeline.pending()
            if i.action == Action.ROLLBACK and rollback_target(table, i.requested_time) == target
        ),
        None,
    )


def failed_writes(table: HudiTable, heartbeat: HeartbeatConfig | None = None) -> list[Instant]:
    """Pending deltacommits/commits whose writer is dead (heartbeat expired) or whose rollback already began.

    As Java does, the timeline is read again after the heartbeats: an instant that completed meanwhile
    (its heartbeat file deleted by its commit) is not a failed write.
    """
    config = heartbeat or HeartbeatConfig.from_props(dict(table.config.props))
    rolling_back = {
        t
        for i in table.timeline.pending()
        if i.action == Action.ROLLBACK and (t := rollback_target(table, i.requested_time))
    }
    candidates = [
        i
        for i in table.timeline.pending()
        if i.action in (Action.DELTA_COMMIT, Action.COMMIT)
        and i.state != State.COMPLETED
        and (
            i.requested_time in rolling_back
            or is_expired(table.storage, table.meta_path, i.requested_time, config, zone=table.config.timeline_timezone)
        )
    ]
    if not candidates:
        return []
    table.reload()
    still_pending = {i.requested_time for i in table.timeline.pending()}
    return [i for i in candidates if i.requested_time in still_pending]


def rollback_failed_writes(
    table: HudiTable,
    heartbeat: HeartbeatConfig | None = None,
    metadata_writer: Callable[[str, RollbackMetadata], None] | None = None,
) -> list[RollbackReport]:
    """Roll back every failed write (see `failed_writes`); writes of live writers are left alone;
    `metadata_writer` as for `rollback_failed_write`.

    Each heartbeat is read once more right before its rollback starts: a writer that beat meanwhile is skipped.
    """
    reports = []
    for instant in failed_writes(table, heartbeat):
        with contextlib.suppress(LiveWriterError):
            reports.append(
                rollback_failed_write(
                    table, instant.requested_time, heartbeat=heartbeat, dry_run=False, metadata_writer=metadata_writer
                )
            )
    return reports
