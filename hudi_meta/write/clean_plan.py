"""Clean planning: which files of which file slices a clean deletes, and why (pure; no IO). On the write side
with the executor (`clean.py`): the data table's clean (`clean/run.py`) and the metadata table's
(`metadata/services.py`) both plan with it, so it sits below both.

Hudi's cleaner (`CleanPlanner`, `CleanerUtils.getEarliestCommitToRetain`) is the model for the three policies:

- `KEEP_LATEST_COMMITS` (`hoodie.clean.commits.retained`, 10): with more than N completed commits, the
  earliest commit to retain E is the N-th newest (never after the first pending commit or compaction); a
  slice older than E goes unless it is the newest slice before E (queries as of E still read it).
- `KEEP_LATEST_BY_HOURS` (`hoodie.clean.hours.retained`, 24): the same with E = the first commit at or
  after `now - H hours` (in the timeline's time zone).
- `KEEP_LATEST_FILE_VERSIONS` (`hoodie.clean.fileversions.retained`, 3): the N newest slices of each file
  group stay (one fewer besides the slice a pending compaction reads).

Whatever the policy, a slice stays when it is the latest committed slice of its file group, is not committed,
is read by a pending compaction or log compaction (its base instant at or after the operation's), belongs to
a file group in a pending clustering, holds data of an inflight instant, or holds a savepointed file. File
groups replaced by a completed replacecommit go whole (before E for the commit policies).

Links (event-time compaction): a symlink is deleted as a link (`delete-link`, never followed). A physical file
that a symlink of a retained slice points at stays (`keep`) even when its own slice expires; it goes only when
no retained slice links it, and then after every link to it (deletions are ordered links first). A copy is an
ordinary file. Every planned file carries the reason it goes or stays.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from hudi_meta.errors import BadValueError, CleanConfigError, CleanParameterError
from hudi_meta.file_group.fs_view import is_committed
from hudi_meta.format.config_keys import (
    CLEAN_COMMITS_RETAINED,
    CLEAN_FILE_VERSIONS_RETAINED,
    CLEAN_HOURS_RETAINED,
    CLEAN_POLICY,
    ConfigKey,
)
from hudi_meta.spelling import Spelled
from hudi_meta.table.times import MAX_DURATION_MS
from hudi_meta.timeline.instant import WRITE_ACTIONS, Action, format_instant
from hudi_meta.values import JAVA_INT_MAX


class Policy(Spelled):
    """Hudi's cleaning policies (`hoodie.clean.policy`; `--policy keep-latest-commits` reads as these)."""

    KEEP_LATEST_COMMITS = "KEEP_LATEST_COMMITS"
    KEEP_LATEST_FILE_VERSIONS = "KEEP_LATEST_FILE_VERSIONS"
    KEEP_LATEST_BY_HOURS = "KEEP_LATEST_BY_HOURS"


KEEP_LATEST_COMMITS = Policy.KEEP_LATEST_COMMITS
KEEP_LATEST_FILE_VERSIONS = Policy.KEEP_LATEST_FILE_VERSIONS
KEEP_LATEST_BY_HOURS = Policy.KEEP_LATEST_BY_HOURS
POLICIES = tuple(Policy)

MAX_RETAINED = JAVA_INT_MAX  # hoodie.clean.commits.retained and hoodie.clean.fileversions.retained are Java ints
MAX_HOURS_RETAINED = MAX_DURATION_MS // 3_600_000  # 100 years: now - H hours stays a time

# the commits-and-compaction timeline Java counts commits on (completed compactions show as `commit`)
COMMIT_TIMELINE_ACTIONS = WRITE_ACTIONS | {Action.COMPACTION, Action.LOG_COMPACTION, Action.CLUSTERING}


class CleanOperation(Spelled):
    """What a clean does to one file."""

    DELETE_FILE = "delete-file"
    DELETE_LINK = "delete-link"
    KEEP = "keep"  # a file the clean would delete but a retained slice's link still shows


DELETE_FILE = CleanOperation.DELETE_FILE
DELETE_LINK = CleanOperation.DELETE_LINK
KEEP = CleanOperation.KEEP
_ORDER = {DELETE_LINK: 0, DELETE_FILE: 1, KEEP: 2}


# ---------------------------------------------------------------- policy


@dataclass(frozen=True)
class CleanPolicy:
    """One of Hudi's cleaning policies with its retention (only the policy's own retention is used)."""

    name: Policy = Policy.KEEP_LATEST_COMMITS
    commits_retained: int = CLEAN_COMMITS_RETAINED.default
    file_versions_retained: int = CLEAN_FILE_VERSIONS_RETAINED.default
    hours_retained: int = CLEAN_HOURS_RETAINED.default

    def __post_init__(self) -> None:
        for key, value in (
            (CLEAN_COMMITS_RETAINED.name, self.commits_retained),
            (CLEAN_FILE_VERSIONS_RETAINED.name, self.file_versions_retained),
            (CLEAN_HOURS_RETAINED.name, self.hours_retained),
        ):
            if value < 0:
                raise CleanConfigError(f"{key} must be at least 0, not {value}")

    @property
    def retained(self) -> int:
        """The policy's own retention: commits, file versions or hours."""
        if self.name == KEEP_LATEST_COMMITS:
            return self.commits_retained
        if self.name == KEEP_LATEST_FILE_VERSIONS:
            return self.file_versions_retained
        return self.hours_retained

    def describe(self) -> str:
        unit = {KEEP_LATEST_COMMITS: "commits", KEEP_LATEST_FILE_VERSIONS: "file versions"}.get(self.name, "hours")
        return f"{self.name}, {self.retained} {unit} retained"

    @classmethod
    def from_properties(
        cls,
        props: Mapping[str, str],
        policy: str | None = None,
        retained: int | None = None,
        hours: int | None = None,
    ) -> CleanPolicy:
        """The table's policy (`hoodie.clean.*` in hoodie.properties, Hudi's defaults otherwise), with the
        command line's policy, retention (commits or file versions, by policy) and hours over it."""
        name = policy_name(policy) if policy else policy_name(CLEAN_POLICY.or_default(props), CLEAN_POLICY.name)
        misplaced = misplaced_retention(name, retained, hours)
        if misplaced == "retained":
            raise CleanParameterError(
                f"{KEEP_LATEST_BY_HOURS} keeps {{hours}} H, not {{retained}} N", "hours", "retained"
            )
        if misplaced == "hours":
            raise CleanParameterError(
                f"{{hours}} is for {KEEP_LATEST_BY_HOURS}; {name} takes {{retained}} N", "hours", "retained"
            )
        for parameter, value, most in (("retained", retained, MAX_RETAINED), ("hours", hours, MAX_HOURS_RETAINED)):
            if value is not None and not 0 <= value <= most:
                raise CleanParameterError(f"{{{parameter}}} must be from 0 to {most}, not {value}", parameter)
        commits = _int_property(props, CLEAN_COMMITS_RETAINED, MAX_RETAINED)
        versions = _int_property(props, CLEAN_FILE_VERSIONS_RETAINED, MAX_RETAINED)
        if retained is not None and name == KEEP_LATEST_COMMITS:
            commits = retained
        if retained is not None and name == KEEP_LATEST_FILE_VERSIONS:
            versions = retained
        if hours is None:
            hours = _int_property(props, CLEAN_HOURS_RETAINED, MAX_HOURS_RETAINED)
        return cls(name, commits, versions, hours)


def misplaced_retention(policy: str, retained: int | None, hours: int | None) -> str | None:
    """Which retention given does not belong to `policy` ("retained" or "hours"; None: both fit): hours are
    KEEP_LATEST_BY_HOURS's own, a number of commits or file versions the other policies'."""
    if retained is not None and policy == KEEP_LATEST_BY_HOURS:
        return "retained"
    if hours is not None and policy != KEEP_LATEST_BY_HOURS:
        return "hours"
    return None


def policy_name(text: str, source: str | None = None) -> Policy:
    """A clean policy in any of its spellings (`keep-latest-commits`, Hudi's `KEEP_LATEST_COMMITS`); `source` says
    where the name came from (None: the caller's parameter `policy`)."""
    try:
        return Policy.parse(text)
    except BadValueError as e:
        if source is not None:
            raise CleanConfigError(f"unknown clean policy {text!r} ({source}): {e}") from None
        quoted, reason = (str(x).replace("{", "{{").replace("}", "}}") for x in (repr(text), e))  # literal text
        raise CleanParameterError(f"unknown clean policy {quoted} ({{policy}}): {reason}", "policy") from None


def _int_property(props: Mapping[str, str], key: ConfigKey[int], most: int) -> int:
    """A retention from hoodie.properties, read as Java reads it (`Integer.parseInt`), from 0 to `most`."""
    text = key.text(props)
    if text is None or not text.strip():
        return key.default
    try:
        value = int(text.strip())
    except ValueError:
        raise CleanConfigError(f"{key.name}={text!r} in hoodie.properties is not a whole number") from None
    if not 0 <= value <= most:
        raise CleanConfigError(f"{key.name}={text!r} in hoodie.properties is out of range (0 to {most})")
    return value


# ---------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    """One instant of the active timeline in its newest state (a completed compaction is a `commit`)."""

    time: str
    action: str
    completed: bool


@dataclass(frozen=True)
class CleanTimeline:
    """What clean planning needs from the table's timeline, as plain data."""

    instants: tuple[TimelineEntry, ...]  # sorted by time
    # (partition, file id) -> (instant, base instant of the slice it reads) of pending (log) compactions
    pending_compactions: Mapping[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    pending_clustering: Mapping[tuple[str, str], str] = field(default_factory=dict)  # file group -> instant
    replaced: Mapping[tuple[str, str], str] = field(default_factory=dict)  # file group -> completed replacecommit
    savepointed_files: frozenset[str] = frozenset()  # file names the savepoints hold
    timezone: dt.tzinfo = dt.UTC  # `hoodie.table.timeline.timezone`

    @property
    def first_active_instant(self) -> str | None:
        return self.instants[0].time if self.instants else None

    def completed_times(self) -> frozenset[str]:
        return frozenset(i.time for i in self.instants if i.completed)

    def pending_times(self) -> frozenset[str]:
        return frozenset(i.time for i in self.instants if not i.completed)

    def commits(self) -> list[TimelineEntry]:
        """The completed commits, deltacommits, replacecommits and compaction commits, oldest first."""
        return [i for i in self.instants if i.completed and i.action in COMMIT_TIMELINE_ACTIONS]

    def last_completed_commit(self) -> str:
        """Java's `lastCompletedCommitTimestamp`: the newest completed write ("" when there is none)."""
        writes = [i.time for i in self.instants if i.completed and i.action in WRITE_ACTIONS]
        return writes[-1] if writes else ""


class CleanFile(NamedTuple):
    """A data file of a slice. `link_target` (a symlink) is the physical file's path relative to the table."""

    name: str
    link_target: str | None = None
    copy_of: str | None = None  # a copy of a log file made by compaction: an ordinary file here
    instants: tuple[str, ...] = ()  # instants whose writes it holds (a base file's own; a log file's blocks')


class CleanSlice(NamedTuple):
    base_instant: str
    files: tuple[CleanFile, ...]  # base file and log files, links included


class CleanGroup(NamedTuple):
    partition: str
    file_id: str
    slices: tuple[CleanSlice, ...]  # any order


# ---------------------------------------------------------------- outputs


class CleanAction(NamedTuple):
    """One file: deleted as a file or as a link, or kept although its slice expired (a link target)."""

    operation: CleanOperation
    partition: str
    path: str  # relative to the table's base path
    file_id: str
    slice: str  # base instant of the file's slice
    reason: str

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


@dataclass(frozen=True)
class CleanPlanResult:
    policy: CleanPolicy
    earliest_commit_to_retain: TimelineEntry | None
    last_completed_commit: str
    actions: tuple[CleanAction, ...]  # deletions links first, then files; kept link targets last
    summary: str  # one line: why this much is cleaned

    @property
    def deletions(self) -> list[CleanAction]:
        return [a for a in self.actions if a.operation != KEEP]

    @property
    def kept(self) -> list[CleanAction]:
        return [a for a in self.actions if a.operation == KEEP]


# ---------------------------------------------------------------- planning


def earliest_commit_to_retain(timeline: CleanTimeline, policy: CleanPolicy, now_ms: int) -> TimelineEntry | None:
    """Java's `CleanerUtils.getEarliestCommitToRetain` (None: the commit policies clean nothing)."""
    completed = timeline.commits()
    if policy.name == KEEP_LATEST_COMMITS:
        n = policy.commits_retained
        if len(completed) <= n or n == 0:  # Java's nthInstant(count) is empty for n = 0
            return None
        nth = completed[len(completed) - n]
        pending = [i.time for i in timeline.instants if not i.completed and i.action in COMMIT_TIMELINE_ACTIONS]
        if pending and nth.time > pending[0]:
            before = [i for i in completed if i.time < pending[0]]
            return before[-1] if before else None
        return nth
    if policy.name == KEEP_LATEST_BY_HOURS:
        cutoff_ms = now_ms - policy.hours_retained * 3_600_000
        cutoff = format_instant(dt.datetime.fromtimestamp(cutoff_ms / 1000, dt.UTC).astimezone(timeline.timezone))
        return next((i for i in completed if i.time >= cutoff), None)
    return None


def plan_clean(
    groups: Iterable[CleanGroup], timeline: CleanTimeline, policy: CleanPolicy, now_ms: int
) -> CleanPlanResult:
    """The files a clean deletes (and the link targets it keeps) under `policy` at `now_ms`."""
    earliest = earliest_commit_to_retain(timeline, policy, now_ms)
    completed = timeline.completed_times()
    pending = timeline.pending_times()
    first_active = timeline.first_active_instant

    known: dict[str, bool] = {}

    def committed(instant: str) -> bool:
        found = known.get(instant)
        if found is None:
            found = known[instant] = instant not in pending and is_committed(instant, completed, first_active)
        return found

    summary = _summary(timeline, policy, earliest)
    expired: list[tuple[CleanGroup, CleanSlice, str]] = []
    retained_links: dict[str, tuple[str, str]] = {}  # target path -> (a link to it, that link's slice)
    for group in groups:
        for s, reason in _decide_group(group, timeline, policy, earliest, committed, pending):
            if reason is not None:
                expired.append((group, s, reason))
                continue
            for f in s.files:
                if f.link_target is not None:
                    retained_links.setdefault(f.link_target, (_path(group.partition, f.name), s.base_instant))

    actions: list[CleanAction] = []
    for group, s, why in expired:
        for f in s.files:
            path = _path(group.partition, f.name)
            if f.link_target is not None:
                op, reason = DELETE_LINK, f"symlink to {posixpath.basename(f.link_target)}: {why}"
            elif path in retained_links:
                link, linked_from = retained_links[path]
                op, reason = KEEP, f"target of {posixpath.basename(link)} in retained slice {linked_from} ({why})"
            else:
                op, reason = DELETE_FILE, why
            actions.append(CleanAction(op, group.partition, path, group.file_id, s.base_instant, reason))
    actions.sort(key=lambda a: (_ORDER[a.operation], a.path))
    return CleanPlanResult(policy, earliest, timeline.last_completed_commit(), tuple(actions), summary)


def _path(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def _summary(timeline: CleanTimeline, policy: CleanPolicy, earliest: TimelineEntry | None) -> str:
    if policy.name == KEEP_LATEST_FILE_VERSIONS:
        return f"{policy.describe()}: older slices of each file group go"
    if earliest is not None:
        return f"{policy.describe()}: earliest commit to retain {earliest.time} ({earliest.action})"
    if policy.name == KEEP_LATEST_COMMITS:
        return f"{policy.describe()}: {len(timeline.commits())} completed commits, nothing to clean yet"
    return f"{policy.describe()}: no completed commit in the last {policy.hours_retained} hours, nothing to clean"


def _decide_group(
    group: CleanGroup,
    timeline: CleanTimeline,
    policy: CleanPolicy,
    earliest: TimelineEntry | None,
    committed: Callable[[str], bool],
    pending: frozenset[str],
) -> list[tuple[CleanSlice, str | None]]:
    """Each slice of the group with the reason it expires, or None when it stays."""
    key = (group.partition, group.file_id)
    newest_first = sorted(group.slices, key=lambda s: s.base_instant, reverse=True)
    compaction = timeline.pending_compactions.get(key)
    clustering = timeline.pending_clustering.get(key)
    replaced_by = timeline.replaced.get(key)
    live = [s.base_instant for s in newest_first if committed(s.base_instant)]
    latest = live[0] if live and replaced_by is None else None
    # file versions: the committed slices a pending compaction does not read, newest first (Java's iterator)
    versions = [b for b in live if compaction is None or b < compaction[1]]
    keep_versions = policy.file_versions_retained - (1 if compaction is not None else 0)
    before_earliest = next((b for b in live if earliest and b < earliest.time), None)

    out: list[tuple[CleanSlice, str | None]] = []
    for s in newest_first:
        base = s.base_instant
        reason: str | None = None
        if clustering is not None or _protected(s, committed, pending, compaction, timeline.savepointed_files):
            pass
        elif replaced_by is not None:
            reason = _replaced(policy, earliest, replaced_by)
        elif base == latest:
            pass
        elif policy.name == KEEP_LATEST_FILE_VERSIONS:
            if versions.index(base) >= keep_versions:
                reason = f"slice {base} is older than the {policy.retained} newest file versions"
        elif earliest is not None and base < earliest.time and base != before_earliest:
            reason = (
                f"slice {base} is older than the earliest commit to retain {earliest.time}; "
                f"slice {before_earliest} serves reads as of it"
            )
        out.append((s, reason))
    return out


def _protected(
    s: CleanSlice,
    committed: Callable[[str], bool],
    pending: frozenset[str],
    compaction: tuple[str, str] | None,
    savepointed: frozenset[str],
) -> bool:
    """Whether the slice stays whatever the policy says: not committed, read by a pending compaction, holding
    data of an inflight instant, or holding a savepointed file (a pending clustering keeps the whole group)."""
    if not committed(s.base_instant) or (compaction is not None and s.base_instant >= compaction[1]):
        return True
    if pending and any(i in pending for f in s.files for i in f.instants):
        return True
    return bool(savepointed) and any(f.name in savepointed for f in s.files)


def _replaced(policy: CleanPolicy, earliest: TimelineEntry | None, replaced_by: str) -> str | None:
    if policy.name == KEEP_LATEST_FILE_VERSIONS:
        return f"file group replaced by {replaced_by}"
    if earliest is not None and replaced_by < earliest.time:
        return f"file group replaced by {replaced_by}, before the earliest commit to retain"
    return None


def deletion_order(actions: Sequence[CleanAction]) -> list[CleanAction]:
    """Deletions in the order they must run: every link before any physical file."""
    return sorted((a for a in actions if a.operation != KEEP), key=lambda a: (_ORDER[a.operation], a.path))
