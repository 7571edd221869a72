"""Taking compactions and failed writes back, checking and repairing compactions, and archiving the timeline:
what `Table.rollback`, `unschedule`, `validate`, `repair` and `archive` do on the table's files (the store is
brought up to date by `Table` afterwards). Each returns what it did, or in a dry run would do, one `FileAction`
per file (operation, source, target, done, error), as hudi-cli's compaction commands report."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hudi_meta.compaction.admin import published_threshold, repair, validate
from hudi_meta.compaction.rollback import rollback_compaction
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.errors import HudiMetaError
from hudi_meta.index.run_stats import IndexRunStats
from hudi_meta.metadata.integrity import refuse_damaged
from hudi_meta.metadata.sync import rollback_hook
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.archival_plan import ArchivalSettings
from hudi_meta.timeline.instant import Action
from hudi_meta.write.archival import ArchiveReport, archive_timeline, check_archivable
from hudi_meta.write.failed_writes import pending_rollback_of, rollback_failed_write
from hudi_meta.write.file_actions import FileAction


@dataclass(frozen=True)
class IndexRefresh:
    """The store brought up to date after a change to the table, when the table is registered there: what the
    index run did (`stats`), or why the store was not updated (`failure`: the table's change is done either
    way, and the next index run catches up). Neither: the table is not registered (or there is no store)."""

    stats: IndexRunStats | None = None
    failure: str | None = None


@dataclass
class AdminReport:
    """What a rollback, unschedule or repair of `instant` did (or, `dry_run`, would do)."""

    instant: str
    actions: list[FileAction]
    dry_run: bool
    action: str = Action.COMPACTION  # what was taken back: a compaction, or a failed deltacommit or commit
    rollback_instant: str | None = None  # the rollback instant that took it back
    threshold_before: tuple[str, int] | None = None  # the published (compaction, T) before and after
    threshold_after: tuple[str, int] | None = None
    steps: int = 0  # repair: the steps it took (the rest of `actions` are problems it cannot fix)
    index: IndexRefresh = field(default_factory=IndexRefresh)

    @property
    def failed(self) -> bool:
        """Some file could not be acted on (or, repair, a problem remains)."""
        return any(a.error for a in self.actions)

    @property
    def moved_log_files(self) -> int:
        return sum(a.operation == "move_log_file" for a in self.actions)

    @property
    def deleted_files(self) -> int:
        return sum(a.operation.startswith("delete_") and a.operation != "delete_instant" for a in self.actions)

    def rows(self) -> list[dict[str, Any]]:
        """One row per file: the instant, then the action's (operation, source, target, done, error)."""
        return [{"instant": self.instant, **a.to_dict()} for a in self.actions]


@dataclass(frozen=True)
class ArchiveOutcome:
    """An archival's report and the store's update after it (when it archived or finished instants)."""

    report: ArchiveReport
    index: IndexRefresh = IndexRefresh()


def unschedule(table: HudiTable, instant: str, dry_run: bool) -> AdminReport:
    """Take back the pending compaction plan `instant` (Hudi's unschedule, log files moved back)."""
    report = unschedule_compaction(table, instant, dry_run=dry_run)
    return AdminReport(instant, report.actions, dry_run, rollback_instant=report.rollback_instant)


def rollback(table: HudiTable, instant: str, completed_compaction: bool, force: bool, dry_run: bool) -> AdminReport:
    """Roll back the compaction `instant` (a completed one only with `completed_compaction`: it moves the
    published freshness back) or the failed write `instant` (one whose heartbeat is live only with `force`)."""
    tl = table.timeline
    state = tl.instant(instant)
    if tl.is_compaction(instant) or (state is None and pending_rollback_of(table, instant)):
        before = published_threshold(tl)
        taken = rollback_compaction(table, instant, completed_compaction, dry_run=dry_run)
        after = published_threshold(table.timeline)
        return AdminReport(instant, taken.actions, dry_run, Action.COMPACTION, taken.instant, before, after)
    if state is None:
        raise HudiMetaError(f"no instant {instant} on {table.base_path}")
    if state.action in (Action.DELTA_COMMIT, Action.COMMIT) and not state.is_completed:
        hook = rollback_hook(table)
        report = rollback_failed_write(table, instant, dry_run=dry_run, force=force, metadata_writer=hook)
        return AdminReport(instant, report.actions, dry_run, state.action, report.instant)
    if state.is_completed:
        raise HudiMetaError(
            f"{instant} is a completed {state.action}: hudi-meta rolls back failed writes and compactions"
        )
    raise HudiMetaError(f"{instant} is a {state.action}: hudi-meta rolls back writes and compactions")


def repair_compaction(table: HudiTable, instant: str, dry_run: bool) -> AdminReport:
    """Fix what `validate` finds in the compaction (or slice) `instant`; what repair cannot fix is reported as a
    failed action, so that the report says every problem that remains."""
    report = repair(table, instant, dry_run=dry_run)
    unrepaired = [
        FileAction(f.check, f.path, False, f"{f.problem} (repair cannot fix this)", f.target) for f in report.unrepaired
    ]
    return AdminReport(instant, report.actions + unrepaired, dry_run, steps=len(report.actions))


def archive(table: HudiTable, min_commits: int | None, max_commits: int | None, dry_run: bool) -> ArchiveReport:
    """Archive the timeline's old instants (settings: the arguments, else the table's `hoodie.keep.*.commits`)."""
    check_archivable(table)
    refuse_damaged(table)  # archival reads the metadata table's compactions; a damaged one is never written over
    settings = ArchivalSettings.from_properties(table.config.props, min_commits, max_commits)
    return archive_timeline(table, dry_run=dry_run, settings=settings)


__all__ = ["AdminReport", "ArchiveOutcome", "IndexRefresh", "validate"]
