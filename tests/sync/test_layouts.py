"""HiveSyncTool's layouts (issue 38): which names a Merge-On-Read table is registered under, and that a sync
publishes on the registrations that exist, whatever layout made them, and never on another table's.

Rules, from HiveSyncTool (`initTableNameVars`, `doSync`): with the ALL strategy (the default) the read-optimized
view is `NAME_ro`, or `NAME` with `skip_ro_suffix`, and the snapshot view is `NAME_rt`; the RO and RT strategies
register their one view as `NAME`. A registration reads the read-optimized view when its input format is Hudi's
non-real-time one (`hoodie.query.as.ro.table` in its serde properties says the same for Spark)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest
from sqlalchemy import Engine

from hudi_meta.errors import HudiMetaError
from hudi_meta.sync.catalog import same_location
from hudi_meta.sync.hive_schema import (
    RO_INPUT_FORMAT,
    RT_INPUT_FORMAT,
    Layout,
    TableStrategy,
    is_read_optimized,
    sync_definitions,
)
from hudi_meta.sync.hive_sync import table_schema
from hudi_meta.table.table import HudiTable
from tests.compaction.core import CoreTable, at, rows
from tests.sync.helpers import compacted_table, sync
from tests.sync.memory_catalog import MemoryCatalog

THRESHOLD_KEY = "hoodie.ro.event.time.threshold.ms"


@pytest.mark.parametrize(
    ("layout", "names"),
    [
        (Layout(), [("t_ro", True), ("t_rt", False)]),
        (Layout(skip_ro_suffix=True), [("t", True), ("t_rt", False)]),
        (Layout(strategy=TableStrategy.RO), [("t", True)]),
        (Layout(skip_ro_suffix=True, strategy=TableStrategy.RO), [("t", True)]),
        (Layout(strategy=TableStrategy.RT), [("t", False)]),
    ],
)
def test_the_names_each_layout_registers(layout: Layout, names: list[tuple[str, bool]]) -> None:
    assert layout.registrations("t") == names


@pytest.mark.parametrize("text", ["RO", "ro", "Rt", "ALL"])
def test_a_strategy_takes_hudis_spelling(text: str) -> None:
    assert TableStrategy.parse(text).spelling == text.lower()


def test_an_unknown_strategy_is_one_line() -> None:
    with pytest.raises(HudiMetaError, match="table strategy: expected one of ro, rt, all, got 'both'"):
        TableStrategy.parse("both", "table strategy")


def test_the_view_a_registration_reads() -> None:
    schema = pa.schema([("_hoodie_commit_time", pa.string()), ("id", pa.string()), ("ts", pa.int64())])
    ro, rt = sync_definitions(schema, [], [], "/t", "db", "t")[0]
    assert (ro.input_format, is_read_optimized(ro)) == (RO_INPUT_FORMAT, True)
    assert (rt.input_format, is_read_optimized(rt)) == (RT_INPUT_FORMAT, False)
    no_flag = dataclasses.replace(rt, serde_properties={"path": "/t"})
    assert not is_read_optimized(no_flag)  # the input format says it
    assert is_read_optimized(dataclasses.replace(no_flag, input_format=RO_INPUT_FORMAT))


@pytest.mark.parametrize(
    ("registered", "base", "same"),
    [
        ("file:/tmp/t", "/tmp/t", True),  # how the metastore writes a local path
        ("file:///tmp/t/", "/tmp/t", True),
        ("/tmp/t", "/tmp/t/", True),
        ("s3a://lake/t", "s3://lake/t", True),
        ("s3n://lake/t", "s3://lake/t", True),
        ("file:/tmp/t2", "/tmp/t", False),
        ("s3://lake/t", "/lake/t", False),
        ("hdfs://nn/tmp/t", "/tmp/t", False),
    ],
)
def test_a_registration_is_found_by_its_location(registered: str, base: str, same: bool) -> None:
    assert same_location(registered, base) is same


def registered(catalog: MemoryCatalog, path: str, layout: Layout, location: str | None = None) -> None:
    """The table as HiveSyncTool registered it with `layout` (no freshness of ours)."""
    catalog.create_database("db")
    schema = table_schema(HudiTable.open(path))
    where = location or path
    tables, partitions = sync_definitions(schema, ["region"], ["region=eu"], where, "db", "core", True, layout)
    for table in tables:
        catalog.create_table(table)
        catalog.add_partitions("db", table.name, partitions)


@pytest.mark.parametrize(
    "layout",
    [Layout(skip_ro_suffix=True), Layout(strategy=TableStrategy.RO), Layout(strategy=TableStrategy.RT), Layout()],
)
def test_a_sync_publishes_on_the_registrations_it_finds_and_creates_none(
    tmp_path: Path, engine: Engine, layout: Layout
) -> None:
    t, _ = compacted_table(tmp_path / "t", engine)
    catalog = MemoryCatalog()
    registered(catalog, t.path, layout)
    before = set(catalog.tables)
    report = sync("hms", "", t.path, str(engine.url), "db", catalog=catalog, name="core")
    assert set(catalog.tables) == before  # nothing registered beside what HiveSyncTool left
    assert [a.operation for a in report.actions] == ["set_properties"] * len(before)
    assert all(catalog.tables[k].properties[THRESHOLD_KEY] for k in before)


def test_a_registration_at_the_metastores_spelling_of_the_path_is_found(tmp_path: Path, engine: Engine) -> None:
    t, _ = compacted_table(tmp_path / "t", engine)
    catalog = MemoryCatalog()
    registered(catalog, t.path, Layout(skip_ro_suffix=True), location=f"file:{t.path}/")
    sync("hms", "", t.path, str(engine.url), "db", catalog=catalog, name="core")
    assert set(catalog.tables) == {("db", "core"), ("db", "core_rt")}


def test_a_layout_asked_for_registers_its_missing_tables(tmp_path: Path, engine: Engine) -> None:
    t, _ = compacted_table(tmp_path / "t", engine)
    catalog = MemoryCatalog()
    sync("hms", "", t.path, str(engine.url), "db", catalog=catalog, name="core", layout=Layout(skip_ro_suffix=True))
    ro = catalog.tables[("db", "core")]
    assert set(catalog.tables) == {("db", "core"), ("db", "core_rt")}
    assert is_read_optimized(ro) and ro.properties[THRESHOLD_KEY]


def test_another_table_under_a_name_the_sync_would_write_is_never_touched(tmp_path: Path, engine: Engine) -> None:
    t, _ = compacted_table(tmp_path / "t", engine)
    other, _ = compacted_table(tmp_path / "other", engine)
    catalog = MemoryCatalog()
    registered(catalog, other.path, Layout())  # core_ro and core_rt are another table's
    before = dict(catalog.tables)
    with pytest.raises(HudiMetaError, match=r"catalog table db\.core_ro is registered at .*other, not at .*: it is"):
        sync("hms", "", t.path, str(engine.url), "db", catalog=catalog, name="core")
    assert catalog.tables == before


def test_another_table_under_a_name_no_layout_writes_is_left_alone(tmp_path: Path, engine: Engine) -> None:
    t, _ = compacted_table(tmp_path / "t", engine)
    other, _ = compacted_table(tmp_path / "other", engine)
    catalog = MemoryCatalog()
    registered(catalog, other.path, Layout(strategy=TableStrategy.RO))  # `core` is another table
    sync("hms", "", t.path, str(engine.url), "db", catalog=catalog, name="core")
    assert THRESHOLD_KEY not in catalog.tables[("db", "core")].properties
    assert catalog.tables[("db", "core_ro")].properties[THRESHOLD_KEY]


@pytest.mark.parametrize("version", [6, 8, 9])
def test_hudis_own_sync_times_are_written_as_hive_sync_tool_writes_them(
    tmp_path: Path, engine: Engine, version: int
) -> None:
    """`last_commit_time_sync` is the requested time of the newest completed commit (the compaction here), and on
    1.x tables `last_commit_completion_time_sync` the newest completion time of a completed commit, read here from
    the timeline's file names (`<requested>_<completed>.<action>`); a version 6 timeline records none, so a value
    someone else wrote stays."""
    t = CoreTable(tmp_path / "t", version=version)
    t.write(rows(("a", 1, 1.0)))
    t.write(rows(("a", 5, 2.0)))
    instant = t.compact(engine, at(10))
    catalog = MemoryCatalog()
    registered(catalog, t.path, Layout())
    catalog.set_properties("db", "core_ro", {"last_commit_completion_time_sync": "19990101000000000"})
    sync("hms", "", t.path, str(engine.url), "db", catalog=catalog, name="core")
    ro = catalog.tables[("db", "core_ro")].properties
    assert ro["last_commit_time_sync"] == instant
    if version == 6:
        assert ro["last_commit_completion_time_sync"] == "19990101000000000"
    else:
        names = [p.name for p in Path(t.path, ".hoodie", "timeline").iterdir()]
        done = [n.split(".")[0].split("_")[1] for n in names if n.endswith((".commit", ".deltacommit")) and "_" in n]
        assert ro["last_commit_completion_time_sync"] == max(done)


def test_a_default_layout_left_half_done_is_completed(tmp_path: Path, engine: Engine) -> None:
    """A sync killed after registering `core_ro` left the default layout half-done: the next sync registers
    `core_rt` too (found `core_ro` alone is not another layout)."""
    t, _ = compacted_table(tmp_path / "t", engine)
    catalog = MemoryCatalog()
    registered(catalog, t.path, Layout())
    del catalog.tables[("db", "core_rt")]
    sync("hms", "", t.path, str(engine.url), "db", catalog=catalog, name="core")
    assert set(catalog.tables) == {("db", "core_ro"), ("db", "core_rt")}
