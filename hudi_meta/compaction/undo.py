"""Taking a compaction back: the files it wrote into its slice, the log files writers appended there, and the
crash-safe steps that delete the first and move the second back into the slice it compacted.

Per operation (file group F, compacted slice B) a compaction C owns, in its slice C, the base file
`F_<token>_C.<ext>`, the carry log `.F_C.log.1_...` and its links (`format.links.reserved_log_files`), each
recognised by its content (`classify`). Writers that appended to F while C was pending, or after it committed,
wrote other `.F_C.log.v_...` files: their records exist nowhere else. Taking C back deletes what C owns and
moves every appended log file into slice B, after B's own log files, with the next free versions and in their
log order (Hudi's CompactionAdminClient renames them the same way when it unschedules), so readers merge B's
base file, B's logs and the appended logs in the order they merged them while C was pending.

A completed compaction is different in one way: writes after its commit merged against its new base file, and
under ordering-based merge rules that is not always what they merge to after B's base file and logs; rolling
it back is refused then (`check_rollback_of_completed` reads both and compares).

Crash safety: every step is idempotent, and the plan's instant files are deleted last, so running the same
command again after a kill -9 finishes the work from the files as they are. Storage has no rename, so a move
is an atomic copy followed by a delete of the source. The moves of a run are written to a journal
(`.hoodie/.temp/<C>/hudi-meta-moves.json`) before the first copy; a rerun finishes the journal (a target that
exists is a complete copy: only the delete is left) before it looks for more. While a copy and its source both
exist, readers see the same blocks twice in a row, which merges to the same records.

Writers must be stopped, as Java requires for `compaction unschedule`: the undo refuses to start while a write
is pending and checks again before it deletes the plan; a writer that starts in between may still land in
slice C after the plan is gone (`compaction validate` reports such misplaced log files, `repair` moves them).
"""

from __future__ import annotations

import json
import os
import posixpath
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hudi_meta.errors import HudiMetaError
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.format.links import carry_log_name, has_carry_log, reserved_log_files
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.format.table_service_metadata import CompactionOperation, CompactionPlan
from hudi_meta.storage.base import FileInfo
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action, Instant, State
from hudi_meta.write.file_actions import FileAction
from hudi_meta.write.markers import list_markers, markers_dir

CRASH_AT_ENV = "HUDI_META_CRASH_AT"  # failure injection: `undo:<n>` kills this process after its n-th step
JOURNAL = "hudi-meta-moves.json"
FILE_NAME_COLUMN = "_hoodie_file_name"
_crash_hook: Callable[[int, str], None] | None = None
_steps = 0


def set_crash_hook(hook: Callable[[int, str], None] | None) -> None:
    """Failure injection inside one process (tests): `hook(n, step)` runs after every step of an undo (n counts
    the steps of this process from 1) and may raise to stop it there, leaving the table as a kill -9 would."""
    global _crash_hook, _steps
    _crash_hook = hook
    _steps = 0


def step_done(name: str) -> None:
    """Count a finished step of an undo (a crash point: see `set_crash_hook` and CRASH_AT_ENV)."""
    global _steps
    _steps += 1
    if os.environ.get(CRASH_AT_ENV) == f"undo:{_steps}":
        os.kill(os.getpid(), signal.SIGKILL)
    if _crash_hook is not None:
        _crash_hook(_steps, name)


@dataclass(frozen=True)
class Move:
    """A log file moved within its partition folder, from one slice to another (names, not paths)."""

    partition: str
    source: str
    target: str

    def to_json(self) -> dict[str, str]:
        return {"partition": self.partition, "source": self.source, "target": self.target}


def rel(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


class Listing:
    """Partition folders listed once each (name -> entry), with their log and base files by (file id, instant)."""

    def __init__(self, table: HudiTable) -> None:
        self.table = table
        self._dirs: dict[str, dict[str, FileInfo]] = {}
        self._logs: dict[str, dict[tuple[str, str], list[LogFileName]]] = {}
        self._bases: dict[str, dict[tuple[str, str], list[str]]] = {}

    def __call__(self, partition: str) -> dict[str, FileInfo]:
        if partition not in self._dirs:
            path = posixpath.join(self.table.base_path, partition) if partition else self.table.base_path
            files = {i.name: i for i in self.table.storage.list_dir(path) if not i.is_dir}
            ext = "." + self.table.config.base_file_format.lower()
            logs: dict[tuple[str, str], list[LogFileName]] = {}
            bases: dict[tuple[str, str], list[str]] = {}
            for name in files:
                if (p := LogFileName.try_parse(name)) is not None:
                    logs.setdefault((p.file_id, p.instant), []).append(p)
                elif (b := BaseFileName.try_parse(name)) is not None and b.extension == ext:
                    bases.setdefault((b.file_id, b.instant), []).append(name)
            for found in logs.values():
                found.sort(key=LogFileName.sort_key)
            self._dirs[partition], self._logs[partition], self._bases[partition] = files, logs, bases
        return self._dirs[partition]

    def logs(self, partition: str, file_id: str, instant: str) -> list[LogFileName]:
        """Log files of a file group's slice, in log order."""
        self(partition)
        return self._logs[partition].get((file_id, instant), [])

    def bases(self, partition: str, file_id: str, instant: str) -> list[str]:
        """Base files (of the table's format) a file group has at an instant."""
        self(partition)
        return sorted(self._bases[partition].get((file_id, instant), []))


def classify(
    table: HudiTable, plan: CompactionPlan, op: CompactionOperation, instant: str, listing: Listing
) -> tuple[list[tuple[str, str]], list[str]]:
    """The operation's files in slice `instant`: (operation, name) of those the compaction wrote, and the names
    of the log files writers appended there, in log order.

    A name the plan reserves is the compaction's only when its content says so: a symlink (writers never make
    one), a carry log whose blocks are all of the compaction's instant, a copy holding its target's bytes. Once
    the compaction committed, writers no longer avoid reserved names it did not use (a carry log it had nothing
    to put in), and a writer's log file there is appended data, never to be deleted."""
    partition = op.partition_path or ""
    directory = posixpath.join(table.base_path, partition) if partition else table.base_path
    files = listing(partition)
    owned = [("delete_base_file", name) for name in listing.bases(partition, op.file_id, instant)]
    carry = carry_log_name(op.file_id, instant) if has_carry_log(plan) else None
    targets = {s.symlink: s.target for s in op.symlink_operations}
    appended = []
    for log in listing.logs(partition, op.file_id, instant):
        name = log.name
        path = posixpath.join(directory, name)
        if files[name].link_target is not None and name in targets:
            owned.append(("delete_link", name))
        elif name == carry and _blocks_all_of(table, path, instant):
            owned.append(("delete_carry_log", name))
        elif name in targets and is_copy_of(table, path, posixpath.join(directory, targets[name])):
            owned.append(("delete_copy", name))
        else:
            appended.append(name)
    if table.config.version >= 8:  # writes name their files by their own instants and complete into slice C
        appended += _written_into_slice(table, partition, op.file_id, instant)
    return owned, appended


def _written_into_slice(table: HudiTable, partition: str, file_id: str, instant: str) -> list[str]:
    """Versions 8 and 9: the log files writers completed into slice `instant` of a file group, in log order."""
    fg = table.file_group(partition, file_id)
    if fg is None or instant not in fg.slices:
        return []
    return [lf.name for lf in fg.slices[instant].sorted_logs() if lf.parsed.instant != instant]


def _blocks_all_of(table: HudiTable, path: str, instant: str) -> bool:
    blocks = read_blocks(table.storage, path)
    return bool(blocks) and all(b.instant_time == instant for b in blocks)


def is_copy_of(table: HudiTable, path: str, target: str) -> bool:
    """Whether the regular file at `path` is a copy of `target`: the same bytes, or (a damaged copy) blocks of
    no instant the target's blocks do not have. A file with other blocks holds a writer's records."""
    storage = table.storage
    if not storage.exists(target):
        return False
    if storage.size(path) == storage.size(target) and storage.read_bytes(path) == storage.read_bytes(target):
        return True
    own = {i for b in read_blocks(storage, path) if (i := b.instant_time) is not None}  # corrupt blocks: none
    return own <= {b.instant_time for b in read_blocks(storage, target)}


def moves_into(listing: Listing, partition: str, file_id: str, into: str, logs: Sequence[str]) -> list[Move]:
    """Moves of `logs` (log order) into slice `into` after its log files: each version gets the next free one
    (a version's files keep their write tokens and suffixes, so their order is kept too)."""
    next_version = max((p.version for p in listing.logs(partition, file_id, into)), default=0)
    versions: dict[int, int] = {}
    moves = []
    for name in logs:
        p = LogFileName.parse(name)
        if p.version not in versions:
            next_version += 1
            versions[p.version] = next_version
        target = LogFileName(p.file_id, into, versions[p.version], p.write_token, p.extension, p.cdc).name
        moves.append(Move(partition, name, target))
    return moves


@dataclass(frozen=True)
class PlanBreaker:
    """A log file that keeps a pending compaction from keeping merge order (see `plan_breakers`)."""

    path: str  # relative to the base path
    joined_compacted_slice: bool  # True: in the slice the plan compacts; False: sorts before the plan's links
    instant: str

    def describe(self) -> str:
        if self.joined_compacted_slice:
            return f"{self.path} joined the slice compaction {self.instant} compacts after it was planned"
        return f"{self.path} sorts before the links of compaction {self.instant}"


def plan_breakers(table: HudiTable, plan: CompactionPlan, instant: str) -> list[PlanBreaker]:
    """Log files that keep pending compaction `instant` from keeping merge order.

    Two kinds, both written by writers that did not know the plan (ours detect the conflict at commit and roll
    back, `write.conflicts`; Java or Flink writers without a shared lock do not): a log file in a slice the plan
    compacts that the plan neither merges nor links (the compaction would drop it from the file group), and a
    log file in the plan's slice that sorts at or before a name the plan reserves (its carry log and links come
    from older writes, and readers would merge them after it). Taking the plan back moves both into the slice the
    plan compacted, after its log files, where they merge in the order they were written."""
    if table.config.version >= 8:
        return _plan_breakers_by_completion(table, plan, instant)
    listing = Listing(table)
    found = []
    for op in plan.operations:
        partition = op.partition_path or ""
        # the plan merges a prefix of the slice's log files and links the rest (a link there may show a file of an
        # older slice, so names are not compared): a log file past that many joined the slice after the plan
        planned = len(op.delta_file_paths) + len(op.symlink_operations)
        for log in listing.logs(partition, op.file_id, op.base_instant_time or "")[planned:]:
            found.append(PlanBreaker(rel(partition, log.name), True, instant))
        reserved = [LogFileName.parse(n).sort_key() for n in reserved_log_files(plan, op, instant)]
        last = max(reserved, default=None)
        _, appended = classify(table, plan, op, instant, listing)
        for name in appended:
            if last is not None and LogFileName.parse(name).sort_key() <= last:
                found.append(PlanBreaker(rel(partition, name), False, instant))
    return found


def _plan_breakers_by_completion(table: HudiTable, plan: CompactionPlan, instant: str) -> list[PlanBreaker]:
    """`plan_breakers` on versions 8 and 9, where a log file belongs to the slice its write completed in (the file
    system view says which): a log file of a compacted slice the plan does not know, and a log file of the plan's
    slice, not one the plan reserves, that sorts at or before a reserved name (a write requested before the
    compaction that completed after it was planned)."""
    found = []
    for op in plan.operations:
        partition = op.partition_path or ""
        fg = table.file_group(partition, op.file_id)
        if fg is None:
            continue
        # as on version 6: the plan merges a prefix of the slice's log files and links the rest (a link there may
        # show a file of an older slice, so names are not compared); a log file past that many joined it since
        planned = len(op.delta_file_paths) + len(op.symlink_operations)
        compacted = fg.slices.get(op.base_instant_time or "")
        for lf in compacted.sorted_logs()[planned:] if compacted is not None else []:
            found.append(PlanBreaker(rel(partition, lf.name), True, instant))
        reserved = reserved_log_files(plan, op, instant)
        own = fg.slices.get(instant)
        if not reserved or own is None:
            continue
        last = max(LogFileName.parse(n).sort_key() for n in reserved)
        for lf in own.sorted_logs():
            if lf.name not in reserved and lf.parsed.sort_key() <= last:
                found.append(PlanBreaker(rel(partition, lf.name), False, instant))
    return found


def appended_moves(table: HudiTable, plan: CompactionPlan, instant: str, listing: Listing) -> list[Move]:
    """Every appended log file of the plan's slices, moved back into the slice its operation compacted. None on
    versions 8 and 9: there a log file belongs to the slice its write completed in, so once the plan is gone the
    files written into its slice belong to the slice before it as they are (docs/hudi-1x.md section 4)."""
    if table.config.version >= 8:
        return []
    moves = []
    for op in plan.operations:
        partition = op.partition_path or ""
        _, logs = classify(table, plan, op, instant, listing)
        moves.extend(moves_into(listing, partition, op.file_id, op.base_instant_time, logs))
    return moves


def owned_files(table: HudiTable, plan: CompactionPlan, instant: str, listing: Listing) -> list[tuple[str, str]]:
    """(operation, path) of the files the compaction wrote that exist: base files, carry logs, links, copies."""
    found = []
    for op in plan.operations:
        partition = op.partition_path or ""
        owned, _ = classify(table, plan, op, instant, listing)
        found += [(operation, rel(partition, name)) for operation, name in owned]
    return found


def instant_path(table: HudiTable, instant: Instant) -> str:
    """An instant file's path relative to the base path (a layout-2 completed instant names its completion time)."""
    return posixpath.relpath(table.timeline.path_of(instant), table.base_path)


def journal_path(table: HudiTable, instant: str) -> str:
    return posixpath.join(markers_dir(table.meta_path, instant), JOURNAL)


def read_journal(table: HudiTable, instant: str) -> list[Move] | None:
    """The moves an interrupted run wrote down for slice `instant`, or None."""
    path = journal_path(table, instant)
    if not table.storage.exists(path):
        return None
    try:
        data = json.loads(table.storage.read_bytes(path))
        return [Move(m["partition"], m["source"], m["target"]) for m in data["moves"]]
    except (ValueError, KeyError, TypeError) as e:
        raise HudiMetaError(f"unreadable move journal {path}: {e}") from e


@dataclass(frozen=True)
class UndoSteps:
    """What taking compaction `instant` back does now, worked out from the files as they are."""

    instant: str
    commit_file: str | None  # the completed commit (rolling back a completed compaction): deleted first
    deletes: tuple[tuple[str, str], ...]  # (operation, path) of the files the compaction wrote
    moves: tuple[Move, ...]
    journaled: bool  # the moves come from the journal of an interrupted run
    markers: tuple[str, ...]
    plan_files: tuple[str, ...]  # the inflight and requested files, deleted last (in that order)

    def actions(self) -> list[FileAction]:
        """The steps as not-done actions, in the order they run (a dry run's report)."""
        out = [FileAction("delete_instant", self.commit_file, False)] if self.commit_file else []
        out += [FileAction(op, path, False) for op, path in self.deletes]
        out += [
            FileAction("move_log_file", rel(m.partition, m.source), False, None, rel(m.partition, m.target))
            for m in self.moves
        ]
        out += [FileAction("delete_marker", path, False) for path in self.markers]
        out += [FileAction("delete_instant", path, False) for path in self.plan_files]
        return out


def plan_undo(table: HudiTable, plan: CompactionPlan | None, instant: str) -> UndoSteps:
    """The steps that take compaction `instant` back (`plan` None: its plan is already gone)."""
    storage = table.storage
    listing = Listing(table)
    done = table.timeline.instant(instant)
    completed = done if done is not None and done.is_completed else Instant(instant, Action.COMMIT, State.COMPLETED)
    commit_file = instant_path(table, completed)
    has_commit = table.timeline.is_compaction(instant) and storage.exists(posixpath.join(table.base_path, commit_file))
    journal = read_journal(table, instant)
    if journal is not None:
        moves = [m for m in journal if storage.exists(_abs(table, m.partition, m.source))]
    else:
        moves = appended_moves(table, plan, instant, listing) if plan is not None else []
    markers = [
        posixpath.relpath(posixpath.join(markers_dir(table.meta_path, instant), m.path), table.base_path)
        for m in list_markers(storage, table.meta_path, instant)
    ]
    plan_files = [
        instant_path(table, i)
        for i in (
            Instant(instant, Action.COMPACTION, State.INFLIGHT),
            Instant(instant, Action.COMPACTION, State.REQUESTED),
        )
        if storage.exists(table.timeline.path_of(i))
    ]
    return UndoSteps(
        instant=instant,
        commit_file=commit_file if has_commit else None,
        deletes=tuple(owned_files(table, plan, instant, listing)) if plan is not None else (),
        moves=tuple(moves),
        journaled=journal is not None,
        markers=tuple(markers),
        plan_files=tuple(plan_files),
    )


def _abs(table: HudiTable, partition: str, name: str) -> str:
    return posixpath.join(table.base_path, partition, name) if partition else posixpath.join(table.base_path, name)


def _delete(table: HudiTable, operation: str, path: str, actions: list[FileAction]) -> None:
    try:
        table.storage.delete(posixpath.join(table.base_path, path))
    except OSError as e:
        actions.append(FileAction(operation, path, False, str(e)))
        raise
    actions.append(FileAction(operation, path, True))
    step_done(operation)


def _move(table: HudiTable, m: Move, actions: list[FileAction]) -> None:
    """Copy then delete; a target that exists is a complete copy (created atomically) of this source."""
    storage = table.storage
    source, target = _abs(table, m.partition, m.source), _abs(table, m.partition, m.target)
    report = (rel(m.partition, m.source), rel(m.partition, m.target))
    try:
        if storage.exists(source):
            if not storage.exists(target):
                storage.copy_atomic(source, target)
                step_done("copy_log_file")
            storage.delete(source)
        elif not storage.exists(target):  # gone before it could be moved: say so, and go on with the rest
            actions.append(FileAction("move_log_file", report[0], False, "the log file is gone", report[1]))
            return
    except OSError as e:
        actions.append(FileAction("move_log_file", report[0], False, str(e), report[1]))
        raise
    actions.append(FileAction("move_log_file", report[0], True, None, report[1]))
    step_done("move_log_file")


def run_moves(
    table: HudiTable, journal_instant: str, moves: Sequence[Move], journaled: bool, actions: list[FileAction]
) -> None:
    """Move log files, written down first in the journal of slice `journal_instant` (unless they come from it)."""
    path = journal_path(table, journal_instant)
    if not journaled:
        content = json.dumps({"instant": journal_instant, "moves": [m.to_json() for m in moves]}, indent=1)
        table.storage.create_atomic(path, content.encode())
        step_done("write_journal")
    for m in moves:
        _move(table, m, actions)
    table.storage.delete(path)
    step_done("delete_journal")


def execute_undo(
    table: HudiTable,
    plan: CompactionPlan | None,
    steps: UndoSteps,
    actions: list[FileAction],
    before_plan_delete: Callable[[], None] | None = None,
) -> None:
    """Run the steps: the completed commit, the compaction's files, the moves (until no appended log file is
    left in its slices), the markers, then the plan's instant files. `before_plan_delete` runs right before the
    plan goes (a last check that no writer started meanwhile)."""
    if steps.commit_file:
        _delete(table, "delete_instant", steps.commit_file, actions)
    for operation, path in steps.deletes:
        _delete(table, operation, path, actions)
    moves, journaled = list(steps.moves), steps.journaled
    for _ in range(100):  # each round moves what writers appended; a writer that keeps appending is refused
        if moves or journaled:
            run_moves(table, steps.instant, moves, journaled, actions)
        if plan is None:
            break
        moves, journaled = appended_moves(table, plan, steps.instant, Listing(table)), False
        if not moves:
            break
    else:
        raise HudiMetaError(f"log files keep appearing in the slices of compaction {steps.instant}: stop the writers")
    for path in steps.markers:
        _delete(table, "delete_marker", path, actions)
    if before_plan_delete is not None:
        before_plan_delete()
    for path in steps.plan_files:
        _delete(table, "delete_instant", path, actions)
    table.reload()


# ---- checks before taking a compaction back ------------------------------------------------------------------


def refuse_pending_writes(table: HudiTable, what: str) -> None:
    """Refuse while a write is pending: its log files could land in the slices being moved (Java requires
    writers to be stopped for the same reason)."""
    tl = table.timeline
    pending = tl.pending_writes()
    if pending:
        first = pending[0]
        raise HudiMetaError(
            f"{first.action} {first.requested_time} is still {first.state.value} on {table.base_path}: stop the "
            f"writers before {what} (a failed write: roll back {first.requested_time} first)"
        )


def check_rollback_of_completed(table: HudiTable, plan: CompactionPlan, instant: str) -> None:
    """Refuse to roll back a completed compaction when that would lose records or break readers: a later
    compaction or clustering built on its slices, the files of the slices it compacted are gone (cleaned), or a
    later write appended to its slices (that write's stats name the compaction's base file and log file names:
    moving them back leaves metadata that stock readers such as hudi-rs follow to files that are gone)."""
    tl = table.timeline
    groups = {(op.partition_path or "", op.file_id) for op in plan.operations}
    for later in sorted(tl.compaction_instants):
        if later <= instant:
            continue
        try:
            other = table.compaction_plan(later)
        except (HudiMetaError, OSError):
            continue
        hit = next((op.file_id for op in other.operations if (op.partition_path or "", op.file_id) in groups), None)
        if hit is not None:
            raise HudiMetaError(
                f"compaction {later} compacted file group {hit} after compaction {instant}: take {later} back first"
            )
    replaced = groups & tl.replaced_file_ids()
    if replaced:
        raise HudiMetaError(f"file group {sorted(replaced)[0][1]} of compaction {instant} was replaced since")
    listing = Listing(table)
    for op in plan.operations:
        partition = op.partition_path or ""
        files = listing(partition)
        needed = [op.data_file_path] if op.data_file_path else []
        needed += [*op.delta_file_paths, *(s.target for s in op.symlink_operations)]
        missing = [n for n in needed if n not in files]
        if missing:
            raise HudiMetaError(
                f"{rel(partition, missing[0])} of slice {op.base_instant_time} is gone (cleaned?): rolling back "
                f"compaction {instant} would lose its records"
            )
    for op in plan.operations:
        _, appended = classify(table, plan, op, instant, listing)
        if appended:
            raise HudiMetaError(
                f"writes after compaction {instant} appended to its slice of file group {op.file_id} "
                f"({rel(op.partition_path or '', appended[0])}): a completed compaction is rolled back only before "
                "any later write to its file groups (their write stats name its files; Java requires rolling back "
                "the later commits first)"
            )
