"""What a table must be for hudi-meta to compact it (checked by the scheduler, the executor and the CLI)."""

from __future__ import annotations

from hudi_meta.errors import UnsupportedTableError
from hudi_meta.metadata.sync import metadata_sync
from hudi_meta.table.table import HudiTable


def check_compactable(table: HudiTable) -> None:
    """Refuse tables we cannot compact, with the setting to change (or the metadata table partition we cannot
    keep)."""
    cfg = table.config
    if not cfg.is_mor or cfg.version not in (6, 8, 9):
        raise UnsupportedTableError(
            f"{table.base_path}: compaction needs a MERGE_ON_READ table of version 6, 8 or 9 "
            f"(this is {cfg.table_type} version {cfg.version})"
        )
    metadata_sync(table)
