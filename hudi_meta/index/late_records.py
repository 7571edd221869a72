"""Late records, counted: for each committed data block written after the last completed event-time compaction,
how many of its records have an event time below that compaction's threshold T (`log_block.late_records`, with
the T it was counted at in `late_threshold`). Freshness adds them up; the web UI reads them from the store.

The counts follow the files and the timeline alone, so an incremental index and a fresh one hold the same: a
block that stops being "after the last event-time compaction" (a newer one completed) loses its count, and one
that becomes it again (that compaction rolled back) or whose T changed is counted again. A block whose min event
time is at or above T has none without being read; one without event times (`none`) has none; one whose event
times cannot be known (`unavailable`) gets a count of NULL at T: unknown, and not tried again. The rest are read
once each. Blocks of symlinks are their targets' and are not counted twice.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from typing import Any

from sqlalchemy import Engine, and_, bindparam, not_, or_, select, update

from hudi_meta.format.log_reader import read_blocks, read_content
from hudi_meta.freshness import last_event_time_compaction
from hudi_meta.index import event_time_source as ets
from hudi_meta.index.compactions import DATA_BLOCK_TYPES, completed_compactions
from hudi_meta.index.models import hudi_table, log_block_table, log_file_table
from hudi_meta.index.run_stats import IndexRunStats
from hudi_meta.index.sql import chunks
from hudi_meta.index.states import BlockStatus
from hudi_meta.table.table import HudiTable


def count_late_records(engine: Engine, table: HudiTable, table_id: int, stats: IndexRunStats) -> None:
    """Bring every block's late-record count in line with the last event-time compaction (see the module)."""
    with engine.connect() as conn:
        last = last_event_time_compaction(completed_compactions(conn, table_id))
        event_field = conn.execute(
            select(hudi_table.c.event_time_field).where(hudi_table.c.id == table_id)
        ).scalar_one()
    links = select(log_file_table.c.id).where(log_file_table.c.table_id == table_id, log_file_table.c.is_link)
    if last is None or last.threshold_ms is None:
        after = None
    else:
        after = and_(
            log_block_table.c.status == BlockStatus.COMMITTED,
            log_block_table.c.block_type.in_(DATA_BLOCK_TYPES),
            log_block_table.c.instant > last.instant,
            log_block_table.c.log_file_id.not_in(links),
        )
    with engine.begin() as conn:
        stale = and_(log_block_table.c.table_id == table_id, log_block_table.c.late_threshold.is_not(None))
        conn.execute(
            update(log_block_table)
            .where(stale if after is None else and_(stale, not_(after)))
            .values(late_threshold=None, late_records=None)
        )
    if after is None or last is None or last.threshold_ms is None:
        return
    threshold = last.threshold_ms
    with engine.connect() as conn:
        todo = conn.execute(
            select(
                log_block_table.c.id,
                log_block_table.c.offset,
                log_block_table.c.min_event_time,
                log_block_table.c.min_event_time_source,
                log_file_table.c.partition_path,
                log_file_table.c.name,
            )
            .join(log_file_table, log_file_table.c.id == log_block_table.c.log_file_id)
            .where(
                log_block_table.c.table_id == table_id,
                after,
                or_(log_block_table.c.late_threshold.is_(None), log_block_table.c.late_threshold != threshold),
                log_block_table.c.min_event_time_source.is_not(None),  # resolved first (`resolve_event_times`)
            )
            .order_by(log_file_table.c.partition_path, log_file_table.c.name, log_block_table.c.offset)
        ).all()
    counted: list[dict[str, Any]] = []
    to_read: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for r in todo:
        if r.min_event_time_source == ets.NO_EVENT_TIME or (
            r.min_event_time is not None and r.min_event_time >= threshold
        ):
            counted.append({"bid": r.id, "below": 0})
        elif r.min_event_time_source == ets.UNAVAILABLE:
            counted.append({"bid": r.id, "below": None})
        else:
            to_read[(r.partition_path, r.name)].append(r)
    for (part, name), rows in to_read.items():
        path = posixpath.join(table.base_path, part, name) if part else posixpath.join(table.base_path, name)
        blocks = {blk.offset: blk for blk in read_blocks(table.storage, path, rows[0].offset)}
        for r in rows:
            blk = blocks.get(r.offset)
            below = None
            if blk is not None and blk.is_data:
                below = ets.records_before(blk, read_content(table.storage, path, blk), event_field, threshold)
            counted.append({"bid": r.id, "below": below})
    stmt = (
        update(log_block_table)
        .where(log_block_table.c.id == bindparam("bid"))
        .values(late_threshold=threshold, late_records=bindparam("below"))
    )
    for batch in chunks(counted, 1000):
        with engine.begin() as conn:
            conn.execute(stmt, list(batch))
    stats.blocks_late_counted += len(counted)
