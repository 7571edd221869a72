"""The metrics of docs/catalog-and-freshness.md section 2 for one table, in the Prometheus text format
(prometheus-client), from the store alone (`store_metric_values`: `hudi-meta metrics` after indexing, the web UI's
`/metrics` on what the store holds now).

Names carry the `hudi_meta_` prefix and a `table` label. The proposal's four come first (min event time over
the log files not yet in a base file, slices with leftover log files, leftover log files, their bytes), then
the freshness, the age of the oldest pending compaction plan, and the last compaction, clean and sync: 1 for
success, 0 for a run that started and did not complete, and its duration where the timeline records one
(table version 8 and later write completion times; version 6 does not). A value that is not known is left
out rather than given as 0.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Gauge, generate_latest
from sqlalchemy import Connection, Engine, func, or_, select

from hudi_meta.freshness import Freshness
from hudi_meta.index.models import compaction_plan_table, instant_table
from hudi_meta.index.sql import connected
from hudi_meta.index.states import PENDING_PLAN_STATES
from hudi_meta.index.sync_runs import SyncRun, last_sync_run
from hudi_meta.timeline.instant import Action, Instant, State, instant_epoch_ms

PREFIX = "hudi_meta_"
MetricValues = dict[str, tuple[str, float | None]]  # name -> (help, value); None: not known now


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
