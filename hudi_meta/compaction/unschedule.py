"""`compaction unschedule`: take back a compaction that did not complete, as if it had never been scheduled.

A requested plan wrote nothing but its plan, yet writers may have appended log files into its slices: those
move back into the slices the plan compacts (`compaction.undo`), then the plan's instant files go, with
no rollback instant (Java's `unscheduleCompactionPlan` deletes the requested file the same way). A plan that
ran in part (inflight, or a rollback of it that was interrupted) is rolled back (`write.failed_writes`): the same
steps plus the files the run wrote, recorded by a rollback instant. A completed compaction is refused: it is
rolled back only explicitly (`hudi-meta rollback TABLE INSTANT --completed-compaction`). On a version-6 table with a
metadata table, a requested plan whose take-back renames log files is rolled back too: the rollback instant is
where the metadata table records the renames (docs/metadata-table.md section 7.2.1).

Afterwards the table reads as it did before the plan (same records, in the same merge order), and a new
`compaction schedule` plans its file groups again. Writers must be stopped while it runs (see
`compaction.undo`); a kill -9 at any point is finished by running it again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from hudi_meta.compaction.preconditions import check_compactable
from hudi_meta.compaction.rollback import rollback_compaction
from hudi_meta.compaction.undo import (
    execute_undo,
    plan_undo,
    refuse_pending_writes,
)
from hudi_meta.errors import HudiMetaError
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import State
from hudi_meta.write.failed_writes import pending_rollback_of
from hudi_meta.write.file_actions import FileAction

log = logging.getLogger(__name__)


@dataclass
class UnscheduleReport:
    instant: str  # the compaction taken back
    dry_run: bool
    rollback_instant: str | None = None  # set when the plan had run in part
    actions: list[FileAction] = field(default_factory=list)


def unschedule_compaction(table: HudiTable, instant: str, dry_run: bool = True) -> UnscheduleReport:
    """Take back the pending compaction `instant` (see the module doc); refused with nothing written for an
    unknown instant, one that is not a compaction, a completed compaction, or while a write is pending."""
    check_compactable(table)
    tl = table.timeline
    state = tl.instant(instant)
    if pending_rollback_of(table, instant) is None:
        if state is None:
            raise HudiMetaError(f"no instant {instant} on {table.base_path}")
        if not tl.is_compaction(instant):
            raise HudiMetaError(f"{instant} is a {state.action}, not a compaction")
        if state.is_completed:
            raise HudiMetaError(
                f"compaction {instant} is completed: unschedule takes back pending plans only; roll it back as a "
                "completed compaction instead"
            )
        if state.state == State.REQUESTED and not _renames_under_metadata_table(table, instant):
            return _unschedule_requested(table, instant, dry_run)
    rollback = rollback_compaction(table, instant, dry_run=dry_run, never_ran=True)
    return UnscheduleReport(instant, dry_run, rollback.instant, rollback.actions)


def _renames_under_metadata_table(table: HudiTable, instant: str) -> bool:
    """Whether taking requested plan `instant` back renames log files on a table with a metadata table: then it
    is rolled back instead, so that a rollback instant records the renames there (only version 6 renames)."""
    if not table.config.metadata_partitions or table.config.version != 6:
        return False
    return bool(plan_undo(table, table.compaction_plan(instant), instant).moves)


def _unschedule_requested(table: HudiTable, instant: str, dry_run: bool) -> UnscheduleReport:
    refuse_pending_writes(table, f"unscheduling compaction {instant}")
    plan = table.compaction_plan(instant)
    steps = plan_undo(table, plan, instant)
    report = UnscheduleReport(instant, dry_run)
    if dry_run:
        report.actions = steps.actions()
        return report

    def still_no_writer() -> None:
        table.reload()
        refuse_pending_writes(table, f"unscheduling compaction {instant}")

    execute_undo(table, plan, steps, report.actions, still_no_writer)
    log.info("compaction %s unscheduled: %d file operations (%s)", instant, len(report.actions), table.base_path)
    return report
