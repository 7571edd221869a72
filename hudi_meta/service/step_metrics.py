"""A table's metrics with the service's own: docs/catalog-and-freshness.md's (from the store, `hudi_meta.metrics`)
and, per service step (index, compaction, schedule, clean, sync), whether its last run succeeded, how long it
took and when it ended, and whether the table's newest step failed. `hudi-meta metrics` and the UI's `/metrics`
both serve this."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from sqlalchemy import Connection, Engine

from hudi_meta.freshness import Freshness
from hudi_meta.index.sql import connected
from hudi_meta.metrics import MetricValues, store_metric_values
from hudi_meta.service.records import STEPS, StepRecord, StepStatus, last_steps


def service_metric_values(last: Mapping[str, StepRecord]) -> MetricValues:
    """name -> (help, value) of the service steps' newest records (None where a step never ran). Pure."""
    values: MetricValues = {}
    for step in STEPS:
        record = last.get(step)
        ended = record is not None and record.ended_at is not None
        values[f"service_last_{step}_success"] = (
            f"1: the service's last {step} step succeeded; 0: it failed",
            float(record.status != StepStatus.FAILED) if record is not None and ended else None,
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
        float(newest.status == StepStatus.FAILED) if newest is not None else None,
    )
    return values


def table_metric_values(
    bind: Engine | Connection, table_id: int, fresh: Freshness, zone: dt.tzinfo, now_ms: int
) -> MetricValues:
    with connected(bind) as conn:
        return {
            **store_metric_values(conn, table_id, fresh, zone, now_ms),
            **service_metric_values(last_steps(conn, table_id)),
        }
