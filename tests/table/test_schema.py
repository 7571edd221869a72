"""The table's record schema (`hudi_meta.table.schema`) against hudi-rs's: the columns a user may name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hudi_meta.format.config_keys import CREATE_SCHEMA
from hudi_meta.table.schema import nested_field, table_schema
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import META_COLUMNS
from tests.compaction.core import CoreTable, rows
from tests.conftest import table_id, table_zips


@pytest.mark.parametrize("archive", table_zips(), ids=table_id)
def test_every_fixture_table_has_the_columns_hudi_rs_resolves(archive: Path, fixture_table: Any) -> None:
    """hudi-rs resolves the schema on its own (latest commit metadata, else hoodie.table.create.schema, else a
    base file): the same columns in the same order, on Java-written tables of versions 6, 8 and 9."""
    from hudi import HudiTableBuilder

    path = str(fixture_table(archive))
    found = table_schema(HudiTable.open(path))
    assert found is not None
    expected = HudiTableBuilder.from_base_uri(path).build().get_schema().names
    assert [n for n in found.schema.names if n not in META_COLUMNS] == expected


def test_a_table_without_commits_takes_its_create_schema(fixture_table: Any) -> None:
    archive = next(a for a in table_zips() if table_id(a) == "sample_table/cow/v8_empty")
    found = table_schema(HudiTable.open(str(fixture_table(archive))))
    assert found is not None and found.source == f"schema from {CREATE_SCHEMA.name}"
    assert found.schema.names == ["id", "name", "isActive"]  # the fixture's hoodie.table.create.schema


def test_a_table_never_written_has_none_until_its_first_commit(tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")  # hudi-meta's create_table writes no create schema
    assert table_schema(t.table) is None
    w = t.write(rows(("a", 1, 1.0)))
    found = table_schema(t.table)
    assert found is not None and found.source == f"schema of commit {w.instant}"
    assert [n for n in found.schema.names if n not in META_COLUMNS] == ["id", "ts", "region", "amount"]


def test_a_dotted_path_names_the_record_it_reaches_into(fixture_table: Any) -> None:
    archive = next(a for a in table_zips() if table_id(a) == "sample_table/mor/parquet/v6_nonpartitioned")
    found = table_schema(HudiTable.open(str(fixture_table(archive))))
    assert found is not None
    schema = found.schema
    assert nested_field(schema, "structField.field1") == "structField"
    assert nested_field(schema, "structField.child_struct.child_field1") == "structField"
    assert nested_field(schema, "structField.nope") is None
    assert nested_field(schema, "intField.x") is None  # not a record
    assert nested_field(schema, "intField") is None  # top level: not nested
