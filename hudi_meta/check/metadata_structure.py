"""The metadata table's structure (`hudi-meta check` on a table with a metadata table): what every writing command
refuses before its first write (`hudi_meta.metadata.integrity`, docs/metadata-table.md section 6.7), as findings:

- `mdt-unreadable`: the MDT the properties name is gone (the one message every command gives), or a file of a
  latest slice cannot be read (named);
- `mdt-duplicate-base-file`: two base files of one completed instant in one file group (Java and hudi-rs refuse
  to read the group);
- `mdt-lost-base-file`: the base file of a file group's newest completed MDT compaction is gone.

While any of these stands the MDT's contents are not compared further (`check_table`): the listing and index
scans would read the same damaged files.
"""

from __future__ import annotations

from hudi_meta.check.files import MDT_DUPLICATE_BASE_FILE, MDT_LOST_BASE_FILE, MDT_UNREADABLE, Finding
from hudi_meta.metadata.integrity import DUPLICATE_BASE_FILE, LOST_BASE_FILE, REMEDY, metadata_damage
from hudi_meta.table.table import HudiTable

_KIND = {DUPLICATE_BASE_FILE: MDT_DUPLICATE_BASE_FILE, LOST_BASE_FILE: MDT_LOST_BASE_FILE}


def metadata_structure_findings(table: HudiTable) -> list[Finding]:
    """One finding per thing a writer would refuse; none for a table without an MDT or with a sound one."""
    out = []
    for damage in metadata_damage(table):
        kind = _KIND.get(damage.kind, MDT_UNREADABLE)
        out.append(Finding(kind, damage.path, f"{damage.problem}; {REMEDY}"))
    return out
