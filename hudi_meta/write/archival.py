"""Timeline archival: completed instants move off the active timeline, so it stays short. On Hudi 1.x tables
(versions 8 and 9, timeline layout 2) into the LSM history (`.hoodie/timeline/history/`, `format/lsm_timeline.py`);
on version 6 (layout 1) into the 0.x archived log (`.hoodie/archived/`, `format/archived_log.py`), as Java 0.14/0.15's
`HoodieTimelineArchiver` does. What is archived is planned by `timeline/archival_plan.py` the same way on both layouts
(Java's rules and hudi-meta's own, docs/archival.md).

One run, under the table lock (Java archives under it too, and our writers complete their instants under it):

1. finish what an earlier run left: an active instant the history already holds (same completion time) had its
   history row written but not all of its files deleted;
2. plan from the active timeline (the latest clean's plan and the compactions' links read here);
3. layout 2: append one layer-0 history file with a row per archived instant: requested and completion time, the
   completed action (a compaction is a `commit`), the completed file's bytes as `metadata`, and the plan of a
   clean, compaction or replace commit as `plan` (Java's `MetadataConversionUtils.createLSMTimelineInstant`);
   layout 1: append one Avro data block to the newest archive log file with an entry per state file of each
   archived instant (Java's `MetadataConversionUtils.createMetaWrapper`);
4. delete the archived instants' requested and inflight files, then their completed files in ascending order:
   a reader listing the timeline meanwhile never sees a hole in the middle of it (HUDI-7207).

Every step is idempotent: a run killed anywhere (`HUDI_META_ARCHIVE_CRASH_AT`, and `HUDI_META_LSM_CRASH_AT`
inside step 3) is finished by the next (a block torn by a kill is skipped by readers, Java's too, and the next
run writes the batch again). Between steps 3 and 4 an instant is in both places; readers take the active copy
(`HudiTable._view_inputs`). A dry run (the default) plans without the lock and writes nothing.

Not done (docs/archival.md): compaction and cleaning of the LSM tree's layers, merging small 0.x archive files,
and deleting leftover marker folders of archived instants.
"""

from __future__ import annotations

import datetime as dt
import logging
import posixpath
from dataclasses import dataclass, field
from typing import Any

from hudi_meta.crash_points import CrashPoints
from hudi_meta.errors import CorruptFileError, UnsupportedTableError
from hudi_meta.format import archived_log
from hudi_meta.format.archived_log import ArchivedEntry
from hudi_meta.format.lsm_timeline import ArchivedInstant, append_history, data_file_name
from hudi_meta.format.table_service_metadata import CleanerPlan, CleanMetadata, CompactionPlan
from hudi_meta.table.metadata_table import METADATA_DIR
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.archival_plan import (
    ArchivalPlan,
    ArchivalSettings,
    Boundary,
    TimelineInstant,
    count_reach,
    plan_archival,
)
from hudi_meta.timeline.instant import Action, Instant, State, format_instant
from hudi_meta.write.lock import table_lock

log = logging.getLogger(__name__)

CRASH_AT_ENV = "HUDI_META_ARCHIVE_CRASH_AT"  # failure injection for crash tests: kill -9 this process at a named step
CRASH_POINTS = ("after-history", "after-pending", "after-completed")
_crash = CrashPoints(CRASH_AT_ENV, CRASH_POINTS)
set_crash_hook = _crash.set_hook

# one instant's state files are those of one requested time and action, a pending action read as the one it
# completes as (Java's `InstantComparatorV2.getComparableAction`)
_COMPARABLE = {
    Action.COMPACTION: Action.COMMIT,
    Action.LOG_COMPACTION: Action.DELTA_COMMIT,
    Action.CLUSTERING: Action.REPLACE_COMMIT,
}
_PLANNED = frozenset({Action.COMPACTION, Action.LOG_COMPACTION})
_PLAN_IN_REQUESTED = frozenset({Action.CLEAN, Action.COMPACTION, Action.LOG_COMPACTION})
_REPLACE = frozenset({Action.REPLACE_COMMIT, Action.CLUSTERING})
ALREADY_ARCHIVED = "(archived)"


def check_archivable(table: HudiTable) -> None:
    """Refuse tables this archiver cannot archive, saying why."""
    cfg = table.config
    merge_plan = posixpath.join(table.archive_path, archived_log.MERGE_PLAN)
    if cfg.timeline_layout < 2 and table.storage.exists(merge_plan):
        raise UnsupportedTableError(
            f"{merge_plan}: a merge of small archive files by Java's archiver did not finish, and hudi-meta does not "
            "merge them; run Java's archiver once to finish or undo it"
        )


# ---------------------------------------------------------------- the active timeline, every state file


@dataclass(frozen=True)
class ActiveAction:
    """One instant's state files on the active timeline (requested, inflight, completed: any may be missing)."""

    requested_time: str
    files: tuple[Instant, ...]

    @property
    def completed(self) -> Instant | None:
        """The completed file (the newest completion when a crash left two)."""
        done = [f for f in self.files if f.is_completed]
        return max(done, key=_completion, default=None)

    @property
    def pending_files(self) -> list[Instant]:
        """Requested, then inflight (the order Java deletes them in)."""
        return sorted((f for f in self.files if not f.is_completed), key=lambda f: f.state != State.REQUESTED)

    @property
    def pending_action(self) -> Action | None:
        """The action it was requested as (a compaction's is `compaction`), None without a pending file."""
        return next((f.action for f in self.pending_files), None)

    def pending_file(self, state: State) -> Instant | None:
        return next((f for f in self.files if f.state == state), None)

    def as_timeline_instant(self) -> TimelineInstant:
        done = self.completed
        if done is None:
            newest = max(self.files, key=lambda f: f.state == State.INFLIGHT)
            return TimelineInstant(self.requested_time, newest.action, False)
        return TimelineInstant(
            self.requested_time,
            done.action,
            True,
            done.completion_time or self.requested_time,
            compaction=self.pending_action in _PLANNED,
        )


def active_actions(table: HudiTable) -> list[ActiveAction]:
    """Every instant of the active timeline with all of its state files, by requested time."""
    groups: dict[tuple[str, str], list[Instant]] = {}
    for info in table.storage.list_dir(table.timeline_path):
        instant = None if info.is_dir else Instant.parse(info.name)
        if instant is not None:
            key = (instant.requested_time, _COMPARABLE.get(instant.action, instant.action))
            groups.setdefault(key, []).append(instant)
    return [ActiveAction(t, tuple(sorted(files))) for (t, _), files in sorted(groups.items())]


# ---------------------------------------------------------------- reports


@dataclass
class InstantReport:
    """One instant archival moves (or would): the history file that holds it, and its state files on the active
    timeline, which are deleted (pending ones first)."""

    instant: str
    action: str
    completion_time: str
    files: tuple[str, ...]
    history_file: str
    finishing: bool = False  # already in the history: an earlier run stopped before deleting its files
    done: bool = False
    error: str | None = None

    def rows(self) -> list[dict[str, Any]]:
        return [
            {
                "instant": self.instant,
                "action": self.action,
                "completion": self.completion_time,
                "file": name,
                "history": self.history_file,
                "done": self.done,
                "error": self.error,
            }
            for name in self.files
        ]


@dataclass
class ArchiveReport:
    """What one archival did (or, in a dry run, would do)."""

    table: str
    dry_run: bool
    settings: ArchivalSettings
    plan: ArchivalPlan
    # the file written (or to be) for the newly archived instants: a history data file (layout 2), or the archive
    # log file appended to (layout 1)
    history_file: str | None
    instants: list[InstantReport] = field(default_factory=list)

    @property
    def archived(self) -> list[InstantReport]:
        """The instants newly archived (or to be)."""
        return [i for i in self.instants if not i.finishing]

    @property
    def finished(self) -> list[InstantReport]:
        """The instants an earlier run archived but did not delete from the active timeline."""
        return [i for i in self.instants if i.finishing]

    @property
    def error(self) -> InstantReport | None:
        return next((i for i in self.instants if i.error), None)

    def rows(self) -> list[dict[str, Any]]:
        return [row for i in self.instants for row in i.rows()]


# ---------------------------------------------------------------- archival


def archive_timeline(
    table: HudiTable, dry_run: bool = True, settings: ArchivalSettings | None = None, bound: Boundary | None = None
) -> ArchiveReport:
    """Archive what the rules allow (a dry run by default: the plan, nothing written). With `dry_run=False`, under
    the table lock: finish an earlier run's deletes, append the history file, delete the instants' files. `bound`:
    one more boundary (`archival_plan.plan_archival`)."""
    check_archivable(table)
    settings = settings or ArchivalSettings.from_properties(table.config.props)
    if dry_run:
        table.reload()
        return _archive(table, settings, False, bound)
    try:
        with table_lock(table.storage, table.meta_path, table.config.props, "archive"):
            table.reload()
            return _archive(table, settings, True, bound)
    finally:
        table.reload()


def _archive(table: HudiTable, settings: ArchivalSettings, execute: bool, bound: Boundary | None) -> ArchiveReport:
    actions = active_actions(table)
    history = table.archived
    leftovers = [a for a in actions if a.requested_time in history]
    for a in leftovers:
        _check_leftover(table, a, history[a.requested_time][0])
    rest = [a for a in actions if a.requested_time not in history]
    instants = [a.as_timeline_instant() for a in rest]
    links = _link_holders(table, rest, count_reach(instants, settings))
    plan = plan_archival(
        instants, settings, _latest_clean_retain(table, rest), links, _metadata_compaction(table), bound
    )
    by_time = {a.requested_time: a for a in rest}
    chosen = [by_time[i.requested_time] for i in plan.instants]
    history_file = _target_file(table, chosen) if chosen else None
    report = ArchiveReport(table.base_path, not execute, settings, plan, history_file)
    report.instants = [_report(a, ALREADY_ARCHIVED, finishing=True) for a in leftovers]
    report.instants += [_report(a, history_file or "") for a in chosen]
    if not execute:
        return report
    if chosen:
        _write(table, chosen)
        log.info("archived %d instants of %s into %s", len(chosen), table.base_path, history_file)
        _crash.reach("after-history")
    if leftovers:
        log.info("finishing %d instants of %s an earlier archival left", len(leftovers), table.base_path)
    _delete(table, [*leftovers, *chosen], report.instants)
    return report


def _check_leftover(table: HudiTable, action: ActiveAction, completion: str) -> None:
    """An active instant the history holds must be that instant, completed: what a run killed before its deletes
    leaves. Anything else is a timeline no rule of ours explains, and deleting it could lose a write."""
    done = action.completed
    archive = table.history_path if table.config.timeline_layout >= 2 else table.archive_path
    where = f"{archive}: instant {action.requested_time}"
    if done is None:
        raise CorruptFileError(
            f"{where} is archived but pending on the active timeline; remove its pending files or the history row"
        )
    if (done.completion_time or action.requested_time) != completion:
        raise CorruptFileError(
            f"{where} completed at {completion} in the archive and at {done.completion_time} on the active "
            "timeline; restore one of them"
        )


def _report(action: ActiveAction, history_file: str, finishing: bool = False) -> InstantReport:
    done = action.completed
    assert done is not None  # only completed instants are archived
    pending = [f.file_name(2) for f in action.pending_files]
    return InstantReport(
        action.requested_time,
        done.action,
        done.completion_time or action.requested_time,
        (*pending, *(f.file_name(2) for f in action.files if f.is_completed)),
        history_file,
        finishing,
    )


def _target_file(table: HudiTable, chosen: list[ActiveAction]) -> str:
    if table.config.timeline_layout >= 2:
        return data_file_name(chosen[0].requested_time, chosen[-1].requested_time)
    return archived_log.target_file(table.storage, table.archive_path)


def _write(table: HudiTable, chosen: list[ActiveAction]) -> None:
    if table.config.timeline_layout >= 2:
        append_history(table.storage, table.history_path, [_history_row(table, a) for a in chosen])
    else:
        entries = [e for a in chosen for e in _archive_entries(table, a)]
        archived_log.append_entries(table.storage, table.archive_path, entries)


def _archive_entries(table: HudiTable, action: ActiveAction) -> list[ArchivedEntry]:
    """Layout 1: an entry per state file, requested, inflight, completed (Java's archiver archives every state file
    of an instant, `getInstantsToArchive`), with its modification time as `stateTransitionTime` (Java 0.14+ takes
    the listing's, HUDI-5517). A compaction's requested and inflight entries both hold its plan: Java reads it from
    the requested file (`CompactionUtils.getCompactionPlan`), and its readers look for it on either."""
    requested = action.pending_file(State.REQUESTED)
    entries = []
    for f in [*action.pending_files, *(f for f in action.files if f.is_completed)]:
        source = requested if f.action in _PLANNED and not f.is_completed else f
        entries.append(
            archived_log.entry_of_state_file(
                action.requested_time, f.action.value, f.state.name, _content(table, source) or b"", _modified(table, f)
            )
        )
    return entries


def _modified(table: HudiTable, instant: Instant) -> str:
    """When a state file was last written, as an instant time in the timeline's zone."""
    ms = table.storage.modified_time_ms(posixpath.join(table.timeline_path, instant.file_name(2)))
    zone = table.config.timeline_timezone
    return format_instant(dt.datetime.fromtimestamp(ms // 1000, zone) + dt.timedelta(milliseconds=ms % 1000))


def _history_row(table: HudiTable, action: ActiveAction) -> ArchivedInstant:
    """The history row of one archived instant (`MetadataConversionUtils.createLSMTimelineInstant`): empty
    contents are left null, as Java leaves them."""
    done = action.completed
    assert done is not None
    pending = action.pending_action
    plan = None
    if pending in _PLAN_IN_REQUESTED:
        plan = _content(table, action.pending_file(State.REQUESTED))
    elif pending in _REPLACE:
        plan = _content(table, action.pending_file(State.INFLIGHT)) or _content(
            table, action.pending_file(State.REQUESTED)
        )
    return ArchivedInstant(
        requested_time=action.requested_time,
        completion_time=done.completion_time or action.requested_time,
        action=done.action.value,
        metadata=_content(table, done),
        plan=plan,
    )


def _content(table: HudiTable, instant: Instant | None) -> bytes | None:
    if instant is None:
        return None
    data = table.storage.read_bytes(posixpath.join(table.timeline_path, instant.file_name(2)))
    return data or None


def _delete(table: HudiTable, actions: list[ActiveAction], reports: list[InstantReport]) -> None:
    """Pending files first, then completed files oldest first; a delete that fails stops the run (the next one
    finishes it), so the timeline never loses an instant older than one it keeps."""
    by_time = {r.instant: r for r in reports}
    ordered = sorted(actions, key=lambda a: a.requested_time)
    pending = [(a, f) for a in ordered for f in a.pending_files]
    # an instant's completed files (two, where a crash left two) go oldest completion first: the one readers
    # take until then (`ActiveAction.completed`) goes last
    completed = [(a, f) for a in ordered for f in sorted((f for f in a.files if f.is_completed), key=_completion)]
    for i, (action, instant) in enumerate([*pending, *completed]):
        if i == len(pending):
            _crash.reach("after-pending")
        try:
            table.storage.delete(posixpath.join(table.timeline_path, instant.file_name(2)))
        except OSError as e:
            by_time[action.requested_time].error = f"{instant.file_name(2)}: {e}"
            return
        if instant == action.completed:
            by_time[action.requested_time].done = True
            _crash.reach("after-completed")


def _completion(instant: Instant) -> str:
    return instant.completion_time or ""


# ---------------------------------------------------------------- what planning needs from the files


def _metadata_compaction(table: HudiTable) -> str | None:
    """The metadata table's latest completed compaction ("" when it has none; None: no metadata table)."""
    if not table.config.metadata_partitions:
        return None
    mdt = HudiTable.open(table.storage.uri(posixpath.join(table.meta_path, METADATA_DIR)), table.storage.options)
    return max((i.requested_time for i in mdt.timeline.completed() if i.action == Action.COMMIT), default="")


def _latest_clean_retain(table: HudiTable, actions: list[ActiveAction]) -> str | None:
    """The earliest instant to retain of the latest completed clean: its plan's (`<t>.clean.requested`), else its
    metadata's."""
    cleans = [a for a in actions if (done := a.completed) is not None and done.action == Action.CLEAN]
    if not cleans:
        return None
    clean = cleans[-1]
    plan = _content(table, clean.pending_file(State.REQUESTED))
    try:
        if plan is not None:
            retain = CleanerPlan.from_bytes(plan).earliest_instant_to_retain
            return retain.timestamp if retain is not None and retain.timestamp else None
        metadata = _content(table, clean.completed)
        if metadata is None:
            return None
        return CleanMetadata.from_bytes(metadata).earliest_commit_to_retain or None
    except (CorruptFileError, KeyError, TypeError, ValueError) as e:
        raise CorruptFileError(f"cannot read clean {clean.requested_time} of {table.base_path}: {e}") from e


def _link_holders(table: HudiTable, actions: list[ActiveAction], reach: str | None) -> frozenset[str]:
    """The completed compactions, up to `reach`, whose links still show a file that exists: event-time compaction
    C makes `.F_C.log.i_tok` links to log files of the slice it compacted. A compaction whose plan is gone counts
    as holding links (there is nothing to check them against)."""
    if reach is None:
        return frozenset()
    holders = set()
    for a in actions:
        if a.requested_time > reach or a.completed is None or a.pending_action != Action.COMPACTION:
            continue
        requested = _content(table, a.pending_file(State.REQUESTED))
        if requested is None:
            holders.add(a.requested_time)
            continue
        plan = CompactionPlan.from_bytes(requested)
        for op in plan.operations:
            directory = posixpath.join(table.base_path, op.partition_path) if op.partition_path else table.base_path
            if any(table.storage.exists(posixpath.join(directory, s.target)) for s in op.symlink_operations):
                holders.add(a.requested_time)
                break
    return frozenset(holders)
