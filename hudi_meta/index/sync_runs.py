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
    sync_runs = sync_run_table
    query = (
        select(
            sync_runs.c.mode,
            sync_runs.c.uri,
            sync_runs.c.started_at,
            sync_runs.c.duration_ms,
            sync_runs.c.outcome,
            sync_runs.c.changes,
            sync_runs.c.message,
        )
        .where(sync_runs.c.table_id == table_id)
        .order_by(sync_runs.c.started_at.desc(), sync_runs.c.id.desc())
        .limit(1)
    )
    with connected(bind) as conn:
        row = conn.execute(query).first()
    return SyncRun(*row) if row is not None else None
