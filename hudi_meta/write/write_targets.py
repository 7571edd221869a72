"""Where the next write into each file group goes (planned once on the driver, no listing in tasks).

New log blocks join the file group's newest slice. While a compaction C is pending that is slice C, and
the log version comes after the versions of C's planned links (`.F_C.log.1..k`), even before the links
exist. Every write starts a new log file (what Hudi does on storage without append): a log file then
holds one write's blocks, so event-time compaction can split a slice between writes, and a link, symlink
or copy, is never written to.

Table versions 8 and 9 name a log file by the delta commit that writes it, version 1 (docs/hudi-1x.md
section 3); the file joins the slice its write completes in, which the file system view finds by completion time.
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_meta.file_group.fs_view import FileGroup, ViewInputs, committed_base
from hudi_meta.format.file_names import UNKNOWN_WRITE_TOKEN, LogFileName


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
    write_instant: str | None = None,
) -> FileGroupTarget:
    """The target of the next write into `fg`: always a new log file in the newest slice.

    Its version comes after every log file of the slice on disk and every name `planned_links` reserves (links
    and the exact log of a pending compaction), so no write ever appends to a link, a copy or another
    write's file. `write_instant`: the writing delta commit, which names the file on versions 8 and 9.
    """
    slices = fg.ordered_slices()
    newest = slices[-1]
    # the base file of the slice the blocks join, as Java's append handle names it: none while that slice is a
    # pending compaction's (naming the previous slice's base file would send readers that follow write stats
    # to a file a clean may delete once the compaction completed)
    base = committed_base(newest, inputs)
    names = [lf.parsed for lf in newest.log_files] + [LogFileName.parse(n) for n in planned_links]
    named_by = write_instant or newest.base_instant
    versions = [n.version for n in names if n.file_id == fg.file_id and n.instant == named_by]
    name = LogFileName(fg.file_id, named_by, max(versions, default=0) + 1, UNKNOWN_WRITE_TOKEN).name
    return FileGroupTarget(fg.partition, fg.file_id, newest.base_instant, base.name if base else None, name, 0)
