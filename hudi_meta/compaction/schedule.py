"""Schedule a compaction from the index: trigger, plan (pure), then write `<C>.compaction.requested` and
record the plan in the store under one lock, so two schedulers racing produce exactly one plan."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine

from hudi_meta.compaction import triggers
from hudi_meta.compaction.base_stats import base_file_max_event_times
from hudi_meta.compaction.candidates import candidate_slices
from hudi_meta.compaction.plan import build_plan
from hudi_meta.compaction.plan_records import PlannedOperation, SliceInfo
from hudi_meta.compaction.preconditions import check_compactable
from hudi_meta.compaction.strategies import (
    CompactionStrategy,
    EventTimeBasedCompactionStrategy,
    LogFileSizeBasedCompactionStrategy,
    Strategy,
    UnBoundedCompactionStrategy,
    achieved_threshold,
    exact_rewrites,
    plan_operations,
)
from hudi_meta.compaction.triggers import Trigger
from hudi_meta.errors import BadValueError, HudiMetaError, LimitError, ParameterError, WriteInProgressError
from hudi_meta.format import config_keys as keys
from hudi_meta.format.config_keys import ConfigKey
from hudi_meta.format.links import THRESHOLD_PARAM, LinkMode, is_exact, plan_link_mode
from hudi_meta.format.table_service_metadata import CompactionPlan
from hudi_meta.freshness import freshness
from hudi_meta.gc_pause import paused_gc
from hudi_meta.index.freshness_inputs import completed_compactions, pending_blocks
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.instants import record_plan
from hudi_meta.index.locks import schedule_lock
from hudi_meta.index.registry import event_time_field_of
from hudi_meta.index.states import PlanState
from hudi_meta.index.table_format import require_current_index
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import describe_time_ms, format_time_ms
from hudi_meta.table.times import now_ms as current_ms
from hudi_meta.timeline.instant import Action, instant_epoch_ms
from hudi_meta.values import ascii_integer
from hudi_meta.write.lock import table_lock

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScheduleRequest:
    """What to schedule: a strategy (event-time needs a threshold T, given or as now - data latency), the
    link mode, exact mode and the trigger that decides whether to schedule at all. The trigger's and the
    strategy's limits (`LIMITS`) left None come from the table's hoodie.properties, else Hudi's defaults."""

    threshold_ms: int | None = None
    data_latency_ms: int | None = None
    mode: LinkMode = LinkMode.SYMLINK
    exact: bool = False
    strategy: Strategy = Strategy.EVENT_TIME
    trigger: Trigger = Trigger.EVENT_TIME
    log_file_size_threshold: int | None = None  # bytes (log-file-size strategy)
    max_delta_commits: int | None = None  # num-commits trigger
    max_delta_seconds: int | None = None  # time-elapsed trigger

    def validate(self, now_ms: int) -> None:
        """Refuse values that would write a plan the store cannot hold or publish a freshness that is false."""
        for limit in LIMITS:
            limit.check(self)
        if self.threshold_ms is not None and self.data_latency_ms is not None:
            raise HudiMetaError("give either a threshold or a data latency, not both")
        if self.strategy is not Strategy.EVENT_TIME and (
            self.threshold_ms is not None or self.data_latency_ms is not None
        ):
            raise HudiMetaError(f"the {self.strategy.spelling} strategy takes no threshold or data latency")
        if self.exact and self.strategy is not Strategy.EVENT_TIME:
            raise HudiMetaError("exact mode needs the event-time strategy")
        if self.threshold_ms is not None:
            check_threshold(self.threshold_ms, now_ms)
        if self.data_latency_ms is not None:
            check_data_latency(self.data_latency_ms, now_ms)


@dataclass(frozen=True)
class Limit:
    """A number one trigger or strategy works with, under Hudi's config name: the request's value, else the
    table's hoodie.properties, else Hudi's default. A value given where the request's trigger or strategy does
    not use it is refused: it would do nothing."""

    field: str  # the ScheduleRequest field and the service configuration key
    config: ConfigKey[int]  # Hudi's key, read from hoodie.properties, and Hudi's default
    low: int
    high: int
    trigger: Trigger | None = None  # the trigger that uses it, or
    strategy: Strategy | None = None  # the strategy that uses it

    @property
    def key(self) -> str:
        return self.config.name

    @property
    def default(self) -> int:
        return self.config.default

    def used_by(self, request: ScheduleRequest) -> bool:
        return request.trigger == self.trigger if self.trigger is not None else request.strategy == self.strategy

    def user(self, request: ScheduleRequest) -> str:
        """Who uses this limit, and what the request has instead."""
        if self.trigger is not None:
            return f"the {self.trigger.spelling} trigger only (the trigger is {request.trigger.spelling})"
        assert self.strategy is not None
        return f"the {self.strategy.spelling} strategy only (the strategy is {request.strategy.spelling})"

    def check(self, request: ScheduleRequest) -> None:
        value: int | None = getattr(request, self.field)
        if value is None:
            return
        if not self.low <= value <= self.high:
            raise LimitError(self.field, value, f"expected a whole number from {self.low} to {self.high}")
        if not self.used_by(request):
            raise LimitError(self.field, value, f"used by {self.user(request)}")

    def of(self, request: ScheduleRequest, props: Mapping[str, str]) -> int:
        """The value that holds for `request` on a table with `props` (Hudi's default where it is not used)."""
        given: int | None = getattr(request, self.field)
        if given is not None:
            return given
        text = props.get(self.key, "").strip() if self.used_by(request) else ""
        if not text:
            return self.default
        value = ascii_integer(text)
        if value is None or not self.low <= value <= self.high:
            raise HudiMetaError(
                f"{self.key}={props[self.key]!r} in hoodie.properties is not a whole number from {self.low} to "
                f"{self.high}"
            )
        return value


MAX_DELTA_COMMITS = Limit(
    "max_delta_commits", keys.COMPACT_MAX_DELTA_COMMITS, 1, 1_000_000, trigger=Trigger.NUM_COMMITS
)
MAX_DELTA_SECONDS = Limit("max_delta_seconds", keys.COMPACT_MAX_DELTA_SECONDS, 1, 10**9, trigger=Trigger.TIME_ELAPSED)
LOG_FILE_SIZE_THRESHOLD = Limit(
    "log_file_size_threshold", keys.LOGFILE_SIZE_THRESHOLD, 0, 2**63 - 1, strategy=Strategy.LOG_FILE_SIZE
)
LIMITS = (MAX_DELTA_COMMITS, MAX_DELTA_SECONDS, LOG_FILE_SIZE_THRESHOLD)


def check_threshold(threshold_ms: int, now_ms: int) -> int:
    """A threshold before 1970 or after now is refused: no record can be known complete past now."""
    if threshold_ms < 0:
        raise BadValueError(f"threshold {describe_time_ms(threshold_ms)} is before 1970")
    if threshold_ms > now_ms:
        raise BadValueError(
            f"threshold {describe_time_ms(threshold_ms)} is after now ({format_time_ms(now_ms)}): "
            "it would overstate freshness"
        )
    return threshold_ms


def check_data_latency(latency_ms: int, now_ms: int) -> int:
    """A data latency puts the threshold (now - latency) from 1970 to now."""
    if not 0 <= latency_ms <= now_ms:
        raise BadValueError(
            f"data latency {latency_ms} ms is out of range: it must be at least 0 and put the threshold "
            "(now - latency) after 1970"
        )
    return latency_ms


@dataclass(frozen=True)
class ScheduleResult:
    instant: str | None  # None: nothing was scheduled
    reason: str
    plan: CompactionPlan | None = None
    threshold_ms: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """What every front end reports of a schedule (the CLI's `--json`, the web action's JSON)."""
        plan = self.plan
        return {
            "instant": self.instant,
            "reason": self.reason,
            "threshold": format_time_ms(self.threshold_ms) if self.threshold_ms is not None else None,
            "threshold_ms": self.threshold_ms,
            "operations": len(plan.operations) if plan else 0,
            "links": sum(len(op.symlink_operations) for op in plan.operations) if plan else 0,
            "mode": str(plan_link_mode(plan)) if plan else None,
            "exact": is_exact(plan) if plan else None,
        }

    def __str__(self) -> str:
        """The one line a person reads."""
        if self.instant is None:
            return f"nothing scheduled: {self.reason}"
        row = self.to_dict()
        return (
            f"scheduled compaction {self.instant}: {row['operations']} operations, {row['links']} links "
            f"({row['mode']}), threshold {row['threshold'] or '-'}, exact: {'yes' if row['exact'] else 'no'}"
        )


def _strategy(request: ScheduleRequest, threshold: int | None, props: Mapping[str, str]) -> CompactionStrategy:
    if request.strategy is Strategy.EVENT_TIME:
        assert threshold is not None
        return EventTimeBasedCompactionStrategy(threshold_ms=threshold)
    if request.strategy is Strategy.LOG_FILE_SIZE:
        return LogFileSizeBasedCompactionStrategy(threshold_bytes=LOG_FILE_SIZE_THRESHOLD.of(request, props))
    return UnBoundedCompactionStrategy()


def _threshold(request: ScheduleRequest, table: HudiTable, now_ms: int) -> int | None:
    if request.strategy is not Strategy.EVENT_TIME:
        return None
    if request.threshold_ms is not None:
        return request.threshold_ms
    latency = request.data_latency_ms
    text_value = keys.DATA_LATENCY.of(table.config.props)
    if latency is None and text_value is not None:
        latency = ascii_integer(text_value)
        if latency is None:
            raise HudiMetaError(f"{keys.DATA_LATENCY.name}={text_value!r} in hoodie.properties is not a number of ms")
    if latency is None:
        raise ParameterError(
            "an event-time compaction needs {threshold} T or {data_latency} D", "threshold", "data_latency"
        )
    return now_ms - latency


def refuse_moving_back(conn: Connection, table_id: int, threshold: int) -> None:
    """An exact compaction makes RO the table as of T: below the watermark RO holds now, that would take versions
    between T and the watermark out of RO. Refused: the promise RO keeps only moves forward
    (docs/event-time.md section 7)."""
    now = freshness(completed_compactions(conn, table_id), pending_blocks(conn, table_id), 0)
    if now.watermark_ms is not None and threshold < now.watermark_ms:
        raise ParameterError(
            f"an exact compaction at {format_time_ms(threshold)} would move the read-optimized view back before its "
            f"watermark {format_time_ms(now.watermark_ms)}: schedule at or after it, or without {{exact}}",
            "exact",
        )


def refuse_pending_writes(table: HudiTable) -> None:
    """Refuse while a write is pending, as Java Hudi does ("Earliest write inflight instant time must be later
    than compaction time"): its blocks land in the slice being compacted after the plan is made, and the
    compaction would neither merge nor link them."""
    tl = table.timeline
    pending = tl.pending_writes()
    if pending:
        first = pending[0]
        raise WriteInProgressError(
            f"{first.action} {first.requested_time} is still {first.state.value} on {table.base_path}: a compaction "
            "scheduled now would lose its records; let it finish (a failed write is rolled back by the next write "
            "once its heartbeat expires) and schedule again"
        )


def _facts(table: HudiTable, now_ms: int) -> triggers.TriggerFacts:
    tl = table.timeline
    compactions = [i for i in tl.completed() if tl.is_compaction(i.requested_time)]
    last = compactions[-1].requested_time if compactions else ""
    deltas = [i for i in tl.completed() if i.action == Action.DELTA_COMMIT and i.requested_time > last]
    elapsed = None
    if last:
        elapsed = (now_ms - instant_epoch_ms(last, table.config.timeline_timezone)) / 1000
    return triggers.TriggerFacts(
        pending_compactions=[i.requested_time for i in tl.pending_compactions()],
        pending_clustering=[i.requested_time for i in tl.pending_clustering()],
        delta_commits_since_last_compaction=len(deltas),
        seconds_since_last_compaction=elapsed,
    )


def _base_rewrites(
    table: HudiTable,
    slices: Sequence[SliceInfo],
    operations: Sequence[PlannedOperation],
    event_time_field: str | None,
    threshold_ms: int,
) -> list[PlannedOperation]:
    """The operations an exact plan adds for base files that may hold records after T, judged by their Parquet
    footers (read here, outside the pure planner: `strategies.exact_rewrites`)."""
    planned = {(op.slice.partition, op.slice.file_id) for op in operations}
    others = [s for s in slices if (s.partition, s.file_id) not in planned]
    latest = (
        base_file_max_event_times(table.storage, table.base_path, others, event_time_field) if event_time_field else {}
    )
    return exact_rewrites(others, operations, latest, threshold_ms)


def _exact_base_rewrites(
    table: HudiTable,
    slices: Sequence[SliceInfo],
    operations: Sequence[PlannedOperation],
    event_time_field: str | None,
    threshold_ms: int,
) -> tuple[list[PlannedOperation], set[str]]:
    """The base-file rewrites of an exact plan, and the base instants it leaves alone although their base files may
    hold records after T: those an exact compaction at or below T wrote (`_held_by_exact_compactions`). Only these
    keep the commit from publishing exact; a held base file whose slice is compacted now, or whose footer shows no
    record after T, does not."""
    wanted = _base_rewrites(table, slices, operations, event_time_field, threshold_ms)
    held = _held_by_exact_compactions(table, [op.slice for op in wanted], threshold_ms)
    return [op for op in wanted if op.slice.base_instant not in held], held


def _held_by_exact_compactions(table: HudiTable, slices: Sequence[SliceInfo], threshold_ms: int) -> set[str]:
    """Base instants of slices an exact event-time compaction at a threshold at or below T wrote: every version it
    left after its threshold is one held for merge order (the rest went to the carry log), and with no log file of
    the slice at or before T (it is not compacted now) a rewrite at T would hold the same versions again. They are
    not rewritten (a second schedule at the same T plans nothing), and they keep the commit from publishing exact."""
    out = set()
    for base_instant in {s.base_instant for s in slices if s.base_file is not None}:
        if not table.timeline.is_completed(base_instant) or not table.timeline.is_compaction(base_instant):
            continue
        try:
            plan = table.compaction_plan(base_instant)
        except (OSError, ValueError, HudiMetaError):
            continue  # its plan is gone (archived): judged by its footer like any other base file
        threshold = plan.strategy.strategy_params.get(THRESHOLD_PARAM, "") if plan.strategy is not None else ""
        if is_exact(plan) and threshold.isdigit() and int(threshold) <= threshold_ms:
            out.add(base_instant)
    return out


def _exact_blocked_by(table: HudiTable) -> tuple[str, ...]:
    """Pending compactions and clusterings: their base files join RO when they commit, whatever an exact plan
    scheduled now does, so its commit cannot publish exact (`links.EXACT_BLOCKED_PARAM`)."""
    tl = table.timeline
    return tuple(sorted(i.requested_time for i in [*tl.pending_compactions(), *tl.pending_clustering()]))


def schedule_compaction(
    engine: Engine, table: HudiTable, request: ScheduleRequest, now_ms: int | None = None
) -> ScheduleResult:
    """Plan a compaction from the (freshly indexed) store; write and record it, or say why not."""
    check_compactable(table)
    now_ms = now_ms if now_ms is not None else current_ms()
    request.validate(now_ms)
    if request.mode is LinkMode.SYMLINK and not table.storage.supports_symlinks:
        base = table.base_path.replace("{", "{{").replace("}", "}}")
        raise ParameterError(f"{base} is on a store without symlinks: use {{mode}} copy", "mode")
    threshold = _threshold(request, table, now_ms)
    if threshold is not None:
        check_threshold(threshold, now_ms)
    for _ in range(INDEX_ATTEMPTS):
        table.reload()
        indexed = _timeline_state(table)
        indexer = Indexer(engine, table)
        indexer.run()
        assert indexer.table_id is not None
        table_id = indexer.table_id
        event_time_field = event_time_field_of(engine, table_id)  # the one the index measured blocks by
        if request.strategy is Strategy.EVENT_TIME and event_time_field is None:
            raise HudiMetaError(
                f"{table.base_path} has no event-time field: register the table with one (the record field of "
                f"its event time), or set {keys.EVENT_TIME_FIELD.name}"
            )
        result = _schedule_indexed(engine, table, table_id, request, threshold, event_time_field, indexed, now_ms)
        if result is not None:
            return result
    return ScheduleResult(None, "writes kept committing while the table was indexed: try again", threshold_ms=threshold)


INDEX_ATTEMPTS = 3  # times the table is indexed again when writes commit between indexing and planning


def _timeline_state(table: HudiTable) -> list[tuple[str, str, str]]:
    return [(i.requested_time, i.action, i.state.value) for i in table.timeline.instants]


def _schedule_indexed(
    engine: Engine,
    table: HudiTable,
    table_id: int,
    request: ScheduleRequest,
    threshold: int | None,
    event_time_field: str | None,
    indexed: list[tuple[str, str, str]],
    now_ms: int,
) -> ScheduleResult | None:
    """Plan and write under the store's schedule lock and the table lock (`write.lock`, which writers take to
    check for conflicts and commit): no write commits between the pending-writes check and the plan, and the
    plan is cut from an index of the timeline as it is then (None: the timeline changed since `indexed`). C is taken
    here too, after the check: writers take their instant times and request them under the same lock, so no write
    older than C can appear after it (docs/concurrency.md section 2.1)."""
    with (
        schedule_lock(engine, table_id, table.uri) as conn,
        table_lock(table.storage, table.meta_path, table.config.props, "schedule a compaction"),
    ):
        table.reload()
        if _timeline_state(table) != indexed:
            return None
        require_current_index(engine, table, table_id)  # a Java upgrade since indexing: never plan from stale rows
        props = table.config.props
        limits = MAX_DELTA_COMMITS.of(request, props), MAX_DELTA_SECONDS.of(request, props)
        decision = triggers.decide(request.trigger, _facts(table, now_ms), *limits)
        if not decision.allowed:
            return ScheduleResult(None, decision.reason, threshold_ms=threshold)
        refuse_pending_writes(table)
        if request.exact and threshold is not None:
            refuse_moving_back(conn, table_id, threshold)
        instant = table.new_instant_time()
        strategy = _strategy(request, threshold, props)
        held: set[str] = set()  # base files an exact plan leaves holding records after T (they block exact)
        with paused_gc():  # one collector pass after the plan's objects are gone, not many during
            slices = candidate_slices(engine, table_id, instant, with_base_only=request.exact)
            operations = plan_operations(slices, strategy)
            if isinstance(strategy, EventTimeBasedCompactionStrategy):
                achieved = achieved_threshold(slices, operations, strategy.threshold_ms)
                while (
                    request.exact
                    and achieved.threshold_ms is not None
                    and achieved.threshold_ms < strategy.threshold_ms
                ):
                    # exact mode cuts at the threshold it achieves: files due only between that and the requested T
                    # would have their versions carried straight back (planned again and again), so plan at it
                    strategy = EventTimeBasedCompactionStrategy(threshold_ms=achieved.threshold_ms)
                    operations = plan_operations(slices, strategy)
                    achieved = achieved_threshold(slices, operations, strategy.threshold_ms)
                if achieved.threshold_ms is None:
                    see = "the table's log blocks show which"
                    raise HudiMetaError(f"cannot guarantee a threshold: {achieved.reason} ({see})")
                threshold = achieved.threshold_ms
                # the plan records what it achieves
                strategy = EventTimeBasedCompactionStrategy(threshold_ms=threshold)
                if request.exact:
                    rewrites, held = _exact_base_rewrites(table, slices, operations, event_time_field, threshold)
                    operations = [*operations, *rewrites]
            if not operations:
                return ScheduleResult(None, "nothing to compact", threshold_ms=threshold)
            blocked = tuple(sorted({*_exact_blocked_by(table), *held})) if request.exact else ()
            plan = build_plan(operations, strategy, instant, request.mode, request.exact, event_time_field, blocked)
            timeline = table.timeline_writer()
            timeline.request(Action.COMPACTION, instant, plan.to_bytes())
            record_plan(conn, table_id, instant, plan, PlanState.REQUESTED)
    table.reload()
    log.info("scheduled compaction %s of %s: %d operations", instant, table.base_path, len(plan.operations))
    return ScheduleResult(instant, f"{len(plan.operations)} operations", plan, threshold)
