"""What the index says about one table, as plain comparable data free of row ids and run times.

Two stores that index the same files hold equal fingerprints, however they got there (one run on a fresh
store, or many incremental runs). Records that only history explains are left out: archived instants (gone
from the active timeline, kept by an incremental store, unknown to a fresh one), their plans and links, and
late-record counts made against an archived compaction's threshold.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from sqlalchemy import Connection, Engine, select

from hudi_meta.freshness import last_event_time_compaction
from hudi_meta.index import event_time_source as ets
from hudi_meta.index.compactions import completed_compactions
from hudi_meta.index.instants import ARCHIVED_KEY
from hudi_meta.index.models import (
    cleaned_file_table,
    compaction_operation_table,
    compaction_plan_table,
    file_group_table,
    file_slice_table,
    instant_table,
    link_table,
    log_block_table,
    log_file_table,
)

Row = tuple[Any, ...]


def _knowledge(source: str | None) -> str:
    """What a block's min event time is, not where it was read: an archived instant's write stat is gone, so a
    fresh index scans the records that the stat summarised (the same times)."""
    if source in ets.KNOWN:
        return "known"
    if source in (ets.NO_EVENT_TIME, ets.UNAVAILABLE):
        return source
    return "unresolved"


def _instants(conn: Connection, table_id: int, archived_too: Collection[str]) -> tuple[list[Row], set[str]]:
    """The instants a fresh index would also know, and the archived ones (marked, or in `archived_too`) that
    the other records are filtered by."""
    instants: list[Row] = []
    archived: set[str] = set()
    for r in conn.execute(select(instant_table).where(instant_table.c.table_id == table_id)):
        summary = json.loads(r.summary)
        if summary.get(ARCHIVED_KEY) or r.requested_time in archived_too:
            archived.add(r.requested_time)
            continue
        summary_json = json.dumps(summary, sort_keys=True)
        instants.append((r.requested_time, r.action, r.state, r.completion_time, r.is_compaction, summary_json))
    return instants, archived


def _file_groups(conn: Connection, table_id: int) -> tuple[list[Row], list[Row], dict[int, Row]]:
    """File groups, slices, and each slice's row id mapped to its Hudi key (partition, file id, base instant),
    which log files name their slice by."""
    groups: dict[int, Row] = {}
    file_groups: list[Row] = []
    for r in conn.execute(select(file_group_table).where(file_group_table.c.table_id == table_id)):
        groups[r.id] = (r.partition_path, r.file_id)
        file_groups.append((r.partition_path, r.file_id, r.replaced))
    slices: dict[int, Row] = {}
    slice_rows: list[Row] = []
    for r in conn.execute(
        select(file_slice_table)
        .join(file_group_table, file_group_table.c.id == file_slice_table.c.file_group_id)
        .where(file_group_table.c.table_id == table_id)
    ):
        slices[r.id] = (*groups[r.file_group_id], r.base_instant)
        slice_rows.append((*slices[r.id], r.base_file, r.base_file_size, r.base_committed))
    return file_groups, slice_rows, slices


def _log_files(conn: Connection, table_id: int, slices: dict[int, Row]) -> tuple[list[Row], dict[int, Row]]:
    """Log files with their slice's key, and each file's row id mapped to (partition, name) for its blocks."""
    files: dict[int, Row] = {}
    log_files: list[Row] = []
    for r in conn.execute(select(log_file_table).where(log_file_table.c.table_id == table_id)):
        files[r.id] = (r.partition_path, r.name)
        file_slice = slices.get(r.file_slice_id) if r.file_slice_id is not None else None
        log_files.append(
            (
                r.partition_path,
                r.name,
                file_slice,
                r.file_id,
                r.base_instant,
                r.version,
                r.write_token,
                r.size,
                r.indexed_offset,
                r.is_link,
                r.link_target,
            )
        )
    return log_files, files


def _blocks(conn: Connection, table_id: int, files: dict[int, Row], archived: set[str]) -> list[Row]:
    """Blocks keyed by their file; late-record counts are left out when only history explains them."""
    blocks = log_block_table
    # late-record counts follow the last event-time compaction: when the store knows it only as archived (a
    # fresh index does not know it at all), only history explains them
    last = last_event_time_compaction(completed_compactions(conn, table_id))
    counts_from_history = last is not None and last.instant in archived
    return [
        (
            *files[r.log_file_id],
            r.offset,
            r.length,
            r.block_type,
            r.instant,
            r.target_instant,
            r.record_count,
            r.status,
            r.min_event_time,
            r.max_event_time,
            _knowledge(r.min_event_time_source),
            None if counts_from_history else r.late_threshold,
            None if counts_from_history else r.late_records,
        )
        for r in conn.execute(select(blocks).where(blocks.c.table_id == table_id))
    ]


def _plans(conn: Connection, table_id: int, archived: set[str]) -> list[Row]:
    """Compaction plans of active instants, each with its sorted operations."""
    operations: dict[int, list[Row]] = {}
    for r in conn.execute(
        select(compaction_operation_table)
        .join(compaction_plan_table, compaction_plan_table.c.id == compaction_operation_table.c.plan_id)
        .where(compaction_plan_table.c.table_id == table_id)
    ):
        operations.setdefault(r.plan_id, []).append(
            (r.partition_path, r.file_id, r.base_instant, r.base_file, r.files_to_compact, r.metrics)
        )
    return [
        (r.instant, r.state, r.strategy, r.threshold, r.mode, r.exact, tuple(sorted(operations.get(r.id, []))))
        for r in conn.execute(select(compaction_plan_table).where(compaction_plan_table.c.table_id == table_id))
        if r.instant not in archived
    ]


def _links(conn: Connection, table_id: int, archived: set[str]) -> list[Row]:
    """Links; one made by an archived compaction is kept without its instant only while its symlink is on disk
    (all a fresh index can see of it)."""
    symlinks = {
        (r.partition_path, r.name)
        for r in conn.execute(
            select(log_file_table).where(log_file_table.c.table_id == table_id, log_file_table.c.is_link)
        )
    }
    links: list[Row] = []
    for r in conn.execute(select(link_table).where(link_table.c.table_id == table_id)):
        instant = r.compaction_instant
        if instant in archived:  # only its symlink on disk tells a fresh index about it, without the instant
            if (r.partition_path, r.link_name) not in symlinks:
                continue
            instant = None
        links.append((r.partition_path, r.link_name, r.target_name, r.via_name, instant, r.state))
    return links


def _cleaned_files(conn: Connection, table_id: int, archived: set[str]) -> list[Row]:
    """Files removed by cleans that are still on the active timeline."""
    cleaned_files = cleaned_file_table
    return [
        (r.clean_instant, r.partition_path, r.name)
        for r in conn.execute(select(cleaned_files).where(cleaned_files.c.table_id == table_id))
        if r.clean_instant not in archived
    ]


def index_fingerprint(engine: Engine, table_id: int, archived_too: Collection[str] = ()) -> dict[str, list[Row]]:
    """Instants (action, state), file groups, slices, log files, blocks (status, event times and whether they
    are known, none or unknown, late-record counts), plans with their operations, links and cleaned files of
    `table_id`, each a sorted list of tuples keyed by Hudi names. `archived_too`: instants the caller found
    archived on the table that the store has not marked yet, left out as the marked ones are."""
    with engine.connect() as conn:
        instants, archived = _instants(conn, table_id, archived_too)
        file_groups, slices, slice_keys = _file_groups(conn, table_id)
        log_files, file_keys = _log_files(conn, table_id, slice_keys)
        blocks = _blocks(conn, table_id, file_keys, archived)
        plans = _plans(conn, table_id, archived)
        links = _links(conn, table_id, archived)
        cleaned = _cleaned_files(conn, table_id, archived)
    return {
        "instants": sorted(instants),
        "file_groups": sorted(file_groups),
        "slices": sorted(slices),
        "log_files": sorted(log_files, key=repr),
        "blocks": sorted(blocks, key=repr),
        "plans": sorted(plans, key=repr),
        "links": sorted(links, key=repr),
        "cleaned_files": sorted(cleaned),
    }
