"""Where the next write into each file group goes (planned once on the driver, no listing in tasks).

New log blocks join the file group's newest slice. While a compaction C is pending that is slice C, and
the log version comes after the versions of C's planned links (`.F_C.log.1..k`), even before the links
exist; a link is never appended to. A log file over `hoodie.logfile.max.size` rolls over to a new version.
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_meta.format.file_names import UNKNOWN_WRITE_TOKEN, LogFileName
from hudi_meta.table.fs_view import FileGroup, ViewInputs, committed_base

DEFAULT_LOG_MAX_SIZE = 1024 * 1024 * 1024
LOG_MAX_SIZE_KEY = "hoodie.logfile.max.size"


@dataclass(frozen=True)
class FileGroupTarget:
    partition: str
    file_id: str
    base_instant: str  # the slice new blocks belong to
    base_file: str | None  # the committed base file those blocks apply to (write stat `baseFile`)
    log_file: str  # the log file name to append to
    log_size: int  # its current size (0: a new file)


def target_for(
    fg: FileGroup,
    inputs: ViewInputs,
    planned_links: frozenset[str] = frozenset(),
    log_max_size: int = DEFAULT_LOG_MAX_SIZE,
) -> FileGroupTarget:
    """The target of the next append into `fg`; `planned_links` are link names of a pending compaction."""
    slices = fg.ordered_slices()
    newest = slices[-1]
    base = next((b for s in reversed(slices) if (b := committed_base(s, inputs)) is not None), None)
    on_disk = {lf.name: lf for lf in newest.log_files}
    names = [LogFileName.parse(n) for n in {*on_disk, *planned_links}]
    names = [n for n in names if n.file_id == fg.file_id and n.instant == newest.base_instant]
    link_versions = [LogFileName.parse(n).version for n in planned_links] + [
        lf.parsed.version for lf in newest.log_files if lf.link_target is not None
    ]
    floor = max(link_versions, default=0)
    writable = [
        lf
        for lf in newest.log_files
        if lf.link_target is None and lf.name not in planned_links and lf.parsed.version > floor
    ]
    latest = max(writable, key=lambda lf: lf.parsed.sort_key(), default=None)
    if latest is not None and latest.size < log_max_size:
        return FileGroupTarget(
            fg.partition,
            fg.file_id,
            newest.base_instant,
            base.name if base else None,
            latest.name,
            latest.size,
        )
    version = max((n.version for n in names), default=0) + 1
    name = LogFileName(fg.file_id, newest.base_instant, version, UNKNOWN_WRITE_TOKEN).name
    return FileGroupTarget(fg.partition, fg.file_id, newest.base_instant, base.name if base else None, name, 0)
