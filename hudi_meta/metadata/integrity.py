"""Is the metadata table (MDT) as a writer may find it? Read before hudi-meta's first write to a table.

A table service must never make a table worse than it found it. hudi-meta's commits write to the MDT (a
deltacommit per action, and the MDT's own compaction, clean and archival), reading it first: the latest slice of
every file group (the MDT compaction merges them; the writer encodes in the newest base file's schema; the
version-6 rename compares the `files` listing with storage). Writing on top of an MDT that cannot be read as Java
and hudi-rs read it buries the damage under new instants and makes it worse. So every command that writes reads
everything it will read of the MDT before its first write (`refuse_damaged`, called by `sync.metadata_sync`, which
every precondition and write path calls) and refuses in one line while anything is wrong:

- the properties name MDT partitions but `.hoodie/metadata` or its `hoodie.properties` is gone, or a named
  partition's folder holds no file group (`missing`: one message for every command, `missing_metadata_table`);
- a file of a file group's latest slice (the base HFile, every block of its log files that readers count) cannot
  be read and decoded (bytes flipped, truncated, emptied);
- two base files of one completed instant in one file group (Java and hudi-rs refuse to read such a group);
- the base file a completed MDT compaction wrote for a file group, that group's newest, is gone.

A pending MDT compaction with base files of its own (another writer killed inside it, or its completed file lost)
is not damage: it is rolled back before it runs again (`compaction.compact_if_necessary`, as Java does).
`hudi-meta check` reports the same findings (docs/metadata-table.md section 8). docs/metadata-table.md section 6.7.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from hudi_meta.errors import HudiMetaError, first_line
from hudi_meta.file_group.fs_view import FileGroup, latest_slice_for_snapshot
from hudi_meta.format.config_keys import METADATA_PARTITIONS
from hudi_meta.format.file_names import BaseFileName
from hudi_meta.metadata.init import metadata_partitions_now
from hudi_meta.table.metadata_table import MetadataTableError, metadata_table_path, slice_records, valid_instants
from hudi_meta.table.table import META_DIR, PROPERTIES, HudiTable
from hudi_meta.timeline.instant import Action

REMEDY = (
    "hudi-meta writes nothing to this table until the metadata table is repaired: rebuild it with Hudi (hudi-cli "
    "'metadata delete' then 'metadata create'), or turn it off (a Hudi write with hoodie.metadata.enable=false)"
)
# what a kind of damage is called in findings and refusals
UNREADABLE = "unreadable"
MISSING = "missing"
DUPLICATE_BASE_FILE = "duplicate-base-file"
LOST_BASE_FILE = "lost-base-file"


class MetadataTableDamagedError(MetadataTableError):
    """The MDT is not as a writer may find it: hudi-meta refuses to write to the table."""


@dataclass(frozen=True)
class MetadataDamage:
    """One thing wrong with the MDT: its kind, the path (relative to the data table's base path), what is wrong."""

    kind: str
    path: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


def missing_metadata_table(table: HudiTable, what: str) -> str:
    """The one message for an MDT the properties name but storage does not hold (`what`: what is missing); the
    remedy is added where it is shown."""
    named = f"{METADATA_PARTITIONS.name}={','.join(metadata_partitions_now(table))}"
    return f"{table.base_path}: hoodie.properties names metadata table partitions ({named}), but {what}"


def refuse_damaged(table: HudiTable) -> None:
    """Raise MetadataTableDamagedError (one line: the first damage, how many more, the remedy) unless the MDT
    is as a writer may find it; nothing for a table without one."""
    damage = metadata_damage(table)
    if not damage:
        return
    if damage[0].kind == MISSING:
        raise MetadataTableDamagedError(f"{damage[0].problem}; {REMEDY}")
    more = f" (and {len(damage) - 1} more: hudi-meta check lists them)" if len(damage) > 1 else ""
    raise MetadataTableDamagedError(f"{table.base_path}: the metadata table is damaged: {damage[0]}{more}; {REMEDY}")


def metadata_damage(table: HudiTable) -> list[MetadataDamage]:
    """Everything wrong with the MDT that a writer would read or write over (see the module docstring)."""
    partitions = metadata_partitions_now(table)
    if not partitions:
        return []
    root = metadata_table_path(table)
    rel_root = posixpath.join(META_DIR, "metadata")
    for path, what in ((root, f"{root} does not exist"), (posixpath.join(root, META_DIR, PROPERTIES), None)):
        if not table.storage.exists(path):
            what = what or f"{path} does not exist (the metadata table's own properties)"
            return [MetadataDamage(MISSING, rel_root, missing_metadata_table(table, what))]
    try:
        mdt = HudiTable.open(table.storage.uri(root), table.storage.options)
        groups = mdt.file_groups()
        is_valid = valid_instants(table, mdt)
    except Exception as e:  # any failure to read it is the finding
        return [MetadataDamage(UNREADABLE, rel_root, f"cannot be opened: {_reason(e)}")]
    out: list[MetadataDamage] = []
    for partition in partitions:
        in_partition = [fg for fg in groups if fg.partition == partition]
        if not in_partition:
            what = f"{posixpath.join(root, partition)} holds no file group"
            out.append(MetadataDamage(MISSING, f"{rel_root}/{partition}", missing_metadata_table(table, what)))
            continue
        out += _duplicate_base_files(mdt, partition, rel_root)
        for fg in in_partition:
            out += _unreadable(mdt, fg, is_valid, rel_root)
    return out + _lost_base_files(mdt, set(partitions), rel_root)


def _unreadable(mdt: HudiTable, fg: FileGroup, is_valid: Callable[[str], bool], rel_root: str) -> list[MetadataDamage]:
    """The group's latest slice read as readers read it (base HFile, the blocks they count), or why it cannot be."""
    picked = latest_slice_for_snapshot(fg, mdt.view_inputs())
    if picked is None:
        return []
    base, logs = picked
    try:
        slice_records(mdt, base.path if base else None, [lf.path for lf in logs], is_valid)
    except Exception as e:  # any failure to read it is the finding
        full = getattr(e, "path", None) or _named_path(e, mdt.base_path)
        where = full[len(mdt.base_path) + 1 :] if full else (base.path if base is not None else fg.file_id)
        return [MetadataDamage(UNREADABLE, f"{rel_root}/{where}", f"cannot be read: {_reason(e, full)}")]
    return []


def _named_path(e: BaseException, root: str) -> str | None:
    """The MDT file an error message starts with (CorruptFileError names its file first), if any."""
    line = first_line(e)
    return line.split(": ", 1)[0] if line.startswith(root + "/") else None


def _duplicate_base_files(mdt: HudiTable, partition: str, rel_root: str) -> list[MetadataDamage]:
    """Two base files of one completed instant in one file group (the file-system view keeps one, so the folder
    is listed here)."""
    inputs = mdt.view_inputs()
    names = [
        parsed
        for info in mdt.storage.list_dir(posixpath.join(mdt.base_path, partition))
        if (parsed := BaseFileName.try_parse(info.name)) is not None
    ]
    counts = Counter((n.file_id, n.instant) for n in names if inputs.is_committed(n.instant))
    return [
        MetadataDamage(
            DUPLICATE_BASE_FILE,
            f"{rel_root}/{partition}",
            f"file group {file_id} has {count} base files of instant {instant} (readers accept one)",
        )
        for (file_id, instant), count in sorted(counts.items())
        if count > 1
    ]


def _lost_base_files(mdt: HudiTable, partitions: set[str], rel_root: str) -> list[MetadataDamage]:
    """Base files the newest completed MDT compaction of each file group wrote, gone from storage (an MDT clean
    removes only older slices, so the newest compaction's file must be there)."""
    newest: dict[tuple[str, str], str] = {}  # (partition, file id) -> its newest compacted base file (MDT-relative)
    for instant in mdt.timeline.completed():
        if instant.action != Action.COMMIT:
            continue
        for partition, stats in mdt.timeline.commit_metadata(instant).partition_to_write_stats.items():
            if partition in partitions:
                newest.update({(partition, s.file_id): s.path for s in stats if s.path})
    return [
        MetadataDamage(LOST_BASE_FILE, f"{rel_root}/{path}", "written by a completed compaction, gone from storage")
        for path in sorted(newest.values())
        if not mdt.storage.exists(posixpath.join(mdt.base_path, path))
    ]


def _reason(e: BaseException, path: str | None = None) -> str:
    """The error as one line without the path the finding already names (and its type where it is not ours)."""
    line = first_line(e)
    if path:
        line = line.replace(f" of {path}", "").replace(f"{path}: ", "")
    return line if isinstance(e, HudiMetaError) else f"{type(e).__name__}: {line}"
