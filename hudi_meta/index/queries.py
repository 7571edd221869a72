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
    t = instant_table
    with engine.connect() as conn:
        rows = conn.execute(select(t).where(t.c.table_id == table_id).order_by(t.c.requested_time)).all()
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
    g, s, f = file_group_table, file_slice_table, log_file_table
    with engine.connect() as conn:
        slices = conn.execute(
            select(
                g.c.partition_path,
                g.c.file_id,
                g.c.replaced,
                s.c.id,
                s.c.base_instant,
                s.c.base_file,
                s.c.base_committed,
            )
            .join(s, s.c.file_group_id == g.c.id)
            .where(g.c.table_id == table_id)
            .order_by(g.c.partition_path, g.c.file_id, s.c.base_instant)
        ).all()
        logs: dict[int, list[Any]] = {}
        for r in conn.execute(
            select(f.c.file_slice_id, f.c.name, f.c.base_instant, f.c.version, f.c.write_token).where(
                f.c.table_id == table_id
            )
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
    b, f = log_block_table, log_file_table
    with engine.connect() as conn:
        rows = conn.execute(
            select(b, f.c.partition_path, f.c.name)
            .join(f, f.c.id == b.c.log_file_id)
            .where(b.c.table_id == table_id)
            .order_by(f.c.partition_path, f.c.base_instant, f.c.version, f.c.name, b.c.offset)
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
    p, o, k = compaction_plan_table, compaction_operation_table, link_table
    with engine.connect() as conn:
        plans = conn.execute(select(p).where(p.c.table_id == table_id).order_by(p.c.instant)).all()
        ops: dict[int, list[Any]] = {}
        for r in conn.execute(select(o).join(p, p.c.id == o.c.plan_id).where(p.c.table_id == table_id)):
            ops.setdefault(r.plan_id, []).append(r)
        links: dict[str, int] = {}
        for r in conn.execute(select(k.c.compaction_instant).where(k.c.table_id == table_id)):
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
    k = link_table
    with engine.connect() as conn:
        rows = conn.execute(select(k).where(k.c.table_id == table_id).order_by(k.c.partition_path, k.c.link_name)).all()
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
