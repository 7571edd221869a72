"""The index equals the table: removals (unschedule, rollback, archival) and event times it never overstates.

Expected values come from the files (what is on disk, what the writer was given) and from small models of the
rules (Java's `containsOrBeforeTimelineStarts` for archived instants), never from the indexer.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Engine

from hudi_meta.compaction.candidates import candidate_slices
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.index.db import make_engine
from hudi_meta.index.event_time_source import NO_EVENT_TIME, column_min_max, count_before
from hudi_meta.index.fingerprint import index_fingerprint
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.queries import block_rows, link_rows, plan_rows, slice_rows, timeline_rows
from hudi_meta.index.registry import table_id_of
from hudi_meta.table.event_time import to_epoch_ms
from hudi_meta.table.table import HudiTable
from hudi_meta.write.failed_writes import rollback_failed_write
from hudi_meta.write.writer import WriteClient, create_table

START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
HOUR_MS = 3_600_000


def _table_id(engine: Engine, path: str) -> int:
    found = table_id_of(engine, path)
    assert found is not None
    return found


def _rows(
    ids: Sequence[str], ts: Sequence[int | None], part: str, other: Sequence[int | None] | None = None
) -> pa.Table:
    columns: dict[str, Any] = {
        "id": list(ids),
        "ts": pa.array(list(ts), pa.int64()),
        "value": [1.0] * len(ids),
        "part": [part] * len(ids),
    }
    if other is not None:
        columns["updated_at"] = pa.array(list(other), pa.int64())
    return pa.table(columns)


def _new_table(path: str, groups: int = 2, header: bool = False, other: bool = False) -> list[tuple[str, str]]:
    """A v6 MOR table with `groups` file groups in partition part=0 (base files only); returns them."""
    table = create_table(path, "t", ["id"], "ts", ["part"], event_time_field="ts", min_event_time_header=header)
    out = []
    with WriteClient(table) as client:
        client.begin()
        for g in range(groups):
            data = _rows([f"g{g}-0"], [START_MS], "0", [START_MS] if other else None)
            out.append(("part=0", client.write_base_file("part=0", data).file_id))
        client.commit("INSERT")
    return out


def _append(path: str, data: dict[tuple[str, str], pa.Table], commit: bool = True) -> str:
    """One deltacommit appending `data` (a new log file per file group); left pending unless `commit`."""
    client = WriteClient(HudiTable.open(path))
    client.begin()
    for (partition, file_id), rows in data.items():
        client.append_log(partition, file_id, rows)
    if commit:
        client.commit()
    client.close()
    return client.instant


def _index(engine: Engine, path: str, field: str | None = None) -> int:
    Indexer(engine, HudiTable.open(path)).run(field)
    return _table_id(engine, path)


def _timeline_files(path: str, instant: str) -> list[Path]:
    return [p for p in (Path(path) / ".hoodie").iterdir() if p.is_file() and p.name.startswith(instant + ".")]


def _archive(path: str, count: int) -> list[str]:
    """Move the `count` oldest completed instants' files into .hoodie/archived/, as Java's archiver leaves
    a table (it archives only completed instants older than every pending one)."""
    table = HudiTable.open(path)
    pending = [i.requested_time for i in table.timeline.pending()]
    oldest = [i.requested_time for i in table.timeline.completed() if all(i.requested_time < p for p in pending)]
    moved = oldest[:count]
    target = Path(path) / ".hoodie" / "archived"
    target.mkdir(exist_ok=True)
    for instant in moved:
        for f in _timeline_files(path, instant):
            shutil.move(str(f), str(target / f.name))
    return moved


def _unschedule(path: str, instant: str) -> None:
    """hudi-cli's `unschedule` of a plan nothing ran for: delete its requested and inflight files."""
    for f in _timeline_files(path, instant):
        assert ".compaction." in f.name
        f.unlink()


def _disk_log_files(path: str) -> set[str]:
    return {str(p.relative_to(path)) for p in Path(path).rglob(".*.log.*") if ".hoodie" not in p.parts}


# ---- removals ----------------------------------------------------------------------------------------------


def test_unscheduled_plan_leaves_the_store_and_its_file_groups_are_candidates_again(
    engine: Engine, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    groups = _new_table(path)
    _append(path, {fg: _rows([f"{fg[1]}-1"], [START_MS + 1], "0") for fg in groups})
    table_id = _index(engine, path)
    before = {(s.partition, s.file_id, s.base_instant) for s in candidate_slices(engine, table_id, "99999999999999999")}
    result = schedule_compaction(engine, HudiTable.open(path), ScheduleRequest(threshold_ms=START_MS + HOUR_MS))
    assert result.instant is not None and result.plan is not None and result.plan.operations
    _index(engine, path)
    assert [p["instant"] for p in plan_rows(engine, table_id)] == [result.instant]

    _unschedule(path, result.instant)
    _index(engine, path)
    assert plan_rows(engine, table_id) == []
    assert [r for r in link_rows(engine, table_id) if r["compaction_instant"] == result.instant] == []
    assert result.instant not in {r["requested_time"] for r in timeline_rows(engine, table_id)}
    # the model: slices are the base instants of the files on disk, nothing else
    on_disk = {
        (p.parent.name, p.name.split("_")[0], p.name.split("_")[2].split(".")[0]) for p in Path(path).rglob("*.parquet")
    }
    assert {(s["partition"], s["file_id"], s["base_instant"]) for s in slice_rows(engine, table_id)} == on_disk
    after = {(s.partition, s.file_id, s.base_instant) for s in candidate_slices(engine, table_id, "99999999999999999")}
    assert after == before and {(p, f) for p, f, _ in after} == set(groups)


def test_rolled_back_write_leaves_the_index(engine: Engine, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    groups = _new_table(path)
    # a failed write: log files in both groups and a new file group, never committed
    client = WriteClient(HudiTable.open(path))
    client.begin()
    for fg in groups:
        client.append_log(*fg, _rows([f"{fg[1]}-x"], [START_MS + 5], "0"))
    client.write_base_file("part=0", _rows(["new-0"], [START_MS + 5], "0"))
    client.close()
    table_id = _index(engine, path)
    assert {r["status"] for r in block_rows(engine, table_id) if r["instant"] == client.instant} == {"uncommitted"}
    assert len(slice_rows(engine, table_id)) == 3

    rollback_failed_write(HudiTable.open(path), client.instant, force=True, dry_run=False)
    stats = Indexer(engine, HudiTable.open(path)).run()
    assert stats.instants_removed == 1
    # the rollback deleted the new base file and appended rollback blocks to the log files it wrote
    assert not list(Path(path).rglob(f"*_{client.instant}.parquet"))
    assert {r["file"] for r in block_rows(engine, table_id)} == _disk_log_files(path)
    assert {r["status"] for r in block_rows(engine, table_id) if r["instant"] == client.instant} == {"rolled_back"}
    assert client.instant not in {r["requested_time"] for r in timeline_rows(engine, table_id)}
    assert {(s["partition"], s["file_id"]) for s in slice_rows(engine, table_id)} == set(groups)


def test_archived_instants_stay_committed(engine: Engine, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    groups = _new_table(path)
    first = _append(path, {fg: _rows([f"{fg[1]}-1"], [START_MS + 1], "0") for fg in groups})
    _append(path, {fg: _rows([f"{fg[1]}-2"], [START_MS + 2], "0") for fg in groups})
    table_id = _index(engine, path)
    archived = _archive(path, 2)
    assert archived[1] == first
    _index(engine, path)
    # Java's containsOrBeforeTimelineStarts: older than the first active instant means archived, committed
    timeline = {r["requested_time"]: r for r in timeline_rows(engine, table_id)}
    for instant in archived:
        assert timeline[instant]["state"] == "completed" and timeline[instant]["summary"]["archived"] is True
    blocks = block_rows(engine, table_id)
    assert {r["status"] for r in blocks if r["instant"] == first} == {"committed"}
    assert all(s["base_committed"] for s in slice_rows(engine, table_id))
    # a fresh store indexing the archived table says the same of the blocks and base files
    fresh = make_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    upgrade(f"sqlite:///{tmp_path / 'fresh.db'}")
    fresh_id = _index(fresh, path)
    assert {r["status"] for r in block_rows(fresh, fresh_id) if r["instant"] == first} == {"committed"}
    assert index_fingerprint(fresh, fresh_id) == index_fingerprint(engine, table_id)
    fresh.dispose()


# ---- event times -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("header", [False, True], ids=["write_stat", "header"])
def test_another_event_time_field_is_scanned_not_taken_from_stats(engine: Engine, tmp_path: Path, header: bool) -> None:
    path = str(tmp_path / "t")
    groups = _new_table(path, header=header, other=True)
    rng = random.Random(7)
    written: dict[str, pa.Table] = {}
    for fg in groups:
        ts = [START_MS + rng.randrange(0, HOUR_MS) for _ in range(4)]
        other = [START_MS - rng.randrange(1, 100 * HOUR_MS) for _ in range(4)]  # unrelated, always earlier
        written[fg[1]] = _rows([f"{fg[1]}-{i}" for i in range(4)], ts, "0", other)
    _append(path, {fg: written[fg[1]] for fg in groups})
    table_id = _index(engine, path, "updated_at")
    data = [r for r in block_rows(engine, table_id) if r["type"] == "avro_data"]
    assert len(data) == 2
    for r in data:
        expected = written[Path(r["file"]).name.split("_")[0].lstrip(".")]
        assert r["min_event_time_source"] == "record_scan"
        assert r["min_event_time"] == pc.min(expected.column("updated_at")).as_py()
        assert r["max_event_time"] == pc.max(expected.column("updated_at")).as_py()
    # back to the table's own field: its write stats (or headers) count again
    _index(engine, path, "ts")
    for r in [r for r in block_rows(engine, table_id) if r["type"] == "avro_data"]:
        expected = written[Path(r["file"]).name.split("_")[0].lstrip(".")]
        assert r["min_event_time_source"] == ("header" if header else "write_stat")
        assert r["min_event_time"] == pc.min(expected.column("ts")).as_py()


def test_block_with_only_null_event_times_has_none_not_unknown(engine: Engine, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    groups = _new_table(path, groups=1)
    instant = _append(path, {groups[0]: _rows(["a", "b"], [None, None], "0")})
    table_id = _index(engine, path)
    (row,) = [r for r in block_rows(engine, table_id) if r["instant"] == instant]
    assert (row["status"], row["min_event_time"], row["min_event_time_source"]) == ("committed", None, NO_EVENT_TIME)


@pytest.mark.parametrize(
    "values",
    [
        [1_700_000_000, 1_600_000_000_000],  # seconds (2023) and ms (2020): the raw min is not the min time
        [50_000_000_000, 1_700_000_000_000],  # 5e10 s is year 3554, later than 1.7e12 ms
        [1_700_000_000_000_000, 1_700_000_000_001, None],
        [-5, 3],
    ],
)
def test_column_min_max_reads_each_value_by_the_one_rule(values: list[int | None]) -> None:
    times = [t for v in values if v is not None and (t := to_epoch_ms(v)) is not None]
    assert column_min_max(pa.array(values, pa.int64())) == (min(times), max(times))
    assert column_min_max(pa.chunked_array([pa.array(values, pa.float64())])) == (min(times), max(times))


def test_column_min_max_of_strings_and_timestamps() -> None:
    iso = ["2026-01-01T01:00:00+01:00", "2026-01-01T00:30:00Z", None]  # lexicographic min is not the min
    assert column_min_max(pa.array(iso)) == (START_MS, START_MS + 1_800_000)
    stamps = pa.array([START_MS * 1000 + 999, START_MS * 1000 - 1], pa.timestamp("us", tz="UTC"))
    assert column_min_max(stamps) == (START_MS - 1, START_MS)
    assert column_min_max(pa.array([None, None], pa.int64())) == (None, None)


@given(
    st.lists(
        st.one_of(
            st.none(),
            st.integers(-(10**11), 10**11),  # seconds
            st.integers(10**11, 10**14),  # milliseconds
            st.integers(10**14, 10**17),  # microseconds
        ),
        max_size=8,
    ),
    st.integers(0, 10**14),
)
def test_count_before_reads_each_value_by_the_one_rule(values: list[int | None], threshold: int) -> None:
    """Late records are counted per value as `to_epoch_ms` reads it: the count agrees with reading them one by one,
    as whole numbers, as floats of those numbers, and as timestamps of those times."""
    expected = sum(1 for v in values if v is not None and (t := to_epoch_ms(v)) is not None and t < threshold)
    assert count_before(pa.array(values, pa.int64()), threshold) == expected
    assert count_before(pa.chunked_array([pa.array(values, pa.int64())]), threshold) == expected
    small = [v for v in values if v is None or abs(v) < 2**53]  # floats hold these exactly
    expected_small = sum(1 for v in small if v is not None and (t := to_epoch_ms(v)) is not None and t < threshold)
    assert count_before(pa.array(small, pa.float64()), threshold) == expected_small
    times = [to_epoch_ms(v) if v is not None else None for v in values]
    for unit, per_ms in (("s", None), ("ms", 1), ("us", 1000)):
        raw = [None if t is None else (t // 1000 if per_ms is None else t * per_ms) for t in times]
        stamps = pa.array(raw, pa.timestamp(unit, tz="UTC"))
        by_hand = sum(1 for r in raw if r is not None and (r * 1000 if per_ms is None else r // per_ms) < threshold)
        assert count_before(stamps, threshold) == by_hand


def test_count_before_of_strings_dates_and_fractions() -> None:
    iso = pa.array(["2026-01-01T01:00:00+01:00", "2026-01-01T00:30:00Z", None, "2025-12-31T23:59:59.999Z"])
    assert count_before(iso, START_MS) == 1  # 01:00+01:00 is START_MS itself: not below it
    days = pa.array([20454, 20453, None], pa.date32())  # 2026-01-01 and the day before
    assert count_before(days, START_MS) == 1 and count_before(days, START_MS + 1) == 2
    fractions = pa.array([1_767_225_599.9, 1_767_225_600.5], pa.float64())  # seconds, read as whole seconds
    assert count_before(fractions, START_MS) == 1 and count_before(fractions, START_MS + 1) == 2
