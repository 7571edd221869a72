"""File-system view: file groups and file slices built from a listing and the timeline.

v6 (layout 1): a log file belongs to the slice named by its own instant (the base instant).
v8/v9 (layout 2): a log file belongs to the newest slice whose base instant is at or before the
completion time of the deltacommit that wrote it. A pending compaction opens a new, empty slice at the
compaction instant. Building the view is a pure function of the listing and the timeline.
"""

from __future__ import annotations

import bisect
from collections.abc import Container, Iterable
from dataclasses import dataclass, field

from hudi_meta.format.file_names import BaseFileName, LogFileName


@dataclass(frozen=True)
class BaseFile:
    partition: str
    name: str
    size: int
    parsed: BaseFileName

    @property
    def path(self) -> str:
        """Path relative to the table's base path."""
        return f"{self.partition}/{self.name}" if self.partition else self.name


@dataclass(frozen=True)
class LogFile:
    partition: str
    name: str
    size: int
    parsed: LogFileName
    link_target: str | None = None  # relative path of the physical file when this is a symlink

    @property
    def path(self) -> str:
        return f"{self.partition}/{self.name}" if self.partition else self.name


@dataclass
class FileSlice:
    partition: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: list[LogFile] = field(default_factory=list)

    def sorted_logs(self) -> list[LogFile]:
        return sorted(self.log_files, key=lambda f: f.parsed.sort_key())

    @property
    def is_empty(self) -> bool:
        return self.base_file is None and not self.log_files


@dataclass
class FileGroup:
    partition: str
    file_id: str
    slices: dict[str, FileSlice] = field(default_factory=dict)

    def slice_at(self, base_instant: str) -> FileSlice:
        s = self.slices.get(base_instant)
        if s is None:
            s = self.slices[base_instant] = FileSlice(self.partition, self.file_id, base_instant)
        return s

    def ordered_slices(self) -> list[FileSlice]:
        """Slices oldest first."""
        return [self.slices[k] for k in sorted(self.slices)]


@dataclass(frozen=True)
class ViewInputs:
    """What the view needs from the timeline, as plain data."""

    table_version: int
    completed: dict[str, str]  # requested time -> completion time of completed instants
    first_active_instant: str | None
    pending_compactions: dict[tuple[str, str], str]  # (partition, fileId) -> compaction instant
    replaced: frozenset[tuple[str, str]] = frozenset()
    # (partition, file name) of the links that pending compactions plan: until the compaction commits they repeat
    # records of the slice before, so readers never read them
    pending_links: frozenset[tuple[str, str]] = frozenset()

    def is_committed(self, instant: str) -> bool:
        return is_committed(instant, self.completed, self.first_active_instant)

    def completion_time(self, instant: str) -> str | None:
        if instant in self.completed:
            return self.completed[instant]
        first = self.first_active_instant
        return instant if first is not None and instant < first else None


def is_committed(instant: str, completed: Container[str], first_active_instant: str | None) -> bool:
    """The one rule for "committed", shared by readers, the executor, the planner and the indexer.

    An instant is committed when it completed on the active timeline, or when it is older than the first active
    instant: the archiver moved it out, and it archives only completed instants older than every pending one
    (Java's `containsOrBeforeTimelineStarts`).
    """
    return instant in completed or (first_active_instant is not None and instant < first_active_instant)


def build_file_groups(
    base_files: Iterable[BaseFile], log_files: Iterable[LogFile], inputs: ViewInputs
) -> dict[tuple[str, str], FileGroup]:
    """Group files into file groups and slices (replaced groups included; see `ViewInputs.replaced`)."""
    groups: dict[tuple[str, str], FileGroup] = {}

    def group(partition: str, file_id: str) -> FileGroup:
        key = (partition, file_id)
        if key not in groups:
            groups[key] = FileGroup(partition, file_id)
        return groups[key]

    for bf in base_files:
        group(bf.partition, bf.parsed.file_id).slice_at(bf.parsed.instant).base_file = bf
    for (partition, file_id), instant in inputs.pending_compactions.items():
        group(partition, file_id).slice_at(instant)

    logs = sorted(log_files, key=lambda f: f.parsed.sort_key())
    for lf in logs:
        fg = group(lf.partition, lf.parsed.file_id)
        if inputs.table_version < 8:
            fg.slice_at(lf.parsed.instant).log_files.append(lf)
            continue
        fg.slice_at(_slice_for_log(fg, lf, inputs)).log_files.append(lf)
    return groups


def _slice_for_log(fg: FileGroup, lf: LogFile, inputs: ViewInputs) -> str:
    keys = sorted(fg.slices)
    completion = inputs.completion_time(lf.parsed.instant)
    if completion is None:  # still pending: the newest slice
        return keys[-1] if keys else lf.parsed.instant
    i = bisect.bisect_right(keys, completion)
    return keys[i - 1] if i > 0 else lf.parsed.instant


def visible_groups(groups: dict[tuple[str, str], FileGroup], inputs: ViewInputs) -> list[FileGroup]:
    """File groups not replaced by a completed replacecommit, sorted by (partition, fileId)."""
    return [groups[k] for k in sorted(groups) if k not in inputs.replaced]


def committed_base(fs: FileSlice, inputs: ViewInputs) -> BaseFile | None:
    """The slice's base file if the instant that wrote it completed."""
    if fs.base_file is not None and inputs.is_committed(fs.base_file.parsed.instant):
        return fs.base_file
    return None


def latest_slice_for_snapshot(
    fg: FileGroup, inputs: ViewInputs, as_of: str | None = None
) -> tuple[BaseFile | None, list[LogFile]] | None:
    """(base file, log files) a snapshot read merges for this group, or None if nothing is visible.

    A slice opened by a pending compaction has no committed base file yet: it is read together with
    the slice before it (old base + old logs + new logs), as Hudi does.

    As of an instant, version 8 and 9 slices are those the table had then: a later slice did not exist, so a
    log file in it written by a delta commit at or before the instant (requested before the compaction that opened
    the slice, completed after it) is read with the newest slice of then. Every write at or before the instant
    that completed is read, whatever compaction was planned between (Java's view keeps such a file in the later
    slice and misses it, docs/hudi-1x.md section 4).
    """
    ordered = fg.ordered_slices()
    slices = [s for s in ordered if as_of is None or s.base_instant <= as_of]
    later: list[LogFile] = []
    if as_of is not None and inputs.table_version >= 8:
        later = [lf for s in ordered if s.base_instant > as_of for lf in s.log_files if lf.parsed.instant <= as_of]
    logs: list[LogFile] = []
    for fs in reversed(slices):
        own = sorted([*fs.log_files, *later], key=lambda f: f.parsed.sort_key())
        later = []
        logs = [lf for lf in own if (lf.partition, lf.name) not in inputs.pending_links] + logs
        base = committed_base(fs, inputs)
        if base is not None and (as_of is None or base.parsed.instant <= as_of):
            return base, logs
        if fs.base_file is None and not _opened_by_compaction(fg, fs, inputs):
            break  # a log-only slice not opened by a compaction: nothing older to merge
    return (None, logs) if logs else None


def _opened_by_compaction(fg: FileGroup, fs: FileSlice, inputs: ViewInputs) -> bool:
    """True for a slice keyed by a compaction instant (pending, or completed without a base file here)."""
    return inputs.pending_compactions.get((fg.partition, fg.file_id)) == fs.base_instant


def latest_base_for_ro(fg: FileGroup, inputs: ViewInputs, as_of: str | None = None) -> BaseFile | None:
    """The newest committed base file of the group: what a read-optimized query reads."""
    for fs in reversed(fg.ordered_slices()):
        base = committed_base(fs, inputs)
        if base is not None and (as_of is None or base.parsed.instant <= as_of):
            return base
    return None
