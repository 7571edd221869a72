"""`sync --mode hiveserver2`: the same contract through SQL on Spark's Thrift server (PyHive). The tables are
read back through the metastore's raw Thrift API, which the Thrift server itself uses."""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from hudi_meta.sync.catalog import Partition, open_catalog
from hudi_meta.sync.hiveserver2 import HiveServer2Catalog
from tests.compaction.core import at, rows
from tests.sync.helpers import FAST_RETRIES, compacted_table, pyhive_rows, raw_partitions, raw_table, sync
from tests.sync.test_partitions import delete_partition, two_regions


class CountingStatements:
    """Counts the statements a HiveServer2Catalog sends, by their first two words."""

    def __init__(self, catalog: HiveServer2Catalog) -> None:
        self.calls: Counter[str] = Counter()
        inner_rows, inner_execute = catalog._rows, catalog._execute

        def rows(sql: str) -> list[tuple[Any, ...]]:
            self.calls[" ".join(sql.split()[:2])] += 1
            return inner_rows(sql)

        def execute(ddl: str) -> None:
            self.calls[" ".join(ddl.split()[:2])] += 1
            inner_execute(ddl)

        catalog._rows = rows  # type: ignore[method-assign]
        catalog._execute = execute  # type: ignore[method-assign]


@pytest.mark.slow
def test_register_publish_and_keep_other_properties(
    engine: Engine, tmp_path: Path, metastore_uri: str, hiveserver2_uri: str
) -> None:
    t, instant = compacted_table(tmp_path / "t", engine)
    db = "hs2_" + uuid.uuid4().hex[:10]
    catalog = open_catalog("hiveserver2", hiveserver2_uri, FAST_RETRIES)
    assert isinstance(catalog, HiveServer2Catalog)
    counting = CountingStatements(catalog)
    # Spark's Thrift server refuses spark.sql.* table properties in DDL: register without them
    sync("hiveserver2", hiveserver2_uri, t.path, str(engine.url), db, catalog=catalog, as_datasource=False)
    assert counting.calls["CREATE EXTERNAL"] == 2 and counting.calls["ALTER TABLE"] == 4  # partitions, properties
    ro = raw_table(metastore_uri, db, "core_ro")
    assert ro.tableType == "EXTERNAL_TABLE" and ro.sd.location == f"file:{t.path}"
    assert ro.sd.inputFormat == "org.apache.hudi.hadoop.HoodieParquetInputFormat"
    assert ro.sd.serdeInfo.serializationLib == "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
    assert ro.sd.serdeInfo.parameters["hoodie.query.as.ro.table"] == "true"
    assert ro.parameters["hoodie.ro.event.time.threshold.ms"] == str(at(10))
    assert ro.parameters["hoodie.ro.event.time.compaction.instant"] == instant
    assert [c.name for c in ro.partitionKeys] == ["region"]
    assert pyhive_rows(hiveserver2_uri, f"SHOW PARTITIONS {db}.core_rt") == [("region=eu",)]

    pyhive_rows(hiveserver2_uri, f"ALTER TABLE {db}.core_ro SET TBLPROPERTIES ('owner.note'='set by someone else')")
    before = counting.calls.copy()
    assert sync("hiveserver2", hiveserver2_uri, t.path, str(engine.url), db, catalog=catalog).actions == []
    assert (counting.calls - before)["ALTER TABLE"] == 0  # nothing changed, nothing written

    t.write(rows(("d", 3, 1.0)))  # late data below T
    sync("hiveserver2", hiveserver2_uri, t.path, str(engine.url), db, catalog=catalog)
    catalog.close()
    props = dict(pyhive_rows(hiveserver2_uri, f"SHOW TBLPROPERTIES {db}.core_ro"))
    assert props["hoodie.ro.event.time.watermark.ms"] == str(at(3))
    assert props["owner.note"] == "set by someone else"
    assert raw_table(metastore_uri, db, "core_ro").parameters["owner.note"] == "set by someone else"


@pytest.mark.slow
def test_partitions_follow_the_table_through_sql(
    engine: Engine, tmp_path: Path, metastore_uri: str, hiveserver2_uri: str
) -> None:
    """The partition events of test_sync_hms through HiveServer2's SQL (SHOW PARTITIONS and DESCRIBE FORMATTED to
    read, ALTER TABLE ... SET LOCATION and DROP PARTITION to write), read back through the metastore."""
    t = two_regions(tmp_path / "t")
    db = "hs2_" + uuid.uuid4().hex[:10]
    catalog = open_catalog("hiveserver2", hiveserver2_uri, FAST_RETRIES)
    sync("hiveserver2", hiveserver2_uri, t.path, str(engine.url), db, catalog=catalog, as_datasource=False)
    catalog.move_partitions(db, "core_ro", [Partition(("eu",), "/somewhere/else")])
    delete_partition(t.path, "region=us")
    sync("hiveserver2", hiveserver2_uri, t.path, str(engine.url), db, catalog=catalog, as_datasource=False)
    again = sync("hiveserver2", hiveserver2_uri, t.path, str(engine.url), db, catalog=catalog, as_datasource=False)
    catalog.close()
    assert again.actions == []
    for name in ("core_ro", "core_rt"):
        assert pyhive_rows(hiveserver2_uri, f"SHOW PARTITIONS {db}.{name}") == [("region=eu",)]
    parts = raw_partitions(metastore_uri, db, "core_ro")
    assert [(p.values, p.sd.location) for p in parts] == [(["eu"], f"file:{t.path}/region=eu")]
