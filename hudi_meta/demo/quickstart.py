"""`hudi-meta quickstart`: the whole mission on embedded defaults, printing what each step showed.

A Hive metastore started from the pyspark jars (Derby, in the work folder) and a local Spark session that uses
it; a demo table with late data written by Spark; the index in a SQLite store; an event-time compaction (log
files after T kept as symlinks); a clean that deletes the old slice but every file a link still shows; the
freshness synced into the metastore and read back through Spark SQL; then the web UI on the store until
Ctrl-C. Everything lands in the work folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hudi_meta.check.index_drift import check_table
from hudi_meta.clean.run import run_clean
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.demo.event_stream import StreamSpec, create_events_table, generate
from hudi_meta.demo.local_servers import metastore
from hudi_meta.errors import HudiMetaError
from hudi_meta.format.config_keys import DATA_LATENCY
from hudi_meta.index.db import make_engine
from hudi_meta.index.freshness_inputs import indexed_freshness
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.queries import link_rows
from hudi_meta.index.registry import table_id_of
from hudi_meta.sync.properties import FRESHNESS_KEYS
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import format_duration_ms, format_time_ms, now_ms
from hudi_meta.write.clean_plan import KEEP_LATEST_FILE_VERSIONS, CleanPolicy
from hudi_meta.write.writer import CURRENT_VERSION

MARKER = ".hudi-meta-quickstart"  # in every work folder the quickstart made: the only folders it replaces
INTERVAL_MS = 5 * 60_000  # event time each batch covers: six batches are the last half hour
DATA_LATENCY_MS = 10 * 60_000  # T = now - 10 min: the last batch's log files stay after T, as links


def prepare_workdir(workdir: Path, overwrite: bool) -> None:
    """Create the work folder; an existing one is replaced only when asked and only if a quickstart made it (a
    `serve` may still read its store, and a folder of the user's own must never be deleted)."""
    if workdir.exists() and any(workdir.iterdir()):
        if not (workdir / MARKER).exists():
            raise HudiMetaError(f"{workdir} exists and was not made by the quickstart: give another --workdir")
        if not overwrite:
            raise HudiMetaError(
                f"{workdir} holds an earlier quickstart (stop a `serve` still using it): "
                "give --overwrite to replace it, or another --workdir"
            )
        print(f"replacing the earlier quickstart in {workdir}")
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / MARKER).write_text("made by hudi-meta quickstart; --overwrite replaces this folder\n")


def run_quickstart(
    workdir: Path, batches: int = 6, rows: int = 500, ui_port: int | None = 8080, overwrite: bool = False
) -> None:
    """The demo end to end; with `ui_port` (None: exit at once) the web UI then serves the store until Ctrl-C."""
    started = time.monotonic()
    prepare_workdir(workdir, overwrite)
    path, url = str(workdir / "events"), f"sqlite:///{workdir / 'hudi-meta.db'}"
    print("0. starting a Hive metastore (Derby, in the work folder) and a local Spark session ...", flush=True)
    server = metastore(workdir / "metastore").start()
    uri = f"thrift://127.0.0.1:{server.port}"
    try:
        spark = _spark(workdir, uri)
        took = time.monotonic() - started
        print(f"   ready after {took:.0f} s (Spark's own log: {workdir / 'spark.log'})", flush=True)
        arrivals = _write(spark, path, batches, rows)
        upgrade(url)
        engine = make_engine(url)
        stats = Indexer(engine, HudiTable.open(path)).run()
        print(f"2. indexed into {url}: {stats.blocks_added} log blocks, {stats.instants_added} instants", flush=True)
        if not _compact(spark, engine, path, arrivals):
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
    """Local Spark using the metastore (Spark SQL reads what the sync publishes), its Hive scratch in `workdir`;
    the JVM's own stderr (its start-up banner, Spark's log) goes to `workdir/spark.log`, not between the steps."""
    from hudi_meta.spark.session import spark_session

    hive = workdir / "spark-hive"
    with _stderr_to(workdir / "spark.log"):
        return _session(spark_session, hive, metastore_uri)


@contextlib.contextmanager
def _stderr_to(log: Path) -> Iterator[None]:
    """File descriptor 2 points at `log` while the JVM starts (a child inherits it), then back at the terminal."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with log.open("ab") as f:
            os.dup2(f.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _session(spark_session: Any, hive: Path, metastore_uri: str) -> Any:
    return spark_session(
        "local[2]",
        "hudi-meta-quickstart",
        spark__sql__catalogImplementation="hive",
        spark__hadoop__hive__metastore__uris=metastore_uri,
        spark__sql__warehouse__dir=str(hive / "warehouse"),
        spark__hadoop__hive__exec__local__scratchdir=str(hive / "scratch"),
        spark__hadoop__hive__downloaded__resources__dir=str(hive / "resources"),
    )


@dataclass(frozen=True)
class Arrival:
    """When the demo wrote a record version: its batch's start in event time (older event times arrived late)."""

    batch: int
    batch_start_ms: int


def _write(spark: Any, path: str, batches: int, rows: int) -> dict[tuple[str, int], Arrival]:
    """The demo table from an event stream that ends now, with late data, updates and deletes; when each record
    version (event_id, ts) arrived."""
    from hudi_meta.spark import writer
    from hudi_meta.spark.compat import arrow_dataframe

    print(
        f"1. demo table {path} (MOR, table version {CURRENT_VERSION}, bucket index, event time `ts`, data latency "
        f"{format_duration_ms(DATA_LATENCY_MS)}): an event stream of the last half hour, written by Spark",
        flush=True,
    )
    latency = {DATA_LATENCY.name: str(DATA_LATENCY_MS)}  # the table's own data latency: schedules and the UI use it
    create_events_table(path, buckets=2, version=CURRENT_VERSION, metadata_table=True, extra_props=latency)
    spec = StreamSpec(
        batches=batches,
        rows_per_batch=rows,
        start_ms=now_ms() - batches * INTERVAL_MS,
        batch_interval_ms=INTERVAL_MS,
        late_share=0.15,
        mean_lateness_ms=60_000,
        seed=1,
    )
    arrivals: dict[tuple[str, int], Arrival] = {}
    for batch in generate(spec):
        begin = batch.watermark_ms - INTERVAL_MS
        times = batch.upserts.column("ts").to_pylist()
        for key, ts in zip(batch.upserts.column("event_id").to_pylist(), times, strict=True):
            arrivals[(key, ts)] = Arrival(batch.number, begin)
        instant = writer.write(arrow_dataframe(spark, batch.upserts), HudiTable.open(path), "upsert")
        if batch.deletes.num_rows:
            writer.write(arrow_dataframe(spark, batch.deletes), HudiTable.open(path), "delete")
        late = sum(1 for ts in times if ts < begin)
        print(
            f"   batch {batch.number + 1}/{batches}: {len(times)} events of {format_time_ms(begin)[11:16]}-"
            f"{format_time_ms(batch.watermark_ms)[11:16]} UTC ({late} late, up to "
            f"{format_duration_ms(begin - min(times))} before), {batch.deletes.num_rows} deletes: deltacommit "
            f"{instant.requested_time}",
            flush=True,
        )
    return arrivals


def _compact(spark: Any, engine: Any, path: str, arrivals: dict[tuple[str, int], Arrival]) -> bool:
    from hudi_meta.spark import compaction

    result = schedule_compaction(engine, HudiTable.open(path), ScheduleRequest())  # T = now - the table's latency
    if result.instant is None:
        print(f"3. nothing to compact: {result.reason}")
        return False
    compaction.run(spark, HudiTable.open(path), result.instant)
    Indexer(engine, HudiTable.open(path)).run()
    table = HudiTable.open(path)
    links = link_rows(engine, table_id_of(engine, table.uri) or 0)
    assert result.threshold_ms is not None  # an event-time plan always has its T
    t = result.threshold_ms
    merged = sum(len(op.delta_file_paths) for op in result.plan.operations) if result.plan else 0
    print(
        f"3. event-time compaction {result.instant} at T = now - {format_duration_ms(DATA_LATENCY_MS)} "
        f"= {format_time_ms(t)}: {len(result.plan.operations) if result.plan else 0} file groups, {merged} log "
        f"files merged into new base files, {len(links)} log files after T kept as links",
        flush=True,
    )
    ro = {(r["event_id"], r["ts"]) for r in table.read("ro").select(["event_id", "ts"]).to_pylist()}
    snapshot = [(r["event_id"], r["ts"]) for r in table.read("snapshot").select(["event_id", "ts"]).to_pylist()]
    in_links = [key for key in snapshot if key not in ro]
    late = [key for key in in_links if key[1] < arrivals[key].batch_start_ms]
    oldest = format_time_ms(min(ts for _, ts in in_links)) if in_links else "-"
    print(
        f"   the links hold {len(in_links)} records the read-optimized view does not have yet, the oldest at "
        f"{oldest} (after T), {len(late)} of them late arrivals"
    )
    old = [key for key in snapshot if key[1] <= t]
    missing = [key for key in old if key not in ro]
    print(
        f"   read-optimized view: {len(old) - len(missing)} of the snapshot view's {len(old)} records with event "
        f"time <= T{' - all of them' if not missing else ''} (read-optimized view {len(ro)} rows, snapshot view "
        f"{len(snapshot)} rows)"
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
    fresh = indexed_freshness(engine, HudiTable.open(path))
    lag = format_duration_ms(fresh.lag_ms) if fresh.lag_ms is not None else "-"
    print(
        f"   freshness: the read-optimized view holds all data before {_shown_time(fresh.watermark_ms)}, "
        f"lag {lag} (`hudi-meta freshness`)"
    )


def _shown_time(ms: int | None) -> str:
    return format_time_ms(ms) if ms is not None else "-"


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
