"""Each log file's summary of its data and delete blocks, kept on its `log_file` row, so planning reads one row
per log file instead of aggregating every `log_block` row (`compaction/candidates.py`):

- `min_event_time`: the min event time of its committed blocks (None: no committed block has one);
- `last_block_instant`: the newest instant of its blocks, whatever their status;
- `has_uncommitted`: one of its blocks is uncommitted;
- `has_unknown_event_time`: a committed block's min event time is not resolved, or unavailable.

Every transaction that inserts, deletes or updates blocks calls `refresh_summaries` for the files whose
blocks it changed, after the change: a reader never sees a summary out of step with its blocks.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import Connection, and_, bindparam, case, func, or_, select, update

from hudi_meta.index.event_time_source import DATA_TYPES, UNAVAILABLE
from hudi_meta.index.models import log_block_table, log_file_table
from hudi_meta.index.sql import chunks, plain_rows
from hudi_meta.index.states import BlockStatus

Summary = tuple[int | None, str | None, bool, bool]  # the four columns, in the order above
EMPTY: Summary = (None, None, False, False)  # a file without data or delete blocks
CHUNK = 500  # log file ids per IN list
WHOLE_TABLE_FROM = 20_000  # from this many files, one pass over the table's blocks beats IN lists


def summaries_from_blocks(conn: Connection, table_id: int, log_file_ids: Collection[int] | None) -> dict[int, Summary]:
    """The summaries the blocks give now, of the files that have data or delete blocks (all of the table's
    when `log_file_ids` is None; else at least those)."""
    blocks = log_block_table
    committed = blocks.c.status == BlockStatus.COMMITTED
    unknown = and_(
        committed, or_(blocks.c.min_event_time_source.is_(None), blocks.c.min_event_time_source == UNAVAILABLE)
    )
    query = select(
        blocks.c.log_file_id,
        func.min(case((committed, blocks.c.min_event_time))),
        func.max(blocks.c.instant),
        func.max(case((blocks.c.status == BlockStatus.UNCOMMITTED, 1), else_=0)),
        func.max(case((unknown, 1), else_=0)),
    ).where(blocks.c.table_id == table_id, blocks.c.block_type.in_(DATA_TYPES))
    if log_file_ids is None or len(log_file_ids) >= WHOLE_TABLE_FROM:
        parts = [plain_rows(conn, query.group_by(blocks.c.log_file_id))]
    else:
        parts = [
            plain_rows(conn, query.where(blocks.c.log_file_id.in_(part)).group_by(blocks.c.log_file_id))
            for part in chunks(sorted(log_file_ids), CHUNK)
        ]
    return {fid: (lo, last, bool(pending), bool(unknown)) for rows in parts for fid, lo, last, pending, unknown in rows}


def stored_summaries(conn: Connection, table_id: int, log_file_ids: Collection[int] | None) -> dict[int, Summary]:
    """The summaries on the `log_file` rows (all of the table's when `log_file_ids` is None; else at least those)."""
    log_files = log_file_table
    query = select(
        log_files.c.id,
        log_files.c.min_event_time,
        log_files.c.last_block_instant,
        log_files.c.has_uncommitted,
        log_files.c.has_unknown_event_time,
    )
    query = query.where(log_files.c.table_id == table_id)
    if log_file_ids is None or len(log_file_ids) >= WHOLE_TABLE_FROM:
        parts = [plain_rows(conn, query)]
    else:
        parts = [
            plain_rows(conn, query.where(log_files.c.id.in_(part))) for part in chunks(sorted(log_file_ids), CHUNK)
        ]
    return {fid: (lo, last, bool(pending), bool(unknown)) for rows in parts for fid, lo, last, pending, unknown in rows}


def refresh_summaries(conn: Connection, table_id: int, log_file_ids: Collection[int] | None) -> int:
    """Rewrite the summaries of these log files (None: all of the table's) that differ from their blocks; call
    it in the transaction that changed the blocks, after the change. Returns how many rows it rewrote."""
    if log_file_ids is not None and not log_file_ids:
        return 0
    want = summaries_from_blocks(conn, table_id, log_file_ids)
    have = stored_summaries(conn, table_id, log_file_ids)
    wanted = have.keys() if log_file_ids is None else set(log_file_ids) & have.keys()
    changed: list[dict[str, Any]] = []
    for fid in wanted:
        summary = want.get(fid, EMPTY)
        if summary != have[fid]:
            lo, last, pending, unknown = summary
            changed.append({"fid": fid, "lo": lo, "last": last, "any_uncommitted": pending, "unknown": unknown})
    if changed:
        log_files = log_file_table
        stmt = (
            update(log_files)
            .where(log_files.c.id == bindparam("fid"))
            .values(
                min_event_time=bindparam("lo"),
                last_block_instant=bindparam("last"),
                has_uncommitted=bindparam("any_uncommitted"),
                has_unknown_event_time=bindparam("unknown"),
            )
        )
        conn.execute(stmt, changed)
    return len(changed)
