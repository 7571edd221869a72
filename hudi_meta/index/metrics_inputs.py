"""The metrics of a table (design.md section 8) from the store alone: its freshness, the oldest pending plan,
the newest compaction and clean on the indexed timeline, and the last sync run. `hudi-meta metrics` calls it
after indexing; the web UI's `/metrics` calls it on what the store holds now."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Connection, Engine, func, or_, select

from hudi_meta.freshness import Freshness
from hudi_meta.index.models import compaction_plan_table, instant_table
from hudi_meta.index.sql import connected
from hudi_meta.index.states import PENDING_PLAN_STATES
from hudi_meta.index.sync_runs import last_sync_run
from hudi_meta.metrics import MetricValues, last_run, metric_values
from hudi_meta.table.instant import Action, Instant, State, instant_epoch_ms


def store_metric_values(
    bind: Engine | Connection, table_id: int, fresh: Freshness, zone: dt.tzinfo, now_ms: int
) -> MetricValues:
    """name -> (help, value) for one indexed table; `zone` is its timeline's (for the pending plan's age)."""
    p, i = compaction_plan_table, instant_table
    with connected(bind) as conn:
        oldest = conn.execute(
            select(func.min(p.c.instant)).where(p.c.table_id == table_id, p.c.state.in_(PENDING_PLAN_STATES))
        ).scalar_one_or_none()
        rows = conn.execute(
            select(i.c.requested_time, i.c.action, i.c.state, i.c.completion_time, i.c.is_compaction).where(
                i.c.table_id == table_id, or_(i.c.is_compaction, i.c.action == Action.CLEAN)
            )
        ).all()
        sync = last_sync_run(conn, table_id)
    compactions = [Instant(r[0], r[1], State(r[2]), r[3]) for r in rows if r.is_compaction]
    cleans = [Instant(r[0], r[1], State(r[2]), r[3]) for r in rows if r.action == Action.CLEAN]
    oldest_ms = instant_epoch_ms(oldest, zone) if oldest else None
    return metric_values(fresh, oldest_ms, last_run(compactions), last_run(cleans), sync, now_ms)
