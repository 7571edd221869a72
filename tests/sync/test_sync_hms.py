"""`sync --mode hms` against a real Hive 2.3 metastore (docs/catalog-and-freshness.md section 3). What the tables hold
is read back through the metastore's raw Thrift API, a Hive-enabled Spark of its own and PyHive through HiveServer2; the
expected values come from the catalog contract and hand-worked freshness, not from the sync's own report."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.rollback import rollback_compaction
from hudi_meta.demo.local_servers import LocalServer, metastore
from hudi_meta.errors import HudiMetaError
from hudi_meta.sync.catalog import Partition, open_catalog
from hudi_meta.sync.hive_schema import RO_INPUT_FORMAT, Layout, TableStrategy, sync_definitions
from hudi_meta.sync.hive_sync import table_schema
from hudi_meta.sync.hms import HmsCatalog
from tests.compaction.core import at, rows
from tests.sync.helpers import (
    FAST_RETRIES,
    CountingClient,
    compacted_table,
    pyhive_rows,
    raw_table,
    spark_sql,
    sync,
)
from tests.sync.test_partitions import delete_partition, two_regions

OURS = {
    "hoodie.ro.event.time.threshold",
    "hoodie.ro.event.time.threshold.ms",
    "hoodie.ro.event.time.watermark",
    "hoodie.ro.event.time.watermark.ms",
    "hoodie.ro.event.time.compaction.instant",
    "hoodie.ro.event.time.exact",
    "last_commit_time_sync",
}


def database() -> str:
    return "db_" + uuid.uuid4().hex[:10]


def expected(instant: str, threshold: str, threshold_ms: int, watermark: str, watermark_ms: int) -> dict[str, str]:
    return {
        "hoodie.ro.event.time.threshold": threshold,
        "hoodie.ro.event.time.threshold.ms": str(threshold_ms),
        "hoodie.ro.event.time.watermark": watermark,
        "hoodie.ro.event.time.watermark.ms": str(watermark_ms),
        "hoodie.ro.event.time.compaction.instant": instant,
        "hoodie.ro.event.time.exact": "false",
        "last_commit_time_sync": instant,  # the compaction's commit is the newest completed instant
    }


@pytest.mark.slow
def test_spark_sql_and_pyhive_read_every_property_of_a_synced_table(
    engine: Engine, tmp_path: Path, metastore_uri: str, hiveserver2_uri: str
) -> None:
    t, instant = compacted_table(tmp_path / "t", engine)
    db = database()
    sync("hms", metastore_uri, t.path, str(engine.url), db, as_datasource=False)
    # T = 10 s; the only record left in a log file has event time 50 s: the watermark is T
    want = expected(instant, "2026-01-01T00:00:10.000Z", at(10), "2026-01-01T00:00:10.000Z", at(10))
    props, described, parts = spark_sql(
        metastore_uri,
        tmp_path / "spark",
        f"SHOW TBLPROPERTIES {db}.core_ro",
        f"DESCRIBE FORMATTED {db}.core_ro",
        f"SHOW PARTITIONS {db}.core_rt",
    )
    assert {k: v for k, v in props if k in OURS} == want
    details = {r[0]: r[1] for r in described}
    assert details["InputFormat"] == "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    assert details["OutputFormat"] == "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
    assert details["Serde Library"] == "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
    assert details["Location"] == f"file:{t.path}" and details["Type"] == "EXTERNAL"
    assert [c[0] for c in described[:5]] == [
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
    ]
    assert parts == [["region=eu"]]
    for name in ("core_ro", "core_rt"):
        through_hs2 = dict(pyhive_rows(hiveserver2_uri, f"SHOW TBLPROPERTIES {db}.{name}"))
        assert {k: v for k, v in through_hs2.items() if k in OURS} == want
    assert raw_table(metastore_uri, db, "core_rt").sd.inputFormat == (
        "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
    )


@pytest.mark.slow
def test_a_table_hive_sync_tool_registered_keeps_everything_but_our_keys(
    engine: Engine, tmp_path: Path, metastore_uri: str
) -> None:
    t, instant = compacted_table(tmp_path / "t", engine)
    db = database()
    tables, partitions = sync_definitions(table_schema(t.table), ["region"], ["region=eu"], t.path, db, "core")
    catalog = HmsCatalog(metastore_uri, FAST_RETRIES, 30)
    catalog.create_database(db)
    for table in tables:  # as HiveSyncTool left them, with properties of their own
        others = {"last_commit_time_sync": "20250101000000000", "owner.note": "set by someone else"}
        catalog.create_table(table.__class__(**{**table.__dict__, "properties": {**table.properties, **others}}))
        catalog.add_partitions(db, table.name, partitions)
    before = {n: raw_table(metastore_uri, db, n) for n in ("core_ro", "core_rt")}
    counting = catalog.client = CountingClient(catalog.client)
    report = sync("hms", metastore_uri, t.path, str(engine.url), db, catalog=catalog)
    assert counting.calls["alter_table"] == 2 and counting.calls["create_table"] == 0
    assert [a.operation for a in report.actions] == ["set_properties", "set_properties"]
    for name, old in before.items():
        new = raw_table(metastore_uri, db, name)
        assert new.sd == old.sd and new.partitionKeys == old.partitionKeys and new.tableType == old.tableType
        kept = {k: v for k, v in old.parameters.items() if k not in OURS and k != "transient_lastDdlTime"}
        assert {k: v for k, v in new.parameters.items() if k in kept} == kept
        assert new.parameters["owner.note"] == "set by someone else"
        assert new.parameters["spark.sql.sources.provider"] == "hudi"
        assert new.parameters["last_commit_time_sync"] == instant
        assert new.parameters["hoodie.ro.event.time.threshold.ms"] == str(at(10))
    calls = counting.calls.copy()
    again = sync("hms", metastore_uri, t.path, str(engine.url), db, catalog=catalog)
    catalog.close()
    assert again.actions == []
    writes = {"alter_table", "create_table", "add_partitions_req", "create_database"}
    assert sum(n for name, n in (counting.calls - calls).items() if name in writes) == 0


@pytest.mark.slow
@pytest.mark.parametrize("layout", [Layout(skip_ro_suffix=True), Layout(strategy=TableStrategy.RO)])
def test_a_table_registered_in_another_hive_sync_tool_layout_is_annotated_where_it_is(
    engine: Engine, tmp_path: Path, metastore_uri: str, layout: Layout
) -> None:
    """HiveSyncTool with `skip_ro_suffix` (or the RO strategy) registers the read-optimized view as `core` itself:
    the sync finds it by its location, as the metastore returns it (`file:/...`), and publishes there, creating
    no `core_ro` beside it."""
    t, instant = compacted_table(tmp_path / "t", engine)
    db = database()
    tables, partitions = sync_definitions(
        table_schema(t.table), ["region"], ["region=eu"], t.path, db, "core", True, layout
    )
    catalog = HmsCatalog(metastore_uri, FAST_RETRIES, 30)
    catalog.create_database(db)
    for table in tables:
        catalog.create_table(table)
        catalog.add_partitions(db, table.name, partitions)
    assert not raw_table(metastore_uri, db, "core").sd.location.startswith("/")  # the metastore's own spelling
    counting = catalog.client = CountingClient(catalog.client)
    sync("hms", metastore_uri, t.path, str(engine.url), db, catalog=catalog, name="core")
    catalog.close()
    assert counting.calls["create_table"] == 0 and counting.calls["alter_table"] == len(tables)
    ro = raw_table(metastore_uri, db, "core")
    assert ro.sd.inputFormat == RO_INPUT_FORMAT
    assert ro.parameters["hoodie.ro.event.time.threshold.ms"] == str(at(10))
    assert ro.parameters["last_commit_time_sync"] == instant
    with pytest.raises(Exception, match="NoSuchObject|not exist"):
        raw_table(metastore_uri, db, "core_ro")


@pytest.mark.slow
def test_a_new_table_is_registered_as_hive_sync_tool_does_and_a_second_sync_writes_nothing(
    engine: Engine, tmp_path: Path, metastore_uri: str
) -> None:
    t, _ = compacted_table(tmp_path / "t", engine)
    db = database()
    dry = sync("hms", metastore_uri, t.path, str(engine.url), db, dry_run=True)
    assert [a.operation for a in dry.actions][:2] == ["create_database", "create_table"]
    with pytest.raises(Exception, match="NoSuchObject|not exist|Unknown database"):
        raw_table(metastore_uri, db, "core_ro")  # a dry run writes nothing
    catalog = open_catalog("hms", metastore_uri, FAST_RETRIES)
    assert isinstance(catalog, HmsCatalog)
    catalog.client = CountingClient(catalog.client)
    sync("hms", metastore_uri, t.path, str(engine.url), db, catalog=catalog)
    first = catalog.client.calls.copy()
    assert (first["create_table"], first["add_partitions_req"], first["alter_table"]) == (2, 2, 2)
    ro = raw_table(metastore_uri, db, "core_ro")
    assert ro.tableType == "EXTERNAL_TABLE" and ro.parameters["EXTERNAL"] == "TRUE"
    assert ro.parameters["spark.sql.sources.schema.partCol.0"] == "region"
    assert ro.sd.serdeInfo.parameters == {"path": t.path, "hoodie.query.as.ro.table": "true"}
    assert ro.sd.location.endswith(t.path) and [c.name for c in ro.partitionKeys] == ["region"]
    again = sync("hms", metastore_uri, t.path, str(engine.url), db, catalog=catalog)
    delta = catalog.client.calls - first
    catalog.close()
    assert again.actions == [] and {"create_table", "alter_table", "add_partitions_req"}.isdisjoint(delta)


@pytest.mark.slow
def test_late_data_lowers_the_published_watermark_and_a_later_compaction_raises_it(
    engine: Engine, tmp_path: Path, metastore_uri: str
) -> None:
    t, _ = compacted_table(tmp_path / "t", engine)
    db = database()
    store = str(engine.url)
    sync("hms", metastore_uri, t.path, store, db)
    late = t.write(rows(("d", 3, 1.0)))  # event time 3 s, below T = 10 s, after the compaction
    report = sync("hms", metastore_uri, t.path, store, db)
    assert {a.target for a in report.actions} == {f"{db}.core_ro", f"{db}.core_rt"}
    ro = raw_table(metastore_uri, db, "core_ro").parameters
    assert ro["hoodie.ro.event.time.threshold.ms"] == str(at(10))
    assert ro["hoodie.ro.event.time.watermark.ms"] == str(at(3))  # the RO view does not hold d yet
    assert ro["hoodie.ro.event.time.watermark"] == "2026-01-01T00:00:03.000Z"
    assert ro["last_commit_time_sync"] == late.instant
    second = t.compact(engine, at(20))  # covers d (3 s); c (50 s) stays in a log file
    sync("hms", metastore_uri, t.path, store, db)
    for name in ("core_ro", "core_rt"):
        params = raw_table(metastore_uri, db, name).parameters
        assert params["hoodie.ro.event.time.watermark.ms"] == str(at(20))
        assert params["hoodie.ro.event.time.compaction.instant"] == second


@pytest.mark.slow
def test_a_rolled_back_compaction_moves_the_published_freshness_back(
    engine: Engine, tmp_path: Path, metastore_uri: str
) -> None:
    t, first = compacted_table(tmp_path / "t", engine)
    t.write(rows(("d", 20, 1.0)))
    second = t.compact(engine, at(30))
    db = database()
    sync("hms", metastore_uri, t.path, str(engine.url), db)
    assert raw_table(metastore_uri, db, "core_ro").parameters["hoodie.ro.event.time.threshold.ms"] == str(at(30))
    rollback_compaction(t.table, second, completed=True, dry_run=False)
    sync("hms", metastore_uri, t.path, str(engine.url), db)
    params = raw_table(metastore_uri, db, "core_ro").parameters
    assert params["hoodie.ro.event.time.threshold.ms"] == str(at(10))
    assert params["hoodie.ro.event.time.compaction.instant"] == first
    assert params["hoodie.ro.event.time.watermark.ms"] == str(at(10))


@pytest.fixture
def own_metastore(tmp_path: Path) -> Iterator[LocalServer]:
    server = metastore(tmp_path / "metastore").start()
    yield server
    server.stop()


@pytest.mark.slow
def test_a_metastore_killed_mid_sync_fails_in_one_line_and_the_next_sync_completes(
    engine: Engine, tmp_path: Path, own_metastore: LocalServer
) -> None:
    t, instant = compacted_table(tmp_path / "t", engine)
    uri = f"thrift://127.0.0.1:{own_metastore.port}"
    catalog = HmsCatalog(uri, FAST_RETRIES, 10)

    def kill_at_the_first_partitions(name: str) -> None:
        if name == "add_partitions_req":  # core_ro registered, no partitions, none of our properties yet
            own_metastore.kill()

    catalog.client = CountingClient(catalog.client, kill_at_the_first_partitions)
    with pytest.raises(HudiMetaError) as failed:
        sync("hms", uri, t.path, str(engine.url), "db", catalog=catalog)
    catalog.close()
    message = str(failed.value)
    assert "\n" not in message and message.startswith(f"catalog {uri} unavailable after 3 attempts")
    own_metastore.start()  # the same Derby database: core_ro is there, half-done
    half = raw_table(uri, "db", "core_ro")
    assert "hoodie.ro.event.time.threshold" not in half.parameters  # nothing claimed before the partitions
    report = sync("hms", uri, t.path, str(engine.url), "db")
    assert [(a.operation, a.target) for a in report.actions] == [
        ("add_partitions", "db.core_ro"),
        ("set_properties", "db.core_ro"),
        ("create_table", "db.core_rt"),
        ("add_partitions", "db.core_rt"),
        ("set_properties", "db.core_rt"),
    ]
    for name in ("core_ro", "core_rt"):
        params = raw_table(uri, "db", name).parameters
        assert params["hoodie.ro.event.time.compaction.instant"] == instant
    catalog = HmsCatalog(uri, FAST_RETRIES, 10)
    assert set(catalog.partitions("db", "core_ro")) == {("eu",)} == set(catalog.partitions("db", "core_rt"))
    catalog.close()


@pytest.mark.slow
def test_partitions_follow_the_table_deleted_ones_dropped_moved_ones_altered(
    engine: Engine, tmp_path: Path, metastore_uri: str
) -> None:
    """docs/catalog-and-freshness.md section 3, HiveSyncTool's partition events: the metastore read back through its
    raw Thrift API after a Java-style `delete_partition` replacecommit and a partition moved by hand."""
    t = two_regions(tmp_path / "t")
    db = database()
    catalog = HmsCatalog(metastore_uri, FAST_RETRIES, 30)
    sync("hms", metastore_uri, t.path, str(engine.url), db, catalog=catalog)
    catalog.move_partitions(db, "core_ro", [Partition(("eu",), "/somewhere/else")])
    delete_partition(t.path, "region=us")
    report = sync("hms", metastore_uri, t.path, str(engine.url), db, catalog=catalog)
    assert {(a.operation, a.target) for a in report.actions} >= {
        ("move_partitions", f"{db}.core_ro"),
        ("drop_partitions", f"{db}.core_ro"),
        ("drop_partitions", f"{db}.core_rt"),
    }
    raw = catalog.client.get_partitions(db, "core_ro", -1)
    assert [(p.values, p.sd.location) for p in raw] == [(["eu"], f"file:{t.path}/region=eu")]
    assert Path(t.path, "region=us").is_dir()  # an external table's partition drop keeps the files
    again = sync("hms", metastore_uri, t.path, str(engine.url), db, catalog=catalog)
    catalog.close()
    assert [a for a in again.actions if a.operation.endswith("partitions")] == []
