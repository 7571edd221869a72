"""The metrics of docs/catalog-and-freshness.md section 2 for one table, in the Prometheus text format
(prometheus-client), from the store alone (`store_metric_values`: `hudi-meta metrics` after indexing, the web UI's
`/metrics` on what the store holds now).

Names carry the `hudi_meta_` prefix and a `table` label. The proposal's four come first (min event time over
the log files not yet in a base file, slices with leftover log files, leftover log files, their bytes), then
the freshness, the age of the oldest pending compaction plan, and the last compaction, clean and sync: 1 for
success, 0 for a run that started and did not complete, and its duration where the timeline records one
(table version 8 and later write completion times; version 6 does not), and, per step of the service (index,
compaction, schedule, clean, sync), whether its last run succeeded, how long it took and when it ended. A value
that is not known is left out rather than given as 0.

This is the one home of the metric values: `hudi-meta metrics` (through the API), the web UI's `/metrics` and
the service read them here (`table_metric_values`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Gauge, generate_latest
from sqlalchemy import Connection, Engine, func, or_, select

from hudi_meta.freshness import Freshness
from hudi_meta.index.models import compaction_plan_table, instant_table, service_step_table
from hudi_meta.index.sql import connected
from hudi_meta.index.states import PENDING_PLAN_STATES
from hudi_meta.index.sync_runs import SyncRun, last_sync_run
from hudi_meta.timeline.instant import Action, Instant, State, instant_epoch_ms

PREFIX = "hudi_meta_"
MetricValues = dict[str, tuple[str, float | None]]  # name -> (help, value); None: not known now
SERVICE_STEPS = ("index", "compaction", "schedule", "clean", "sync")  # the steps the service records per table
FAILED = "failed"  # `service_step.status` of a step that failed (service/records.py `StepStatus.FAILED`)


class StepRun(Protocol):
    """A finished step of the service as the metrics read it (`service/records.StepRecord` is one)."""

    @property
    def id(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def ended_at(self) -> dt.datetime | None: ...
    @property
    def duration_s(self) -> float | None: ...


@dataclass(frozen=True)
class FinishedStep:
    """A `service_step` row read for the metrics: its id, status and times (UTC)."""

    id: int
    status: str
    started_at: dt.datetime
    ended_at: dt.datetime | None

    @property
    def duration_s(self) -> float | None:
        return (self.ended_at - self.started_at).total_seconds() if self.ended_at else None


@dataclass(frozen=True)
class ServiceRun:
    """The newest run of a table service: whether it completed, and how long it took when known."""

    succeeded: bool
    duration_s: float | None


def last_run(instants: Sequence[Instant]) -> ServiceRun | None:
    """The newest instant of a service (its requested plan alone is not a run: it started when inflight)."""
    started = [i for i in instants if i.is_completed or i.state is State.INFLIGHT]
    if not started:
        return None
    newest = max(started, key=lambda i: i.requested_time)
    duration = None
    if newest.is_completed and newest.completion_time:
        duration = (instant_epoch_ms(newest.completion_time) - instant_epoch_ms(newest.requested_time)) / 1000
    return ServiceRun(newest.is_completed, duration)


def metric_values(
    f: Freshness,
    oldest_pending_plan_ms: int | None,
    compaction: ServiceRun | None,
    clean: ServiceRun | None,
    sync: SyncRun | None,
    now_ms: int,
) -> MetricValues:
    """name -> (help, value); None: not known now. Pure."""

    def seconds(ms: int | None) -> float | None:
        return ms / 1000 if ms is not None else None

    values: MetricValues = {
        "log_min_event_time_seconds": (
            "min event time (epoch s) over the committed log blocks not yet in a base file",
            seconds(f.min_pending_event_time_ms),
        ),
        "leftover_slices": ("file slices with log files not yet compacted", f.leftover_slices),
        "leftover_log_files": ("log files not yet compacted", f.leftover_files),
        "leftover_log_bytes": ("bytes of the log blocks not yet compacted", f.leftover_bytes),
        "threshold_seconds": ("T of the last completed event-time compaction (epoch s)", seconds(f.threshold_ms)),
        "watermark_seconds": ("RO holds every record with an event time below this (epoch s)", seconds(f.watermark_ms)),
        "lag_seconds": ("now - watermark", seconds(f.lag_ms)),
        "late_records": (
            "records committed after the last event-time compaction with event times below its T",
            f.late_records,
        ),
        "late_records_at_most": (
            "a bound on late_records that holds when some blocks were not counted (their records count in full)",
            f.late_records_at_most,
        ),
        "late_blocks": ("log blocks holding late records", f.late_blocks),
        "pending_plan_age_seconds": (
            "age of the oldest pending compaction plan",
            seconds(now_ms - oldest_pending_plan_ms) if oldest_pending_plan_ms is not None else None,
        ),
    }
    for name, run in (("compaction", compaction), ("clean", clean)):
        values[f"last_{name}_success"] = (
            f"1: the last {name} completed; 0: it started and did not",
            float(run.succeeded) if run else None,
        )
        values[f"last_{name}_duration_seconds"] = (f"how long the last {name} took", run.duration_s if run else None)
    succeeded = float(sync.outcome == "ok") if sync else None
    values["last_sync_success"] = ("1: the last sync succeeded; 0: it failed", succeeded)
    values["last_sync_duration_seconds"] = ("how long the last sync took", sync.duration_ms / 1000 if sync else None)
    return values


def render(values_by_table: Mapping[str, MetricValues]) -> bytes:
    """The Prometheus text exposition of the known values of each table, labelled with the table's name."""
    registry = CollectorRegistry()
    gauges: dict[str, Gauge] = {}
    for table, values in values_by_table.items():
        for name, (help_text, value) in values.items():
            if value is None:
                continue
            if name not in gauges:
                gauges[name] = Gauge(PREFIX + name, help_text, ["table"], registry=registry)
            gauges[name].labels(table=table).set(value)
    return generate_latest(registry)


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


def last_step_rows(bind: Engine | Connection, table_id: int) -> list[Any]:
    """The newest finished `service_step` row of each step the service ran on the table. A step still running
    does not hide how the last one ended: "did the last sync succeed" stays answered (a metric never vanishes
    mid-step)."""
    s = service_step_table
    newest = (
        select(func.max(s.c.id))
        .where(s.c.table_id == table_id, s.c.ended_at.is_not(None))
        .group_by(s.c.step)
        .scalar_subquery()
    )
    with connected(bind) as conn:
        return list(conn.execute(select(s).where(s.c.id.in_(newest))))


def utc(value: dt.datetime | None) -> dt.datetime | None:
    """SQLite hands back naive datetimes: the service writes UTC."""
    return value.replace(tzinfo=dt.UTC) if value is not None and value.tzinfo is None else value


def last_finished_steps(bind: Engine | Connection, table_id: int) -> dict[str, FinishedStep]:
    """step -> its newest finished run on the table (`last_step_rows`)."""
    return {
        r.step: FinishedStep(r.id, r.status, utc(r.started_at) or r.started_at, utc(r.ended_at))
        for r in last_step_rows(bind, table_id)
    }


def service_metric_values(last: Mapping[str, StepRun]) -> MetricValues:
    """name -> (help, value) of the service steps' newest records (None where a step never ran). Pure."""
    values: MetricValues = {}
    for step in SERVICE_STEPS:
        record = last.get(step)
        ended = record is not None and record.ended_at is not None
        values[f"service_last_{step}_success"] = (
            f"1: the service's last {step} step succeeded; 0: it failed",
            float(record.status != FAILED) if record is not None and ended else None,
        )
        values[f"service_last_{step}_duration_seconds"] = (
            f"how long the service's last {step} step took",
            record.duration_s if record is not None else None,
        )
        values[f"service_last_{step}_end_seconds"] = (
            f"when the service's last {step} step ended (epoch s)",
            record.ended_at.timestamp() if record is not None and record.ended_at is not None else None,
        )
    newest = max(last.values(), key=lambda r: r.id, default=None)
    values["service_failing"] = (
        "1: the service's newest step on the table failed (it is retried after a backoff)",
        float(newest.status == FAILED) if newest is not None else None,
    )
    return values


def table_metric_values(
    bind: Engine | Connection, table_id: int, fresh: Freshness, zone: dt.tzinfo, now_ms: int
) -> MetricValues:
    """Every metric of one indexed table: the store's (`store_metric_values`) and the service steps'."""
    with connected(bind) as conn:
        return {
            **store_metric_values(conn, table_id, fresh, zone, now_ms),
            **service_metric_values(last_finished_steps(conn, table_id)),
        }
