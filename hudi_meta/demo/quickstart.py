"""`hudi-meta quickstart`: the whole mission on embedded defaults, printing what each step showed.

A Hive metastore started from the pyspark jars (Derby, in the work folder) and a local Spark session that uses
it; a demo table with late data written by Spark; the index in a SQLite store; an event-time compaction (log
files after T kept as symlinks); a clean that deletes the old slice but every file a link still shows; the
freshness synced into the metastore and read back through Spark SQL; then the web UI on the store until
Ctrl-C. Everything lands in the work folder.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

from hudi_meta.check.index_drift import check_table
from hudi_meta.clean.plan import KEEP_LATEST_FILE_VERSIONS, CleanPolicy
from hudi_meta.clean.run import run_clean
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.demo.event_stream import StreamSpec, create_events_table, generate
from hudi_meta.demo.local_servers import metastore
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.queries import link_rows
from hudi_meta.index.registry import table_id_of
from hudi_meta.sync.properties import FRESHNESS_KEYS
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import format_time_ms
from hudi_meta.table.writer import CURRENT_VERSION


def run_quickstart(workdir: Path, batches: int = 6, rows: int = 500, ui_port: int | None = 8080) -> None:
    """The demo end to end; with `ui_port` (None: exit at once) the web UI then serves the store until Ctrl-C."""
    started = time.monotonic()
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    path, url = str(workdir / "events"), f"sqlite:///{workdir / 'hudi-meta.db'}"
    server = metastore(workdir / "metastore").start()
    uri = f"thrift://127.0.0.1:{server.port}"
    try:
        spark = _spark(workdir, uri)
        threshold = _write(spark, path, batches, rows)
        upgrade(url)
        engine = make_engine(url)
        stats = Indexer(engine, HudiTable.open(path)).run()
        print(f"2. indexed into {url}: {stats.blocks_added} log blocks, {stats.instants_added} instants")
        if not _compact(spark, engine, path, threshold):
            return
        _clean(engine, path)
        _sync_and_read_back(spark, engine, path, uri)
        engine.dispose()
        spark.stop()
    finally:
        server.stop()
    print(f"   explore: hudi-meta --db {url} show plans|links|blocks {path}")
    print(f"            hudi-meta --db {url} freshness {path}")
    print(f"   the demo took {time.monotonic() - started:.0f} s")
    if ui_port is None:
        print(f"6. web UI: hudi-meta --db {url} serve (not started: --no-ui)")
        return
    serve_ui(url, ui_port)


def _spark(workdir: Path, metastore_uri: str) -> Any:
    """Local Spark using the metastore (Spark SQL reads what the sync publishes), its Hive scratch in `workdir`."""
    from hudi_meta.spark.session import spark_session

    hive = workdir / "spark-hive"
    return spark_session(
        "local[2]",
        "hudi-meta-quickstart",
        spark__sql__catalogImplementation="hive",
        spark__hadoop__hive__metastore__uris=metastore_uri,
        spark__sql__warehouse__dir=str(hive / "warehouse"),
        spark__hadoop__hive__exec__local__scratchdir=str(hive / "scratch"),
        spark__hadoop__hive__downloaded__resources__dir=str(hive / "resources"),
    )


def _write(spark: Any, path: str, batches: int, rows: int) -> int:
    """The demo table from an event stream with late data, updates and deletes; the T to compact at."""
    from hudi_meta.spark import writer

    print(f"1. demo table {path} (MOR, table version {CURRENT_VERSION}, bucket index, event time `ts`)")
    create_events_table(path, buckets=2, version=CURRENT_VERSION, metadata_table=True)
    watermarks = []
    for batch in generate(StreamSpec(batches=batches, rows_per_batch=rows, late_share=0.15, seed=1)):
        writer.write(spark.createDataFrame(batch.upserts), HudiTable.open(path), "upsert")
        if batch.deletes.num_rows:
            writer.write(spark.createDataFrame(batch.deletes), HudiTable.open(path), "delete")
        watermarks.append(batch.watermark_ms)
    print(f"   wrote {batches} batches of {rows} events (15% late) with updates and deletes")
    return watermarks[len(watermarks) // 2]


def _compact(spark: Any, engine: Any, path: str, threshold: int) -> bool:
    from hudi_meta.spark import compaction

    result = schedule_compaction(engine, HudiTable.open(path), ScheduleRequest(threshold_ms=threshold))
    if result.instant is None:
        print(f"3. nothing to compact: {result.reason}")
        return False
    compaction.run(spark, HudiTable.open(path), result.instant)
    Indexer(engine, HudiTable.open(path)).run()
    table = HudiTable.open(path)
    links = link_rows(engine, table_id_of(engine, table.uri) or 0)
    t = result.threshold_ms if result.threshold_ms is not None else threshold
    print(
        f"3. event-time compaction {result.instant} at T = {format_time_ms(t)}: "
        f"{len(result.plan.operations) if result.plan else 0} file groups, {len(links)} log files kept as links"
    )
    ro = table.read("ro")
    in_ro = {(r["event_id"], r["ts"]) for r in ro.select(["event_id", "ts"]).to_pylist()}
    old = [(r["event_id"], r["ts"]) for r in table.read("snapshot").select(["event_id", "ts"]).to_pylist()]
    old = [key for key in old if key[1] <= t]
    missing = [key for key in old if key not in in_ro]
    print(
        f"   read-optimized view: {len(old) - len(missing)} of the {len(old)} records with event time <= T "
        f"({ro.num_rows} rows in all){'' if missing else ' - all of them'}"
    )
    return True


def _clean(engine: Any, path: str) -> None:
    """KEEP_LATEST_FILE_VERSIONS with one version: the old slice goes, but not a log file a link shows."""
    table = HudiTable.open(path)
    before = table.read("snapshot").num_rows
    outcome = run_clean(engine, table, CleanPolicy(KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1), dry_run=False)
    deleted = outcome.deleted
    kept = sum(1 for r in outcome.reports if r.operation == "keep")
    table = HudiTable.open(path)
    findings = check_table(table, engine, "the quickstart store")
    print(
        f"4. clean {outcome.instant or '(nothing to clean)'} (keep the latest file version): {deleted} files "
        f"deleted, {kept} kept because a link shows them; snapshot {table.read('snapshot').num_rows} rows "
        f"(was {before}), `check` found {len(findings.findings) or 'nothing'}"
    )


def _sync_and_read_back(spark: Any, engine: Any, path: str, uri: str) -> None:
    """Sync into the metastore (without Spark's datasource properties: this Spark has no Hudi bundle to open a
    `hudi` table with), then read the properties with Spark SQL."""
    from hudi_meta.sync.recorded import SyncTarget, sync_recorded

    report = sync_recorded(engine, HudiTable.open(path), SyncTarget("hms", uri, as_datasource=False))
    print(f"5. synced into a Hive metastore at {uri} (Derby, in the work folder): {len(report.actions)} changes")
    rows = spark.sql("SHOW TBLPROPERTIES default.events_ro").collect()
    published = {str(r[0]): str(r[1]) for r in rows}
    print(f"   Spark SQL `SHOW TBLPROPERTIES default.events_ro` reads ({', '.join(report.tables)} alike):")
    for key in FRESHNESS_KEYS:
        print(f"   {key} = {published.get(key)}")


def serve_ui(url: str, port: int) -> None:
    """The web UI over the demo's store, read-only, until Ctrl-C."""
    from waitress import serve

    from hudi_meta.service.sockets import listening_socket
    from hudi_meta.web import create_app

    sock = listening_socket("127.0.0.1", port)
    bound = sock.getsockname()[1]
    print(f"6. web UI on http://127.0.0.1:{bound}/ (the table, its plan, file groups and link lineage; Ctrl-C stops)")
    print(f"   the same data as JSON: http://127.0.0.1:{bound}/api/v1/tables, metrics: /metrics", flush=True)
    serve(create_app({"STORE_URL": url}), sockets=[sock], threads=4, ident="hudi-meta")
