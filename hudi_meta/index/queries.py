"""Read side of the store: the rows `hudi-meta show` prints (and the web UI shows), one query each."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Engine, select

from hudi_meta.index.models import (
    compaction_operation_table,
    compaction_plan_table,
    file_group_table,
    file_slice_table,
    instant_table,
    link_table,
    log_block_table,
    log_file_table,
)
from hudi_meta.index.states import PlanState


def _rel(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name


def timeline_rows(engine: Engine, table_id: int) -> list[dict[str, Any]]:
    instants = instant_table
    with engine.connect() as conn:
        rows = conn.execute(
            select(instants).where(instants.c.table_id == table_id).order_by(instants.c.requested_time)
        ).all()
    return [
        {
            "requested_time": r.requested_time,
            "action": r.action,
            "state": r.state,
            "completion_time": r.completion_time,
            "is_compaction": r.is_compaction,
            "summary": json.loads(r.summary),
        }
        for r in rows
    ]


def slice_rows(engine: Engine, table_id: int) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        slices = conn.execute(
            select(
                file_group_table.c.partition_path,
                file_group_table.c.file_id,
                file_group_table.c.replaced,
                file_slice_table.c.id,
                file_slice_table.c.base_instant,
                file_slice_table.c.base_file,
                file_slice_table.c.base_committed,
            )
            .join(file_slice_table, file_slice_table.c.file_group_id == file_group_table.c.id)
            .where(file_group_table.c.table_id == table_id)
            .order_by(file_group_table.c.partition_path, file_group_table.c.file_id, file_slice_table.c.base_instant)
        ).all()
        logs: dict[int, list[Any]] = {}
        for r in conn.execute(
            select(
                log_file_table.c.file_slice_id,
                log_file_table.c.name,
                log_file_table.c.base_instant,
                log_file_table.c.version,
                log_file_table.c.write_token,
            ).where(log_file_table.c.table_id == table_id)
        ):
            logs.setdefault(r.file_slice_id, []).append(r)
        plans = compaction_plan_table
        pending = {
            r.instant
            for r in conn.execute(
                select(plans.c.instant).where(plans.c.table_id == table_id, plans.c.state != PlanState.COMPLETED)
            )
        }
    return [
        {
            "partition": r.partition_path,
            "file_id": r.file_id,
            "base_instant": r.base_instant,
            "base_file": r.base_file,
            "base_committed": r.base_committed if r.base_file else None,
            "log_files": [
                x.name for x in sorted(logs.get(r.id, []), key=lambda x: (x.base_instant, x.version, x.write_token))
            ],
            "pending_compaction": r.base_instant in pending,
            "replaced": r.replaced,
        }
        for r in slices
    ]


def block_rows(engine: Engine, table_id: int) -> list[dict[str, Any]]:
    blocks, log_files = log_block_table, log_file_table
    with engine.connect() as conn:
        rows = conn.execute(
            select(blocks, log_files.c.partition_path, log_files.c.name)
            .join(log_files, log_files.c.id == blocks.c.log_file_id)
            .where(blocks.c.table_id == table_id)
            .order_by(
                log_files.c.partition_path,
                log_files.c.base_instant,
                log_files.c.version,
                log_files.c.name,
                blocks.c.offset,
            )
        ).all()
    return [
        {
            "file": _rel(r.partition_path, r.name),
            "offset": r.offset,
            "length": r.length,
            "type": r.block_type,
            "instant": r.instant,
            "target_instant": r.target_instant,
            "min_event_time": r.min_event_time,
            "max_event_time": r.max_event_time,
            "min_event_time_source": r.min_event_time_source,
            "record_count": r.record_count,
            "status": r.status,
        }
        for r in rows
    ]


def plan_rows(engine: Engine, table_id: int) -> list[dict[str, Any]]:
    with engine.connect() as conn:
        plans = conn.execute(
            select(compaction_plan_table)
            .where(compaction_plan_table.c.table_id == table_id)
            .order_by(compaction_plan_table.c.instant)
        ).all()
        ops: dict[int, list[Any]] = {}
        for r in conn.execute(
            select(compaction_operation_table)
            .join(compaction_plan_table, compaction_plan_table.c.id == compaction_operation_table.c.plan_id)
            .where(compaction_plan_table.c.table_id == table_id)
        ):
            ops.setdefault(r.plan_id, []).append(r)
        links: dict[str, int] = {}
        for r in conn.execute(select(link_table.c.compaction_instant).where(link_table.c.table_id == table_id)):
            links[r.compaction_instant] = links.get(r.compaction_instant, 0) + 1
    return [
        {
            "instant": r.instant,
            "state": r.state,
            "strategy": r.strategy,
            "threshold": r.threshold,
            "mode": r.mode,
            "exact": r.exact,
            "operations": len(ops.get(r.id, [])),
            "files_to_compact": sum(len(json.loads(x.files_to_compact)) for x in ops.get(r.id, [])),
            "links": links.get(r.instant, 0),
        }
        for r in plans
    ]


def link_rows(engine: Engine, table_id: int) -> list[dict[str, Any]]:
    links = link_table
    with engine.connect() as conn:
        rows = conn.execute(
            select(links).where(links.c.table_id == table_id).order_by(links.c.partition_path, links.c.link_name)
        ).all()
    return [
        {
            "partition": r.partition_path,
            "link": r.link_name,
            "target": r.target_name,
            "via": r.via_name,
            "compaction_instant": r.compaction_instant,
            "state": r.state,
        }
        for r in rows
    ]


SHOW_FROM_INDEX = {
    "timeline": timeline_rows,
    "slices": slice_rows,
    "blocks": block_rows,
    "plans": plan_rows,
    "links": link_rows,
}
