"""The metadata table's listing against storage (`hudi-meta check` on a table with a metadata table).

Readers that list files through the metadata table (MDT) see only what its `files` partition lists, so every
difference from storage is a finding (docs/table-services.md section 4, docs/metadata-table.md section 8):

- `mdt-missing-file`: a committed data file on storage the MDT does not list (MDT readers miss its records);
- `mdt-extra-file`: a file the MDT lists that storage does not hold (MDT readers fail on it, or read a file
  that should be gone); not reported while a clean or rollback is pending, which delete files before they complete;
- `mdt-size-differs`: a listed file whose size differs (a version-6 log file may grow by a pending append);
- `mdt-unreadable`: the properties name a metadata table that cannot be read.

A rollback killed between its moves and its MDT deltacommit (a version-6 compaction taken back renames log files)
leaves the MDT behind storage until it is run again, which compares the two and records the renames: while a
rollback is pending, the remedy named is to finish it.

"Committed" on storage: `hudi_meta.table.committed_files` (the rule the MDT's writers follow).
"""

from __future__ import annotations

import posixpath

from hudi_meta.check.files import MDT_EXTRA_FILE, MDT_MISSING_FILE, MDT_SIZE_DIFFERS, MDT_UNREADABLE, Finding
from hudi_meta.errors import HudiMetaError
from hudi_meta.table.committed_files import committed_data_files
from hudi_meta.table.metadata_table import read_files_partition
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action
from hudi_meta.write.failed_writes import rollback_target

REMEDY = "re-create the metadata table with Hudi (or drop it), or run the pending action again"


def metadata_listing_findings(table: HudiTable) -> list[Finding]:
    """Every difference between the MDT's `files` partition and storage; none for a table without an MDT."""
    if not table.config.metadata_partitions:
        return []
    try:
        listing = read_files_partition(table)
    except (HudiMetaError, OSError, ValueError) as e:
        return [Finding(MDT_UNREADABLE, ".hoodie/metadata", f"{e}; {REMEDY}")]
    on_storage = committed_data_files(table)
    pending = table.timeline.pending()
    deleting = any(i.action in (Action.CLEAN, Action.ROLLBACK) for i in pending)
    rollbacks = [i.requested_time for i in pending if i.action == Action.ROLLBACK]
    remedy = _finish_rollback(table, rollbacks[0]) if rollbacks else REMEDY
    out = []
    for partition in sorted(set(on_storage) | set(listing.files)):
        stored, listed = on_storage.get(partition, {}), listing.files.get(partition, {})
        for name in sorted(set(stored) - set(listed)):
            out.append(
                Finding(MDT_MISSING_FILE, _rel(partition, name), f"on storage, not in the metadata table; {remedy}")
            )
        for name in sorted(set(listed) - set(stored)):
            exists = table.storage.exists(posixpath.join(table.base_path, partition, name))
            if deleting and not exists:
                continue
            what = "not committed on storage" if exists else "not on storage"
            out.append(
                Finding(MDT_EXTRA_FILE, _rel(partition, name), f"listed by the metadata table, {what}; {remedy}")
            )
        for name in sorted(set(stored) & set(listed)):
            grown_v6_log = table.config.version == 6 and name.startswith(".") and stored[name] > listed[name]
            if stored[name] != listed[name] and not grown_v6_log:
                detail = f"{listed[name]} bytes in the metadata table, {stored[name]} on storage; {REMEDY}"
                out.append(Finding(MDT_SIZE_DIFFERS, _rel(partition, name), detail))
    return out


def _finish_rollback(table: HudiTable, rollback_time: str) -> str:
    target = rollback_target(table, rollback_time) or "<instant>"
    return f"rollback {rollback_time} is pending: finish it (hudi-meta rollback {table.base_path} {target})"


def _rel(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name
