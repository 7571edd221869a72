"""An event-time field that is no top-level column of the table is refused before the store changes (issue 36,
item 8): records are read by column name, so such a field finds no event time in any block.

The rule comes from the design (docs/event-time.md section 1.1), the columns from the table's Java-written
schema (whose resolution tests/table/test_schema.py compares with hudi-rs).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from hudi_meta.errors import BadValueError
from hudi_meta.index.db import make_engine
from hudi_meta.index.event_time_source import check_event_time_field
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.registry import event_time_field_of, register_table, table_id_of
from hudi_meta.table.table import HudiTable
from tests.cli.helpers import store_dump
from tests.compaction.core import CoreTable, rows
from tests.conftest import table_id, table_zips


def fixture(name: str, fixture_table: Any) -> HudiTable:
    archive = next(a for a in table_zips() if table_id(a).endswith(name))
    return HudiTable.open(str(fixture_table(archive)))


@pytest.fixture
def sqlite_store(tmp_path: Path) -> tuple[Engine, str]:
    """An engine on a SQLite store upgraded to head, and the store's file."""
    db = tmp_path / "store.db"
    upgrade(f"sqlite:///{db}")
    return make_engine(f"sqlite:///{db}"), str(db)


@pytest.mark.parametrize(
    ("table", "field", "says"),
    [
        ("v6_trips_8i1u", "tss", "did you mean 'ts'?"),
        ("v6_trips_8i1u", "TS", "did you mean 'ts'?"),  # column names are case-sensitive in records
        ("v9_txns_simple_meta", "txn_tss", "did you mean 'txn_ts'?"),
        ("v6_nonpartitioned", "zzz", "its columns: id, name, isActive"),
        ("v6_nonpartitioned", "structField.field1", "is nested in record 'structField'"),
        ("v6_nonpartitioned", "structField.child_struct.child_field1", "is nested in record 'structField'"),
        ("v8_empty", "tss", "schema from hoodie.table.create.schema"),  # no commit yet: the create schema
    ],
)
def test_a_field_that_is_no_column_is_refused_in_one_line(
    table: str, field: str, says: str, fixture_table: Any
) -> None:
    with pytest.raises(BadValueError) as refused:
        check_event_time_field(fixture(table, fixture_table), field)
    message = str(refused.value)
    assert says in message and field in message and "\n" not in message


@pytest.mark.parametrize(
    ("table", "field"),
    [("v6_trips_8i1u", "ts"), ("v9_txns_simple_meta", "txn_ts"), ("v6_trips_8i1u", "_hoodie_commit_time")],
)
def test_a_column_is_taken(table: str, field: str, fixture_table: Any) -> None:
    assert check_event_time_field(fixture(table, fixture_table), field) is None


def test_a_meta_column_of_a_table_without_meta_fields_is_refused(fixture_table: Any) -> None:
    table = fixture("mor/parquet/v6_simplekeygen_hivestyle_no_metafields", fixture_table)
    with pytest.raises(BadValueError, match="_hoodie_commit_time"):
        check_event_time_field(table, "_hoodie_commit_time")


def test_the_indexer_refuses_before_the_store_changes(sqlite_store: tuple[Engine, str], fixture_table: Any) -> None:
    engine, db = sqlite_store
    table = fixture("v6_trips_8i1u", fixture_table)
    Indexer(engine, table).run("ts")
    before = store_dump(db)
    with pytest.raises(BadValueError, match="did you mean 'ts'"):
        Indexer(engine, table).run("tss")
    with pytest.raises(BadValueError, match="did you mean 'ts'"):
        register_table(engine, table, "tss")
    assert store_dump(db) == before
    table_id = table_id_of(engine, table.uri)
    assert table_id is not None and event_time_field_of(engine, table_id) == "ts"


def test_a_field_registered_before_the_first_write_is_checked_once_there_is_a_schema(
    sqlite_store: tuple[Engine, str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An empty table cannot be checked: the field is taken with a warning, and refused by the first index run
    after a write gives the table a schema, before that run changes the store."""
    engine, db = sqlite_store
    core = CoreTable(tmp_path / "t")
    with caplog.at_level(logging.WARNING):
        register_table(engine, core.table, "tss")
    assert "has no schema yet" in caplog.text and "'tss' is not checked" in caplog.text
    Indexer(engine, core.table).run()  # still no schema: indexed, warned again
    core.write(rows(("a", 1, 1.0)))
    before = store_dump(db)
    with pytest.raises(BadValueError, match="did you mean 'ts'"):
        Indexer(engine, core.table).run()
    assert store_dump(db) == before


def test_the_tables_own_field_is_not_ours_to_refuse(sqlite_store: tuple[Engine, str], tmp_path: Path) -> None:
    """`hoodie.payload.event.time.field` is Hudi's setting: a table whose setting names no column still indexes
    (its blocks hold no event time), as Java writes it."""
    engine, _ = sqlite_store
    core = CoreTable(tmp_path / "t", props={"hoodie.payload.event.time.field": "gone"})
    core.write(rows(("a", 1, 1.0)))
    Indexer(engine, core.table).run()
    table_id = table_id_of(engine, core.table.uri)
    assert table_id is not None and event_time_field_of(engine, table_id) == "gone"
