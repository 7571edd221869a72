"""The index's states live in `hudi_meta.index.states`: the store holds only their values, on both databases,
and the index's modules spell no state as a string of their own."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

import hudi_meta.index
from hudi_meta.compaction.candidates import candidate_slices
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.models import (
    compaction_plan_table,
    instant_table,
    link_table,
    log_block_table,
    table_service_table,
)
from hudi_meta.index.queries import block_rows, plan_rows
from hudi_meta.index.registry import table_id_of
from hudi_meta.index.states import PENDING_PLAN_STATES, BlockStatus, LinkState, PlanState
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import State
from tests.compaction.core import CoreTable, at, rows
from tests.conftest import table_zips

STATE_MODULE = Path(hudi_meta.index.__file__).parent / "states.py"
EVERY_STATE = {str(s) for enum in (State, PlanState, BlockStatus, LinkState) for s in enum}


def test_every_timeline_state_has_its_stored_state() -> None:
    assert [s for s in State] == list(State)
    assert PlanState is State  # a plan's state is its compaction instant's
    assert set(PENDING_PLAN_STATES) == set(PlanState) - {PlanState.COMPLETED}
    # printed and dumped as their values (`show` writes text tables and JSON)
    assert all(str(s) == s.value for enum in (State, BlockStatus, LinkState) for s in enum)


def test_index_modules_spell_no_state_of_their_own() -> None:
    """A state written as a string literal outside states.py would escape a rename (docstrings don't count)."""
    found = []
    for path in sorted(STATE_MODULE.parent.glob("*.py")):
        if path == STATE_MODULE:
            continue
        for tok in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
            if tok.type == tokenize.STRING and tok.string.strip("\"'") in EVERY_STATE:
                found.append(f"{path.name}:{tok.start[0]}: {tok.string}")
    assert found == []


def _values(engine: Engine, column: Any) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(select(column).distinct()).scalars())


def test_the_store_holds_only_state_values(engine: Engine, fixture_table: Any, tmp_path: Path) -> None:
    for archive in table_zips():  # rollbacks, cleans, pending and completed instants of real tables
        Indexer(engine, HudiTable.open(str(fixture_table(archive)))).run()
    table = CoreTable(tmp_path / "t")
    table.write(rows(("a", 0, 1.0)))
    for i, seconds in enumerate((10, 100, 200)):
        table.write(rows((f"k{i}", seconds, 1.0)))
    table.compact(engine, threshold=at(50))  # completed, with links
    result = schedule_compaction(engine, table.table, ScheduleRequest(threshold_ms=at(150)))
    assert result.instant is not None
    table.write(rows(("late", 5, 1.0)), commit=False)  # a pending write: uncommitted blocks
    Indexer(engine, table.table).run()

    assert _values(engine, instant_table.c.state) == set(State)
    assert _values(engine, table_service_table.c.state) <= set(State)
    assert _values(engine, compaction_plan_table.c.state) == {PlanState.COMPLETED, PlanState.REQUESTED}
    assert _values(engine, log_block_table.c.status) <= set(BlockStatus)
    assert {BlockStatus.COMMITTED, BlockStatus.UNCOMMITTED, BlockStatus.ROLLED_BACK} <= _values(
        engine, log_block_table.c.status
    )
    assert _values(engine, link_table.c.state) == {LinkState.CREATED, LinkState.PLANNED}

    # the enums filter like the strings they are, on SQLite and PostgreSQL alike
    table_id = table_id_of(engine, table.path)
    assert table_id is not None
    assert [p["state"] for p in plan_rows(engine, table_id)] == ["completed", "requested"]
    assert "uncommitted" in {b["status"] for b in block_rows(engine, table_id)}
    assert candidate_slices(engine, table_id, "99999999999999999") == []  # its one file group has a pending plan
