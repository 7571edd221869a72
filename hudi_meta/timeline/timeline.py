"""The active timeline: instants listed from the timeline folder, their metadata, and instant writes (both layouts).

Each instant keeps up to three state files; the timeline keeps the newest state of each.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from hudi_meta.errors import InstantExistsError
from hudi_meta.format.commit_metadata import CommitMetadata
from hudi_meta.storage.base import Storage
from hudi_meta.timeline.instant import COMPLETES_AS, WRITE_ACTIONS, Action, Instant, State, format_instant

_STATE_RANK = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}


@dataclass
class Timeline:
    """Instants of one table, sorted by requested time, newest state each."""

    storage: Storage
    timeline_path: str
    layout: int
    instants: list[Instant]
    compaction_instants: frozenset[str] = frozenset()  # requested times that were scheduled as compactions
    clustering_instants: frozenset[str] = frozenset()
    _metadata_cache: dict[Instant, CommitMetadata] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, storage: Storage, timeline_path: str, layout: int) -> Timeline:
        newest: dict[str, Instant] = {}
        compactions: set[str] = set()
        clusterings: set[str] = set()
        for info in storage.list_dir(timeline_path):
            if info.is_dir:
                continue
            instant = Instant.parse(info.name)
            if instant is None:
                continue
            if instant.action == Action.COMPACTION:
                compactions.add(instant.requested_time)
            if instant.action == Action.CLUSTERING:
                clusterings.add(instant.requested_time)
            old = newest.get(instant.requested_time)
            if old is None or _STATE_RANK[instant.state] > _STATE_RANK[old.state]:
                newest[instant.requested_time] = instant
        instants = sorted(newest.values(), key=lambda i: i.requested_time)
        timeline = cls(storage, timeline_path, layout, instants, frozenset(compactions), frozenset(clusterings))
        return timeline

    # ---- queries ------------------------------------------------------------------------------------

    def completed(self) -> list[Instant]:
        return [i for i in self.instants if i.is_completed]

    def pending(self) -> list[Instant]:
        return [i for i in self.instants if not i.is_completed]

    def pending_writes(self, before: str | None = None) -> list[Instant]:
        """Commits, deltacommits and replacecommits not completed (compactions excluded: they complete as commits),
        oldest first; with `before`, those requested before that instant time."""
        return [
            i
            for i in self.instants
            if not i.is_completed
            and i.action in WRITE_ACTIONS
            and not self.is_compaction(i.requested_time)
            and (before is None or i.requested_time < before)
        ]

    def completed_writes(self) -> list[Instant]:
        """Completed commits, deltacommits and replacecommits: the instants that made data visible."""
        return [i for i in self.instants if i.is_completed and i.action in WRITE_ACTIONS]

    @cached_property
    def _completed_times(self) -> dict[str, Instant]:
        return {i.requested_time: i for i in self.instants if i.is_completed}

    def is_completed(self, instant_time: str) -> bool:
        return instant_time in self._completed_times

    def instant(self, instant_time: str) -> Instant | None:
        return next((i for i in self.instants if i.requested_time == instant_time), None)

    def completion_time(self, instant_time: str) -> str | None:
        """Completion time of a completed instant (layout 2); the requested time for layout-1 instants."""
        i = self._completed_times.get(instant_time)
        if i is None:
            return None
        return i.completion_time or i.requested_time

    @property
    def first_instant_time(self) -> str | None:
        return self.instants[0].requested_time if self.instants else None

    def pending_compactions(self) -> list[Instant]:
        return [i for i in self.instants if i.action == Action.COMPACTION and not i.is_completed]

    def pending_clustering(self) -> list[Instant]:
        return [
            i for i in self.instants if not i.is_completed and i.action in (Action.CLUSTERING, Action.REPLACE_COMMIT)
        ]

    def is_compaction(self, instant_time: str) -> bool:
        return instant_time in self.compaction_instants

    # ---- metadata -----------------------------------------------------------------------------------

    def path_of(self, instant: Instant) -> str:
        return posixpath.join(self.timeline_path, instant.file_name(self.layout))

    def read_bytes(self, instant: Instant) -> bytes:
        return self.storage.read_bytes(self.path_of(instant))

    def requested_bytes(self, instant_time: str, action: Action) -> bytes:
        """Content of `<t>.<action>.requested` (plans live there)."""
        return self.read_bytes(Instant(instant_time, action, State.REQUESTED))

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        """Metadata of a completed commit/deltacommit/replacecommit (cached)."""
        cached = self._metadata_cache.get(instant)
        if cached is None:
            cached = CommitMetadata.from_bytes(self.read_bytes(instant))
            self._metadata_cache[instant] = cached
        return cached

    def replaced_file_ids(self) -> set[tuple[str, str]]:
        """(partition, fileId) of file groups replaced by completed replacecommits."""
        out: set[tuple[str, str]] = set()
        for i in self.completed():
            if i.action == Action.REPLACE_COMMIT:
                for part, ids in self.commit_metadata(i).partition_to_replace_file_ids.items():
                    out.update((part, fid) for fid in ids)
        return out


# ---- writing ----------------------------------------------------------------------------------------


def new_instant_time(after: Iterable[str] = (), now: dt.datetime | None = None, zone: dt.tzinfo = dt.UTC) -> str:
    """A 17-digit instant time in the timeline's `zone` (Java's `hoodie.table.timeline.timezone`: UTC, or LOCAL,
    the writer's own zone) strictly after every time in `after`."""
    now = now or dt.datetime.now(zone)
    latest = max(after, default="")
    if len(latest) == 17 and format_instant(now) <= latest:
        now = dt.datetime.strptime(latest[:14], "%Y%m%d%H%M%S").replace(
            microsecond=int(latest[14:]) * 1000
        ) + dt.timedelta(milliseconds=1)
    return format_instant(now)


class TimelineWriter:
    """Writes instant files: requested -> inflight -> completed, each created atomically and never overwritten.

    Layout 1 (table version 6) names a completed instant `<t>.<action>`. Layout 2 (versions 8 and 9) names it
    `<t>_<c>.<action>`, with `c` the completion time taken here: strictly after every requested and completion
    time on the timeline, in the timeline's zone (Java's `ActiveTimelineV2.createCompleteFileInMetaPath`).
    Completion times order writes against compaction plans (a log file belongs to the slice its write
    completed in), so a write completes while holding the table lock, under which plans are written too.
    In both layouts the requested and inflight files stay beside the completed one (docs/hudi-1x.md section 1).
    """

    def __init__(self, storage: Storage, timeline_path: str, layout: int = 1, zone: dt.tzinfo = dt.UTC) -> None:
        self.storage = storage
        self.timeline_path = timeline_path
        self.layout = layout
        self.zone = zone

    def _path(self, instant: Instant) -> str:
        return posixpath.join(self.timeline_path, instant.file_name(self.layout))

    def _listed(self) -> list[Instant]:
        names = (info.name for info in self.storage.list_dir(self.timeline_path) if not info.is_dir)
        return [i for name in names if (i := Instant.parse(name)) is not None]

    def _completed(self, instant_time: str, action: Action) -> Instant | None:
        """The completed file of `instant_time` (layout 2 names carry a completion time, so it is looked up)."""
        done = Instant(instant_time, COMPLETES_AS.get(action, action), State.COMPLETED)
        if self.layout < 2:
            return done if self.storage.exists(self._path(done)) else None
        return _completed_of(self._listed(), done)

    def _create(self, instant: Instant, content: bytes) -> Instant:
        if self._completed(instant.requested_time, instant.action) is not None:
            raise InstantExistsError(f"instant {instant.requested_time} is already completed")
        try:
            self.storage.create_atomic(self._path(instant), content)
        except FileExistsError as e:
            raise InstantExistsError(f"{instant.file_name(self.layout)} already exists") from e
        return instant

    def request(self, action: Action, instant_time: str, content: bytes = b"") -> Instant:
        return self._create(Instant(instant_time, action, State.REQUESTED), content)

    def start(self, action: Action, instant_time: str, content: bytes = b"") -> Instant:
        """Create the inflight file (idempotent: an existing inflight file is kept)."""
        inflight = Instant(instant_time, action, State.INFLIGHT)
        if self.storage.exists(self._path(inflight)):
            return inflight
        return self._create(inflight, content)

    def complete(self, action: Action, instant_time: str, content: bytes) -> Instant:
        """Publish the completed file; this single atomic create is the commit point."""
        action = COMPLETES_AS.get(action, action)
        completion = None
        if self.layout >= 2:
            listed = self._listed()
            if _completed_of(listed, Instant(instant_time, action, State.COMPLETED)) is not None:
                raise InstantExistsError(f"instant {instant_time} is already completed")
            times = [t for i in listed for t in (i.requested_time, i.completion_time) if t]
            completion = new_instant_time(times, zone=self.zone)
        completed = Instant(instant_time, action, State.COMPLETED, completion)
        try:
            self.storage.create_atomic(self._path(completed), content)
        except FileExistsError as e:
            raise InstantExistsError(f"instant {instant_time} is already completed") from e
        return completed

    def revert_to_requested(self, action: Action, instant_time: str) -> None:
        """Remove an instant's inflight file, keeping its requested one (Java's `revertInstantFromInflightToRequested`:
        a table service rolled back before it is run again)."""
        self.storage.delete(self._path(Instant(instant_time, action, State.INFLIGHT)))

    def delete_pending(self, action: Action, instant_time: str) -> None:
        """Remove an instant's inflight, then requested file (rollback of a pending instant; Java's order, so a
        kill in between leaves a requested instant, which is rolled back again)."""
        for state in (State.INFLIGHT, State.REQUESTED):
            self.storage.delete(self._path(Instant(instant_time, action, state)))


def _completed_of(listed: Iterable[Instant], done: Instant) -> Instant | None:
    """The listed completed file of `done`'s instant, whatever its completion time."""
    key = (done.requested_time, done.action)
    return next((i for i in listed if i.is_completed and (i.requested_time, i.action) == key), None)
