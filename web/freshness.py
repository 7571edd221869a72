"""Freshness at a glance: whether a table's watermark keeps up with its data latency (on time, late, stalled),
and its history (threshold, watermark and lag over time, with compactions, cleans and syncs), both derived from
what the store already records (docs/service-and-ui.md section 3).

The data latency D is the table's own `hoodie.compaction.event.time.data.latency` when it sets one (the store
keeps it with the table's options); else the one its compactions are scheduled with: the service and
`--data-latency` put T = now - D, so the newest event-time plan's instant time minus its threshold is D. The rule:

- on time: lag <= 2 D (the watermark trails by D by design; one more D covers the round and the run);
- late: lag > 2 D, but an event-time compaction completed within the last 2 D (compactions still complete:
  late data or a slow round holds the watermark back);
- stalled: lag > 2 D and no event-time compaction completed within the last 2 D;
- unknown: no watermark yet, or no event-time plan to read D from.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import Connection, func, select

from hudi_meta.index.compactions import DATA_BLOCK_TYPES
from hudi_meta.index.models import (
    compaction_plan_table,
    instant_table,
    log_block_table,
    sync_run_table,
)
from hudi_meta.index.states import BlockStatus
from hudi_meta.timeline.instant import State, instant_epoch_ms

ON_TIME_FACTOR = 2  # lag up to this many data latencies is on time
MAX_COMPACTIONS = 200  # the history reaches back this many event-time compactions
MAX_EVENTS = 5000  # writes, cleans and syncs drawn at most (the newest)


class Status(StrEnum):
    ON_TIME = "on time"
    LATE = "late"
    STALLED = "stalled"
    UNKNOWN = "unknown"

    @property
    def css(self) -> str:
        return "fresh-" + self.value.replace(" ", "-")


@dataclass(frozen=True)
class Verdict:
    """A table's freshness status and what it was judged by."""

    status: Status
    data_latency_ms: int | None
    limit_ms: int | None  # the lag up to which the table is on time (2 D)
    last_compaction_ms: int | None  # when the newest event-time compaction completed

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status.value,
            "data_latency_ms": self.data_latency_ms,
            "on_time_limit_ms": self.limit_ms,
            "last_event_time_compaction_ms": self.last_compaction_ms,
        }


def judge(lag_ms: int | None, data_latency_ms: int | None, last_compaction_ms: int | None, now_ms: int) -> Verdict:
    """The rule of the module docstring."""
    if lag_ms is None or data_latency_ms is None:
        return Verdict(Status.UNKNOWN, data_latency_ms, None, last_compaction_ms)
    limit = ON_TIME_FACTOR * data_latency_ms
    if lag_ms <= limit:
        status = Status.ON_TIME
    elif last_compaction_ms is not None and now_ms - last_compaction_ms <= limit:
        status = Status.LATE
    else:
        status = Status.STALLED
    return Verdict(status, data_latency_ms, limit, last_compaction_ms)


def data_latency_ms(conn: Connection, table_id: int, zone: dt.tzinfo) -> int | None:
    """D as the newest event-time plan was scheduled with (its instant time minus its T); None: no such plan."""
    plans = compaction_plan_table
    row = conn.execute(
        select(plans.c.instant, plans.c.threshold)
        .where(plans.c.table_id == table_id, plans.c.threshold.is_not(None))
        .order_by(plans.c.instant.desc())
        .limit(1)
    ).first()
    if row is None:
        return None
    return max(0, instant_epoch_ms(row.instant, zone) - int(row.threshold))


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class Compaction:
    at_ms: int  # completed
    instant: str
    threshold_ms: int  # what its commit published


@dataclass(frozen=True)
class Write:
    at_ms: int  # committed
    instant: str
    min_event_time_ms: int  # the smallest min event time of its data blocks


@dataclass(frozen=True)
class Event:
    """A clean or a sync, marked on the history."""

    kind: str  # clean | sync
    at_ms: int
    label: str
    ok: bool = True


@dataclass(frozen=True)
class Point:
    at_ms: int
    threshold_ms: int | None
    watermark_ms: int | None
    lag_ms: int | None  # at_ms - watermark_ms


@dataclass(frozen=True)
class History:
    points: list[Point]  # after each change, and now; the lag grows linearly between two points
    compactions: list[Compaction]
    events: list[Event]
    start_ms: int
    end_ms: int


def history_points(
    compactions: list[Compaction], writes: list[Write], now: Point | None, start_ms: int | None = None
) -> list[Point]:
    """Threshold and watermark after each compaction and late write, oldest first. A compaction publishes T and
    RO then holds everything below it (the planner lowers T below any data it leaves), so the watermark is T; a
    write committed later with data below the watermark holds it down to that data until the next compaction.
    `now` (the store's current freshness) closes the list."""
    changes: list[tuple[int, int, Compaction | Write]] = [(c.at_ms, 0, c) for c in compactions]
    changes += [(w.at_ms, 1, w) for w in writes]
    threshold: int | None = None
    watermark: int | None = None
    points = []
    for at, _, change in sorted(changes, key=lambda c: (c[0], c[1])):
        if isinstance(change, Compaction):
            threshold = watermark = change.threshold_ms
        elif watermark is not None and change.min_event_time_ms < watermark:
            watermark = change.min_event_time_ms
        else:
            continue
        if start_ms is None or at >= start_ms:
            points.append(Point(at, threshold, watermark, at - watermark if watermark is not None else None))
    if now is not None:
        points.append(now)
    return points


def _ms(instant: str | None, zone: dt.tzinfo) -> int | None:
    try:
        return instant_epoch_ms(instant, zone) if instant else None
    except ValueError:
        return None


def _epoch_ms(value: dt.datetime) -> int:
    aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
    return int(aware.timestamp() * 1000)


def read_history(conn: Connection, table_id: int, zone: dt.tzinfo, now: Point) -> History:
    """The history of a table from its instants, blocks and sync runs, reaching back `MAX_COMPACTIONS`
    event-time compactions (or to its first write, when it has fewer)."""
    compactions = _compactions(conn, table_id, zone)
    writes = _writes(conn, table_id, zone)
    first = [c.at_ms for c in compactions[:1]] + [w.at_ms for w in writes[:1]]
    if len(compactions) >= MAX_COMPACTIONS:
        first = [compactions[0].at_ms]
    start = min([*first, now.at_ms - 60_000])  # a minute at least
    events = [e for e in _cleans(conn, table_id, zone) + _syncs(conn, table_id) if e.at_ms >= start]
    points = history_points(compactions, writes, now, start)
    return History(points, compactions, sorted(events, key=lambda e: e.at_ms)[-MAX_EVENTS:], start, now.at_ms)


def _done_ms(requested: str, completion: str | None, zone: dt.tzinfo) -> int | None:
    """When an instant completed: its completion time (table version 8 and later), else its requested time."""
    return _ms(completion, zone) or _ms(requested, zone)


def table_verdict(
    conn: Connection, table_id: int, zone: dt.tzinfo, lag_ms: int | None, now_ms: int, configured_ms: int | None = None
) -> Verdict:
    """The table's status now, by the rule of the module docstring; D is the table's own setting
    (`configured_ms`) when it has one, else read from its newest event-time plan."""
    newest = _compactions(conn, table_id, zone, limit=20)
    last = newest[-1].at_ms if newest else None
    latency = configured_ms if configured_ms is not None else data_latency_ms(conn, table_id, zone)
    return judge(lag_ms, latency, last, now_ms)


def _compactions(conn: Connection, table_id: int, zone: dt.tzinfo, limit: int = MAX_COMPACTIONS) -> list[Compaction]:
    instants, plans = instant_table, compaction_plan_table
    rows = conn.execute(
        select(instants.c.requested_time, instants.c.completion_time, instants.c.summary, plans.c.completed_at)
        .outerjoin(plans, (plans.c.table_id == instants.c.table_id) & (plans.c.instant == instants.c.requested_time))
        .where(instants.c.table_id == table_id, instants.c.is_compaction, instants.c.state == State.COMPLETED)
        .order_by(instants.c.requested_time.desc())
        .limit(limit)
    ).all()
    out = []
    for r in rows:
        threshold = json.loads(r.summary or "{}").get("threshold")
        at = _ms(r.completion_time, zone) or (_epoch_ms(r.completed_at) if r.completed_at else None)
        at = at or _ms(r.requested_time, zone)
        if threshold is not None and str(threshold).isdigit() and at is not None:
            out.append(Compaction(at, r.requested_time, int(threshold)))
    return sorted(out, key=lambda c: c.at_ms)


def _writes(conn: Connection, table_id: int, zone: dt.tzinfo) -> list[Write]:
    blocks, instants = log_block_table, instant_table
    rows = conn.execute(
        select(
            blocks.c.instant,
            func.min(blocks.c.min_event_time).label("low"),
            func.max(instants.c.completion_time).label("done"),
        )
        .outerjoin(
            instants, (instants.c.table_id == blocks.c.table_id) & (instants.c.requested_time == blocks.c.instant)
        )
        .where(
            blocks.c.table_id == table_id,
            blocks.c.status == BlockStatus.COMMITTED,
            blocks.c.block_type.in_(DATA_BLOCK_TYPES),
            blocks.c.min_event_time.is_not(None),
            blocks.c.instant.is_not(None),
        )
        .group_by(blocks.c.instant)
        .order_by(blocks.c.instant.desc())
        .limit(MAX_EVENTS)
    ).all()
    out = [Write(at, r.instant, int(r.low)) for r in rows if (at := _done_ms(r.instant, r.done, zone)) is not None]
    return sorted(out, key=lambda w: w.at_ms)


def _cleans(conn: Connection, table_id: int, zone: dt.tzinfo) -> list[Event]:
    instants = instant_table
    rows = conn.execute(
        select(instants.c.requested_time, instants.c.completion_time)
        .where(instants.c.table_id == table_id, instants.c.action == "clean", instants.c.state == State.COMPLETED)
        .order_by(instants.c.requested_time.desc())
        .limit(MAX_EVENTS)
    ).all()
    return [
        Event("clean", at, f"clean {r.requested_time}")
        for r in rows
        if (at := _done_ms(r.requested_time, r.completion_time, zone)) is not None
    ]


def _syncs(conn: Connection, table_id: int) -> list[Event]:
    sync_runs = sync_run_table
    rows = conn.execute(
        select(
            sync_runs.c.started_at, sync_runs.c.duration_ms, sync_runs.c.outcome, sync_runs.c.changes, sync_runs.c.mode
        )
        .where(sync_runs.c.table_id == table_id)
        .order_by(sync_runs.c.started_at.desc())
        .limit(MAX_EVENTS)
    ).all()
    return [
        Event(
            "sync",
            _epoch_ms(r.started_at) + r.duration_ms,
            f"sync ({r.mode}) {r.outcome}: {r.changes} changes",
            r.outcome == "ok",
        )
        for r in rows
    ]
