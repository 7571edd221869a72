"""What completed cleans deleted, and the check that a time-travel or incremental read needs none of it.

A read as of instant X reads, per file group, the newest slice whose base instant is at or before X (walking
back past slices a compaction opened but did not commit). When a completed clean on the active timeline
deleted files of that slice, the read would silently miss records: it is refused with one line naming the
slice, the clean and the earliest instant a read can be as of. Only cleans still on the active timeline are
known; a clean archived long ago can only have deleted slices older than the active timeline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from hudi_meta.errors import CleanedDataError
from hudi_meta.file_group.fs_view import FileGroup, ViewInputs
from hudi_meta.format.file_names import slice_of_file
from hudi_meta.format.table_service_metadata import CleanMetadata
from hudi_meta.timeline.instant import Action
from hudi_meta.timeline.timeline import Timeline

GroupKey = tuple[str, str]  # (partition, file id)


def cleaned_slices(timeline: Timeline) -> dict[GroupKey, dict[str, str]]:
    """(partition, file id) -> {slice base instant: clean instant} for every slice a completed clean on the
    active timeline deleted files of (files kept as link targets leave the slice incomplete all the same)."""
    out: dict[GroupKey, dict[str, str]] = {}
    for instant in timeline.completed():
        if instant.action != Action.CLEAN:
            continue
        data = timeline.read_bytes(instant)
        if not data:
            continue  # Java treats an empty clean as "nothing cleaned"
        metadata = CleanMetadata.from_bytes(data)
        for partition, pm in metadata.partition_metadata.items():
            for name in (*pm.delete_path_patterns, *pm.success_delete_files):
                found = slice_of_file(name.rsplit("/", 1)[-1])
                if found is not None:
                    out.setdefault((partition, found[0]), {}).setdefault(found[1], instant.requested_time)
    return out


@dataclass(frozen=True)
class CleanedNeed:
    """The first slice a read needs that a clean deleted files of."""

    partition: str
    file_id: str
    slice: str
    clean: str
    readable_from: str  # the earliest instant every cleaned file group can be read as of


def cleaned_need(
    groups: Iterable[FileGroup], cleaned: dict[GroupKey, dict[str, str]], inputs: ViewInputs, as_of: str
) -> CleanedNeed | None:
    """The slice (if any) a read as of `as_of` needs whose files a clean deleted (pure)."""
    on_disk = {(g.partition, g.file_id): g for g in groups}
    need: CleanedNeed | None = None
    readable_from = ""
    for key, deleted in sorted(cleaned.items()):
        if key in inputs.replaced:
            continue  # readers skip replaced file groups
        group = on_disk.get(key)
        present = set(group.slices) if group is not None else set()
        intact = sorted(b for b in present - deleted.keys() if b > max(deleted))
        readable_from = max(readable_from, intact[0] if intact else max(deleted))
        for base in sorted(present | deleted.keys(), reverse=True):
            if base > as_of:
                continue
            if base in deleted:
                if need is None:
                    need = CleanedNeed(key[0], key[1], base, deleted[base], "")
                break
            if inputs.is_committed(base):
                break  # a committed slice still whole: the read is served by it
    if need is None:
        return None
    return CleanedNeed(need.partition, need.file_id, need.slice, need.clean, readable_from)


def check_not_cleaned(
    timeline: Timeline, groups: Iterable[FileGroup], inputs: ViewInputs, kind: str, as_of: str
) -> None:
    """Raise CleanedDataError when a `kind` read as of `as_of` needs files a clean deleted."""
    if inputs.table_version >= 8:
        _check_retained(timeline, kind, as_of)
        return
    cleaned = cleaned_slices(timeline)
    if not cleaned:
        return
    need = cleaned_need(groups, cleaned, inputs, as_of)
    if need is None:
        return
    where = f"partition {need.partition!r}, " if need.partition else ""
    raise CleanedDataError(
        f"a {kind} read as of {as_of} needs slice {need.slice} of file group {need.file_id} ({where}"
        f"deleted by clean {need.clean}); read as of {need.readable_from} or later, or retain more "
        "(hoodie.clean.commits.retained) before cleaning"
    )


def _check_retained(timeline: Timeline, kind: str, as_of: str) -> None:
    """Versions 8 and 9 name a log file by the write that made it, not by its slice, so a deleted log file does not
    say which slice it left; a read is refused, more strictly, when it is as of an instant before what a completed
    clean retained: its earliest commit to retain, or (a file-versions clean, which keeps no commit) its own
    instant."""
    for instant in timeline.completed():
        if instant.action != Action.CLEAN:
            continue
        data = timeline.read_bytes(instant)
        if not data:
            continue
        metadata = CleanMetadata.from_bytes(data)
        if not metadata.total_files_deleted:
            continue
        retained = metadata.earliest_commit_to_retain or instant.requested_time
        if as_of < retained:
            raise CleanedDataError(
                f"a {kind} read as of {as_of} may need files clean {instant.requested_time} deleted; read as of "
                f"{retained} or later, or retain more (hoodie.clean.commits.retained) before cleaning"
            )
