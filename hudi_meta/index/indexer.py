"""The incremental indexer: mirrors a table's timeline, file slices, log blocks and links into the store.

A run reads only what is new: instants that appeared or changed state, log files that grew (scanned from
their last indexed offset), files that disappeared. Unchanged log files are never opened. Work is
committed in batches, each a transaction that also advances the files' indexed offsets, so a run killed
at any point leaves a consistent index that the next run completes.

Removals are indexed like additions: a run leaves the store equal to the table's files and active timeline.
Instants, plans (with their operations and planned links), table services, file groups, slices, log files
and blocks that are gone leave the store; only archived instants stay (completed, `"archived": true` in their
summary), with the plans and links of archived compactions. Block status follows the one rule for
"committed" (`ViewInputs.is_committed`: completed on the active timeline, or archived).

One module a step: `registry` (the table), `timeline` (instants, plans, table services), `files` (file
groups, slices, log files, block scans), `event_times` (block status and min event times), `lineage` (links),
`late_records` (records below the last event-time compaction's threshold in the blocks written after it).
A table whose version or timeline layout changed since it was indexed is indexed again from scratch
(`table_format`).
"""

from __future__ import annotations

import logging

from sqlalchemy import Engine

from hudi_meta.gc_pause import paused_gc
from hudi_meta.index.event_time_source import check_event_time_field
from hudi_meta.index.event_times import resolve_event_times, resolve_status
from hudi_meta.index.files import sync_files
from hudi_meta.index.instants import sync_timeline
from hudi_meta.index.late_records import count_late_records
from hudi_meta.index.lineage import sync_links
from hudi_meta.index.locks import index_lock
from hudi_meta.index.registry import event_time_field_of, mark_indexed, register_table, table_id_of
from hudi_meta.index.run_stats import IndexRunStats
from hudi_meta.index.table_format import change_line, check_opened_current, drop_indexed, indexed_format
from hudi_meta.progress import Report, silent
from hudi_meta.table.table import HudiTable

# `table_id_of` and `event_time_field_of` (hudi_meta.index.registry) are re-exported for callers not moved yet
__all__ = ["Indexer"]

log = logging.getLogger(__name__)


class Indexer:
    """Index one table into the store behind `engine`."""

    def __init__(self, engine: Engine, table: HudiTable, batch_files: int = 200, progress: Report = silent) -> None:
        self.engine = engine
        self.table = table
        self.batch_files = batch_files
        self.progress = progress
        self.stats = IndexRunStats()
        self.table_id: int | None = None

    def run(self, event_time_field: str | None = None) -> IndexRunStats:
        """Bring the table's index up to date; `event_time_field` overrides the table's own field."""
        engine, table = self.engine, self.table
        if not event_time_field:
            self._check_registered_field()
        with index_lock(engine, table.uri), paused_gc():  # a first run holds 10^5 blocks and rows at once
            known_id = table_id_of(engine, table.uri)
            before = event_time_field_of(engine, known_id) if known_id is not None else None
            table_id = self.table_id = register_table(engine, table, event_time_field)
            current = check_opened_current(table)
            recorded = indexed_format(engine, table_id)
            if recorded is not None and recorded != current:
                # upgraded or downgraded by another writer: names, paths and completion times all changed
                log.warning(
                    "%s since it was indexed: indexing it again from scratch",
                    change_line(table.base_path, recorded, current),
                )
                with engine.begin() as conn:
                    drop_indexed(conn, table_id)
            # after a field change headers must be read again: they come before write stats
            field_changed = known_id is not None and before != event_time_field_of(engine, table_id)
            sync_timeline(engine, table, table_id, self.stats)
            sync_files(engine, table, table_id, self.stats, self.batch_files, self.progress)
            resolve_status(engine, table, table_id)
            resolve_event_times(engine, table, table_id, self.stats, reread_headers=field_changed)
            sync_links(engine, table, table_id, self.stats)
            count_late_records(engine, table, table_id, self.stats)
            mark_indexed(engine, table_id, current.version, current.layout)
        level = logging.INFO if self.stats.changed() else logging.DEBUG  # a service polls: quiet when nothing is new
        log.log(level, "indexed %s: %s", table.base_path, self.stats)
        return self.stats

    def _check_registered_field(self) -> None:
        """A field registered while the table had no schema to check it by (an empty table) is checked on every
        run: once the table has a schema, a field that is no column of it is refused before the store changes.
        The table's own field is Hudi's setting, not ours to refuse."""
        known_id = table_id_of(self.engine, self.table.uri)
        registered = event_time_field_of(self.engine, known_id) if known_id is not None else None
        if registered and registered != self.table.config.event_time_field:
            unchecked = check_event_time_field(self.table, registered)
            if unchecked is not None:
                log.warning("%s", unchecked)
