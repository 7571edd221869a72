"""`hudi-meta serve --config` as an operator runs it, against a real Hive metastore: two tables written while it
runs are indexed, compacted, cleaned and synced within a few rounds; `/metrics` and the UI show its steps;
SIGTERM during a compaction leaves the plan pending and the next start finishes it, nothing lost (reads equal
the model, ours and hudi-rs). Two services on one PostgreSQL store never work on a table at once, and when one
is killed with kill -9 the other takes its tables over once the lease expired."""

from __future__ import annotations

import datetime as dt
import secrets
import signal
import time
import urllib.request
from functools import partial
from pathlib import Path

import pyarrow as pa
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine

from hudi_meta.index.db import make_engine
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.models import metadata
from hudi_meta.index.registry import table_id_of
from hudi_meta.service.records import StepRecord, all_steps
from hudi_meta.storage.factory import normalize_uri
from hudi_meta.sync.catalog import open_catalog
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import WriteClient, create_table
from tests.conftest import S3Server
from tests.index.conftest import pg_database
from tests.metadata.helpers import check_readers
from tests.service.helpers import HOUR_MS, MINUTE_MS, NOW_MS, Groups, Served, hudi_rs, wait_for


def config(root: Path, store: str, tables: dict[str, str], catalog: str | None, lease: str = "4s") -> Path:
    """A service config over `tables` (path -> mode), T = now - 1 h, checked every half second."""
    database = f"svc_{secrets.token_hex(4)}"
    text = f'[store]\nurl = "{store}"\n[spark]\nengine = "local"\n[ui]\nport = 0\ntoken = "t0ken"\n'
    text += f'[service]\ninterval = "500ms"\nlease = "{lease}"\nretry_backoff = "1s"\nmax_backoff = "2s"\n'
    if catalog:
        text += f'[catalog]\nmode = "hms"\nuri = "{catalog}"\ndatabase = "{database}"\n'
    for table_path, mode in tables.items():
        text += f'[[tables]]\npath = "{table_path}"\ndata_latency = "1h"\nmode = "{mode}"\n'
        text += 'clean_policy = "KEEP_LATEST_FILE_VERSIONS"\nclean_retained = 1\n'
        text += f"sync = {'true' if catalog else 'false'}\n"
    out = root / "hudi-meta.toml"
    out.write_text(text)
    return out


def steps_of(engine: Engine, path: str) -> list[StepRecord]:
    table_id = table_id_of(engine, normalize_uri(path))
    return all_steps(engine, [table_id]) if table_id is not None else []


def done(engine: Engine, path: str, step: str, outcome: str, after: int = 0) -> StepRecord | None:
    """The newest record of `step` with `outcome` whose id is above `after`."""
    found = [s for s in steps_of(engine, path) if s.step == step and s.outcome == outcome and s.id > after]
    return found[-1] if found else None


def taken_over(engine: Engine, path: str, worker: str) -> bool:
    """`worker` completed a compaction of the table."""
    return any(s.worker == worker and s.outcome == "completed" for s in steps_of(engine, path))


def assert_reads(t: Groups) -> None:
    """Snapshot equals the model (ours and hudi-rs); RO holds every record below the watermark the index says."""
    assert t.read("snapshot") == t.model
    assert hudi_rs(t.path, "snapshot") == t.model
    ro = t.read("ro")
    assert hudi_rs(t.path, "ro") == ro
    if HudiTable.open(t.path).config.metadata_partitions:
        check_readers(t.path)  # the metadata table lists what storage holds


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return str(response.read().decode())


def test_serve_keeps_two_tables_compacted_cleaned_and_synced(tmp_path: Path, metastore_uri: str) -> None:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    # Hudi 1.x tables (the versions 1.1 and 1.0 write); the PostgreSQL and S3 tests below serve version 6
    # with Hudi's metadata table (Hudi's default), kept by every step: hudi-rs lists through it
    a = Groups(tmp_path / "a", 40, "svc_a", version=9, metadata_table=True)  # a compaction long enough to stop in it
    b = Groups(tmp_path / "b", 3, "svc_b", version=8, metadata_table=True)
    for t in (a, b):
        t.batch(5 * HOUR_MS)
        t.batch(4 * HOUR_MS)
        t.batch(10 * MINUTE_MS)  # after T = now - 1 h: kept as links
    cfg = config(tmp_path, store, {a.path: "symlink", b.path: "copy"}, metastore_uri)
    served = Served(cfg, tmp_path / "serve-1.log")
    engine = make_engine(store)
    try:
        for t in (a, b):
            for step, outcome in (("compaction", "completed"), ("clean", "cleaned"), ("sync", "ok")):
                wait_for(partial(done, engine, t.path, step, outcome), 120, f"{step} of {t.path}")
        first = {t.path: done(engine, t.path, "compaction", "completed") for t in (a, b)}
        # ingest while it runs: late data below T and fresh data after it
        for t in (a, b):
            t.batch(3 * HOUR_MS)
            t.batch(5 * MINUTE_MS)
        for t in (a, b):
            previous = first[t.path]
            assert previous is not None
            wait_for(partial(done, engine, t.path, "compaction", "completed", previous.id), 120, "recompaction")
            compacted = done(engine, t.path, "compaction", "completed", previous.id)
            assert compacted is not None
            wait_for(partial(done, engine, t.path, "sync", "ok", compacted.id), 120, "sync after it")

        # what an operator sees: metrics and the UI
        samples = {
            (s.name, s.labels["table"]): s.value
            for family in text_string_to_metric_families(get(f"{served.url}/metrics"))
            for s in family.samples
        }
        for name in ("svc_a", "svc_b"):
            assert samples[("hudi_meta_service_last_compaction_success", name)] == 1
            assert samples[("hudi_meta_service_last_sync_success", name)] == 1
            assert samples[("hudi_meta_service_failing", name)] == 0
            assert samples[("hudi_meta_last_sync_success", name)] == 1
        table_id = table_id_of(engine, HudiTable.open(a.path).base_path)
        page = get(f"{served.url}/tables/{table_id}")
        assert 'id="steps"' in page and "<td>compaction</td>" in page and "<td>sync</td>" in page
        overview = get(f"{served.url}/")
        assert overview.count('class="badge idle"') + overview.count('class="badge planning"') >= 1

        # the metastore says what the index says
        catalog = open_catalog("hms", metastore_uri)
        try:
            for t, name in ((a, "svc_a"), (b, "svc_b")):
                api = get(f"{served.url}/api/v1/tables/{table_id_of(engine, HudiTable.open(t.path).base_path)}")
                database = next(line for line in cfg.read_text().splitlines() if line.startswith("database"))
                ro = catalog.get_table(database.split('"')[1], f"{name}_ro")
                assert ro is not None
                watermark = ro.properties["hoodie.ro.event.time.watermark.ms"]
                assert f'"watermark_ms":{watermark}' in api.replace(" ", "")
        finally:
            catalog.close()
        for t in (a, b):
            assert_reads(t)
            links = [p for p in Path(t.path).rglob(".*.log.*") if p.is_symlink()]
            assert (len(links) > 0) == (t is a)  # symlink mode makes links; copy mode copies

        # SIGTERM in the middle of a compaction of the 40 file groups
        pending = a.batch(2 * HOUR_MS)  # below T: the next round compacts every file group
        assert pending
        before = max(s.id for s in steps_of(engine, a.path))
        running = wait_for(
            lambda: next(
                (
                    s
                    for s in steps_of(engine, a.path)
                    if s.step == "compaction" and s.id > before and s.status == "running"
                ),
                None,
            ),
            120,
            "a running compaction",
            every=0.01,
        )
        assert served.stop(signal.SIGTERM) == 0
        assert "SIGTERM: stopping after the current step" in served.output()
        assert "hudi-meta service: stopped" in served.output()
        stopped = next(s for s in steps_of(engine, a.path) if s.id == running.id)
        assert (stopped.status, stopped.outcome) == ("pending", "abandoned"), stopped
        instant = stopped.detail["instant"]
        timeline = HudiTable.open(a.path).timeline
        assert [i.requested_time for i in timeline.pending_compactions()] == [instant]
        assert_reads(a)  # nothing lost while the plan is pending

        # a restart finishes it first
        again = Served(cfg, tmp_path / "serve-2.log")
        finished = wait_for(
            lambda: next(
                (
                    s
                    for s in steps_of(engine, a.path)
                    if s.step == "compaction" and s.outcome == "completed" and s.detail.get("instant") == instant
                ),
                None,
            ),
            120,
            "the abandoned compaction finished",
        )
        assert finished.worker == again.worker != stopped.worker
        assert again.stop() == 0
        assert not HudiTable.open(a.path).timeline.pending_compactions()
        for t in (a, b):
            assert_reads(t)
        failed = [s for t in (a, b) for s in steps_of(engine, t.path) if s.status == "failed"]
        assert not failed, failed
    finally:
        if served.process.poll() is None:
            served.stop(signal.SIGKILL)
        engine.dispose()


def test_two_services_on_postgresql_share_no_table_and_take_over_after_kill_9(tmp_path: Path) -> None:
    tables = [Groups(tmp_path / name, 2, f"pg_{name}") for name in ("x", "y")]
    for t in tables:
        t.batch(5 * HOUR_MS)
        t.batch(4 * HOUR_MS)
        t.batch(10 * MINUTE_MS)
    with pg_database() as store:
        upgrade(store)
        cfg = config(tmp_path, store, {t.path: "symlink" for t in tables}, None, lease="3s")
        engine = make_engine(store)
        first = Served(cfg, tmp_path / "p1.log")
        second: Served | None = None
        try:
            for t in tables:
                wait_for(partial(done, engine, t.path, "compaction", "completed"), 120, f"compaction of {t.path}")
            second = Served(cfg, tmp_path / "p2.log")
            w1, w2 = first.worker, second.worker
            time.sleep(3)  # both running: the second finds every table leased
            assert {s.worker for t in tables for s in steps_of(engine, t.path)} == {w1}
            killed_at = dt.datetime.now(dt.UTC)
            assert first.stop(signal.SIGKILL) == -signal.SIGKILL
            for t in tables:
                t.batch(2 * HOUR_MS)  # work for whoever holds the table now
            for t in tables:
                wait_for(partial(taken_over, engine, t.path, w2), 60, f"{w2} taking over {t.path}")
            assert second.stop() == 0
            for t in tables:
                records = steps_of(engine, t.path)
                by_second = [s for s in records if s.worker == w2]
                assert by_second and by_second[0].started_at >= killed_at
                last_of_first = max(s.started_at for s in records if s.worker == w1)
                assert by_second[0].started_at - last_of_first >= dt.timedelta(seconds=1)  # the lease ran out first
                for earlier, later in zip(records, records[1:], strict=False):
                    if earlier.worker != later.worker and earlier.ended_at is not None:
                        assert later.started_at >= earlier.ended_at, (earlier, later)  # never at once
                assert not HudiTable.open(t.path).timeline.pending_compactions()
                assert_reads(t)
        finally:
            for s in (first, second):
                if s is not None and s.process.poll() is None:
                    s.stop(signal.SIGKILL)
            engine.dispose()


def test_serve_on_s3_keeps_credentials_out_of_logs_store_and_ui(tmp_path: Path, s3_server: S3Server) -> None:
    """A table on S3 whose credentials and endpoint come from the configuration's storage options: the service
    compacts it (copy mode), and the secret appears in no log line, no row of the store and no page or API
    answer of the UI."""
    uri = f"s3://{s3_server.bucket()}/events"
    create_table(uri, "s3_events", ["id"], "ts", ["region"], event_time_field="ts", options=s3_server.options)
    groups: dict[str, str] = {}
    for seconds in (5 * HOUR_MS, 4 * HOUR_MS, 10 * MINUTE_MS):
        w = WriteClient(HudiTable.open(uri, s3_server.options))
        w.begin()
        ts = NOW_MS - seconds
        data = pa.table({"id": [f"k{seconds}"], "ts": pa.array([ts], pa.int64()), "region": ["eu"], "amount": [1.0]})
        if "region=eu" in groups:
            w.append_log("region=eu", groups["region=eu"], data, [])
        else:
            groups["region=eu"] = w.write_base_file("region=eu", data).file_id
        w.commit()
    store = f"sqlite:///{tmp_path / 'store.db'}"
    o = s3_server.options
    options = f'{{ key = "{o["key"]}", secret = "{o["secret"]}", endpoint_url = "{o["endpoint_url"]}" }}'
    cfg = tmp_path / "hudi-meta.toml"
    cfg.write_text(
        f'[store]\nurl = "{store}"\n[spark]\nengine = "local"\n[ui]\nport = 0\n[service]\ninterval = "500ms"\n'
        f'[[tables]]\npath = "{uri}"\ndata_latency = "1h"\nmode = "copy"\nsync = false\nstorage_options = {options}\n'
    )
    served = Served(cfg, tmp_path / "serve.log", env={"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""})
    engine = make_engine(store)
    try:
        wait_for(partial(done, engine, uri, "compaction", "completed"), 120, "the compaction on S3", every=0.2)
        secret = str(o["secret"])
        pages = [get(f"{served.url}{p}") for p in ("/", "/tables/1", "/tables/1/file-groups", "/metrics")]
        pages += [get(f"{served.url}/api/v1/tables/1/steps"), get(f"{served.url}/api/v1/tables")]
        assert all(secret not in page for page in pages)
        with engine.connect() as conn:
            for table in metadata.sorted_tables:
                for row in conn.execute(table.select()):
                    assert secret not in repr(tuple(row)), table.name
            assert conn.exec_driver_sql("SELECT base_path FROM hudi_table").scalar_one() == uri
    finally:
        assert served.stop() == 0
        engine.dispose()
    assert secret not in served.output() and "hudi-meta service: stopped" in served.output()
    assert not HudiTable.open(uri, o).timeline.pending_compactions()
