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
    f = log_file_table
    wanted = or_(*(and_(f.c.partition_path == p, f.c.name == n) for p, n in sorted(files)))
    rows = list(
        conn.execute(
            select(f.c.id, f.c.partition_path, f.c.name, f.c.size, f.c.is_link, f.c.link_target).where(
                f.c.table_id == table_id, wanted
            )
        ).all()
    )
    targets = {(r.partition_path, posixpath.basename(r.link_target)) for r in rows if r.is_link and r.link_target}
    if targets - files:
        rows += conn.execute(
            select(f.c.id, f.c.partition_path, f.c.name, f.c.size, f.c.is_link, f.c.link_target).where(
                f.c.table_id == table_id,
                or_(*(and_(f.c.partition_path == p, f.c.name == n) for p, n in sorted(targets - files))),
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
    b = log_block_table
    rows = conn.execute(
        select(
            b.c.log_file_id,
            func.coalesce(func.sum(b.c.record_count), 0),
            func.min(b.c.min_event_time),
            func.max(func.coalesce(b.c.max_event_time, b.c.min_event_time)),
        )
        .where(
            b.c.table_id == table_id,
            b.c.log_file_id.in_(file_ids),
            b.c.status == BlockStatus.COMMITTED,
            b.c.block_type.in_(DATA_BLOCK_TYPES),
        )
        .group_by(b.c.log_file_id)
    ).all()
    return {r[0]: (int(r[1]), r[2], r[3]) for r in rows}


def base_files(conn: Connection, table_id: int, groups: set[tuple[str, str]]) -> dict[tuple[str, str, str], int | None]:
    """(partition, file id, base instant) -> the size of that slice's base file (None: not known)."""
    if not groups:
        return {}
    g, s = file_group_table, file_slice_table
    rows = conn.execute(
        select(g.c.partition_path, g.c.file_id, s.c.base_instant, s.c.base_file_size)
        .join(s, s.c.file_group_id == g.c.id)
        .where(
            g.c.table_id == table_id,
            s.c.base_file.is_not(None),
            or_(*(and_(g.c.partition_path == p, g.c.file_id == i) for p, i in sorted(groups))),
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
    p, o = compaction_plan_table, compaction_operation_table
    rows = conn.execute(
        select(p.c.instant, p.c.state, p.c.threshold, o.c.base_file, o.c.files_to_compact)
        .join(o, o.c.plan_id == p.c.id)
        .where(p.c.table_id == table_id, o.c.partition_path == partition, o.c.file_id == file_id)
        .order_by(p.c.instant)
    ).all()
    return [GroupCompaction(r[0], r[1], r[2], r[3], list(json.loads(r[4] or "[]"))) for r in rows]
