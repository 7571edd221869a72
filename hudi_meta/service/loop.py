"""The service loop (docs/service-and-ui.md section 1): round after round, for each configured table this process holds
the lease of, in order: index; finish pending compactions (oldest first); ask the trigger and schedule an
event-time compaction (T = now - data latency), then run it; clean; sync. Every step is a record in the store.

A table's failure is recorded and retried after a backoff that doubles per failure in a row (up to a maximum);
the other tables go on. `stop()` (SIGTERM) lets the current step finish, or abandons a compaction between its
tasks (the plan stays pending and is finished first by the next start); leases are released on the way out.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine

from hudi_meta.api import Table
from hudi_meta.errors import Abandoned, HudiMetaError, WriteInProgressError, first_line
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.registry import register_table
from hudi_meta.service.config import ServiceConfig, TableSettings
from hudi_meta.service.records import (
    StepOutcome,
    StepStatus,
    acquire_lease,
    end_step,
    prune_steps,
    release_leases,
    renew_leases,
    set_status,
    start_step,
)
from hudi_meta.service.runner import CompactionRunner
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import format_time_ms

log = logging.getLogger("hudi_meta.service")


@dataclass
class TableState:
    """What the loop remembers of a table between rounds (in this process only)."""

    settings: TableSettings
    table_id: int | None = None
    failures: int = 0
    retry_at: float = 0.0
    next_schedule_at: float = 0.0
    facts: list[str] = field(default_factory=list)  # this round's `key=value` pairs for its one log line
    changed: bool = False  # did this round change anything (the line is info, else debug)


@dataclass
class Service:
    config: ServiceConfig
    engine: Engine
    runner: CompactionRunner
    worker: str
    clock: Callable[[], float] = time.monotonic
    stopping: threading.Event = field(default_factory=threading.Event)
    tables: list[TableState] = field(init=False)
    held: set[int] = field(default_factory=set)
    rounds: int = 0

    def __post_init__(self) -> None:
        self.tables = [TableState(t) for t in self.config.tables]
        self._held_lock = threading.Lock()

    # ------------------------------------------------------------ lifecycle

    def run(self, max_rounds: int | None = None) -> None:
        """Rounds until `stop()` (or `max_rounds`), the leases renewed all along, then released."""
        renewer = threading.Thread(target=self._renew_leases, name="hudi-meta-leases", daemon=True)
        renewer.start()
        try:
            while not self.stopping.is_set() and (max_rounds is None or self.rounds < max_rounds):
                self.round()
                self.rounds += 1
                if max_rounds is None or self.rounds < max_rounds:
                    self.stopping.wait(self.config.loop.interval_s)
        finally:
            self.stopping.set()
            renewer.join(timeout=5)
            with self._held_lock:
                held, self.held = set(self.held), set()
            release_leases(self.engine, self.worker, held)
            self.runner.close()
            log.info("stopped; leases of %d tables released", len(held))

    def stop(self) -> None:
        """Stop after the current step (a compaction is left pending between its tasks)."""
        self.stopping.set()
        self.runner.stop()

    def _renew_leases(self) -> None:
        every = self.config.loop.lease_s / 3
        while not self.stopping.wait(every):
            with self._held_lock:
                ids = set(self.held)
            try:
                still = renew_leases(self.engine, self.worker, ids, self.config.loop.lease_s)
            except Exception as e:  # the store is away: the leases run out, and the steps fail on their own
                log.warning("renewing leases failed: %s", e)
                continue
            lost = ids - still
            if lost:
                log.warning("lost the leases of tables %s", sorted(lost))
                with self._held_lock:
                    self.held -= lost

    # ------------------------------------------------------------ rounds

    def round(self) -> None:
        for state in self.tables:
            if self.stopping.is_set():
                return
            if self.clock() < state.retry_at:
                continue
            state.facts, state.changed = [], False
            try:
                if not self._lease(state):
                    continue
                self.work(state)
            except Abandoned as e:
                log.info("%s: %s", state.settings.path, e)
                return
            except Exception as e:  # one table's failure never stops the others
                state.failures += 1
                backoff = min(
                    self.config.loop.retry_backoff_s * 2 ** (state.failures - 1), self.config.loop.max_backoff_s
                )
                state.retry_at = self.clock() + backoff
                line = " ".join([f"table={log_value(state.settings.path)}", *state.facts])
                log.error("%s error=%s retry_in_s=%.0f", line, log_value(first_line(e)), backoff)
            else:
                state.failures, state.retry_at = 0, 0.0
                self._log_round(state)
            if state.table_id is not None:
                prune_steps(self.engine, state.table_id, self.config.loop.keep_steps)

    def _lease(self, state: TableState) -> bool:
        if state.table_id is None:
            table = state.settings.open()
            state.table_id = register_table(self.engine, table, state.settings.event_time_field)
        got = acquire_lease(self.engine, state.table_id, self.worker, self.config.loop.lease_s)
        with self._held_lock:
            (self.held.add if got else self.held.discard)(state.table_id)
        return got

    def work(self, state: TableState) -> None:
        s = state.settings
        table: HudiTable = self._step(state, "index", StepStatus.PLANNING, lambda: self._index(state))
        for pending in table.timeline.pending_compactions():
            self._compact(state, table, pending.requested_time)
        if self.clock() >= state.next_schedule_at and not self.stopping.is_set():
            state.next_schedule_at = self.clock() + s.schedule_interval_s
            instant = self._step(state, "schedule", StepStatus.PLANNING, lambda: self._schedule(s))
            if instant:
                self._compact(state, s.open(), instant)
        if s.clean and not self.stopping.is_set():
            self._step(state, "clean", StepStatus.RUNNING, lambda: self._clean(s))
        if s.sync and self.config.catalog is not None and not self.stopping.is_set():
            self._step(state, "sync", StepStatus.RUNNING, lambda: self._sync(s))

    # ------------------------------------------------------------ steps

    def _step(self, state: TableState, name: str, status: StepStatus, body: Callable[[], Any]) -> Any:
        """Run `body` as a recorded step: its StepResult says the outcome, what it did and the status the table
        then waits in; a failure is recorded with its error line and raised."""
        assert state.table_id is not None
        step_id = start_step(self.engine, state.table_id, self.worker, name, status)
        try:
            result = body()
        except Exception as e:
            end_step(self.engine, step_id, StepOutcome.FAILED, error=first_line(e))
            raise
        end_step(self.engine, step_id, result.outcome, result.detail, status=result.status)
        self._note(state, name, result.outcome, result.detail)
        return result.value

    def _note(self, state: TableState, name: str, outcome: StepOutcome, detail: dict[str, Any]) -> None:
        """Add a step to the round's line: `name=outcome` and its non-empty details as `name.key=value`."""
        shown = {k: v for k, v in detail.items() if v not in (None, 0, "")}
        quiet = outcome in (StepOutcome.SKIPPED, StepOutcome.NOTHING) or (outcome is StepOutcome.OK and not shown)
        state.changed = state.changed or not quiet
        state.facts.append(f"{name}={log_value(str(outcome))}")
        state.facts.extend(f"{name}.{k.removesuffix('_ms')}={log_value(v, k)}" for k, v in shown.items())

    def _log_round(self, state: TableState) -> None:
        """One line per table per round: info when it changed something, else debug (idle rounds)."""
        line = " ".join([f"table={log_value(state.settings.path)}", *state.facts])
        log.log(logging.INFO if state.changed else logging.DEBUG, "%s", line)

    def _index(self, state: TableState) -> StepResult:
        """Open the table (a table that cannot be opened fails here, recorded) and index it; the table."""
        table = state.settings.open()
        stats = Indexer(self.engine, table).run(state.settings.event_time_field)
        changes = {k: v for k, v in vars(stats).items() if isinstance(v, int) and v and k != "links"}
        if changes:  # `links` is the table's count, not a change: shown only beside one
            changes["links"] = stats.links
        return StepResult(StepOutcome.OK, changes, value=table)

    def _compact(self, state: TableState, table: HudiTable, instant: str) -> None:
        assert state.table_id is not None
        step_id = start_step(self.engine, state.table_id, self.worker, "compaction", StepStatus.PENDING)

        def on_phase(phase: str) -> None:
            set_status(self.engine, step_id, StepStatus(phase))

        try:
            self.runner.run(table, instant, on_phase)
        except Abandoned as e:
            end_step(
                self.engine,
                step_id,
                StepOutcome.ABANDONED,
                {"instant": instant, "reason": str(e)},
                status=StepStatus.PENDING,
            )
            raise
        except Exception as e:
            reopened = HudiTable.open(table.uri, table.storage.options)
            if reopened.timeline.instant(instant) is None:  # the run took the plan back (writers broke its order)
                Indexer(self.engine, reopened).run()
                detail = {"instant": instant, "reason": first_line(e)}
                end_step(self.engine, step_id, StepOutcome.TAKEN_BACK, detail)
                self._note(state, "compaction", StepOutcome.TAKEN_BACK, detail)
                return
            end_step(self.engine, step_id, StepOutcome.FAILED, {"instant": instant}, error=first_line(e))
            raise
        Indexer(self.engine, HudiTable.open(table.uri, table.storage.options)).run()
        end_step(self.engine, step_id, StepOutcome.COMPLETED, {"instant": instant})
        self._note(state, "compaction", StepOutcome.COMPLETED, {"instant": instant})

    def _api(self, s: TableSettings) -> Table:
        """The table as the Python API opens it, on the service's store: the CLI's operations, the same code."""
        return Table(s.path, self.engine, s.storage_options)

    def _schedule(self, s: TableSettings) -> StepResult:
        try:
            result = self._api(s).schedule(s.schedule_request())
        except WriteInProgressError as e:  # a writer at work: the next round asks again (writers roll back dead ones)
            return StepResult(StepOutcome.SKIPPED, {"reason": str(e)})
        detail = {"reason": result.reason, "threshold_ms": result.threshold_ms}
        if result.instant is None:
            return StepResult(StepOutcome.SKIPPED, detail)
        return StepResult(
            StepOutcome.SCHEDULED, {**detail, "instant": result.instant}, StepStatus.PENDING, result.instant
        )

    def _clean(self, s: TableSettings) -> StepResult:
        outcome = self._api(s).clean(s.clean_policy, s.clean_retained, s.clean_hours, dry_run=False)
        failed = [r for r in outcome.reports if r.error]
        deleted = outcome.deleted
        if failed:
            raise HudiMetaError(f"{len(failed)} files could not be deleted: {failed[0].path}: {failed[0].error}")
        detail = {"instant": outcome.instant, "deleted": deleted, "note": outcome.note}
        return StepResult(StepOutcome.CLEANED if outcome.instant else StepOutcome.NOTHING, detail)

    def _sync(self, s: TableSettings) -> StepResult:
        c = self.config.catalog
        assert c is not None
        report = self._api(s).sync(
            c.mode,
            c.uri,
            s.sync_database or c.database,
            s.sync_name,
            c.timeout_s,
            skip_ro_suffix=s.skip_ro_suffix,
            sync_strategy=s.sync_strategy,
        )
        return StepResult(StepOutcome.OK, {"changes": len(report.actions)})


def log_value(value: object, key: str = "") -> str:
    """A value of a `key=value` log line: times (`*_ms` of event time) as ISO-8601 UTC, text with spaces or `=`
    quoted, so that the line splits back into its pairs."""
    if isinstance(value, int) and not isinstance(value, bool) and key == "threshold_ms":
        return format_time_ms(value)
    text = str(value)
    if not text or any(c.isspace() or c in '="' for c in text):
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text


@dataclass(frozen=True)
class StepResult:
    """How a step ended (its outcome and what it did), the status the table waits in, and a value for the loop."""

    outcome: StepOutcome
    detail: dict[str, Any]
    status: StepStatus | None = None
    value: Any = None
