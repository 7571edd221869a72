"""What the store knows of the files a compaction read and wrote: each log file's bytes, records and event-time
range (a link shows its physical file's), each slice's base file and size, and a file group's compactions. The
plan page sums them per operation; the lineage draws them on its nodes."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Connection, and_, func, or_, select

from hudi_meta.index.compactions import DATA_BLOCK_TYPES
from hudi_meta.index.models import (
    compaction_operation_table,
    compaction_plan_table,
    file_group_table,
    file_slice_table,
    log_block_table,
    log_file_table,
)
from hudi_meta.index.states import BlockStatus


@dataclass(frozen=True)
class FileStats:
    size: int
    records: int
    min_event_time_ms: int | None
    max_event_time_ms: int | None


@dataclass(frozen=True)
class Totals:
    """Files summed: how many, and of those the store still knows, bytes, records and event-time range."""

    files: int
    known: int
    bytes: int
    records: int
    min_event_time_ms: int | None
    max_event_time_ms: int | None


def totals(names: Iterable[str], stats: dict[str, FileStats]) -> Totals:
    names = list(names)
    found = [stats[n] for n in names if n in stats]
    lows = [s.min_event_time_ms for s in found if s.min_event_time_ms is not None]
    highs = [s.max_event_time_ms for s in found if s.max_event_time_ms is not None]
    return Totals(
        len(names),
        len(found),
        sum(s.size for s in found),
        sum(s.records for s in found),
        min(lows, default=None),
        max(highs, default=None),
    )


def log_file_stats(conn: Connection, table_id: int, files: set[tuple[str, str]]) -> dict[tuple[str, str], FileStats]:
    """(partition, log file name) -> its stats, for the files the store still holds (a clean's are gone)."""
    if not files:
        return {}
    log_files = log_file_table
    wanted = or_(*(and_(log_files.c.partition_path == p, log_files.c.name == n) for p, n in sorted(files)))
    rows = list(
        conn.execute(
            select(
                log_files.c.id,
                log_files.c.partition_path,
                log_files.c.name,
                log_files.c.size,
                log_files.c.is_link,
                log_files.c.link_target,
            ).where(log_files.c.table_id == table_id, wanted)
        ).all()
    )
    targets = {(r.partition_path, posixpath.basename(r.link_target)) for r in rows if r.is_link and r.link_target}
    if targets - files:
        rows += conn.execute(
            select(
                log_files.c.id,
                log_files.c.partition_path,
                log_files.c.name,
                log_files.c.size,
                log_files.c.is_link,
                log_files.c.link_target,
            ).where(
                log_files.c.table_id == table_id,
                or_(
                    *(and_(log_files.c.partition_path == p, log_files.c.name == n) for p, n in sorted(targets - files))
                ),
            )
        ).all()
    physical = {(r.partition_path, r.name): r for r in rows}
    blocks = _block_stats(conn, table_id, [r.id for r in rows])
    out = {}
    for r in rows:
        source = r
        if r.is_link and r.link_target:
            source = physical.get((r.partition_path, posixpath.basename(r.link_target)), r)
        records, low, high = blocks.get(source.id, (0, None, None))
        out[(r.partition_path, r.name)] = FileStats(int(source.size or 0), records, low, high)
    return out


def _block_stats(conn: Connection, table_id: int, file_ids: list[int]) -> dict[int, tuple[int, int | None, int | None]]:
    blocks = log_block_table
    rows = conn.execute(
        select(
            blocks.c.log_file_id,
            func.coalesce(func.sum(blocks.c.record_count), 0),
            func.min(blocks.c.min_event_time),
            func.max(func.coalesce(blocks.c.max_event_time, blocks.c.min_event_time)),
        )
        .where(
            blocks.c.table_id == table_id,
            blocks.c.log_file_id.in_(file_ids),
            blocks.c.status == BlockStatus.COMMITTED,
            blocks.c.block_type.in_(DATA_BLOCK_TYPES),
        )
        .group_by(blocks.c.log_file_id)
    ).all()
    return {r[0]: (int(r[1]), r[2], r[3]) for r in rows}


def base_files(conn: Connection, table_id: int, groups: set[tuple[str, str]]) -> dict[tuple[str, str, str], int | None]:
    """(partition, file id, base instant) -> the size of that slice's base file (None: not known)."""
    if not groups:
        return {}
    file_groups, slices = file_group_table, file_slice_table
    rows = conn.execute(
        select(file_groups.c.partition_path, file_groups.c.file_id, slices.c.base_instant, slices.c.base_file_size)
        .join(slices, slices.c.file_group_id == file_groups.c.id)
        .where(
            file_groups.c.table_id == table_id,
            slices.c.base_file.is_not(None),
            or_(*(and_(file_groups.c.partition_path == p, file_groups.c.file_id == i) for p, i in sorted(groups))),
        )
    ).all()
    return {(r.partition_path, r.file_id, r.base_instant): r.base_file_size for r in rows}


@dataclass(frozen=True)
class GroupCompaction:
    """One compaction of a file group: its plan's T and state, the base file and log files it merged."""

    instant: str
    state: str
    threshold_ms: int | None
    base_file: str | None
    files_to_compact: list[str]


def group_compactions(conn: Connection, table_id: int, partition: str, file_id: str) -> list[GroupCompaction]:
    plans, operations = compaction_plan_table, compaction_operation_table
    rows = conn.execute(
        select(plans.c.instant, plans.c.state, plans.c.threshold, operations.c.base_file, operations.c.files_to_compact)
        .join(operations, operations.c.plan_id == plans.c.id)
        .where(plans.c.table_id == table_id, operations.c.partition_path == partition, operations.c.file_id == file_id)
        .order_by(plans.c.instant)
    ).all()
    return [GroupCompaction(r[0], r[1], r[2], r[3], list(json.loads(r[4] or "[]"))) for r in rows]
