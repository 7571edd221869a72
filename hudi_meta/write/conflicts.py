"""Write conflicts with compactions, decided at commit as Java's optimistic concurrency control decides them.

A write appends log files into the slice its view showed as the newest of each file group. A compaction
scheduled after that view was taken (Java: a compaction instant that started after the writer's instant, with
file ids in common; `SimpleConcurrentFileWritesConflictResolutionStrategy`) may compact that very slice: the
write's log files then land in a slice the plan does not know, after the plan has taken the slice, and neither
the compaction nor a reader of the compaction's slice sees them. Rule: a write that appended into slice B of file
group F conflicts with every compaction, pending or completed, whose operation on F compacts slice B; and with the
undoing of the compaction that opened slice B (rolled back or taken back since the write planned its files: B is
then neither committed nor a pending compaction, and no reader reads a slice that is gone); and with any newer
committed base file of F (a compaction whose instant the archiver has since moved off the active timeline leaves
only its base file to say that it took slice B). The writer detects it under the table lock (`write.lock`), in
which schedulers write their plans too, rolls its own write back and fails; writing again puts the records into
the slice that is newest then.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from hudi_meta.format.commit_metadata import WriteStat
from hudi_meta.format.file_names import BaseFileName
from hudi_meta.table.table import HudiTable

SliceKey = tuple[str, str, str]  # (partition, file id, base instant)


@dataclass(frozen=True)
class Conflict:
    compaction: str
    partition: str
    file_id: str
    base_instant: str

    def describe(self) -> str:
        where = f"{self.partition}/{self.file_id}" if self.partition else self.file_id
        if self.compaction == self.base_instant:
            return f"slice {self.base_instant} of file group {where} is gone (its compaction was taken back)"
        return f"compaction {self.compaction} took slice {self.base_instant} of file group {where}"


def appended_slices(stats: Iterable[WriteStat]) -> set[SliceKey]:
    """The slices a write appended log files to (write stats naming log files; `prevCommit` is the slice)."""
    return {(s.partition_path or "", s.file_id, s.prev_commit) for s in stats if s.log_files and s.prev_commit}


def find_conflicts(appended: set[SliceKey], compactions: Iterable[tuple[str, Iterable[SliceKey]]]) -> list[Conflict]:
    """The compactions (instant, the slices it compacts) that took a slice of `appended`. Pure."""
    return [Conflict(instant, *key) for instant, slices in compactions for key in sorted(set(slices) & appended)]


def compacted_slices(table: HudiTable, newer_than: str) -> list[tuple[str, list[SliceKey]]]:
    """Every compaction on the active timeline after `newer_than` with the slices it compacts: a pending one's
    from its plan, a completed one's from its commit's write stats (its plan may be archived)."""
    tl = table.timeline
    out: list[tuple[str, list[SliceKey]]] = []
    for instant in tl.instants:
        time = instant.requested_time
        if time <= newer_than or not tl.is_compaction(time):
            continue
        if instant.is_completed:
            stats: Sequence[WriteStat] = tl.commit_metadata(instant).write_stats()
            out.append((time, [(s.partition_path or "", s.file_id, s.prev_commit) for s in stats]))
        else:
            plan = table.compaction_plan(time)
            ops = plan.operations
            out.append((time, [(op.partition_path or "", op.file_id, op.base_instant_time or "") for op in ops]))
    return out


def gone_slices(appended: set[SliceKey], live: Callable[[str], bool]) -> list[Conflict]:
    """The slices of `appended` whose base instant is no longer live (committed, or a pending compaction). Pure."""
    return [Conflict(base, *key[:2], base) for key in sorted(appended) if not live(base := key[2])]


def newer_base_files(
    appended: set[SliceKey], bases: Iterable[tuple[str, str, str]], live: Callable[[str], bool]
) -> list[Conflict]:
    """The slices of `appended` that a newer live base file (partition, file id, instant) superseded. Pure."""
    newest: dict[tuple[str, str], str] = {}
    for partition, file_id, instant in bases:
        if live(instant) and instant > newest.get((partition, file_id), ""):
            newest[(partition, file_id)] = instant
    out = []
    for partition, file_id, base in sorted(appended):
        newer = newest.get((partition, file_id), "")
        if newer > base:
            out.append(Conflict(newer, partition, file_id, base))
    return out


def _base_files(table: HudiTable, partitions: Iterable[str]) -> list[tuple[str, str, str]]:
    """(partition, file id, instant) of every base file in `partitions` (one listing each)."""
    ext = "." + table.config.base_file_format.lower()
    out = []
    for partition in set(partitions):
        directory = posixpath.join(table.base_path, partition) if partition else table.base_path
        for info in table.storage.list_dir(directory):
            parsed = BaseFileName.try_parse(info.name)
            if parsed is not None and parsed.extension == ext:
                out.append((partition, parsed.file_id, parsed.instant))
    return out


def write_conflicts(table: HudiTable, stats: Iterable[WriteStat]) -> list[Conflict]:
    """The conflicts of a write's stats with the compactions on `table`'s timeline as loaded and the base files
    in the partitions it appended to."""
    appended = appended_slices(stats)
    if not appended:
        return []
    tl, inputs = table.timeline, table.view_inputs()
    pending = {i.requested_time for i in tl.pending_compactions()}
    gone = gone_slices(appended, lambda base: inputs.is_committed(base) or base in pending)
    oldest = min(base for _, _, base in appended)
    taken = find_conflicts(appended, compacted_slices(table, oldest))
    if gone or taken:
        return gone + taken
    return newer_base_files(appended, _base_files(table, {p for p, _, _ in appended}), inputs.is_committed)
