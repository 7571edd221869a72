"""The service loop in this process, round by round: one table's failure never stops the others, it is retried
after a backoff that doubles per failure in a row (up to the maximum), and a success resets it."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.planning import triggers
from hudi_meta.service.config import LoopSettings, ServiceConfig, SparkSettings, TableSettings
from hudi_meta.service.loop import Service
from hudi_meta.service.records import all_steps
from hudi_meta.service.runner import LocalRunner
from tests.service.helpers import HOUR_MS, MINUTE_MS, Groups


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
                trigger=triggers.NUM_COMMITS,
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
