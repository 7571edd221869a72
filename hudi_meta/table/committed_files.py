"""Which data files on storage hold committed data: what a metadata table's `files` partition must list.

One rule for every user (the MDT's first listing, the renames a version-6 rollback records, `check`), read from
storage each time (never the table's cached listing: a rollback asks right after moving files):

- a base file whose instant is committed;
- a 1.x log file (named by its write) whose instant is committed;
- a version-6 log file (named by its slice, which may be a pending compaction's) that holds a block of a committed
  write or rollback: a file holding only a pending write's blocks is invisible until that write completes;
- never a link a pending compaction planned: it repeats its target's records until the compaction commits.
"""

from __future__ import annotations

from collections.abc import Iterable

from hudi_meta.file_group.fs_view import ViewInputs
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.storage.base import FileInfo
from hudi_meta.table.table import HudiTable


def committed_data_files(table: HudiTable, partitions: Iterable[str] | None = None) -> dict[str, dict[str, int]]:
    """Partition ("" for none) -> file name -> size of the committed data files on storage, for every partition
    folder (or those in `partitions`) that holds one."""
    inputs = table.view_inputs()
    wanted = None if partitions is None else set(partitions)
    out: dict[str, dict[str, int]] = {}
    for rel, path in table.partition_folders():
        if wanted is not None and rel not in wanted:
            continue
        files = {
            i.name: i.size for i in table.storage.list_dir(path) if not i.is_dir and _committed(table, inputs, rel, i)
        }
        if files:
            out[rel] = files
    return out


def _committed(table: HudiTable, inputs: ViewInputs, partition: str, info: FileInfo) -> bool:
    log = LogFileName.try_parse(info.name)
    if log is not None:
        if log.extension != "log" or log.cdc or (partition, info.name) in inputs.pending_links:
            return False
        if table.config.version == 6:
            blocks = read_blocks(table.storage, info.path)
            return any(b.instant_time and inputs.is_committed(b.instant_time) for b in blocks)
        return inputs.is_committed(log.instant)
    base = BaseFileName.try_parse(info.name)
    ext = "." + table.config.base_file_format.lower()
    return base is not None and base.extension == ext and inputs.is_committed(base.instant)
