"""A table the index knows at version 6 that a Java writer upgraded to 8 (tests/table/upgrade.py), or downgraded
back: the next index run says so in one line, drops the table's indexed rows and indexes it from scratch (the
event-time field kept); the index then says what a fresh index of the files says (instants with completion times,
log files by their names on disk, plans and links). Until then nothing plans from the stale rows: a planner that
finds them refuses in one line (hudi_meta.index.table_format)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.check.index_drift import fresh_fingerprint, index_drift
from hudi_meta.clean.run import plan_table_clean
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.strategies import Strategy
from hudi_meta.errors import StaleIndexError
from hudi_meta.index.fingerprint import index_fingerprint
from hudi_meta.index.freshness_inputs import indexed_freshness
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.queries import link_rows, plan_rows, timeline_rows
from hudi_meta.index.registry import event_time_field_of, table_id_of
from hudi_meta.index.run_stats import IndexRunStats
from hudi_meta.index.table_format import TableFormat, indexed_format, require_current_index
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import instant_epoch_ms
from hudi_meta.write.clean_plan import KEEP_LATEST_COMMITS, CleanPolicy
from tests.compaction.core import CoreTable, TwoRegions, at, compact_three_times, rows
from tests.table.upgrade import downgrade_8_to_6, upgrade_6_to_8

STALE = "was upgraded from version 6 to 8 since it was indexed: run `hudi-meta index "


def indexed_v6(tmp_path: Path, engine: Engine) -> tuple[TwoRegions, int]:
    """A version-6 table compacted three times by hudi-meta (plans, links and lineage in the index), indexed."""
    t = TwoRegions(tmp_path / "t")
    compact_three_times(t, engine)
    Indexer(engine, t.table).run()
    table_id = table_id_of(engine, t.table.uri)
    assert table_id is not None
    return t, table_id


def log_names_on_disk(path: str) -> set[str]:
    return {p.name for p in Path(path).rglob(".*.log.*")}


def test_an_upgraded_table_is_indexed_again_from_scratch(
    tmp_path: Path, engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    t, table_id = indexed_v6(tmp_path, engine)
    plans = {(p["instant"], p["state"], p["operations"]) for p in plan_rows(engine, table_id)}
    links = {(k["partition"], k["link"], k["target"], k["state"]) for k in link_rows(engine, table_id)}
    assert plans and links
    assert all(r["completion_time"] is None for r in timeline_rows(engine, table_id))

    upgrade_6_to_8(t.path)
    table = HudiTable.open(t.path)
    with pytest.raises(StaleIndexError) as refused:
        require_current_index(engine, table)
    assert str(refused.value) == f"table {table.base_path} {STALE}{table.base_path}`"
    assert len(index_drift(engine, table) or []) == 1  # `check`: one finding, not one per file

    with caplog.at_level(logging.INFO, logger="hudi_meta"):
        Indexer(engine, table).run()
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert said == [f"table {table.base_path} was upgraded from version 6 to 8 since it was indexed: indexing it "
                    "again from scratch"]  # fmt: skip
    assert indexed_format(engine, table_id) == TableFormat(8, 2)
    assert require_current_index(engine, table) == table_id
    # the index is what a fresh index of the upgraded files is, the plans and links those hudi-meta made
    assert index_fingerprint(engine, table_id) == fresh_fingerprint(table, "ts")
    assert index_drift(engine, table) == []
    completed = [r for r in timeline_rows(engine, table_id) if r["state"] == "completed"]
    assert completed and all(r["completion_time"] for r in completed)
    assert {f for (_, f, *_) in index_fingerprint(engine, table_id)["log_files"]} == log_names_on_disk(t.path)
    assert {(p["instant"], p["state"], p["operations"]) for p in plan_rows(engine, table_id)} == plans
    assert {(k["partition"], k["link"], k["target"], k["state"]) for k in link_rows(engine, table_id)} == links

    caplog.clear()
    with caplog.at_level(logging.INFO, logger="hudi_meta"):
        again = Indexer(engine, table).run()  # once: the next run has nothing new
    assert again.instants_added == again.log_files_added == again.blocks_added == again.plans_added == 0
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]


def test_freshness_and_a_schedule_after_the_upgrade_come_from_the_new_files(tmp_path: Path, engine: Engine) -> None:
    t, table_id = indexed_v6(tmp_path, engine)
    now = at(10_000)
    before = indexed_freshness(engine, t.table, now)
    upgrade_6_to_8(t.path)
    assert indexed_freshness(engine, HudiTable.open(t.path), now) == before  # indexed again, the same data
    assert indexed_format(engine, table_id) == TableFormat(8, 2)
    t.write(rows(("z", 600, 9.0)))  # a 1.x write: its log file named by its delta commit
    result = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(550), strategy=Strategy.EVENT_TIME))
    assert result.instant is not None and result.plan is not None
    on_disk = log_names_on_disk(t.path)
    for op in result.plan.operations:
        assert {Path(p).name for p in op.delta_file_paths} <= on_disk
    Indexer(engine, t.table).run()  # the new compaction instant
    assert index_drift(engine, t.table) == []


def _no_index(self: Indexer, event_time_field: str | None = None) -> IndexRunStats:
    """An indexer that only finds the table's id: a planner that reads the index without bringing it up to date."""
    self.table_id = table_id_of(self.engine, self.table.uri)
    return self.stats


def test_planning_from_the_stale_index_is_refused_in_one_line(
    tmp_path: Path, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    t, table_id = indexed_v6(tmp_path, engine)
    opened_before = t.table
    upgrade_6_to_8(t.path)
    request = ScheduleRequest(strategy=Strategy.UNBOUNDED)
    # a table opened before the upgrade: its timeline path is the old one, nothing is indexed or planned through it
    with pytest.raises(StaleIndexError, match="since hudi-meta opened it: run the command again$"):
        schedule_compaction(engine, opened_before, request)
    monkeypatch.setattr(Indexer, "run", _no_index)
    plans = plan_rows(engine, table_id)
    table = HudiTable.open(t.path)
    with pytest.raises(StaleIndexError) as refused:
        schedule_compaction(engine, table, request)
    assert "\n" not in str(refused.value) and str(refused.value).endswith(f"{STALE}{table.base_path}`")
    policy = CleanPolicy(KEEP_LATEST_COMMITS, commits_retained=1)
    with pytest.raises(StaleIndexError, match="upgraded from version 6 to 8"):
        plan_table_clean(engine, table, policy, instant_epoch_ms(table.timeline.instants[-1].requested_time))
    assert plan_rows(engine, table_id) == plans  # nothing planned, nothing recorded
    assert [p.name for p in (Path(t.path) / ".hoodie" / "timeline").iterdir() if "clean" in p.name] == []


def test_a_downgrade_is_handled_the_same_way(tmp_path: Path, engine: Engine) -> None:
    t, table_id = indexed_v6(tmp_path, engine)
    upgrade_6_to_8(t.path)
    Indexer(engine, HudiTable.open(t.path)).run()
    downgrade_8_to_6(t.path)
    table = HudiTable.open(t.path)
    with pytest.raises(
        StaleIndexError, match="was downgraded from version 8 to 6 since it was indexed: run `hudi-meta"
    ):
        require_current_index(engine, table)
    Indexer(engine, table).run()
    assert indexed_format(engine, table_id) == TableFormat(6, 1)
    assert index_fingerprint(engine, table_id) == fresh_fingerprint(table, "ts")
    assert all(r["completion_time"] is None for r in timeline_rows(engine, table_id))


def test_the_event_time_field_registered_is_kept(tmp_path: Path, engine: Engine) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    t.write(rows(("a", 2, 2.0)))
    Indexer(engine, t.table).run("amount")  # the user's choice, not the table's `ts`
    table_id = table_id_of(engine, t.table.uri)
    assert table_id is not None
    upgrade_6_to_8(t.path)
    Indexer(engine, HudiTable.open(t.path)).run()
    assert event_time_field_of(engine, table_id) == "amount"
    assert index_fingerprint(engine, table_id) == fresh_fingerprint(HudiTable.open(t.path), "amount")
