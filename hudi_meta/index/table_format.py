"""The table version and timeline layout an index was built from, and what happens when the table's change.

A Java writer may upgrade a table under hudi-meta (6 -> 8: `SevenToEightUpgradeHandler` moves the timeline to
`.hoodie/timeline/`, renames every completed instant `<requested>_<completion>.<action>`, rewrites commit metadata
to Avro, moves the archive to the LSM history; log files written later are named by delta commit) or, rarely,
downgrade it. An index built from the old format is then stale as a whole, so it is never patched: the indexer
compares the format it recorded (`hudi_table.table_version` and `timeline_layout`, stamped when a run completes)
with the table's, and on a difference logs one line, drops every indexed row of the table (its registration and
settings stay) and indexes it from scratch. Whatever reads the index without indexing first (`show`, `check`, the
web UI) and the planners under their locks call `require_current_index`, which refuses in one line. hudi-meta
never upgrades a table itself. docs/hudi-1x.md section 8.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, Engine, delete, select

from hudi_meta.errors import StaleIndexError
from hudi_meta.index.models import (
    cleaned_file_table,
    compaction_operation_table,
    compaction_plan_table,
    file_group_table,
    file_slice_table,
    hudi_table,
    instant_table,
    link_table,
    log_block_table,
    log_file_table,
    table_service_table,
)
from hudi_meta.index.registry import table_id_of
from hudi_meta.index.sql import connected
from hudi_meta.table.config import TableConfig
from hudi_meta.table.table import HudiTable


@dataclass(frozen=True)
class TableFormat:
    """What decides how a table's files are named and read: its version and its timeline layout."""

    version: int
    layout: int

    @classmethod
    def of(cls, config: TableConfig) -> TableFormat:
        return cls(config.version, config.timeline_layout)


def on_disk(table: HudiTable) -> TableFormat:
    """The format `hoodie.properties` states now (read again: `table.config` is what it said when opened)."""
    return TableFormat.of(HudiTable.open(table.uri, table.storage.options).config)


def indexed_format(bind: Engine | Connection, table_id: int) -> TableFormat | None:
    """The format the table's index was built from; None for a table not registered."""
    tables = hudi_table
    with connected(bind) as conn:
        found = conn.execute(
            select(tables.c.table_version, tables.c.timeline_layout).where(tables.c.id == table_id)
        ).first()
    return TableFormat(int(found[0]), int(found[1])) if found is not None else None


def change_line(base_path: str, old: TableFormat, new: TableFormat) -> str:
    """`table P was upgraded from version 6 to 8`: what changed (a layout alone, if the version did not)."""
    if old.version != new.version:
        verb = "upgraded" if new.version > old.version else "downgraded"
        return f"table {base_path} was {verb} from version {old.version} to {new.version}"
    return f"table {base_path} moved from timeline layout {old.layout} to {new.layout}"


def stale_message(base_path: str, old: TableFormat, new: TableFormat) -> str:
    """The one line a reader of a stale index refuses with."""
    return f"{change_line(base_path, old, new)} since it was indexed: run `hudi-meta index {base_path}`"


def check_opened_current(table: HudiTable) -> TableFormat:
    """The table's format, refused when `hoodie.properties` changed since `table` was opened: its timeline path and
    naming rules are the old ones, and indexing or planning through it would read an empty or foreign timeline."""
    opened, now = TableFormat.of(table.config), on_disk(table)
    if opened != now:
        raise StaleIndexError(
            f"{change_line(table.base_path, opened, now)} since hudi-meta opened it: run the command again"
        )
    return now


def require_current_index(engine: Engine, table: HudiTable, table_id: int | None = None) -> int | None:
    """The table's id in the store (None: not registered), refused with one line (StaleIndexError) when the
    table's version or layout is no longer what its index was built from, or changed since `table` was opened."""
    table_id = table_id if table_id is not None else table_id_of(engine, table.uri)
    if table_id is None:
        return None
    now = check_opened_current(table)
    recorded = indexed_format(engine, table_id)
    if recorded is not None and recorded != now:
        raise StaleIndexError(stale_message(table.base_path, recorded, now))
    return table_id


def drop_indexed(conn: Connection, table_id: int) -> None:
    """Delete every indexed row of the table (instants, plans and their operations, table services, cleaned files,
    links, file groups, slices, log files, blocks), children first; its registration, settings, service steps,
    leases and sync runs stay."""
    plans = select(compaction_plan_table.c.id).where(compaction_plan_table.c.table_id == table_id)
    groups = select(file_group_table.c.id).where(file_group_table.c.table_id == table_id)
    conn.execute(delete(log_block_table).where(log_block_table.c.table_id == table_id))
    conn.execute(delete(compaction_operation_table).where(compaction_operation_table.c.plan_id.in_(plans)))
    for t in (
        compaction_plan_table,
        link_table,
        cleaned_file_table,
        table_service_table,
        instant_table,
        log_file_table,
    ):
        conn.execute(delete(t).where(t.c.table_id == table_id))
    conn.execute(delete(file_slice_table).where(file_slice_table.c.file_group_id.in_(groups)))
    conn.execute(delete(file_group_table).where(file_group_table.c.table_id == table_id))
