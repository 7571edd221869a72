"""Exact mode never claims what the read-optimized view does not hold (issue 36, item 6).

`hoodie.ro.event.time.exact` (and `freshness`'s "exact: yes") says RO holds no record after T. An exact plan used
to skip file groups without log files due at T, whose base files keep records after T. The rule
(docs/event-time.md section 3): an exact plan also rewrites every base file whose Parquet footer does not prove
that it holds nothing after T, moving those records to the carry log. Expected records come from an independent
read of RO (hudi-rs's read-optimized read, filtered on ts > T), never from the code under test.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.strategies import Strategy
from hudi_meta.compaction.triggers import Trigger
from hudi_meta.format.links import EXACT_RESULT_KEY
from hudi_meta.index.freshness_inputs import indexed_freshness
from hudi_meta.table.table import HudiTable
from tests.cli.helpers import cli
from tests.compaction.core import CoreTable, at, region_rows
from tests.conftest import table_zips
from tests.hudi_rs import rs_read_table

T = 1695173887231  # 2023-09-20T01:38:07.231Z
# the sao_paulo file group of v6_trips_8i1u has a base file and no log file; both its records are after T
SAO_PAULO_AFTER_T = {1695376420876, 1695516137016}


def rs_rows(path: Path, query: str) -> set[tuple[object, ...]]:
    """hudi-rs's read of the table: (uuid, ts, fare) of each record."""
    table = rs_read_table(str(path), query)
    return set(zip(*(table.column(c).to_pylist() for c in ("uuid", "ts", "fare")), strict=True))


def ro_after(path: Path, threshold_ms: int, ts: str = "ts") -> list[int]:
    """The event times after T that hudi-rs's read-optimized read of the table finds (independent of our reader)."""
    ro = rs_read_table(str(path), "ro")
    if not ro.num_rows:
        return []
    return sorted(ro.filter(pc.greater(ro.column(ts), threshold_ms)).column(ts).to_pylist())


@pytest.fixture
def trips(fixture_table, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    archive = next(a for a in table_zips() if a.stem == "v6_trips_8i1u")
    path = tmp_path / "trips"
    shutil.copytree(fixture_table(archive), path)
    return path


def test_the_reproduction_publishes_exact_only_with_no_record_after_t_in_ro(trips: Path, tmp_path: Path) -> None:
    """The issue's steps through the CLI: after the exact compaction RO holds nothing after T (the two sao_paulo
    records moved to the carry log), freshness says exact, and the snapshot reads as before."""
    assert sorted(ro_after(trips, T)) != [] and set(ro_after(trips, T)) >= SAO_PAULO_AFTER_T
    snapshot = rs_rows(trips, "snapshot")
    db = f"sqlite:///{tmp_path / 'x.db'}"
    for args in (
        ("index", str(trips), "--event-time-field", "ts"),
        ("compaction", "schedule", str(trips), "--threshold", str(T), "--exact"),
        ("compaction", "run", str(trips)),
    ):
        done = cli(*args, "--db", db)
        assert done.returncode == 0, done.stderr
    fresh = cli("freshness", str(trips), "--json", "--db", db)
    assert fresh.returncode == 0, fresh.stderr
    published = json.loads(fresh.stdout)
    assert ro_after(trips, T) == []
    assert published["exact"] is True
    assert rs_rows(trips, "snapshot") == snapshot  # nothing lost, nothing changed


def _exact_compaction(engine: Engine, path: str, threshold_ms: int) -> tuple[str, bool]:
    result = schedule_compaction(engine, HudiTable.open(path), ScheduleRequest(threshold_ms=threshold_ms, exact=True))
    assert result.instant is not None, result.reason
    run_compaction(HudiTable.open(path), result.instant)
    tl = HudiTable.open(path).timeline
    extra = tl.commit_metadata(next(i for i in tl.completed() if i.requested_time == result.instant)).extra_metadata
    return result.instant, extra[EXACT_RESULT_KEY] == "true"


REGIONS = ("eu", "us", "asia")


@pytest.mark.parametrize("seed", range(12))
def test_after_any_exact_compaction_exact_is_no_ro_record_after_t(engine: Engine, tmp_path: Path, seed: int) -> None:
    """Random tables of three file groups (base files and log files with event times on both sides of T, `ts` the
    ordering field, so every key can be made exact): after an exact compaction at a random T, the commit's and
    freshness's exact flag equal "hudi-rs's RO read holds no record after T", and the snapshot is unchanged."""
    rng = random.Random(seed)
    t = CoreTable(tmp_path / "t")
    w = t.begin()
    groups = {}
    for region in REGIONS:
        data = region_rows(region, *((f"{region}{i}", rng.randrange(0, 100), float(i)) for i in range(3)))
        groups[region] = w.write_base_file(f"region={region}", data).file_id
    w.commit()
    for _ in range(rng.randrange(0, 4)):
        region = rng.choice(REGIONS)
        w = t.begin()
        data = region_rows(region, *((f"{region}{rng.randrange(5)}", rng.randrange(0, 100), 9.0) for _ in range(2)))
        w.append_log(f"region={region}", groups[region], data, [])
        w.commit()
    before = rs_read_table(t.path).sort_by("id").select(["id", "ts", "amount"])
    threshold = at(rng.randrange(0, 100))
    _, exact = _exact_compaction(engine, t.path, threshold)
    after_t = ro_after(Path(t.path), threshold)
    assert exact == (after_t == []), (exact, after_t)
    assert indexed_freshness(engine, t.table).exact == exact
    assert rs_read_table(t.path).sort_by("id").select(["id", "ts", "amount"]) == before


def test_a_base_file_written_after_the_exact_compaction_ends_exact(engine: Engine, tmp_path: Path) -> None:
    """Later events: an insert writing a new base file with a record after T puts it in RO, so the published exact
    turns false (RO holds a record after T, hudi-rs finds it)."""
    t = CoreTable(tmp_path / "t")
    t.write(region_rows("eu", ("a", 10, 1.0), ("b", 50, 2.0)))
    _, exact = _exact_compaction(engine, t.path, at(20))
    assert exact and ro_after(Path(t.path), at(20)) == []
    assert indexed_freshness(engine, t.table).exact
    w = t.begin()
    w.write_base_file("region=us", region_rows("us", ("c", 60, 3.0)))
    w.commit()
    assert ro_after(Path(t.path), at(20)) == [at(60)]
    assert not indexed_freshness(engine, t.table).exact


def test_an_exact_plan_scheduled_while_a_compaction_is_pending_publishes_no_exact(
    engine: Engine, tmp_path: Path
) -> None:
    """A compaction pending when an exact plan is made adds its base files to RO whenever it commits: the exact
    plan's commit says exact=false (here the pending one merges a record after T into RO)."""
    t = CoreTable(tmp_path / "t")
    w = t.begin()
    eu = w.write_base_file("region=eu", region_rows("eu", ("a", 10, 1.0))).file_id
    w.write_base_file("region=us", region_rows("us", ("b", 95, 1.0)))  # after T: the exact plan takes it
    w.commit()
    w = t.begin()
    w.append_log("region=eu", eu, region_rows("eu", ("a", 80, 2.0)), [])
    w.commit()
    plain = schedule_compaction(engine, t.table, ScheduleRequest(strategy=Strategy.UNBOUNDED))
    assert plain.instant is not None
    request = ScheduleRequest(threshold_ms=at(90), exact=True, trigger=Trigger.NUM_COMMITS, max_delta_commits=1)
    w = t.begin()
    w.append_log("region=eu", eu, region_rows("eu", ("a", 85, 3.0)), [])
    w.commit()
    result = schedule_compaction(engine, t.table, request)
    assert result.instant is not None and result.plan is not None, result.reason
    assert [op.partition_path for op in result.plan.operations] == ["region=us"]  # eu is under the pending plan
    run_compaction(t.table, result.instant)
    run_compaction(t.table, plain.instant)
    tl = t.table.timeline
    extra = tl.commit_metadata(next(i for i in tl.completed() if i.requested_time == result.instant)).extra_metadata
    assert extra[EXACT_RESULT_KEY] == "false"
    assert not indexed_freshness(engine, t.table).exact


def test_footer_bounds(tmp_path: Path) -> None:
    """The footer gives a bound only where it proves one (docs/event-time.md section 3)."""
    import datetime as dt

    import pyarrow.parquet as pq

    from hudi_meta.compaction.base_stats import footer_max_event_time

    def bound(column: pa.Array) -> int | None:
        path = tmp_path / "f.parquet"
        pq.write_table(pa.table({"ts": column}), path, row_group_size=2)
        return footer_max_event_time(pq.ParquetFile(path).metadata, "ts")

    assert bound(pa.array([1_700_000_000_000, 1_700_000_000_500, 1_600_000_000_000], pa.int64())) == 1_700_000_000_500
    assert bound(pa.array([1_700_000_000, 1_700_000_001], pa.int64())) == 1_700_000_001_000  # seconds
    assert bound(pa.array([1_700_000_000, 1_700_000_000_500], pa.int64())) is None  # seconds and ms: no order
    assert bound(pa.array([1_700_000_000_000, None], pa.int64())) is None  # a null: unknown time
    assert bound(pa.array(["2023-01-01T00:00:00Z"])) is None  # strings do not sort as times
    stamp = dt.datetime(2023, 1, 2, tzinfo=dt.UTC)
    assert bound(pa.array([stamp], pa.timestamp("us", "UTC"))) == int(stamp.timestamp() * 1000)
    assert bound(pa.array([dt.date(2023, 1, 2)], pa.date32())) == int(stamp.timestamp() * 1000)
    path = tmp_path / "g.parquet"
    pq.write_table(pa.table({"other": [1]}), path)
    assert footer_max_event_time(pq.ParquetFile(path).metadata, "ts") is None  # no such column
