"""The service loop in this process, round by round: one table's failure never stops the others, it is retried
after a backoff that doubles per failure in a row (up to the maximum), and a success resets it."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.triggers import Trigger
from hudi_meta.service.config import LoopSettings, ServiceConfig, SparkSettings, TableSettings
from hudi_meta.service.loop import Service
from hudi_meta.service.records import all_steps
from hudi_meta.service.runner import LocalRunner, Phase
from hudi_meta.table.table import HudiTable
from tests.compaction.core import foreign_append
from tests.service.helpers import HOUR_MS, MINUTE_MS, NOW_MS, Groups


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_failing_table_is_retried_with_backoff_and_the_others_go_on(
    tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    good, bad = Groups(tmp_path / "good", 2, "good"), Groups(tmp_path / "bad", 2, "bad")
    for t in (good, bad):
        t.batch(5 * HOUR_MS)
        t.batch(4 * HOUR_MS)
        t.batch(10 * MINUTE_MS)
    settings = [TableSettings(t.path, data_latency_ms=HOUR_MS, sync=False) for t in (bad, good)]
    loop = LoopSettings(interval_s=0, retry_backoff_s=10, max_backoff_s=35)
    config = ServiceConfig("test", None, SparkSettings(engine="local"), None, loop=loop, tables=tuple(settings))
    clock = Clock()
    service = Service(config, engine, LocalRunner(), "w1", clock=clock)
    service.round()  # registers both tables, takes their leases, compacts both
    state = {s.settings.path: s for s in service.tables}
    # the bad table's timeline becomes unreadable: every round of it fails from now on
    props = Path(bad.path, ".hoodie", "hoodie.properties")
    saved = props.read_bytes()
    props.write_bytes(b"not = a hudi table\n")
    retries = []
    for _ in range(6):
        good.batch(3 * HOUR_MS)  # work for the good table every round
        service.round()
        retries.append(state[bad.path].retry_at - clock.now if state[bad.path].retry_at > clock.now else 0.0)
        clock.now += 10
    failures = [s for s in all_steps(engine) if s.status == "failed"]
    assert failures and all(s.error for s in failures)
    good_compactions = [s for s in all_steps(engine, [state[good.path].table_id or 0]) if s.outcome == "completed"]
    assert len(good_compactions) == 7  # the first round and all six: never held up by the bad table
    # 10 s, then 20 s, then 35 s (the maximum): rounds inside the backoff do not touch the bad table
    assert retries[0] == 10 and max(retries) == 35 and state[bad.path].failures == len(failures)
    assert len(failures) < 6
    props.write_bytes(saved)
    clock.now += 100
    service.round()
    assert state[bad.path].failures == 0 and state[bad.path].retry_at == 0


class ForeignWriterFirst(LocalRunner):
    """Before its first run, a writer that does not know the plan (Java without a shared lock) appends a log file to
    the slice the plan compacts."""

    def __init__(self, groups: Groups) -> None:
        super().__init__()
        self.groups = groups
        self.wrote = False

    def run(self, table: HudiTable, instant: str, on_phase: Phase) -> None:
        if not self.wrote:
            self.wrote = True
            op = table.compaction_plan(instant).operations[0]
            partition = op.partition_path or ""
            region = partition.split("=", 1)[1]
            slice_logs = [
                n for n in os.listdir(Path(self.groups.path, partition)) if f"_{op.base_instant_time}.log." in n
            ]
            data = pa.table(
                {"id": [f"{region}-java"], "ts": pa.array([NOW_MS], pa.int64()), "region": [region], "amount": [9.0]}
            )
            foreign_append(table, partition, op.file_id, op.base_instant_time or "", len(slice_logs) + 1, data)
            self.groups.model[f"{region}-java"] = (NOW_MS, 9.0)
        super().run(table, instant, on_phase)


def test_a_plan_a_foreign_writer_broke_is_taken_back_and_scheduled_again(tmp_path: Path, engine: Engine) -> None:
    """Issue 25, defect 3: the service never sits on a plan that cannot run. The run takes it back (a step
    "taken back", not a failure), and the next round schedules and compacts again; nothing is lost."""
    t = Groups(tmp_path / "t", 2, "t")
    t.batch(5 * HOUR_MS)
    t.batch(4 * HOUR_MS)
    t.batch(10 * MINUTE_MS)
    settings = (TableSettings(t.path, data_latency_ms=HOUR_MS, sync=False, clean=False),)
    loop = LoopSettings(interval_s=0, retry_backoff_s=10, max_backoff_s=35)
    config = ServiceConfig("test", None, SparkSettings(engine="local"), None, loop=loop, tables=settings)
    service = Service(config, engine, ForeignWriterFirst(t), "w1", clock=Clock())
    service.round()
    outcomes = [s.outcome for s in all_steps(engine) if s.step == "compaction"]
    assert outcomes == ["taken back"] and service.tables[0].failures == 0
    assert not HudiTable.open(t.path).timeline.pending_compactions()
    service.round()
    outcomes = [s.outcome for s in all_steps(engine) if s.step == "compaction"]
    assert outcomes == ["taken back", "completed"]
    assert t.read() == t.model
    assert {k for k in t.read("ro")} >= {k for k, (ts, _) in t.model.items() if ts < NOW_MS - HOUR_MS}


def test_the_trigger_limits_of_a_table_reach_its_schedule_step(tmp_path: Path, engine: Engine) -> None:
    """Two delta commits on each table, trigger num-commits: the configured limit holds, else the table's
    hoodie.compact.inline.max.delta.commits, else Hudi's 5 (issue 25 item 6)."""
    limits = {"two": (2, None), "three": (3, None), "table-two": (None, "2"), "default": (None, None)}
    settings = []
    for name, (configured, in_table) in limits.items():
        props = {"hoodie.compact.inline.max.delta.commits": in_table} if in_table else None
        t = Groups(tmp_path / name, 1, name, props)
        t.batch(5 * HOUR_MS)
        t.batch(4 * HOUR_MS)
        settings.append(
            TableSettings(
                t.path,
                data_latency_ms=HOUR_MS,
                trigger=Trigger.NUM_COMMITS,
                max_delta_commits=configured,
                clean=False,
                sync=False,
            )
        )
    config = ServiceConfig("test", None, SparkSettings(engine="local"), None, tables=tuple(settings))
    service = Service(config, engine, LocalRunner(), "w1", clock=Clock())
    service.round()
    outcomes = {}
    for name, state in zip(limits, service.tables, strict=True):
        (schedule,) = [s for s in all_steps(engine, [state.table_id or 0]) if s.step == "schedule"]
        outcomes[name] = (schedule.outcome, schedule.detail["reason"])
    assert outcomes["two"][0] == outcomes["table-two"][0] == "scheduled"
    assert outcomes["three"] == ("skipped", "2 delta commits since the last compaction (need 3)")
    assert outcomes["default"] == ("skipped", "2 delta commits since the last compaction (need 5)")
