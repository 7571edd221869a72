"""`compaction validate` and `compaction repair` (hudi-cli's commands of the same names are the model).

`validate` reports, per compaction, what keeps it from running or from reading right, each problem naming the
file, what is wrong and what `repair` does about it:

- a pending plan: its input files (base file, log files to compact, link targets) exist; no log file was
  appended to a slice it compacts after it was planned (the executor refuses to commit then: those records
  would be neither merged nor linked); links made by a run that stopped point at their targets (copies hold
  their bytes); no write older than the plan is still pending (the executor waits for it);
- a completed compaction (named explicitly): its base files exist, and while its slice is the newest one its
  links exist and show their targets;
- misplaced log files: a slice after the first with log files but no base file and no pending compaction
  (a writer that raced an unschedule, a foreign tool): readers stop there and skip every older slice.

`repair` fixes what it can: a plan that cannot run because its slices gained log files is unscheduled (those
records then stay in the slice they were written to, and the appended ones follow them: the merge order does
not change); a wrong link of a pending plan is deleted (the run makes it again); a missing or wrong link of a
completed compaction is made again from its plan; misplaced log files move into the slice before theirs with
the next free versions. Missing input files cannot be repaired (their records are gone): they are reported.
Each step is idempotent, so a repair killed at any point is finished by running it again.
"""

from __future__ import annotations

import logging
import posixpath
from dataclasses import dataclass, field
from typing import Any

from hudi_meta.compaction.preconditions import check_compactable
from hudi_meta.compaction.undo import (
    Listing,
    Move,
    instant_path,
    journal_path,
    moves_into,
    plan_breakers,
    read_journal,
    refuse_pending_writes,
    rel,
    run_moves,
    step_done,
)
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.errors import HudiMetaError
from hudi_meta.format.links import MODE_KEY, THRESHOLD_KEY
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.format.table_service_metadata import CompactionPlan
from hudi_meta.storage.base import FileInfo
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, Instant, State
from hudi_meta.timeline.timeline import Timeline
from hudi_meta.write.file_actions import FileAction

log = logging.getLogger(__name__)

UNSCHEDULE = "unschedule"
DELETE_LINK = "delete_link"
RELINK = "relink"
MOVE = "move_log_file"
NO_COMPACTION = "none"  # the state of a slice with misplaced log files whose instant is no pending compaction


@dataclass(frozen=True)
class Finding:
    """One problem: the check, the file, what is wrong, and what repair does (None: it cannot fix it)."""

    check: str
    path: str
    problem: str
    fix: str | None
    target: str | None = None


@dataclass
class Validation:
    instant: str
    state: str  # requested, inflight, completed, or "none" (misplaced log files of a slice with no compaction)
    source: str  # the plan's (or commit's) instant file, or the slice
    findings: list[Finding] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)  # misplaced log files and where repair puts them
    journaled: bool = False  # the moves come from an interrupted repair's journal

    @property
    def ok(self) -> bool:
        return not self.findings

    def rows(self) -> list[dict[str, Any]]:
        """A summary row, then one row per problem (done: the check passed)."""
        if self.state in (State.REQUESTED.value, State.INFLIGHT.value):
            verdict = (
                "the plan can run" if self.ok else f"the plan cannot run as it is: {len(self.findings)} problem(s)"
            )
        elif self.state == State.COMPLETED.value:
            verdict = "the compaction's files are in place" if self.ok else f"{len(self.findings)} problem(s)"
        else:
            verdict = f"{len(self.findings)} misplaced log file(s)"
        head = {"instant": self.instant, "operation": f"validate ({self.state})", "source": self.source}
        rows = [{**head, "target": None, "done": self.ok, "error": None if self.ok else verdict}]
        for f in self.findings:
            fix = f"repair: {f.fix}" if f.fix else "repair cannot fix this"
            rows.append(
                {
                    "instant": self.instant,
                    "operation": f.check,
                    "source": f.path,
                    "target": f.target,
                    "done": False,
                    "error": f"{f.problem} ({fix})",
                }
            )
        return rows


def validate(table: HudiTable, instant: str | None = None) -> list[Validation]:
    """Validate `instant` (a compaction on the timeline, or a slice with misplaced log files), or every pending
    compaction and every slice with misplaced log files. An instant that is neither is refused."""
    check_compactable(table)
    tl = table.timeline
    misplaced = misplaced_slices(table)
    if instant is None:
        out = [validate_compaction(table, i.requested_time) for i in tl.pending_compactions()]
        return out + [misplaced[k] for k in sorted(misplaced)]
    state = tl.instant(instant)
    out = []
    if state is not None and tl.is_compaction(instant):
        out.append(validate_compaction(table, instant))
    if instant in misplaced:
        out.append(misplaced[instant])
    if not out:
        if state is None:
            raise HudiMetaError(f"no instant {instant} on {table.base_path}")
        raise HudiMetaError(f"{instant} is a {state.action}, not a compaction")
    return out


def validate_compaction(table: HudiTable, instant: str) -> Validation:
    tl = table.timeline
    state = tl.instant(instant)
    assert state is not None
    plan = table.compaction_plan(instant)
    listing = Listing(table)
    if state.is_completed:
        v = Validation(
            instant, state.state.value, instant_path(table, Instant(instant, Action.COMMIT, State.COMPLETED))
        )
        v.findings = _completed_findings(table, plan, instant, listing)
        return v
    source = instant_path(table, Instant(instant, Action.COMPACTION, State.REQUESTED))
    v = Validation(instant, state.state.value, source)
    v.findings = _pending_findings(table, plan, instant, listing)
    if read_journal(table, instant) is not None:
        path = posixpath.relpath(journal_path(table, instant), table.base_path)
        v.findings.append(Finding("interrupted_unschedule", path, "an unschedule of this plan stopped", UNSCHEDULE))
    older = tl.pending_writes(before=instant)
    v.findings += [
        Finding(
            "pending_write",
            instant_path(table, i),
            f"{i.action} {i.requested_time} is still {i.state.value} and older than the plan: the run waits for it "
            "(roll it back if its writer died)",
            None,
        )
        for i in older
    ]
    return v


def _pending_findings(table: HudiTable, plan: CompactionPlan, instant: str, listing: Listing) -> list[Finding]:
    found = []
    for op in plan.operations:
        partition = op.partition_path or ""
        files = listing(partition)
        inputs = [op.data_file_path] if op.data_file_path else []
        inputs += [*op.delta_file_paths, *(s.target for s in op.symlink_operations)]
        for name in inputs:
            if name not in files:
                found.append(
                    Finding(
                        "input_file", rel(partition, name), "missing: its records are lost, the plan cannot run", None
                    )
                )
        for link in op.symlink_operations:
            if link.symlink in files:
                problem, fixable = _link_problem(table, partition, files, link.symlink, link.target)
                if problem:
                    fix = DELETE_LINK if fixable else None
                    found.append(
                        Finding("link", rel(partition, link.symlink), problem, fix, rel(partition, link.target))
                    )
    # the log files `compaction run` would take the plan back for (the same rule, every table version)
    for b in plan_breakers(table, plan, instant):
        found.append(
            Finding("unplanned_log" if b.joined_compacted_slice else "plan_order", b.path, b.describe(), UNSCHEDULE)
        )
    return found


def _completed_findings(table: HudiTable, plan: CompactionPlan, instant: str, listing: Listing) -> list[Finding]:
    inputs = table.view_inputs()
    newest = {
        (fg.partition, fg.file_id): max(
            (s.base_instant for s in fg.ordered_slices() if s.base_file and inputs.is_committed(s.base_instant)),
            default="",
        )
        for fg in table.all_file_groups()
    }
    ext = "." + table.config.base_file_format.lower()
    found = []
    for op in plan.operations:
        partition = op.partition_path or ""
        if newest.get((partition, op.file_id), "") > instant:
            continue  # a later compaction took over this file group: its older slices may be cleaned
        files = listing(partition)
        if not listing.bases(partition, op.file_id, instant):
            name = rel(partition, f"{op.file_id}_*_{instant}{ext}")
            found.append(Finding("base_file", name, f"missing: compaction {instant} has no base file here", None))
        for link in op.symlink_operations:
            name, target = rel(partition, link.symlink), rel(partition, link.target)
            if link.symlink not in files:
                if link.target in files:
                    found.append(
                        Finding("link", name, "missing: readers miss the records of its target", RELINK, target)
                    )
                else:
                    lost = "missing, and so is its target: the records it showed are lost"
                    found.append(Finding("link", name, lost, None, target))
                continue
            if link.target not in files and files[link.symlink].link_target is None:
                continue  # a copy holds its records itself: readers still read them
            problem, fixable = _link_problem(table, partition, files, link.symlink, link.target)
            if problem:
                found.append(Finding("link", name, problem, RELINK if fixable else None, target))
    return found


def _link_problem(
    table: HudiTable, partition: str, files: dict[str, FileInfo], link: str, target: str
) -> tuple[str | None, bool]:
    """What is wrong with an existing link (a symlink, or a copy), if anything, and whether repair may replace
    it. A regular file at a link's name that holds blocks its target does not is no copy: a writer took the name
    of a link that was lost; it holds records nowhere else, so repair leaves it to a person."""
    directory = posixpath.join(table.base_path, partition) if partition else table.base_path
    info = files[link]
    if info.link_target is not None:
        expected = posixpath.normpath(posixpath.join(directory, target))
        if target not in files:
            return "dangling: its target is gone, the records it showed are lost", False
        if posixpath.normpath(info.link_target) != expected:
            return f"points at {posixpath.basename(info.link_target)}, not at its target", True
        return None, False
    if target not in files:
        return "a copy whose target is gone: it holds the only records of that file", False
    storage = table.storage
    a, b = posixpath.join(directory, link), posixpath.join(directory, target)
    if storage.size(a) == storage.size(b) and storage.read_bytes(a) == storage.read_bytes(b):
        return None, False
    try:
        own = {i for blk in read_blocks(storage, a) if (i := blk.instant_time) is not None}  # not corrupt ones
        theirs = {blk.instant_time for blk in read_blocks(storage, b)}
    except (OSError, ValueError, HudiMetaError):
        own, theirs = set(), set()
    if not own <= theirs:
        foreign = ", ".join(sorted(str(i) for i in own - theirs))
        return f"not a copy of its target: it holds blocks of {foreign} (a writer took a lost link's name)", False
    return "a copy whose bytes differ from its target", True


def misplaced_slices(table: HudiTable) -> dict[str, Validation]:
    """Slices after the first with log files, no base file and no pending compaction, per slice instant, with
    the moves that put their log files after the slice before them (an interrupted repair's journal first)."""
    inputs = table.view_inputs()
    listing = Listing(table)
    out: dict[str, Validation] = {}
    for fg in table.file_groups():
        slices = fg.ordered_slices()
        for prev, s in zip(slices, slices[1:], strict=False):
            opened = inputs.pending_compactions.get((fg.partition, fg.file_id)) == s.base_instant
            if s.base_file is not None or not s.log_files or opened:
                continue
            logs = [lf.name for lf in s.sorted_logs()]
            moves = moves_into(listing, fg.partition, fg.file_id, prev.base_instant, logs)
            v = out.setdefault(s.base_instant, Validation(s.base_instant, NO_COMPACTION, f"slice {s.base_instant}"))
            v.moves.extend(moves)
    pending = {i.requested_time for i in table.timeline.pending_compactions()}
    for instant in journaled_instants(table):  # an interrupted repair: finish its moves first
        if instant not in pending:
            v = out.setdefault(instant, Validation(instant, NO_COMPACTION, f"slice {instant}"))
            v.moves, v.journaled = read_journal(table, instant) or [], True
    for instant, v in out.items():
        remaining = [m for m in v.moves if table.storage.exists(_abs(table, m))]
        v.findings = [
            Finding(
                "misplaced_log",
                rel(m.partition, m.source),
                f"in slice {instant}, which has no base file and no pending compaction: readers skip the slices "
                "before it",
                MOVE,
                rel(m.partition, m.target),
            )
            for m in remaining
        ]
        if v.journaled and not remaining:
            path = posixpath.relpath(journal_path(table, instant), table.base_path)
            v.findings.append(Finding("interrupted_move", path, "a repair stopped after its last move", MOVE))
    return out


def journaled_instants(table: HudiTable) -> list[str]:
    """Slices whose move journal (`compaction.undo`) is still there: an unschedule or repair stopped."""
    root = posixpath.join(table.meta_path, ".temp")
    dirs = [i.name for i in table.storage.list_dir(root) if i.is_dir]
    return sorted(d for d in dirs if table.storage.exists(journal_path(table, d)))


def _abs(table: HudiTable, m: Move) -> str:
    return posixpath.join(table.base_path, rel(m.partition, m.source))


# ---- repair ----------------------------------------------------------------------------------------------------


@dataclass
class RepairReport:
    instant: str
    dry_run: bool
    actions: list[FileAction] = field(default_factory=list)
    unrepaired: list[Finding] = field(default_factory=list)
    rollback_instant: str | None = None  # an unschedule of a plan that had run wrote one


def repair(table: HudiTable, instant: str, dry_run: bool = True) -> RepairReport:
    """Fix what `validate(table, instant)` finds (see the module doc); refused for an unknown instant."""
    report = RepairReport(instant, dry_run)
    for v in validate(table, instant):
        report.unrepaired += [f for f in v.findings if f.fix is None]
        fixes = {f.fix for f in v.findings}
        if UNSCHEDULE in fixes:
            done = unschedule_compaction(table, instant, dry_run)
            report.actions += done.actions
            report.rollback_instant = done.rollback_instant
            continue
        if v.moves:
            if not dry_run:
                refuse_pending_writes(table, f"moving the log files of slice {instant}")
                run_moves(table, instant, v.moves, v.journaled, report.actions)
                log.info(
                    "compaction %s: %d log files moved back into their slices (%s)",
                    instant,
                    len(v.moves),
                    table.base_path,
                )
            else:
                report.actions += [
                    FileAction(MOVE, rel(m.partition, m.source), False, None, rel(m.partition, m.target))
                    for m in v.moves
                ]
        for f in v.findings:
            if f.fix == DELETE_LINK:
                _repair_step(table, report, "delete_link", f.path, None, dry_run)
            elif f.fix == RELINK:
                _relink(table, instant, f, report, dry_run)
    table.reload()
    return report


def _repair_step(table: HudiTable, report: RepairReport, op: str, path: str, target: str | None, dry: bool) -> None:
    if dry:
        report.actions.append(FileAction(op, path, False, None, target))
        return
    try:
        table.storage.delete(posixpath.join(table.base_path, path))
    except OSError as e:
        report.actions.append(FileAction(op, path, False, str(e), target))
        raise
    report.actions.append(FileAction(op, path, True, None, target))
    step_done(op)
    log.info("repair: %s %s (%s)", op, path, table.base_path)


def _relink(table: HudiTable, instant: str, f: Finding, report: RepairReport, dry_run: bool) -> None:
    """Make a completed compaction's link again: a symlink to its target, or a copy (by the plan's mode)."""
    assert f.target is not None
    plan = table.compaction_plan(instant)
    params = plan.strategy.strategy_params if plan.strategy else {}
    mode = params.get(MODE_KEY, "symlink") if table.storage.supports_symlinks else "copy"
    link, target = posixpath.join(table.base_path, f.path), posixpath.join(table.base_path, f.target)
    if dry_run:
        report.actions.append(FileAction(RELINK, f.path, False, None, f.target))
        return
    try:
        if table.storage.exists(link):
            table.storage.delete(link)
            step_done("delete_link")
        if mode == "symlink":
            table.storage.symlink(posixpath.basename(target), link)
        else:
            table.storage.copy_atomic(target, link)
    except OSError as e:
        report.actions.append(FileAction(RELINK, f.path, False, str(e), f.target))
        raise
    report.actions.append(FileAction(RELINK, f.path, True, None, f.target))
    step_done(RELINK)
    log.info("compaction %s: link %s made again to %s (%s)", instant, f.path, f.target, table.base_path)


# ---- freshness -------------------------------------------------------------------------------------------------


def published_threshold(timeline: Timeline) -> tuple[str, int] | None:
    """(compaction instant, threshold in epoch ms) of the newest completed compaction that published one: the
    RO view's freshness. Rolling back that compaction deletes its commit, so the one before it is current again."""
    for i in reversed(timeline.completed()):
        if not timeline.is_compaction(i.requested_time):
            continue
        value = timeline.commit_metadata(i).extra_metadata.get(THRESHOLD_KEY)
        if value is not None and value.lstrip("-").isdigit():
            return i.requested_time, int(value)
    return None
