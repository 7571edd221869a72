"""Sync runs in the store: each `hudi-meta sync` writes one row (when, how long, outcome), metrics read the last."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, select

from hudi_meta.index.models import sync_run_table
from hudi_meta.index.sql import connected


@dataclass(frozen=True)
class SyncRun:
    mode: str
    uri: str
    started_at: dt.datetime
    duration_ms: int
    outcome: str  # ok | failed
    changes: int
    message: str


def record_sync_run(engine: Engine, table_id: int, run: SyncRun) -> None:
    with engine.begin() as conn:
        conn.execute(sync_run_table.insert(), {"table_id": table_id, **run.__dict__})


def last_sync_run(bind: Engine | Connection, table_id: int) -> SyncRun | None:
    s = sync_run_table
    query = (
        select(s.c.mode, s.c.uri, s.c.started_at, s.c.duration_ms, s.c.outcome, s.c.changes, s.c.message)
        .where(s.c.table_id == table_id)
        .order_by(s.c.started_at.desc(), s.c.id.desc())
        .limit(1)
    )
    with connected(bind) as conn:
        row = conn.execute(query).first()
    return SyncRun(*row) if row is not None else None
