"""The service's state in the store: step records (what each step of each table did) and leases (which process
works on a table). Both are plain rows any process, the UI and the metrics can read.

Leases are optimistic: a process takes a table with one UPDATE that succeeds only when it already holds the
lease or the lease has expired, and renews what it holds well before expiry. Two processes therefore never
hold one table at once, and a table whose holder died (kill -9, a lost machine) is taken over once its lease
runs out. Times are the processes' clocks in UTC: service processes sharing a store must keep their clocks
within a small part of the lease.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import Connection, Engine, and_, case, or_, select, update

from hudi_meta.index.models import service_lease_table, service_step_table
from hudi_meta.index.sql import connected, insert_ignore
from hudi_meta.metrics import last_step_rows, utc


class StepStatus(StrEnum):
    """A step's status while it runs, then how it ended (docs/service-and-ui.md section 1)."""

    IDLE = "idle"  # done; the table waits for the next round
    PLANNING = "planning"  # indexing, asking the trigger, planning
    PENDING = "pending"  # a compaction plan waits to run (scheduled, or a run abandoned on shutdown)
    RUNNING = "running"  # compaction tasks, a clean or a sync at work
    COMMITTING = "committing"  # a compaction making its links and writing its commit
    FAILED = "failed"


class StepOutcome(StrEnum):
    """How a step ended (`service_step.outcome`)."""

    OK = "ok"  # indexed, or synced
    SCHEDULED = "scheduled"
    SKIPPED = "skipped"  # the trigger said no, nothing to compact, or a write was pending
    COMPLETED = "completed"  # a compaction committed
    TAKEN_BACK = "taken back"  # a compaction that writers broke was taken back (scheduled again next round)
    ABANDONED = "abandoned"  # a compaction left pending because the service was stopping
    CLEANED = "cleaned"
    NOTHING = "nothing"  # a clean with nothing to delete
    FAILED = "failed"


@dataclass(frozen=True)
class StepRecord:
    id: int
    table_id: int
    worker: str
    step: str
    status: str
    started_at: dt.datetime
    ended_at: dt.datetime | None
    outcome: str | None
    detail: dict[str, Any]
    error: str | None

    @property
    def duration_s(self) -> float | None:
        return (self.ended_at - self.started_at).total_seconds() if self.ended_at else None


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def start_step(engine: Engine, table_id: int, worker: str, step: str, status: StepStatus) -> int:
    steps = service_step_table
    row = {"table_id": table_id, "worker": worker, "step": step, "status": status, "started_at": now_utc()}
    with engine.begin() as conn:
        result = conn.execute(steps.insert().values(**row, detail="{}"))
        key = result.inserted_primary_key
        assert key is not None
        return int(key[0])


def set_status(engine: Engine, step_id: int, status: StepStatus) -> None:
    steps = service_step_table
    with engine.begin() as conn:
        conn.execute(update(steps).where(steps.c.id == step_id).values(status=status))


def end_step(
    engine: Engine,
    step_id: int,
    outcome: StepOutcome,
    detail: dict[str, Any] | None = None,
    error: str | None = None,
    status: StepStatus | None = None,
) -> None:
    """Close a step: idle (or failed, with an error), unless `status` says what the table waits in."""
    steps = service_step_table
    final = status or (StepStatus.FAILED if error else StepStatus.IDLE)
    values = {"status": final, "ended_at": now_utc(), "outcome": outcome, "detail": json.dumps(detail or {})}
    with engine.begin() as conn:
        conn.execute(update(steps).where(steps.c.id == step_id).values(**values, error=error))


def prune_steps(engine: Engine, table_id: int, keep: int) -> int:
    """Delete all but the table's newest `keep` step records (a service running for months writes a few rows per
    round); how many went."""
    steps = service_step_table
    with engine.begin() as conn:
        cutoff = conn.execute(
            select(steps.c.id).where(steps.c.table_id == table_id).order_by(steps.c.id.desc()).offset(keep).limit(1)
        ).scalar_one_or_none()
        if cutoff is None:
            return 0
        return int(conn.execute(steps.delete().where(steps.c.table_id == table_id, steps.c.id <= cutoff)).rowcount)


def _record(r: Any) -> StepRecord:
    return StepRecord(
        r.id,
        r.table_id,
        r.worker,
        r.step,
        r.status,
        utc(r.started_at) or now_utc(),
        utc(r.ended_at),
        r.outcome,
        json.loads(r.detail or "{}"),
        r.error,
    )


def recent_steps(bind: Engine | Connection, table_id: int, limit: int = 20) -> list[StepRecord]:
    """The table's newest step records, newest first."""
    steps = service_step_table
    query = select(steps).where(steps.c.table_id == table_id).order_by(steps.c.id.desc()).limit(limit)
    with connected(bind) as conn:
        return [_record(r) for r in conn.execute(query)]


def last_steps(bind: Engine | Connection, table_id: int) -> dict[str, StepRecord]:
    """The newest finished record of each step the service ran on the table (`metrics.last_step_rows`)."""
    return {r.step: _record(r) for r in last_step_rows(bind, table_id)}


def all_steps(bind: Engine | Connection, table_ids: Iterable[int] | None = None) -> list[StepRecord]:
    """Every step record (of some tables), oldest first: for checks of who worked on what, when."""
    steps = service_step_table
    query = select(steps).order_by(steps.c.id)
    if table_ids is not None:
        query = query.where(steps.c.table_id.in_(list(table_ids)))
    with connected(bind) as conn:
        return [_record(r) for r in conn.execute(query)]


# ---------------------------------------------------------------- leases


def acquire_lease(engine: Engine, table_id: int, holder: str, lease_s: float) -> bool:
    """Take (or keep) the table's lease until now + `lease_s`; False while another live process holds it."""
    lease = service_lease_table
    now = now_utc()
    until = now + dt.timedelta(seconds=lease_s)
    with engine.begin() as conn:
        insert_ignore(conn, lease, [{"table_id": table_id, "holder": holder, "acquired_at": now, "expires_at": until}])
        result = conn.execute(
            update(lease)
            .where(lease.c.table_id == table_id, or_(lease.c.holder == holder, lease.c.expires_at < now))
            .values(
                holder=holder,
                expires_at=until,
                acquired_at=case((lease.c.holder == holder, lease.c.acquired_at), else_=now),
            )
        )
        return result.rowcount == 1


def renew_leases(engine: Engine, holder: str, table_ids: Iterable[int], lease_s: float) -> set[int]:
    """Extend the leases `holder` still holds among `table_ids`; the ids it holds afterwards."""
    lease = service_lease_table
    ids = list(table_ids)
    if not ids:
        return set()
    now = now_utc()
    with engine.begin() as conn:
        conn.execute(
            update(lease)
            .where(lease.c.table_id.in_(ids), lease.c.holder == holder)  # expired but not taken: still ours
            .values(expires_at=now + dt.timedelta(seconds=lease_s))
        )
        held = conn.execute(
            select(lease.c.table_id).where(and_(lease.c.table_id.in_(ids), lease.c.holder == holder))
        ).scalars()
        return set(held)


def release_leases(engine: Engine, holder: str, table_ids: Iterable[int]) -> None:
    """Give the tables up now (a clean stop): another process may take them at once."""
    lease = service_lease_table
    ids = list(table_ids)
    if not ids:
        return
    with engine.begin() as conn:
        conn.execute(
            update(lease)
            .where(lease.c.table_id.in_(ids), lease.c.holder == holder)
            .values(expires_at=dt.datetime(1970, 1, 1, tzinfo=dt.UTC))
        )


def lease_holders(bind: Engine | Connection) -> dict[int, tuple[str, dt.datetime]]:
    """table id -> (holder, expires at) of every lease."""
    lease = service_lease_table
    with connected(bind) as conn:
        return {
            r.table_id: (r.holder, utc(r.expires_at) or now_utc())
            for r in conn.execute(select(lease.c.table_id, lease.c.holder, lease.c.expires_at))
        }
