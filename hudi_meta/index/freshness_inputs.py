"""The plain inputs of `hudi_meta.freshness` read from the index: completed compactions with the threshold and
exact flag their commits published (`hudi_meta.index.compactions`), and the committed data blocks not in a
base file yet, each with its records below a threshold as the indexer counted them (`late_records`).

Blocks not in a base file are those of each file group's latest committed slice and of any newer slice (a
pending compaction's, which writers append to). A link counts once, under its physical file: its blocks are
the target's.
"""

from __future__ import annotations

import posixpath

from sqlalchemy import Connection, Engine, select

from hudi_meta.freshness import Freshness, PendingBlock, freshness
from hudi_meta.index.compactions import DATA_BLOCK_TYPES, DELETE_BLOCK_TYPE, completed_compactions
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.models import file_group_table, file_slice_table, log_block_table, log_file_table
from hudi_meta.index.sql import connected
from hudi_meta.index.states import BlockStatus
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import now_ms as current_ms

__all__ = [
    "base_file_instants",
    "completed_compactions",
    "indexed_freshness",
    "pending_blocks",
]  # completed_compactions: for callers


def pending_blocks(bind: Engine | Connection, table_id: int) -> list[PendingBlock]:
    """Committed data and delete blocks of every live file group's latest committed slice and newer slices."""
    with connected(bind) as conn:
        slices = conn.execute(
            select(
                file_group_table.c.id,
                file_group_table.c.partition_path,
                file_group_table.c.file_id,
                file_slice_table.c.id,
                file_slice_table.c.base_instant,
                file_slice_table.c.base_committed,
            )
            .join(file_slice_table, file_slice_table.c.file_group_id == file_group_table.c.id)
            .where(file_group_table.c.table_id == table_id, file_group_table.c.replaced.is_(False))
        ).all()
        files = conn.execute(
            select(
                log_file_table.c.id,
                log_file_table.c.file_slice_id,
                log_file_table.c.partition_path,
                log_file_table.c.name,
                log_file_table.c.is_link,
                log_file_table.c.link_target,
            ).where(log_file_table.c.table_id == table_id)
        ).all()
        blocks = conn.execute(
            select(
                log_block_table.c.log_file_id,
                log_block_table.c.instant,
                log_block_table.c.min_event_time,
                log_block_table.c.record_count,
                log_block_table.c.length,
                log_block_table.c.block_type,
                log_block_table.c.late_threshold,
                log_block_table.c.late_records,
            ).where(
                log_block_table.c.table_id == table_id,
                log_block_table.c.status == BlockStatus.COMMITTED,
                log_block_table.c.block_type.in_((*DATA_BLOCK_TYPES, DELETE_BLOCK_TYPE)),
            )
        ).all()
    latest_committed: dict[int, str] = {}
    for group_id, _, _, _, base_instant, committed in slices:
        if committed and base_instant > latest_committed.get(group_id, ""):
            latest_committed[group_id] = base_instant
    open_slices = {
        slice_id: f"{partition}/{file_id}/{base_instant}"
        for group_id, partition, file_id, slice_id, base_instant, _ in slices
        if base_instant >= latest_committed.get(group_id, "")
    }
    by_name = {(r.partition_path, r.name): r.id for r in files}
    physical: dict[int, tuple[str, str]] = {}  # physical log file id -> (its path, the open slice showing it)
    for r in files:
        slice_key = open_slices.get(r.file_slice_id) if r.file_slice_id is not None else None
        if slice_key is None:
            continue
        target = posixpath.basename(r.link_target) if r.is_link and r.link_target else None
        file_id = by_name.get((r.partition_path, target)) if target else r.id
        if file_id is None:
            continue  # a link whose target the index does not know (dangling: `check` reports it)
        physical.setdefault(file_id, (f"{r.partition_path}/{r.name}", slice_key))
    out = []
    for log_file_id, instant, min_event_time, records, length, block_type, counted_at, below in blocks:
        if log_file_id in physical:
            path, slice_key = physical[log_file_id]
            is_data = block_type != DELETE_BLOCK_TYPE
            out.append(
                PendingBlock(
                    path, slice_key, instant or "", min_event_time, records or 0, length, is_data, counted_at, below
                )
            )
    return out


def base_file_instants(bind: Engine | Connection, table_id: int) -> list[str]:
    """The instants of the committed base files on the index (each slice's base instant), for `freshness`'s exact."""
    file_groups, slices = file_group_table, file_slice_table
    with connected(bind) as conn:
        rows = conn.execute(
            select(slices.c.base_instant)
            .distinct()
            .join(file_groups, file_groups.c.id == slices.c.file_group_id)
            .where(
                file_groups.c.table_id == table_id, slices.c.base_file.is_not(None), slices.c.base_committed.is_(True)
            )
        )
        return [r[0] for r in rows]


def indexed_freshness(engine: Engine, table: HudiTable, now_ms: int | None = None) -> Freshness:
    """Index the table (incrementally), then compute its freshness from the store, as of the files now."""
    indexer = Indexer(engine, table)
    indexer.run()
    assert indexer.table_id is not None
    now = now_ms if now_ms is not None else current_ms()
    table_id = indexer.table_id
    return freshness(
        completed_compactions(engine, table_id),
        pending_blocks(engine, table_id),
        now,
        base_file_instants(engine, table_id),
    )
