"""Rollback of a compaction, inflight or completed (`hudi-meta rollback TABLE INSTANT [--completed-compaction]`).

A compaction is rolled back as a whole (`rollback_compaction`): everything it wrote goes and the log files writers
appended into its slice move back into the slice it compacted (`compaction_undo.py`), its plan is deleted, and a
rollback instant records it, as Java records one for a compaction. An inflight compaction is rolled back on request;
a completed one only when the caller says so explicitly (`completed=True`) and no write appended to its slices since
(as Java, which rolls back later commits first: their write stats name the compaction's files), because that deletes
its commit: the threshold that commit published (`hoodie.compaction.event.time.threshold` in its extraMetadata)
leaves the timeline, and the newest earlier completed compaction's threshold is the published one again. The commit
is the first file deleted, so from then on no reader takes the compaction's files for committed, and the rollback
instant completes last: a rollback killed at any point is finished by running it again (a pending rollback of the
compaction is found and continued).
"""

from __future__ import annotations

import logging
import time

from hudi_meta.compaction.preconditions import check_compactable
from hudi_meta.compaction.undo import (
    check_rollback_of_completed,
    execute_undo,
    instant_path,
    plan_undo,
    refuse_pending_writes,
    step_done,
)
from hudi_meta.errors import CompletedCompactionError, CorruptFileError, HudiMetaError
from hudi_meta.format.file_names import slice_of_file
from hudi_meta.format.table_service_metadata import (
    CompactionPlan,
    InstantInfo,
    RollbackMetadata,
    RollbackPartitionMetadata,
    RollbackPlan,
    RollbackRequest,
)
from hudi_meta.metadata.sync import metadata_sync
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, Instant, State
from hudi_meta.write.failed_writes import RollbackReport, pending_rollback_of
from hudi_meta.write.file_actions import FileAction
from hudi_meta.write.lock import table_lock

log = logging.getLogger(__name__)


def rollback_compaction(
    table: HudiTable, target: str, completed: bool = False, dry_run: bool = True, never_ran: bool = False
) -> RollbackReport:
    """Roll back compaction `target` (inflight, or completed when `completed`): see the module doc.

    Refused, with nothing written: an unknown instant, one that is not a compaction, a plan that never ran
    (`compaction unschedule` takes it back), a completed compaction without `completed`, a pending write, and a
    completed compaction whose rollback would lose or change records (`check_rollback_of_completed`).
    `never_ran`: a plan that never ran is rolled back too (unschedule's way on a version-6 table with a metadata
    table when log files move: the rollback instant is what the metadata table records the renames at)."""
    check_compactable(table)
    tl = table.timeline
    existing = pending_rollback_of(table, target)
    state = tl.instant(target)
    is_completed = _refuse_unless_rollable(table, target, state, existing is not None, completed, never_ran)
    plan = _plan_if_present(table, target) if state is not None else None
    if is_completed and plan is not None:
        check_rollback_of_completed(table, plan, target)
    sync = metadata_sync(table)
    if sync is not None and existing is None:
        sync.refuse_rollback(target)
    steps = plan_undo(table, plan, target)
    rollback_time = existing.requested_time if existing else table.new_instant_time()
    if existing is not None:
        rollback_plan = RollbackPlan.from_bytes(tl.requested_bytes(rollback_time, Action.ROLLBACK))
    else:
        action = Action.COMMIT if is_completed else Action.COMPACTION
        rollback_plan = _compaction_rollback_plan(target, action, plan, steps.deletes)
    report = RollbackReport(rollback_time, target, dry_run)
    requested = instant_path(table, Instant(rollback_time, Action.ROLLBACK, State.REQUESTED))
    done_path = instant_path(table, Instant(rollback_time, Action.ROLLBACK, State.COMPLETED))
    if dry_run:
        first = [] if existing else [FileAction("write_instant", requested, False)]
        report.actions = [*first, *steps.actions(), FileAction("write_instant", done_path, False)]
        return report
    started = time.monotonic()
    writer = table.timeline_writer()
    if existing is None:
        writer.request(Action.ROLLBACK, rollback_time, rollback_plan.to_bytes())
        report.actions.append(FileAction("write_instant", requested, True))
        step_done("write_instant")
    writer.start(Action.ROLLBACK, rollback_time)
    log.info("rollback %s of compaction %s started (%s)", rollback_time, target, table.base_path)

    def still_no_writer() -> None:
        table.reload()
        refuse_pending_writes(table, f"finishing the rollback of compaction {target}")

    execute_undo(table, plan, steps, report.actions, still_no_writer)
    metadata = _rollback_metadata(rollback_plan, target, rollback_time, int((time.monotonic() - started) * 1000))
    with table_lock(table.storage, table.meta_path, table.config.props, f"complete rollback {rollback_time}"):
        if sync is not None:
            # where log files may have moved: the plan's partitions (every partition once the plan is gone)
            moved_in = (
                {op.partition_path or "" for op in plan.operations}
                if plan is not None
                else {rel for rel, _ in table.partition_folders()}
            )
            sync.rollback(rollback_time, metadata, moved_in)
        writer.complete(Action.ROLLBACK, rollback_time, metadata.to_bytes())
    log.info(
        "rollback %s of %s compaction %s completed: %d files deleted (%s)",
        rollback_time,
        "completed" if is_completed else "pending",
        target,
        metadata.total_files_deleted,
        table.base_path,
    )
    report.actions.append(FileAction("write_instant", done_path, True))
    table.reload()
    return report


def _refuse_unless_rollable(
    table: HudiTable, target: str, state: Instant | None, resuming: bool, completed: bool, never_ran: bool
) -> bool:
    """Raise unless compaction `target` (`state`: its instant on the timeline) may be rolled back (see
    `rollback_compaction`); whether it completed. `resuming`: a rollback of it is already pending, so the
    instant may be gone already."""
    if not resuming:
        if state is None:
            raise HudiMetaError(f"no instant {target} on {table.base_path}")
        if not table.timeline.is_compaction(target):
            raise HudiMetaError(f"{target} is a {state.action}, not a compaction")
        if state.state == State.REQUESTED and not never_ran:
            raise HudiMetaError(
                f"compaction {target} is only requested (it never ran): unschedule it instead (nothing to roll back)"
            )
    is_completed = state is not None and state.is_completed
    if is_completed and not completed:
        raise CompletedCompactionError(
            f"compaction {target} is completed: rolling it back deletes its base files and moves the published "
            "freshness back to the compaction before it; pass {completed_compaction} to do that",
            "completed_compaction",
        )
    refuse_pending_writes(table, f"rolling back compaction {target}")
    return is_completed


def _rollback_metadata(plan: RollbackPlan, target: str, rollback_time: str, time_taken_ms: int) -> RollbackMetadata:
    """The completed rollback's metadata: every file the plan named, deleted, grouped by partition (paths
    relative to the table, as the plan records them)."""
    per_partition: dict[str, RollbackPartitionMetadata] = {}
    for req in plan.rollback_requests:
        meta = per_partition.get(req.partition_path, RollbackPartitionMetadata(partition_path=req.partition_path))
        paths = tuple(f"{req.partition_path}/{n}" if req.partition_path else n for n in req.files_to_be_deleted)
        per_partition[req.partition_path] = RollbackPartitionMetadata(
            partition_path=req.partition_path, success_delete_files=(*meta.success_delete_files, *paths)
        )
    info = plan.instant_to_rollback or InstantInfo(target, Action.COMPACTION)
    return RollbackMetadata.of_one(rollback_time, time_taken_ms, info, per_partition)


def _plan_if_present(table: HudiTable, target: str) -> CompactionPlan | None:
    requested = Instant(target, Action.COMPACTION, State.REQUESTED)
    if not table.storage.exists(table.timeline.path_of(requested)):
        return None
    try:
        return table.compaction_plan(target)
    except (ValueError, OSError, CorruptFileError) as e:
        raise HudiMetaError(f"the plan of compaction {target} is unreadable: {e}") from e


def _compaction_rollback_plan(
    target: str, action: str, plan: CompactionPlan | None, deletes: tuple[tuple[str, str], ...]
) -> RollbackPlan:
    """Hudi's rollback plan of a compaction: per file group, the files it wrote that exist now."""
    by_group: dict[tuple[str, str | None], list[str]] = {}
    for _, path in deletes:
        partition, _, name = path.rpartition("/")
        found = slice_of_file(name)
        by_group.setdefault((partition, found[0] if found else None), []).append(name)
    requests = []
    for op in plan.operations if plan is not None else ():
        partition = op.partition_path or ""
        names = by_group.get((partition, op.file_id))
        if names:
            requests.append(
                RollbackRequest(
                    partition_path=partition,
                    file_id=op.file_id,
                    latest_base_instant=op.base_instant_time,
                    files_to_be_deleted=tuple(sorted(names)),
                )
            )
    return RollbackPlan(instant_to_rollback=InstantInfo(target, action), rollback_requests=tuple(requests))
