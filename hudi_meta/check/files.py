"""File-level integrity checks of one table: what its data files say against what its timeline says.

`check_files` lists the partitions once, reads the timeline facts once (`timeline_facts`), and runs pure
functions over both; the only other IO is comparing copies with their targets, reading the block headers of
version-6 log files that no write stat names (`orphans` leaves those undecided), and the age of orphans.

What it finds (docs/table-services.md section 4), one `Finding` per file:

- `dangling-link`: a symlink whose target is gone (a cleaner that does not know links deleted it);
- `link-to-link`: a symlink whose target is itself a symlink (links always point at the physical file);
- `missing-link`: a link a completed compaction made is gone while its slice's base file is still there;
- `copy-differs`: a copy (copy mode: a regular file named as a link) whose bytes differ from its target;
- `orphan`: a data file that no committed instant wrote and no pending instant is writing, with its age;
- `plan-input-missing`: a base or log file a pending compaction plan reads is gone;
- `uncommitted-link`: a link of a compaction that has not completed (fine while it runs);
- `plan-slice-changed`: a log file in a slice a pending compaction compacts that its plan does not know (a writer
  that did not know the plan wrote it; `compaction run` takes the plan back, nothing is lost);
- `plan-order-broken`: a log file in a pending compaction's slice that sorts before the plan's carry log or
  links (the same kind of writer; the same remedy);
- `unsupported-freshness`: the last completed event-time compaction published a threshold, and one of its
  base files is gone with no newer base file in its place: the RO view no longer holds what it promised.

"Committed" is the one rule of `fs_view.is_committed` (completed on the active timeline, or older than its
first instant: archived). Files of archived instants are accepted without write stats: the stats are gone.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hudi_meta.compaction.undo import plan_breakers
from hudi_meta.errors import CorruptFileError, HudiMetaError
from hudi_meta.file_group.fs_view import is_committed
from hudi_meta.format.file_names import BaseFileName, LogFileName, slice_of_file
from hudi_meta.format.links import SYMLINK_OPERATIONS_KEY, THRESHOLD_KEY, carry_log_name, has_carry_log
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.format.table_service_metadata import CompactionPlan, RollbackMetadata
from hudi_meta.storage.base import Storage
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import format_duration_ms, format_time_ms
from hudi_meta.table.times import now_ms as current_ms
from hudi_meta.timeline.instant import WRITE_ACTIONS, Action

DANGLING_LINK = "dangling-link"
LINK_TO_LINK = "link-to-link"
MISSING_LINK = "missing-link"
COPY_DIFFERS = "copy-differs"
ORPHAN = "orphan"
PLAN_INPUT_MISSING = "plan-input-missing"
UNCOMMITTED_LINK = "uncommitted-link"
UNSUPPORTED_FRESHNESS = "unsupported-freshness"
PLAN_SLICE_CHANGED = "plan-slice-changed"
PLAN_ORDER_BROKEN = "plan-order-broken"
INDEX_DRIFT = "index-drift"  # found by `hudi_meta.check.index_drift` (the store against a fresh index of the files)
# found by `hudi_meta.check.metadata_listing` (the metadata table's `files` partition against storage)
MDT_UNREADABLE = "mdt-unreadable"
MDT_MISSING_FILE = "mdt-missing-file"
MDT_EXTRA_FILE = "mdt-extra-file"
MDT_SIZE_DIFFERS = "mdt-size-differs"
# found by `hudi_meta.check.metadata_indexes` (the metadata table's indexes against the data table)
MDT_RECORD_INDEX = "mdt-record-index"
MDT_SECONDARY_INDEX = "mdt-secondary-index"
MDT_COLUMN_STATS = "mdt-column-stats"
MDT_PARTITION_STATS = "mdt-partition-stats"
# found by `hudi_meta.check.metadata_structure` (`hudi_meta.metadata.integrity`: what a writer would refuse)
MDT_DUPLICATE_BASE_FILE = "mdt-duplicate-base-file"
MDT_LOST_BASE_FILE = "mdt-lost-base-file"
KINDS = (
    DANGLING_LINK,
    LINK_TO_LINK,
    MISSING_LINK,
    COPY_DIFFERS,
    ORPHAN,
    PLAN_INPUT_MISSING,
    UNCOMMITTED_LINK,
    UNSUPPORTED_FRESHNESS,
    PLAN_SLICE_CHANGED,
    PLAN_ORDER_BROKEN,
    INDEX_DRIFT,
    MDT_UNREADABLE,
    MDT_DUPLICATE_BASE_FILE,
    MDT_LOST_BASE_FILE,
    MDT_MISSING_FILE,
    MDT_EXTRA_FILE,
    MDT_SIZE_DIFFERS,
    MDT_RECORD_INDEX,
    MDT_SECONDARY_INDEX,
    MDT_COLUMN_STATS,
    MDT_PARTITION_STATS,
)

# `<name>.<32 hex>.tmp`, with a leading dot on local storage: an atomic create that never finished
_TEMP_RE = re.compile(r"^\.?(?P<name>.+)\.[0-9a-f]{32}\.tmp$")
_COMPARE_CHUNK = 1 << 20


@dataclass(frozen=True)
class Finding:
    """One problem: its kind, the file it concerns (relative to the base path, or an index key for drift), what
    is wrong and what to do. `instant` names the instant involved, `target` a link's target, `age_ms` how long
    ago an orphan was last written."""

    kind: str
    path: str
    detail: str
    instant: str | None = None
    target: str | None = None
    age_ms: int | None = None

    def to_row(self) -> dict[str, Any]:
        """The JSON object `check --json` prints (snake_case keys, every key always present)."""
        return {
            "kind": self.kind,
            "path": self.path,
            "detail": self.detail,
            "instant": self.instant,
            "target": self.target,
            "age_ms": self.age_ms,
        }

    def __str__(self) -> str:
        """The text `check` prints: kind, path, detail."""
        return f"{self.kind}  {self.path}  {self.detail}"


@dataclass(frozen=True)
class ListedFile:
    """A file in a partition folder. `link_target` is set for symlinks: the target's path relative to the base
    path (it may lie outside the listed folders)."""

    partition: str
    name: str
    size: int
    link_target: str | None = None

    @property
    def path(self) -> str:
        return _rel(self.partition, self.name)

    @property
    def is_symlink(self) -> bool:
        return self.link_target is not None


@dataclass(frozen=True)
class LinkOp:
    """One link a compaction makes: `.F_C.log.i_tok` (symlink or copy) showing `target` in the same partition."""

    partition: str
    link: str
    target: str

    @property
    def path(self) -> str:
        return _rel(self.partition, self.link)

    @property
    def target_path(self) -> str:
        return _rel(self.partition, self.target)


@dataclass(frozen=True)
class CompactionFacts:
    """What one compaction instant made or will make. Pending: from its plan (`inputs` are the files the plan
    reads). Completed: from its commit (links from extraMetadata, base files from the write stats)."""

    instant: str
    state: str  # requested, inflight or completed
    links: tuple[LinkOp, ...] = ()
    carry_logs: frozenset[str] = frozenset()  # relative paths of the carry logs its plan reserves
    inputs: tuple[tuple[str, str], ...] = ()  # (relative path, file id) the pending plan reads
    base_files: tuple[tuple[str, str, str], ...] = ()  # (partition, file id, relative path) it wrote
    threshold_ms: int | None = None  # the freshness a completed event-time compaction published

    @property
    def completed(self) -> bool:
        return self.state == "completed"


@dataclass(frozen=True)
class TimelineFacts:
    """The timeline as plain data: which instants are committed or pending, which files their metadata names."""

    table_version: int
    base_extension: str  # `.parquet`, `.lance`, ...: the table's base file format
    completed: frozenset[str]
    pending: Mapping[str, str]  # requested time -> "<action> <state>" of instants not completed
    first_active_instant: str | None
    written: Mapping[str, frozenset[str]]  # relative path -> completed instants whose write stats name it
    stats_of: frozenset[str]  # completed instants whose metadata lists write stats (absent: not judged)
    rolled_back: Mapping[str, str]  # instant -> the completed rollback that rolled it back
    rollback_files: frozenset[str]  # relative paths completed rollbacks appended command blocks to
    compactions: tuple[CompactionFacts, ...] = ()  # oldest first
    replaced: frozenset[tuple[str, str]] = frozenset()

    def is_committed(self, instant: str) -> bool:
        return is_committed(instant, self.completed, self.first_active_instant)

    def is_archived(self, instant: str) -> bool:
        return instant not in self.completed and self.is_committed(instant)

    def compaction(self, instant: str) -> CompactionFacts | None:
        return next((c for c in self.compactions if c.instant == instant), None)


def _rel(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def _split(path: str) -> tuple[str, str]:
    partition, _, name = path.rpartition("/")
    return partition, name


# ---- IO: listing and timeline facts -------------------------------------------------------------------------


def list_partition_files(table: HudiTable) -> list[ListedFile]:
    """Every file in the table's partition folders (folders starting with a dot, `.hoodie` among them, are not
    partitions), symlinks with their targets relative to the base path."""
    out: list[ListedFile] = []

    def walk(path: str, rel: str) -> None:
        for info in table.storage.list_dir(path):
            if info.is_dir:
                if not info.name.startswith("."):
                    walk(info.path, _rel(rel, info.name))
                continue
            target = posixpath.relpath(info.link_target, table.base_path) if info.link_target else None
            out.append(ListedFile(rel, info.name, info.size, target))

    walk(table.base_path, "")
    return out


def timeline_facts(table: HudiTable) -> TimelineFacts:
    """Read what the checks need from the active timeline: instant states, the files each completed write and
    rollback names, and every compaction's plan or commit."""
    tl = table.timeline
    written: dict[str, set[str]] = {}
    stats_of: set[str] = set()
    rolled_back: dict[str, str] = {}
    rollback_files: set[str] = set()
    for i in tl.completed():
        if i.action in WRITE_ACTIONS:
            md = tl.commit_metadata(i)
            stats = md.write_stats()
            if stats:
                stats_of.add(i.requested_time)
            for s in stats:
                partition = s.partition_path or _split(s.path)[0]
                names = [s.path] if s.path else []
                names += [_rel(partition, n) for n in s.log_files or ()]
                names += [_rel(partition, posixpath.basename(p)) for p in s.cdc_stats or {}]
                for path in names:
                    written.setdefault(path, set()).add(i.requested_time)
        elif i.action == Action.ROLLBACK:
            try:
                rb = RollbackMetadata.from_bytes(tl.read_bytes(i))
            except (HudiMetaError, ValueError, OSError):
                continue  # an unreadable rollback explains nothing; its files are judged by their blocks
            for target in rb.commits_rollback:
                rolled_back[target] = i.requested_time
            for part, meta in rb.partition_metadata.items():
                for key in meta.rollback_log_files:
                    rollback_files.add(_rel(meta.partition_path or part, posixpath.basename(key)))
    compactions = [_compaction_facts(table, time) for time in sorted(tl.compaction_instants)]
    return TimelineFacts(
        table_version=table.config.version,
        base_extension="." + table.config.base_file_format.lower(),
        completed=frozenset(i.requested_time for i in tl.completed()),
        pending={i.requested_time: f"{i.action} {i.state.value}" for i in tl.pending()},
        first_active_instant=tl.first_instant_time,
        written={k: frozenset(v) for k, v in written.items()},
        stats_of=frozenset(stats_of),
        rolled_back=rolled_back,
        rollback_files=frozenset(rollback_files),
        compactions=tuple(c for c in compactions if c is not None),
        replaced=frozenset(tl.replaced_file_ids()),
    )


def _compaction_facts(table: HudiTable, time: str) -> CompactionFacts | None:
    tl = table.timeline
    instant = tl.instant(time)
    if instant is None:
        return None
    plan: CompactionPlan | None = None
    try:
        plan = table.compaction_plan(time)
    except (HudiMetaError, ValueError, OSError):
        plan = None  # archived plan file, or unreadable: the commit still says what the compaction made
    carry = frozenset(
        _rel(op.partition_path or "", carry_log_name(op.file_id, time))
        for op in (plan.operations if plan is not None and has_carry_log(plan) else ())
    )
    if not instant.is_completed:
        ops = plan.operations if plan is not None else ()
        links = tuple(LinkOp(op.partition_path or "", s.symlink, s.target) for op in ops for s in op.symlink_operations)
        inputs = []
        for op in ops:
            partition = op.partition_path or ""
            names = [op.data_file_path] if op.data_file_path else []
            names += [*op.delta_file_paths, *(s.target for s in op.symlink_operations)]
            inputs += [(_rel(partition, posixpath.basename(n)), op.file_id) for n in names]
        return CompactionFacts(time, instant.state.value, links, carry, tuple(inputs))
    md = tl.commit_metadata(instant)
    links = tuple(_commit_links(md.extra_metadata.get(SYMLINK_OPERATIONS_KEY)))
    bases = tuple((s.partition_path or _split(s.path)[0], s.file_id, s.path) for s in md.write_stats() if s.path)
    threshold = md.extra_metadata.get(THRESHOLD_KEY)
    threshold_ms = int(threshold) if threshold and threshold.lstrip("-").isdigit() else None
    return CompactionFacts(time, "completed", links, carry, (), bases, threshold_ms)


def _commit_links(text: str | None) -> Iterator[LinkOp]:
    if not text:
        return
    try:
        ops = json.loads(text)
    except ValueError as e:
        raise CorruptFileError(f"{SYMLINK_OPERATIONS_KEY} in a compaction commit is not JSON: {e}") from e
    for op in ops:
        yield LinkOp(op.get("partition_path") or "", op["symlink"], op["target"])


# ---- pure checks ----------------------------------------------------------------------------------------------


def _compaction_of_link(facts: TimelineFacts) -> dict[str, tuple[CompactionFacts, LinkOp]]:
    return {op.path: (c, op) for c in facts.compactions for op in c.links}


def link_findings(
    files: Sequence[ListedFile], facts: TimelineFacts, outside: frozenset[str] = frozenset()
) -> list[Finding]:
    """Symlinks whose target is gone or is a link itself, and links of completed compactions that are gone
    while the slice they belong to is still there. `outside`: targets outside the listed folders that exist."""
    by_path = {f.path: f for f in files}
    made_by = _compaction_of_link(facts)
    out: list[Finding] = []
    for f in files:
        if f.link_target is None:
            continue
        made = made_by.get(f.path)
        of = f" (link of compaction {made[0].instant})" if made else ""
        target = by_path.get(f.link_target)
        if target is None and f.link_target in outside:
            continue
        if target is None:
            out.append(
                Finding(
                    DANGLING_LINK,
                    f.path,
                    f"target {f.link_target} is gone{of}: the snapshot view lost its records (deleted by a "
                    "cleaner that does not know links?)",
                    made[0].instant if made else None,
                    f.link_target,
                )
            )
            continue
        if target.link_target is not None:
            end = _resolve(target, by_path)
            gone = "" if end is not None else ", which dangles"
            out.append(
                Finding(
                    LINK_TO_LINK if end is not None else DANGLING_LINK,
                    f.path,
                    f"target {f.link_target} is itself a link{gone}{of}: links point at the physical file",
                    made[0].instant if made else None,
                    f.link_target,
                )
            )
    present_bases = {f.path for f in files}
    for c in facts.compactions:
        if not c.completed:
            continue
        base_of = {(p, fid): path for p, fid, path in c.base_files}
        for op in c.links:
            if op.path in by_path:
                continue
            found = slice_of_file(op.link)
            file_id = found[0] if found else None
            base = base_of.get((op.partition, file_id)) if file_id else None
            if base is not None and base in present_bases:  # the slice is live: its link must be there
                out.append(
                    Finding(
                        MISSING_LINK,
                        op.path,
                        f"compaction {c.instant} made this link of {op.target} and its slice (base file {base}) "
                        "is still there: the snapshot view lost the link's records",
                        c.instant,
                        op.target_path,
                    )
                )
    return out


def _resolve(f: ListedFile, by_path: Mapping[str, ListedFile]) -> ListedFile | None:
    seen: set[str] = set()
    current: ListedFile | None = f
    while current is not None and current.link_target is not None and current.path not in seen:
        seen.add(current.path)
        current = by_path.get(current.link_target)
    return current if current is not None and current.link_target is None else None


def copies_to_compare(files: Sequence[ListedFile], facts: TimelineFacts) -> list[tuple[ListedFile, ListedFile, str]]:
    """(copy, physical target, compaction instant) for every link that is a regular file and whose target is
    still there: their bytes must be equal."""
    by_path = {f.path: f for f in files}
    out = []
    for path, (c, op) in sorted(_compaction_of_link(facts).items()):
        link = by_path.get(path)
        target = by_path.get(op.target_path)
        if link is None or link.is_symlink or target is None:
            continue
        physical = _resolve(target, by_path)
        if physical is not None:
            out.append((link, physical, c.instant))
    return out


def plan_findings(files: Sequence[ListedFile], facts: TimelineFacts) -> list[Finding]:
    """Pending compactions: inputs that are gone, and links already on disk."""
    by_path = {f.path: f for f in files}
    present = {f.path for f in files if _resolve(f, by_path) is not None}
    out: list[Finding] = []
    for c in facts.compactions:
        if c.completed:
            continue
        for path, file_id in c.inputs:
            if path not in present:
                out.append(
                    Finding(
                        PLAN_INPUT_MISSING,
                        path,
                        f"pending compaction {c.instant} ({c.state}) reads this file of file group {file_id} and "
                        f"it is gone: the plan cannot run (`compaction unschedule {c.instant}`)",
                        c.instant,
                    )
                )
        for op in c.links:
            if op.path in by_path:
                out.append(
                    Finding(
                        UNCOMMITTED_LINK,
                        op.path,
                        f"link of compaction {c.instant}, which is {c.state}, not completed: fine while it runs; "
                        f"else `compaction run` finishes it or `compaction unschedule {c.instant}` takes it back",
                        c.instant,
                        op.target_path,
                    )
                )
    return out


def freshness_findings(files: Sequence[ListedFile], facts: TimelineFacts) -> list[Finding]:
    """The last completed event-time compaction's threshold, when one of its base files is gone and no newer
    committed base file of that file group took its place."""
    last = next((c for c in reversed(facts.compactions) if c.completed and c.threshold_ms is not None), None)
    if last is None or last.threshold_ms is None:
        return []
    listed = {f.path for f in files}
    newest: dict[tuple[str, str], str] = {}
    for f in files:
        base = BaseFileName.try_parse(f.name)
        if base is not None and base.extension == facts.base_extension and facts.is_committed(base.instant):
            key = (f.partition, base.file_id)
            newest[key] = max(newest.get(key, ""), base.instant)
    out = []
    for partition, file_id, path in last.base_files:
        if (
            path in listed
            or (partition, file_id) in facts.replaced
            or newest.get((partition, file_id), "") > last.instant
        ):
            continue
        t = format_time_ms(last.threshold_ms)
        out.append(
            Finding(
                UNSUPPORTED_FRESHNESS,
                path,
                f"compaction {last.instant} published freshness {t} and this base file of it is gone with no newer "
                f"base file of file group {file_id}: the RO view no longer holds every record before {t}",
                last.instant,
            )
        )
    return out


@dataclass
class OrphanScan:
    """`orphans`' answer: the orphans found, and the version-6 log files only their block headers can decide."""

    found: list[Finding] = field(default_factory=list)
    undecided: list[ListedFile] = field(default_factory=list)


def orphans(files: Sequence[ListedFile], facts: TimelineFacts) -> OrphanScan:
    """Data files that no committed instant wrote and no pending instant is writing (ages are added later).

    A file is accounted for when a completed write or rollback names it, or a compaction made it (a link or a
    carry log; a pending one's links are `uncommitted-link`s instead), or the instant in its name is pending
    or archived. A base file (and a version 8+ log file, named by its deltacommit) whose instant completed
    but whose write stats leave it out is a failed attempt's file. A version-6 log file is named by its slice's
    base instant, not by the writes that appended to it: the ones no metadata names stay undecided, for
    `orphan_by_blocks`."""
    scan = OrphanScan()
    links = _compaction_of_link(facts)
    carry = {p for c in facts.compactions for p in c.carry_logs}
    for f in files:
        if f.path in facts.written or f.path in facts.rollback_files or f.path in carry or f.path in links:
            continue
        temp = _TEMP_RE.match(f.name)
        if temp is not None and _is_data_file(temp["name"], facts):
            scan.found.append(Finding(ORPHAN, f.path, f"temporary file of an interrupted write of {temp['name']}"))
            continue
        base = BaseFileName.try_parse(f.name)
        log = LogFileName.try_parse(f.name)
        if base is not None and base.extension == facts.base_extension:
            instant, what = base.instant, "base file"
        elif log is not None and log.extension == "log":
            instant, what = log.instant, "log file"
        else:
            continue  # not a data file (.hoodie_partition_metadata, .DS_Store, ...)
        reason = _unaccounted(f, instant, what, log is not None, facts)
        if reason is None:
            continue
        if reason == "":
            scan.undecided.append(f)
        else:
            scan.found.append(Finding(ORPHAN, f.path, reason, instant))
    return scan


def _is_data_file(name: str, facts: TimelineFacts) -> bool:
    base = BaseFileName.try_parse(name)
    return LogFileName.try_parse(name) is not None or (base is not None and base.extension == facts.base_extension)


def _unaccounted(f: ListedFile, instant: str, what: str, is_log: bool, facts: TimelineFacts) -> str | None:
    """Why the file is an orphan; None if its instant accounts for it; "" when only its blocks can tell."""
    if instant in facts.pending or facts.is_archived(instant):
        return None
    if f.is_symlink:
        c = facts.compaction(instant)
        if c is not None and c.completed:
            return f"a link compaction {instant} did not make (not in its {SYMLINK_OPERATIONS_KEY})"
        if c is None and instant in facts.completed:
            return f"a symlink, and {instant} is no compaction: nothing makes links there"
    if instant not in facts.completed:
        rollback = facts.rolled_back.get(instant)
        if rollback is not None:
            return f"{what} of instant {instant}, which rollback {rollback} rolled back"
        return f"{what} of instant {instant}, which is not on the timeline (rolled back or never committed)"
    if is_log and facts.table_version < 8:
        return ""  # named by its slice: the blocks say which writes appended to it
    if instant not in facts.stats_of:
        return None  # metadata without write stats: nothing to hold the file against
    return f"{what} of instant {instant} that its commit does not list: a failed attempt's file"


LogIdentity = tuple[str, str, str]  # partition, file id, write token: what a move into another slice keeps


def _log_identity(path: str) -> LogIdentity | None:
    partition, name = _split(path)
    log = LogFileName.try_parse(name)
    return None if log is None else (partition, log.file_id, log.write_token)


def moved_logs(facts: TimelineFacts, listed: Collection[str]) -> dict[LogIdentity, frozenset[str]]:
    """Log files that completed writes name but that are gone, by identity, with the instants that wrote them.
    `compaction unschedule` moves log files appended into a pending slice back into the previous slice under a
    new name, as Java's unschedule does, and leaves the write stats as they are: such a file is accounted for
    by the write that names its old name."""
    moved: dict[LogIdentity, set[str]] = {}
    for path, instants in facts.written.items():
        identity = _log_identity(path)
        if identity is not None and path not in listed:
            moved.setdefault(identity, set()).update(instants)
    return {k: frozenset(v) for k, v in moved.items()}


def orphan_by_blocks(
    f: ListedFile,
    block_instants: Sequence[str],
    facts: TimelineFacts,
    moved: Mapping[LogIdentity, frozenset[str]] | None = None,
) -> Finding | None:
    """A version-6 log file that no metadata names, judged by the instants of its blocks. It is accounted for
    when a block belongs to a pending instant, an archived one, or a completed instant without write stats (a
    rollback's command block), or to a write that names a log file of the same file group and write token that
    is gone (`moved_logs`); or when every block was rolled back by a completed rollback (Hudi keeps such a
    file until its slice is cleaned, readers skip its blocks). A block of a completed write whose stats do not
    name the file makes it an orphan: that write did not put it there (a copy, or a failed attempt)."""
    moved_by = (moved or {}).get(_log_identity(f.path) or ("", "", ""), frozenset())

    def accounted(i: str) -> bool:
        return (
            i in facts.pending
            or facts.is_archived(i)
            or (i in facts.completed and i not in facts.stats_of)
            or i in moved_by
        )

    if any(accounted(i) for i in block_instants):
        return None
    if block_instants and all(i in facts.rolled_back for i in block_instants):
        return None
    instants = sorted(set(block_instants))
    written = [i for i in instants if i in facts.stats_of]
    if not instants:
        detail = "log file without a readable block"
    elif written:
        detail = f"log file with blocks of {', '.join(written)}, whose write stats do not list it"
    else:
        detail = f"log file whose blocks are of instants not on the timeline ({', '.join(instants)})"
    return Finding(ORPHAN, f.path, detail, LogFileName.parse(f.name).instant)


# ---- IO around the pure checks ------------------------------------------------------------------------------


def same_bytes(storage: Storage, a: str, b: str) -> bool:
    """Whether two files hold the same bytes (read side by side in 1 MiB chunks)."""
    with storage.open_read(a) as fa, storage.open_read(b) as fb:
        while True:
            ca, cb = fa.read(_COMPARE_CHUNK), fb.read(_COMPARE_CHUNK)
            if ca != cb:
                return False
            if not ca:
                return True


def copy_findings(table: HudiTable, pairs: Iterable[tuple[ListedFile, ListedFile, str]]) -> list[Finding]:
    """Copies whose size or bytes differ from their targets."""
    out = []
    for link, target, instant in pairs:
        full = posixpath.join(table.base_path, link.path)
        if link.size != target.size:
            detail = (
                f"copy of {target.path} made by compaction {instant} has {link.size} bytes, its target {target.size}"
            )
        elif not same_bytes(table.storage, full, posixpath.join(table.base_path, target.path)):
            detail = f"copy of {target.path} made by compaction {instant} differs from its target (same size)"
        else:
            continue
        out.append(Finding(COPY_DIFFERS, link.path, detail + ": one of them was changed", instant, target.path))
    return out


def block_instants(storage: Storage, path: str) -> list[str]:
    """The instants of a log file's readable blocks (a command block's is its rollback's)."""
    return [b.instant_time for b in read_blocks(storage, path) if not b.is_corrupt and b.instant_time]


def with_age(finding: Finding, modified_ms: int, now_ms: int) -> Finding:
    """The finding with the file's age in `age_ms` and in its detail."""
    age = max(0, now_ms - modified_ms)
    return Finding(
        finding.kind,
        finding.path,
        f"{finding.detail}; last written {format_duration_ms(age)} ago ({format_time_ms(modified_ms)})",
        finding.instant,
        finding.target,
        age,
    )


def check_files(table: HudiTable, now_ms: int | None = None) -> list[Finding]:
    """Every file-level finding of `table`, sorted by kind and path."""
    now_ms = now_ms if now_ms is not None else current_ms()
    files = list_partition_files(table)
    facts = timeline_facts(table)
    listed = {f.path for f in files}
    outside = frozenset(
        f.link_target
        for f in files
        if f.link_target is not None
        and f.link_target not in listed
        and _exists(table.storage, posixpath.join(table.base_path, f.link_target))
    )
    breakers = breaker_findings(table, facts)
    foreign = {f.path for f in breakers}  # a writer's file at a pending plan's link name is no copy and no link
    findings = [
        f
        for f in link_findings(files, facts, outside)
        + copy_findings(table, copies_to_compare(files, facts))
        + plan_findings(files, facts)
        if f.path not in foreign
    ]
    findings += breakers
    findings += freshness_findings(files, facts)
    scan = orphans(files, facts)
    found = list(scan.found)
    moved = moved_logs(facts, listed)
    for f in scan.undecided:
        instants = block_instants(table.storage, posixpath.join(table.base_path, f.path))
        orphan = orphan_by_blocks(f, instants, facts, moved)
        if orphan is not None:
            found.append(orphan)
    for orphan in found:
        findings.append(_aged(table, orphan, now_ms))
    return sorted(findings, key=lambda f: (KINDS.index(f.kind), f.path))


def breaker_findings(table: HudiTable, facts: TimelineFacts) -> list[Finding]:
    """Log files written by writers that did not know a pending plan, which keep it from merging in order."""
    out = []
    for c in facts.compactions:
        if c.completed:
            continue
        try:
            plan = table.compaction_plan(c.instant)
        except (HudiMetaError, ValueError, OSError):
            continue  # an unreadable plan: `plan_findings` and `compaction validate` say what is wrong
        for b in plan_breakers(table, plan, c.instant):
            kind = PLAN_SLICE_CHANGED if b.joined_compacted_slice else PLAN_ORDER_BROKEN
            remedy = f"`compaction run` takes compaction {c.instant} back (nothing is lost); schedule again"
            out.append(
                Finding(kind, b.path, f"{b.describe()}: a writer that did not know the plan; {remedy}", c.instant)
            )
    return out


def _exists(storage: Storage, path: str) -> bool:
    """Whether `path` exists, following symlinks (a dangling symlink does not exist)."""
    try:
        storage.size(path)
    except OSError:
        return False
    return True


def _aged(table: HudiTable, finding: Finding, now_ms: int) -> Finding:
    try:
        modified = table.storage.modified_time_ms(posixpath.join(table.base_path, finding.path))
    except OSError:
        return finding  # gone since the listing
    return with_age(finding, modified, now_ms)
