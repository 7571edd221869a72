"""The metadata table's listing against storage (`hudi-meta check` on a table with a metadata table).

Readers that list files through the metadata table (MDT) see only what its `files` partition lists, so every
difference from storage is a finding (docs/table-services.md section 4, docs/metadata-table.md section 8):

- `mdt-missing-file`: a committed data file on storage the MDT does not list (MDT readers miss its records);
- `mdt-extra-file`: a file the MDT lists that storage does not hold (MDT readers fail on it, or read a file
  that should be gone); not reported while a clean or rollback is pending, which delete files before they complete;
- `mdt-size-differs`: a listed file whose size differs (a version-6 log file may grow by a pending append);
- `mdt-unreadable`: the properties name a metadata table that cannot be read.

"Committed" on storage: a base file, or a 1.x log file, whose instant is committed (`ViewInputs.is_committed`); a
version-6 log file (named by its slice) that holds a block of a committed write; never a link a pending compaction
planned (it repeats its target's records until the compaction commits).
"""

from __future__ import annotations

import posixpath

from hudi_meta.check.files import MDT_EXTRA_FILE, MDT_MISSING_FILE, MDT_SIZE_DIFFERS, MDT_UNREADABLE, Finding
from hudi_meta.errors import HudiMetaError
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.table.instant import Action
from hudi_meta.table.metadata_table import read_files_partition
from hudi_meta.table.table import HudiTable

REMEDY = "re-create the metadata table with Hudi (or drop it), or run the pending action again"


def committed_data_files(table: HudiTable) -> dict[str, dict[str, int]]:
    """Partition -> file name -> size of the data files on storage that a metadata table must list."""
    inputs = table.view_inputs()
    ext = "." + table.config.base_file_format.lower()
    out: dict[str, dict[str, int]] = {}
    for rel, path in table.partition_folders():
        for info in table.storage.list_dir(path):
            if info.is_dir:
                continue
            log = LogFileName.try_parse(info.name)
            base = BaseFileName.try_parse(info.name) if log is None else None
            if log is not None and log.extension == "log" and not log.cdc:
                if (rel, info.name) in inputs.pending_links:
                    listed = False  # a pending compaction's link: listed once the compaction commits
                elif table.config.version == 6:
                    listed = any(
                        b.instant_time and inputs.is_committed(b.instant_time)
                        for b in read_blocks(table.storage, info.path)
                    )
                else:
                    listed = inputs.is_committed(log.instant)
            else:
                listed = base is not None and base.extension == ext and inputs.is_committed(base.instant)
            if listed:
                out.setdefault(rel, {})[info.name] = info.size
    return out


def metadata_listing_findings(table: HudiTable) -> list[Finding]:
    """Every difference between the MDT's `files` partition and storage; none for a table without an MDT."""
    if not table.config.metadata_partitions:
        return []
    try:
        listing = read_files_partition(table)
    except (HudiMetaError, OSError, ValueError) as e:
        return [Finding(MDT_UNREADABLE, ".hoodie/metadata", f"{e}; {REMEDY}")]
    on_storage = committed_data_files(table)
    deleting = any(i.action in (Action.CLEAN, Action.ROLLBACK) for i in table.timeline.pending())
    out = []
    for partition in sorted(set(on_storage) | set(listing.files)):
        stored, listed = on_storage.get(partition, {}), listing.files.get(partition, {})
        for name in sorted(set(stored) - set(listed)):
            out.append(
                Finding(MDT_MISSING_FILE, _rel(partition, name), f"on storage, not in the metadata table; {REMEDY}")
            )
        for name in sorted(set(listed) - set(stored)):
            exists = table.storage.exists(posixpath.join(table.base_path, partition, name))
            if deleting and not exists:
                continue
            what = "not committed on storage" if exists else "not on storage"
            out.append(
                Finding(MDT_EXTRA_FILE, _rel(partition, name), f"listed by the metadata table, {what}; {REMEDY}")
            )
        for name in sorted(set(stored) & set(listed)):
            grown_v6_log = table.config.version == 6 and name.startswith(".") and stored[name] > listed[name]
            if stored[name] != listed[name] and not grown_v6_log:
                detail = f"{listed[name]} bytes in the metadata table, {stored[name]} on storage; {REMEDY}"
                out.append(Finding(MDT_SIZE_DIFFERS, _rel(partition, name), detail))
    return out


def _rel(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name
