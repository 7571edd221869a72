"""What the sync tests read back through independent clients (the metastore's raw Thrift API, PyHive, a
Hive-enabled Spark in its own process), and the tables they sync."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyhive import hive
from sqlalchemy import Engine

from hudi_meta.api import open_table
from hudi_meta.sync.catalog import Catalog, RetryPolicy, open_catalog
from hudi_meta.sync.hive_sync import SyncReport, sync_table
from tests.compaction.core import CoreTable, at, rows

FAST_RETRIES = RetryPolicy(attempts=3, first_wait_s=0.1, max_wait_s=0.3)


def compacted_table(path: Path, engine: Engine) -> tuple[CoreTable, str]:
    """A table whose event-time compaction (T = 10 s) completed: RO holds everything up to T."""
    t = CoreTable(path)
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    t.write(rows(("a", 5, 2.0)))  # compacted
    t.write(rows(("c", 50, 2.0)))  # after T: stays in a log file
    return t, t.compact(engine, at(10))


def sync(
    mode: str,
    uri: str,
    path: str,
    store: str,
    database: str,
    catalog: Catalog | None = None,
    **kw: Any,
) -> SyncReport:
    """A sync as `hudi-meta sync` does it (index, freshness, catalog), in this process."""
    own = catalog is None
    catalog = catalog or open_catalog(mode, uri, FAST_RETRIES)
    try:
        with open_table(path, store) as table:
            return sync_table(catalog, table.hudi, table.freshness(), database, **kw)
    finally:
        if own:
            catalog.close()


class CountingClient:
    """Forwards every call to a Thrift client and counts them by name; `before(name)` runs first."""

    def __init__(self, inner: Any, before: Callable[[str], None] | None = None) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()
        self.before = before

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            if self.before is not None:
                self.before(name)
            return attr(*args, **kwargs)

        return call


def raw_table(metastore_uri: str, database: str, name: str) -> Any:
    """The table as the metastore stores it (Thrift object)."""
    from hudi_meta.sync.hms import HmsCatalog

    catalog = HmsCatalog(metastore_uri, FAST_RETRIES, 30)
    try:
        return catalog.client.get_table(database, name)
    finally:
        catalog.close()


def raw_partitions(metastore_uri: str, database: str, name: str) -> list[Any]:
    """The table's partitions as the metastore stores them (Thrift objects)."""
    from hudi_meta.sync.hms import HmsCatalog

    catalog = HmsCatalog(metastore_uri, FAST_RETRIES, 30)
    try:
        return list(catalog.client.get_partitions(database, name, -1))
    finally:
        catalog.close()


def pyhive_rows(hiveserver2_uri: str, sql: str) -> list[tuple[Any, ...]]:
    host, port = hiveserver2_uri.split(":")
    connection = hive.connect(host, int(port), auth="NOSASL", username="test")
    try:
        cursor = connection.cursor()
        cursor.execute(sql)
        if sql.lstrip().upper().startswith(("ALTER", "CREATE", "DROP")):
            return []  # DDL is not fetched: Spark 3.5's Thrift server answers its fetch with no columns
        return [tuple(r) for r in cursor.fetchall()]
    finally:
        connection.close()


SPARK_SQL = """
import json, sys
from pyspark.sql import SparkSession
uri, work, *statements = sys.argv[1:]
spark = (
    SparkSession.builder.master("local[1]").appName("hive-read")
    .config("spark.hadoop.hive.metastore.uris", uri)
    .config("spark.ui.enabled", "false")
    .config("spark.sql.warehouse.dir", work + "/warehouse")
    .config("spark.hadoop.hive.exec.local.scratchdir", work + "/scratch")
    .config("spark.hadoop.hive.downloaded.resources.dir", work + "/resources")
    .enableHiveSupport().getOrCreate()
)
print(json.dumps([[list(r) for r in spark.sql(s).collect()] for s in statements]))
spark.stop()
"""


def spark_sql(metastore_uri: str, work: Path, *statements: str) -> list[list[list[Any]]]:
    """Statements run by a Hive-enabled SparkSession of its own (a user's Spark SQL on that metastore)."""
    work.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", SPARK_SQL, metastore_uri, str(work), *statements],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=work,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: list[list[list[Any]]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result
