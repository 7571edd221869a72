"""Timeline archival planning: which completed instants leave the active timeline (pure; no IO).

Java's `TimelineArchiverV2` is the model (docs/archival.md names the source of every rule):

- archival runs only when the completed commits, deltacommits and replacecommits number more than
  `hoodie.keep.max.commits` (30), and archives the oldest of them down to `hoodie.keep.min.commits` (20);
- never at or after the newest completed commit before the earliest pending instant of the write timeline
  (commit, deltacommit, compaction, logcompaction, replacecommit, clustering), or that pending instant when no
  commit is before it;
- never at or after the replacecommit whose replaced files the latest clean may not have deleted yet;
- completed cleans and rollbacks requested before the newest archived commit go with the commits.

hudi-meta adds rules of its own, each keeping something a reader or a service still takes from the active
timeline:

- an archived instant is older than every instant left on the active timeline: "older than the first active
  instant" is how our readers tell an archived (so committed) instant from a pending one
  (`fs_view.is_committed`), so archival stops before the first pending instant of any action, and before the
  first completed instant it does not archive (a savepoint, a restore, an indexing);
- the latest completed clean stays, and so does every instant at or after its plan's earliest instant to retain;
- the latest completed compaction stays: the compaction triggers count delta commits and time since it, and
  `check` reads the published threshold's compaction from the active timeline;
- a compaction that holds live links (a link's target file still exists) stays, and so does every instant after
  it.

And Java's rule for a table with a metadata table: nothing at or after the metadata table's latest completed
compaction is archived, and nothing at all before its first (`TimelineArchiverV2.getInstantsToArchive`).

The function is given the timeline as plain data: the executor reads the clean plan and checks the links.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hudi_meta.errors import ArchivalConfigError
from hudi_meta.format.config_keys import CLEAN_COMMITS_RETAINED, KEEP_MAX_COMMITS, KEEP_MIN_COMMITS, ConfigKey
from hudi_meta.timeline.instant import Action
from hudi_meta.values import JAVA_INT_MAX

# kept for hudi_meta/api/terms.py, which hands them to the CLI's help (issue 37)

# what Java counts against the limits on a merge-on-read table (`getCommitsTimeline`; a compaction completes as commit)
COMMIT_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})
# the write timeline (`getWriteTimeline`): its earliest pending instant bounds archival
WRITE_TIMELINE_ACTIONS = COMMIT_ACTIONS | {Action.COMPACTION, Action.LOG_COMPACTION, Action.CLUSTERING}
ARCHIVED_WITH_COMMITS = frozenset({Action.CLEAN, Action.ROLLBACK})
REPLACE_ACTIONS = frozenset({Action.REPLACE_COMMIT, Action.CLUSTERING})


@dataclass(frozen=True)
class ArchivalSettings:
    """How many completed commits the active timeline keeps: archival starts above `max_commits` and stops at
    `min_commits` (Java refuses `max <= min`, and a `min` at or below the cleaner's retained commits)."""

    min_commits: int = KEEP_MIN_COMMITS.default  # HoodieArchivalConfig.MIN_COMMITS_TO_KEEP
    max_commits: int = KEEP_MAX_COMMITS.default  # HoodieArchivalConfig.MAX_COMMITS_TO_KEEP

    def __post_init__(self) -> None:
        if not 1 <= self.min_commits <= JAVA_INT_MAX:
            raise ArchivalConfigError(
                f"{KEEP_MIN_COMMITS.name} must be from 1 to {JAVA_INT_MAX}, not {self.min_commits}"
            )
        if not self.min_commits < self.max_commits <= JAVA_INT_MAX:
            raise ArchivalConfigError(
                f"{KEEP_MAX_COMMITS.name}={self.max_commits} must be greater than "
                f"{KEEP_MIN_COMMITS.name}={self.min_commits}"
            )

    @classmethod
    def from_properties(
        cls, props: Mapping[str, str], min_commits: int | None = None, max_commits: int | None = None
    ) -> ArchivalSettings:
        """The table's limits (hoodie.properties, Java's defaults otherwise), with the command line's over them;
        refused, as Java refuses them, when `min_commits` is not above `hoodie.clean.commits.retained`: a commit
        the cleaner still retains would leave the active timeline, and incremental reads could miss it."""
        low = min_commits if min_commits is not None else _int_property(props, KEEP_MIN_COMMITS)
        high = max_commits if max_commits is not None else _int_property(props, KEEP_MAX_COMMITS)
        settings = cls(low, high)
        retained = _int_property(props, CLEAN_COMMITS_RETAINED)  # Java checks min commits against it
        if settings.min_commits <= retained:
            raise ArchivalConfigError(
                f"{KEEP_MIN_COMMITS.name}={settings.min_commits} must be greater than "
                f"{CLEAN_COMMITS_RETAINED.name}={retained}: "
                "archival would take commits the cleaner still retains, and incremental reads could miss them"
            )
        return settings


def _int_property(props: Mapping[str, str], key: ConfigKey[int]) -> int:
    text = (key.text(props) or "").strip()
    if not text:
        return key.default
    if not text.isascii() or not text.lstrip("-").isdigit():
        raise ArchivalConfigError(f"{key.name}={text!r} in hoodie.properties is not a whole number")
    return int(text)


@dataclass(frozen=True)
class TimelineInstant:
    """One instant of the active timeline: its action is the completed one for a completed instant (a compaction
    is a `commit`, with `compaction` set), its own for a pending one."""

    requested_time: str
    action: str
    completed: bool
    completion_time: str | None = None
    compaction: bool = False  # a completed commit that a compaction plan made


@dataclass(frozen=True)
class Boundary:
    """The first requested time archival must not reach, and the rule that says so."""

    time: str
    reason: str


@dataclass(frozen=True)
class ArchivalPlan:
    """The instants to archive (by requested time: commits, and the cleans and rollbacks before the newest of
    them), the boundary that stopped archival (None: only the count did), and one line saying why this much."""

    instants: tuple[TimelineInstant, ...]
    boundary: Boundary | None
    completed_commits: int
    summary: str


def plan_archival(
    instants: Sequence[TimelineInstant],
    settings: ArchivalSettings,
    clean_retain: str | None = None,
    link_holders: frozenset[str] = frozenset(),
    metadata_compaction: str | None = None,
    bound: Boundary | None = None,
) -> ArchivalPlan:
    """The instants to archive now. `clean_retain` is the earliest instant to retain that the latest completed
    clean's plan names (None when it names none); `link_holders` are the completed compactions whose links'
    targets still exist; `metadata_compaction` is the metadata table's latest completed compaction ("" when it
    has none, None when the table has no metadata table); `bound`, one more boundary the caller sets (a metadata
    table's archival stops at its data table's earliest active instant)."""
    ordered = sorted(instants, key=lambda i: i.requested_time)
    commits = [i for i in ordered if i.completed and i.action in COMMIT_ACTIONS]
    count = len(commits)
    if count <= settings.max_commits:
        summary = f"{count} completed commits, not more than {KEEP_MAX_COMMITS.name}={settings.max_commits}"
        return ArchivalPlan((), None, count, summary)
    boundary = earliest_boundary(ordered, clean_retain, link_holders, metadata_compaction, bound)
    chosen = [c for c in commits if boundary is None or c.requested_time < boundary.time]
    chosen = chosen[: count - settings.min_commits]
    kept_by = f"; kept from {boundary.time}: {boundary.reason}" if boundary else ""
    if not chosen:
        return ArchivalPlan((), boundary, count, f"{count} completed commits, none archivable{kept_by}")
    newest = chosen[-1].requested_time
    extras = [i for i in ordered if i.completed and i.action in ARCHIVED_WITH_COMMITS and i.requested_time < newest]
    archived = tuple(sorted([*chosen, *extras], key=lambda i: i.requested_time))
    summary = (
        f"{count} completed commits, more than {KEEP_MAX_COMMITS.name}={settings.max_commits}: {len(chosen)} "
        f"archived down to {count - len(chosen)} ({KEEP_MIN_COMMITS.name}={settings.min_commits}), with "
        f"{len(extras)} cleans and rollbacks{kept_by}"
    )
    return ArchivalPlan(archived, boundary, count, summary)


def earliest_boundary(
    instants: Sequence[TimelineInstant],
    clean_retain: str | None = None,
    link_holders: frozenset[str] = frozenset(),
    metadata_compaction: str | None = None,
    bound: Boundary | None = None,
) -> Boundary | None:
    """The earliest of every rule's boundary (`instants` sorted by requested time)."""
    found = [
        b
        for b in (
            _pending_write(instants),
            _first_not_archived(instants),
            _latest_clean(instants, clean_retain),
            _replaced_files(instants, clean_retain),
            _latest_compaction(instants),
            _links(link_holders),
            _metadata_table(metadata_compaction),
            bound,
        )
        if b is not None
    ]
    return min(found, key=lambda b: b.time, default=None)


def count_reach(instants: Sequence[TimelineInstant], settings: ArchivalSettings) -> str | None:
    """The newest requested time the count rule alone would archive (None: nothing), so the executor checks the
    links of older compactions only."""
    commits = sorted(i.requested_time for i in instants if i.completed and i.action in COMMIT_ACTIONS)
    if len(commits) <= settings.max_commits:
        return None
    return commits[len(commits) - settings.min_commits - 1]


def _pending_write(instants: Sequence[TimelineInstant]) -> Boundary | None:
    """Java: the newest completed commit before the earliest pending write, else that pending instant."""
    pending = next((i for i in instants if not i.completed and i.action in WRITE_TIMELINE_ACTIONS), None)
    if pending is None:
        return None
    before = [
        i for i in instants if i.completed and i.action in COMMIT_ACTIONS and i.requested_time < pending.requested_time
    ]
    what = f"{pending.action} {pending.requested_time} is pending"
    if before:
        return Boundary(before[-1].requested_time, f"the newest completed commit before {what}")
    return Boundary(pending.requested_time, what)


def _first_not_archived(instants: Sequence[TimelineInstant]) -> Boundary | None:
    """hudi-meta: everything archived is older than everything left (pending, or of an action not archived)."""
    for i in instants:
        if not i.completed:
            return Boundary(i.requested_time, f"{i.action} {i.requested_time} is pending")
        if i.action not in COMMIT_ACTIONS | ARCHIVED_WITH_COMMITS:
            return Boundary(i.requested_time, f"completed {i.action} {i.requested_time} is not archived")
    return None


def _latest_clean(instants: Sequence[TimelineInstant], clean_retain: str | None) -> Boundary | None:
    """hudi-meta: the latest completed clean, and every instant at or after its earliest instant to retain."""
    clean = _latest_completed_clean(instants)
    if clean is None:
        return None
    if clean_retain and clean_retain < clean.requested_time:
        return Boundary(clean_retain, f"the latest clean {clean.requested_time} retains from {clean_retain}")
    return Boundary(clean.requested_time, f"{clean.requested_time} is the latest clean")


def _replaced_files(instants: Sequence[TimelineInstant], clean_retain: str | None) -> Boundary | None:
    """Java (`ClusteringUtils.getEarliestInstantToRetainForClustering`): a replacecommit stays until the clean
    that deletes the files it replaced has run: the first one at or after the latest clean's earliest instant to
    retain (its own time when it names none), or the first one when no clean completed."""
    replaces = [i for i in instants if i.action in REPLACE_ACTIONS]
    if not replaces:
        return None
    clean = _latest_completed_clean(instants)
    lower = "" if clean is None else clean_retain or clean.requested_time
    first = next((i for i in replaces if i.requested_time >= lower), None)
    if first is None:
        return None
    return Boundary(first.requested_time, f"the files {first.action} {first.requested_time} replaced are not cleaned")


def _latest_compaction(instants: Sequence[TimelineInstant]) -> Boundary | None:
    """hudi-meta: the latest completed compaction (the triggers count from it; `check` reads its threshold)."""
    done = [i for i in instants if i.completed and i.compaction]
    if not done:
        return None
    return Boundary(done[-1].requested_time, f"{done[-1].requested_time} is the latest completed compaction")


def _links(link_holders: frozenset[str]) -> Boundary | None:
    """hudi-meta: a compaction whose links' targets still exist."""
    if not link_holders:
        return None
    first = min(link_holders)
    return Boundary(first, f"compaction {first} holds links whose targets still exist")


def _metadata_table(compaction: str | None) -> Boundary | None:
    """Java: the metadata table's latest completed compaction (its readers take blocks of instants no longer on
    the active timeline as valid only once compacted)."""
    if compaction is None:
        return None
    if not compaction:
        return Boundary("", "the metadata table has no completed compaction yet")
    return Boundary(compaction, f"{compaction} is the metadata table's latest compaction")


def _latest_completed_clean(instants: Sequence[TimelineInstant]) -> TimelineInstant | None:
    cleans = [i for i in instants if i.completed and i.action == Action.CLEAN]
    return cleans[-1] if cleans else None
