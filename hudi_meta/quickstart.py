"""`hudi-meta quickstart`: a demo table with late data, indexed, event-time compacted, on embedded
defaults (local Spark, a SQLite store in the work folder). Prints what each step did."""

from __future__ import annotations

import shutil
from pathlib import Path

from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.event_stream import StreamSpec, create_events_table, generate
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.queries import link_rows
from hudi_meta.index.registry import table_id_of
from hudi_meta.table.table import HudiTable
from hudi_meta.times import format_time_ms


def run_quickstart(workdir: Path, batches: int = 6, rows: int = 500, ui_port: int | None = 8080) -> None:
    """The demo end to end; with `ui_port` (None: exit at once) the web UI then serves the store until Ctrl-C."""
    from hudi_meta.spark import compaction, writer
    from hudi_meta.spark.session import spark_session

    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    path = str(workdir / "events")
    url = f"sqlite:///{workdir / 'hudi-meta.db'}"
    print(f"1. demo table {path} (MOR, table version 6, bucket index, event time `ts`)")
    create_events_table(path, buckets=2)
    spark = spark_session("local[2]", "hudi-meta-quickstart")
    watermarks = []
    for batch in generate(StreamSpec(batches=batches, rows_per_batch=rows, late_share=0.15, seed=1)):
        writer.write(spark.createDataFrame(batch.upserts), HudiTable.open(path), "upsert")
        if batch.deletes.num_rows:
            writer.write(spark.createDataFrame(batch.deletes), HudiTable.open(path), "delete")
        watermarks.append(batch.watermark_ms)
    print(f"   wrote {batches} batches of {rows} events (15% late) with updates and deletes")

    upgrade(url)
    engine = make_engine(url)
    stats = Indexer(engine, HudiTable.open(path)).run()
    print(f"2. indexed into {url}: {stats.blocks_added} log blocks, {stats.instants_added} instants")

    threshold = watermarks[len(watermarks) // 2]
    result = schedule_compaction(engine, HudiTable.open(path), ScheduleRequest(threshold_ms=threshold))
    if result.instant is None:
        print(f"3. nothing to compact: {result.reason}")
        return
    compaction.run(spark, HudiTable.open(path), result.instant)
    Indexer(engine, HudiTable.open(path)).run()
    table = HudiTable.open(path)
    links = link_rows(engine, table_id_of(engine, table.base_path) or 0)
    ro = table.read("ro")
    in_ro = {(r["event_id"], r["ts"]) for r in ro.select(["event_id", "ts"]).to_pylist()}
    old = [
        (r["event_id"], r["ts"])
        for r in table.read("snapshot").select(["event_id", "ts"]).to_pylist()
        if r["ts"] <= threshold
    ]
    missing = [key for key in old if key not in in_ro]
    print(
        f"3. event-time compaction {result.instant} at T = {format_time_ms(threshold)}: "
        f"{len(result.plan.operations) if result.plan else 0} file groups, {len(links)} log files kept as links"
    )
    print(
        f"   read-optimized view: {len(old) - len(missing)} of the {len(old)} records with event time <= T "
        f"({ro.num_rows} rows in all){'' if missing else ' - all of them'}"
    )
    engine.dispose()
    spark.stop()
    sync_to_local_metastore(workdir, url, path)
    print(f"   explore: hudi-meta --db {url} show plans|links|blocks {path}")
    print(f"            hudi-meta --db {url} freshness {path}")
    if ui_port is None:
        print(f"5. web UI: hudi-meta --db {url} serve (not started: --no-ui)")
        return
    serve_ui(url, ui_port)


def serve_ui(url: str, port: int) -> None:
    """The web UI over the demo's store, read-only, until Ctrl-C."""
    from waitress import serve

    from hudi_meta.cli.serve_command import listening_socket
    from hudi_meta.web import create_app

    sock = listening_socket("127.0.0.1", port)
    bound = sock.getsockname()[1]
    print(f"5. web UI on http://127.0.0.1:{bound}/ (the table, its plan, file groups and link lineage; Ctrl-C stops)")
    print(f"   the same data as JSON: http://127.0.0.1:{bound}/api/v1/tables, metrics: /metrics", flush=True)
    serve(create_app({"STORE_URL": url}), sockets=[sock], threads=4, ident="hudi-meta")


def sync_to_local_metastore(workdir: Path, url: str, path: str) -> None:
    """Start a Hive metastore from the pyspark jars in the work folder, sync the table into it and read the
    published properties back from the metastore."""
    from hudi_meta.cli.freshness_command import table_freshness
    from hudi_meta.sync.catalog import open_catalog
    from hudi_meta.sync.hive_sync import sync_table
    from hudi_meta.sync.local_servers import metastore
    from hudi_meta.sync.properties import FRESHNESS_KEYS

    server = metastore(workdir / "metastore").start()
    uri = f"thrift://127.0.0.1:{server.port}"
    try:
        catalog = open_catalog("hms", uri)
        report = sync_table(catalog, HudiTable.open(path), table_freshness(url, path))
        registered = catalog.get_table("default", "events_ro")
        catalog.close()
        print(f"4. synced into a Hive metastore at {uri} (Derby, in {workdir / 'metastore'}):")
        print(f"   {len(report.actions)} changes; {', '.join(report.tables)} now say:")
        for key in FRESHNESS_KEYS:
            print(f"   {key} = {registered.properties.get(key) if registered else None}")
    finally:
        server.stop()
