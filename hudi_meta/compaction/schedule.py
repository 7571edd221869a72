"""Schedule a compaction from the index: trigger, plan (pure), then write `<C>.compaction.requested` and
record the plan in the store under one lock, so two schedulers racing produce exactly one plan."""

from __future__ import annotations

import datetime as dt
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, text, update

from hudi_meta.errors import HudiMetaError, UnsupportedTableError
from hudi_meta.format.table_service_metadata import CompactionPlan
from hudi_meta.index.indexer import Indexer, event_time_field_of, record_plan
from hudi_meta.index.models import TableRecord, table_of
from hudi_meta.index.snapshot import candidate_slices
from hudi_meta.planning import triggers
from hudi_meta.planning.plan import build_plan
from hudi_meta.planning.strategies import (
    CompactionStrategy,
    EventTimeBasedCompactionStrategy,
    LogFileSizeBasedCompactionStrategy,
    UnBoundedCompactionStrategy,
    plan_operations,
)
from hudi_meta.table.instant import Action
from hudi_meta.table.table import HudiTable
from hudi_meta.table.timeline import TimelineWriter, new_instant_time

STRATEGIES = ("event-time", "log-file-size", "unbounded")
MODES = ("symlink", "copy")
DATA_LATENCY_KEY = "hoodie.compaction.event.time.data.latency"


@dataclass(frozen=True)
class ScheduleRequest:
    threshold_ms: int | None = None
    data_latency_ms: int | None = None
    mode: str = "symlink"
    exact: bool = False
    strategy: str = "event-time"
    trigger: str = triggers.EVENT_TIME_TRIGGER
    log_file_size_threshold: int = 0


@dataclass(frozen=True)
class ScheduleResult:
    instant: str | None  # None: nothing was scheduled
    reason: str
    plan: CompactionPlan | None = None
    threshold_ms: int | None = None


def check_compactable(table: HudiTable) -> None:
    """Refuse tables we cannot compact, with the setting to change."""
    cfg = table.config
    if cfg.metadata_partitions:
        raise UnsupportedTableError(
            f"{table.base_path} has the Hudi metadata table enabled (hoodie.table.metadata.partitions="
            f"{','.join(cfg.metadata_partitions)}); disable it (hoodie.metadata.enable=false) to compact with hudi-meta"
        )
    if not cfg.is_mor or cfg.version != 6:
        raise UnsupportedTableError(
            f"{table.base_path}: compaction needs a MERGE_ON_READ table version 6 "
            f"(this is {cfg.table_type} version {cfg.version})"
        )


@contextmanager
def schedule_lock(engine: Engine, table_id: int, base_path: str) -> Iterator[Connection]:
    """A transaction that only one scheduler of the table holds at a time (PostgreSQL: an advisory
    transaction lock; SQLite: the database write lock, taken by a write)."""
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            key = zlib.crc32(f"schedule:{base_path}".encode()) & 0x7FFFFFFF
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})
        else:
            t = table_of(TableRecord)
            conn.execute(update(t).where(t.c.id == table_id).values(options=t.c.options))
        yield conn


def _strategy(request: ScheduleRequest, threshold: int | None) -> CompactionStrategy:
    if request.strategy == "event-time":
        assert threshold is not None
        return EventTimeBasedCompactionStrategy(threshold_ms=threshold)
    if request.strategy == "log-file-size":
        return LogFileSizeBasedCompactionStrategy(threshold_bytes=request.log_file_size_threshold)
    if request.strategy == "unbounded":
        return UnBoundedCompactionStrategy()
    raise HudiMetaError(f"unknown strategy {request.strategy!r}: {', '.join(STRATEGIES)}")


def _threshold(request: ScheduleRequest, table: HudiTable, now_ms: int) -> int | None:
    if request.strategy != "event-time":
        return None
    if request.threshold_ms is not None:
        return request.threshold_ms
    latency = request.data_latency_ms
    if latency is None and DATA_LATENCY_KEY in table.config.props:
        latency = int(table.config.props[DATA_LATENCY_KEY])
    if latency is None:
        raise HudiMetaError("an event-time compaction needs --threshold T or --data-latency D")
    return now_ms - latency


def _facts(table: HudiTable) -> triggers.TriggerFacts:
    tl = table.timeline
    compactions = [i for i in tl.completed() if tl.is_compaction(i.requested_time)]
    last = compactions[-1].requested_time if compactions else ""
    deltas = [i for i in tl.completed() if i.action == Action.DELTA_COMMIT and i.requested_time > last]
    elapsed = None
    if last:
        then = dt.datetime.strptime(last[:14], "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
        elapsed = (dt.datetime.now(dt.UTC) - then).total_seconds()
    return triggers.TriggerFacts(
        pending_compactions=[i.requested_time for i in tl.pending_compactions()],
        pending_clustering=[i.requested_time for i in tl.pending_clustering()],
        delta_commits_since_last_compaction=len(deltas),
        seconds_since_last_compaction=elapsed,
    )


def schedule_compaction(
    engine: Engine, table: HudiTable, request: ScheduleRequest, now_ms: int | None = None
) -> ScheduleResult:
    """Plan a compaction from the (freshly indexed) store; write and record it, or say why not."""
    check_compactable(table)
    if request.mode not in MODES:
        raise HudiMetaError(f"unknown mode {request.mode!r}: {', '.join(MODES)}")
    if request.mode == "symlink" and not table.storage.supports_symlinks:
        raise HudiMetaError(f"{table.base_path} is on a store without symlinks: use --mode copy")
    now_ms = now_ms if now_ms is not None else int(dt.datetime.now(dt.UTC).timestamp() * 1000)
    threshold = _threshold(request, table, now_ms)
    indexer = Indexer(engine, table)
    indexer.run()
    assert indexer.table_id is not None
    table_id = indexer.table_id
    if request.strategy == "event-time" and event_time_field_of(engine, table_id) is None:
        raise HudiMetaError(
            f"{table.base_path} has no event-time field: register one with "
            "`hudi-meta register TABLE --event-time-field F` (or set hoodie.payload.event.time.field)"
        )
    with schedule_lock(engine, table_id, table.base_path) as conn:
        table.reload()
        decision = triggers.decide(request.trigger, _facts(table))
        if not decision.allowed:
            return ScheduleResult(None, decision.reason, threshold_ms=threshold)
        instant = new_instant_time(i.requested_time for i in table.timeline.instants)
        strategy = _strategy(request, threshold)
        operations = plan_operations(candidate_slices(engine, table_id, instant), strategy)
        if not operations:
            return ScheduleResult(None, "nothing to compact", threshold_ms=threshold)
        plan = build_plan(operations, strategy, instant, request.mode, request.exact)
        TimelineWriter(table.storage, table.timeline_path).request(Action.COMPACTION, instant, plan.to_bytes())
        record_plan(conn, table_id, instant, plan, "requested")
    table.reload()
    return ScheduleResult(instant, f"{len(plan.operations)} operations", plan, threshold)
