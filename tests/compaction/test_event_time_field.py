"""One source of truth for a table's event-time field (issue 25, defect 1): the field the index measured the
blocks by is the one the plan records and the executor judges versions by, whatever hoodie.properties says; a
compaction with a threshold and no field anywhere is refused in one line.

Expected rows are worked out by hand from the fixture's data (docs/event-time.md section 4, exact mode: the base file
holds each key's version as of T, a newer version goes to the carry log).
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
from hudi import HudiReadOptions
from hudi import HudiTable as RsTable
from sqlalchemy import Engine

from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.errors import HudiMetaError
from hudi_meta.format.block_content import decode_data_block
from hudi_meta.format.links import EVENT_TIME_FIELD_PARAM, carry_log_name
from hudi_meta.format.log_reader import read_blocks, read_content
from hudi_meta.index.indexer import Indexer
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import WriteClient, create_table
from tests.compaction.core import at, by_id, hudi_rs_read, rows
from tests.conftest import table_zips

T = 1695173887231  # 2023-09-20T01:38:07.231Z
SF = "city=san_francisco"
# The san_francisco file group of v6_trips_8i1u: its base file's four keys (ts) and the log file's update of
# 9909a8b1 (ts 1695046462179, fare 25.0). Keys at or before T stay in RO; 1dced545 (after T) does not.
SF_AT_OR_BEFORE_T = {
    "e96c4396-3fad-413a-a942-4cb36106d721": 27.7,
    "334e26e9-8355-45cc-97c6-c31daf0df330": 19.1,
    "9909a8b1-2d15-4d3d-8ec9-efc48c536a00": 25.0,
}
SF_AFTER_T = "1dced545-862b-4ceb-8b43-d2a568f6616b"


@pytest.fixture
def trips(fixture_table, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """A copy of the Java-written v6_trips_8i1u (its properties name no event-time field)."""
    archive = next(a for a in table_zips() if a.stem == "v6_trips_8i1u")
    path = tmp_path / "trips"
    shutil.copytree(fixture_table(archive), path)
    assert "hoodie.payload.event.time.field" not in (path / ".hoodie" / "hoodie.properties").read_text()
    return path


def sf_fares(rows_: list[dict[str, object]]) -> dict[str, object]:
    return {r["uuid"]: r["fare"] for r in rows_ if r["city"] == "san_francisco"}  # type: ignore[misc]


def test_exact_compaction_of_a_java_table_uses_the_field_given_to_the_index(engine: Engine, trips: Path) -> None:
    snapshot = HudiTable.open(str(trips)).read("snapshot").to_pylist()
    Indexer(engine, HudiTable.open(str(trips))).run("ts")
    result = schedule_compaction(engine, HudiTable.open(str(trips)), ScheduleRequest(threshold_ms=T, exact=True))
    assert result.instant is not None and result.plan is not None
    assert result.plan.strategy is not None
    assert result.plan.strategy.strategy_params[EVENT_TIME_FIELD_PARAM] == "ts"
    run_compaction(HudiTable.open(str(trips)), result.instant)

    table = HudiTable.open(str(trips))
    ro = table.read("ro").to_pylist()
    assert sf_fares(ro) == SF_AT_OR_BEFORE_T
    # chennai 2 + the three san_francisco keys as of T; sao_paulo's two records are after T (ts 1695376420876 and
    # 1695516137016): the exact plan rewrites their base file and carries them (issue 36, item 6)
    assert len(ro) == 5
    assert records(table.read("snapshot").to_pylist()) == records(snapshot)  # unchanged
    # only the version after T is carried
    fg = next(fg for fg in table.file_groups() if fg.partition == SF)
    carry = str(trips / SF / carry_log_name(fg.file_id, result.instant))
    carried = [decode_data_block(b, read_content(table.storage, carry, b)) for b in read_blocks(table.storage, carry)]
    assert [key for block in carried for key in block.column("uuid").to_pylist()] == [SF_AFTER_T]
    rs = RsTable(str(trips)).read(HudiReadOptions(hudi_options={"hoodie.read.use.read_optimized.mode": "true"}))
    assert sf_fares(pa.Table.from_batches(rs).to_pylist()) == SF_AT_OR_BEFORE_T


def records(rows_: list[dict[str, object]]) -> list[str]:
    """Rows as comparable text, without where they sit (the file name changes with a compaction)."""
    return sorted(str({k: v for k, v in r.items() if k != "_hoodie_file_name"}) for r in rows_)


def test_a_plan_with_a_threshold_and_no_event_time_field_is_refused(engine: Engine, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    create_table(path, "t", ["id"], "ts", ["region"])  # no hoodie.payload.event.time.field
    with WriteClient(HudiTable.open(path)) as w:
        w.begin()
        file_id = w.write_base_file("region=eu", rows(("a", 1, 1.0), ("b", 20, 1.0))).file_id
        w.commit()
    with WriteClient(HudiTable.open(path)) as w:
        w.begin()
        w.append_log("region=eu", file_id, rows(("a", 2, 2.0), ("b", 30, 2.0)), [])
        w.commit()
    table = HudiTable.open(path)
    with pytest.raises(HudiMetaError, match="no event-time field"):  # neither the index nor the table has one
        schedule_compaction(engine, table, ScheduleRequest(threshold_ms=at(10), exact=True))
    assert not table.timeline.pending_compactions()

    # A plan written before plans recorded the field (no parameter) on a table that names none: refused before
    # anything is written, instead of judging every version as "after T"
    Indexer(engine, table).run("ts")
    result = schedule_compaction(engine, table, ScheduleRequest(threshold_ms=at(10), exact=True))
    assert result.instant is not None and result.plan is not None and result.plan.strategy is not None
    params = {k: v for k, v in result.plan.strategy.strategy_params.items() if k != EVENT_TIME_FIELD_PARAM}
    old = replace(result.plan, strategy=replace(result.plan.strategy, strategy_params=params))
    requested = Path(path, ".hoodie", f"{result.instant}.compaction.requested")
    requested.write_bytes(old.to_bytes())
    before = sorted(p.name for p in Path(path, ".hoodie").iterdir())
    with pytest.raises(HudiMetaError, match=f"compaction {result.instant} has a threshold but no event-time field"):
        run_compaction(HudiTable.open(path), result.instant)
    assert sorted(p.name for p in Path(path, ".hoodie").iterdir()) == before  # no inflight, nothing else

    requested.write_bytes(result.plan.to_bytes())  # the plan as scheduled runs by the index's field
    run_compaction(HudiTable.open(path), result.instant)
    assert by_id(HudiTable.open(path).read("ro")) == {"a": (2, 2.0)}  # b has no version at or before T
    assert hudi_rs_read(path, "snapshot") == {"a": (2, 2.0), "b": (30, 2.0)}
