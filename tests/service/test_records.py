"""Leases and step records on SQLite and PostgreSQL: one holder per table however many processes race, a lease
taken over only once it expired or was released, renewals that keep it, and step records that are pruned."""

from __future__ import annotations

import datetime as dt
import threading
import time

from sqlalchemy import Engine, update

from hudi_meta.index.models import hudi_table, service_lease_table
from hudi_meta.metrics import service_metric_values
from hudi_meta.service.records import (
    StepOutcome,
    StepStatus,
    acquire_lease,
    all_steps,
    end_step,
    last_steps,
    lease_holders,
    prune_steps,
    recent_steps,
    release_leases,
    renew_leases,
    set_status,
    start_step,
)


def add_table(engine: Engine, table_id: int) -> int:
    row = {"id": table_id, "base_path": f"/t{table_id}", "name": f"t{table_id}", "table_type": "MERGE_ON_READ"}
    row |= {"table_version": 6, "timeline_layout": 1, "record_key_fields": "id", "options": "{}"}
    with engine.begin() as conn:
        conn.execute(hudi_table.insert(), row | {"registered_at": dt.datetime.now(dt.UTC)})
    return table_id


def test_one_holder_until_the_lease_expires_or_is_released(engine: Engine) -> None:
    t = add_table(engine, 1)
    assert acquire_lease(engine, t, "a", 60)
    assert not acquire_lease(engine, t, "b", 60)
    assert acquire_lease(engine, t, "a", 60)  # the holder keeps it
    assert renew_leases(engine, "a", [t], 60) == {t} and renew_leases(engine, "b", [t], 60) == set()
    release_leases(engine, "a", [t])
    assert acquire_lease(engine, t, "b", 60)  # released: taken at once
    assert lease_holders(engine)[t][0] == "b"
    with engine.begin() as conn:  # b died an hour ago: its lease ran out
        past = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
        conn.execute(update(service_lease_table).values(expires_at=past))
    assert acquire_lease(engine, t, "a", 60)
    assert renew_leases(engine, "b", [t], 60) == set()  # b, back, learns it lost the table


def test_racing_processes_get_one_lease_each_table(engine: Engine) -> None:
    tables = [add_table(engine, i) for i in range(1, 6)]
    won: dict[int, list[str]] = {t: [] for t in tables}
    start = threading.Barrier(4)

    def contender(name: str) -> None:
        start.wait()
        for t in tables:
            if acquire_lease(engine, t, name, 60):
                won[t].append(name)

    threads = [threading.Thread(target=contender, args=(f"w{i}",)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert all(len(names) == 1 for names in won.values()), won
    assert {t: names[0] for t, names in won.items()} == {t: h for t, (h, _) in lease_holders(engine).items()}


def test_step_records_and_pruning(engine: Engine) -> None:
    t = add_table(engine, 1)
    first = start_step(engine, t, "w", "compaction", StepStatus.PENDING)
    set_status(engine, first, StepStatus.RUNNING)
    assert recent_steps(engine, t)[0].status == StepStatus.RUNNING
    time.sleep(0.01)
    end_step(engine, first, StepOutcome.COMPLETED, {"instant": "20260101000000000"})
    failed = start_step(engine, t, "w", "sync", StepStatus.RUNNING)
    end_step(engine, failed, StepOutcome.FAILED, error="metastore down")
    steps = recent_steps(engine, t)
    assert [(s.step, s.status, s.outcome) for s in steps] == [
        ("sync", "failed", "failed"),
        ("compaction", "idle", "completed"),
    ]
    assert steps[1].detail == {"instant": "20260101000000000"} and (steps[1].duration_s or 0) > 0
    assert steps[1].started_at.tzinfo is not None
    assert set(last_steps(engine, t)) == {"sync", "compaction"} and steps[0].error == "metastore down"
    retry = start_step(engine, t, "w", "sync", StepStatus.RUNNING)  # running: the failed one is still the last
    assert last_steps(engine, t)["sync"].id == failed
    # what /metrics reports meanwhile: the last sync failed (before, the series vanished while one ran)
    assert service_metric_values(last_steps(engine, t))["service_last_sync_success"][1] == 0.0
    end_step(engine, retry, StepOutcome.OK)
    assert last_steps(engine, t)["sync"].id == retry
    for _ in range(30):
        end_step(engine, start_step(engine, t, "w", "index", StepStatus.PLANNING), StepOutcome.OK)
    assert prune_steps(engine, t, keep=10) == 23
    kept = all_steps(engine, [t])
    assert len(kept) == 10 and all(s.step == "index" for s in kept)
