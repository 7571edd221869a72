"""One store for the UI tests, built once per session and never changed by a read test: a table compacted three
times in symlink mode then cleaned, at table version 9 (links removed by the clean, late data), a copy-mode table
whose name and partition hold HTML (with a pending plan), and Java-written fixture tables (v6 empty, v8, v9) indexed
as they are. Tests that act on tables work on copies (`writable_store`). A second store (`fresh_store`) holds
tables with event times relative to now, one on time, one late and one stalled."""

from __future__ import annotations

import datetime as dt
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
from flask import Flask
from flask.testing import FlaskClient
from hudi_meta.web import create_app
from sqlalchemy import Engine

from hudi_meta.clean.run import run_clean
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.format.links import LinkMode
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.registry import table_id_of
from hudi_meta.index.sync_runs import SyncRun, record_sync_run
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import now_ms
from hudi_meta.timeline.instant import instant_epoch_ms
from hudi_meta.write.clean_plan import KEEP_LATEST_COMMITS, CleanPolicy
from tests.compaction.core import CoreTable, TwoRegions, at, compact_three_times, region_rows
from tests.conftest import FIXTURES_DIR

EVIL_NAME = '<script>alert("name")</script>'
EVIL_PARTITION = "region=<img src=x onerror=alert(1)>"
JAVA_TABLES = {
    "v6_empty": "sample_table/mor/parquet/v6_empty.zip",
    "v8_trips": "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip",
    "v9_txns": "sample_table/mor/avro/v9_txns_simple_meta.zip",
}
TOKEN = "s3cret-token"


class EvilTable(CoreTable):
    partition = EVIL_PARTITION


@dataclass(frozen=True)
class UiStore:
    root: Path
    url: str
    ids: dict[str, int]  # core, evil, and the JAVA_TABLES keys
    paths: dict[str, str]
    compactions: tuple[str, str, str]  # of core
    clean: str  # the clean of core
    late_instant: str  # core: a write below the last threshold
    pending: str  # evil: a plan not run


def build_store(root: Path, java_root: Path) -> UiStore:
    url = f"sqlite:///{root / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    core = TwoRegions(root / "core", version=9)  # what Hudi 1.1 writes; evil stays at version 6
    compactions = compact_three_times(core, engine)
    # one record below T3 = 300 s (late data), one above it, in the same block
    late = core.write(region_rows("eu", ("h", 50, 8.0), ("i", 400, 9.0)))
    now = instant_epoch_ms(compactions[2]) + 3_600_000
    policy = CleanPolicy(KEEP_LATEST_COMMITS, commits_retained=2)
    cleaned = run_clean(engine, core.table, policy, dry_run=False, now_ms=now)
    assert cleaned.instant is not None

    evil = EvilTable(root / "evil", name=EVIL_NAME)
    evil.write(region_rows("eu", ("a", 1, 1.0)))
    evil.write(region_rows("eu", ("a", 3, 1.5)))
    evil.write(region_rows("eu", ("b", 100, 2.0)))
    evil.compact(engine, at(10), mode=LinkMode.COPY)
    evil.write(region_rows("eu", ("c", 20, 3.0)))
    evil.write(region_rows("eu", ("d", 200, 4.0)))
    pending = schedule_compaction(engine, evil.table, ScheduleRequest(threshold_ms=at(50), mode=LinkMode.COPY))
    assert pending.instant is not None

    paths = {"core": core.path, "evil": evil.path}
    for key, zip_path in JAVA_TABLES.items():
        archive = FIXTURES_DIR / zip_path
        paths[key] = str(java_root / archive.relative_to(FIXTURES_DIR).with_suffix("") / archive.stem)
    for path in paths.values():
        Indexer(engine, HudiTable.open(path)).run()
    ids = {key: table_id_of(engine, HudiTable.open(path).base_path) for key, path in paths.items()}
    engine.dispose()
    assert all(i is not None for i in ids.values())
    return UiStore(
        root,
        url,
        {k: int(v) for k, v in ids.items() if v is not None},
        paths,
        compactions,
        cleaned.instant,
        late.instant,
        pending.instant,
    )


@pytest.fixture(scope="session")
def ui_store(tmp_path_factory: pytest.TempPathFactory, fixture_tables_dir: Path) -> UiStore:
    return build_store(tmp_path_factory.mktemp("ui"), fixture_tables_dir)


@pytest.fixture(scope="session")
def ui_engine(ui_store: UiStore) -> Iterator[Engine]:
    engine = make_engine(ui_store.url)
    yield engine
    engine.dispose()


@pytest.fixture
def app(ui_store: UiStore) -> Iterator[Flask]:
    """The read-only UI (no token) over the shared store."""
    app = create_app({"STORE_URL": ui_store.url, "TESTING": True})
    yield app
    app.extensions["hudi_meta.engine"].dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def writable_store(ui_store: UiStore, tmp_path: Path) -> UiStore:
    """A copy of the whole store and its own tables (core v9, evil v6), for tests that act (Java tables are
    read-only)."""
    root = tmp_path / "ui"
    shutil.copytree(ui_store.root, root, symlinks=True)
    url = f"sqlite:///{root / 'store.db'}"
    engine = make_engine(url)
    with engine.begin() as conn:
        for key in ("core", "evil"):
            old, new = ui_store.paths[key], str(root / key)
            conn.exec_driver_sql("UPDATE hudi_table SET base_path = ? WHERE base_path = ?", (new, old))
    engine.dispose()
    paths = {**ui_store.paths, "core": str(root / "core"), "evil": str(root / "evil")}
    return UiStore(
        root, url, ui_store.ids, paths, ui_store.compactions, ui_store.clean, ui_store.late_instant, ui_store.pending
    )


@pytest.fixture
def token_app(writable_store: UiStore) -> Iterator[Flask]:
    app = create_app({"STORE_URL": writable_store.url, "TESTING": True, "UI_TOKEN": TOKEN})
    yield app
    app.extensions["hudi_meta.engine"].dispose()


def timeline_dir(base_path: str) -> Path:
    """The folder of a table's instant files: `.hoodie/timeline/` on versions 8 and 9, `.hoodie/` on 6."""
    hoodie = Path(base_path, ".hoodie")
    return hoodie / "timeline" if (hoodie / "timeline").is_dir() else hoodie


HOUR_MS = 3_600_000


@dataclass(frozen=True)
class FreshStore:
    """Tables whose event times are relative to now, one per freshness status (see `build_fresh_store`)."""

    root: Path
    url: str
    ids: dict[str, int]  # on_time, late, stalled
    paths: dict[str, str]
    compactions: dict[str, str]  # the event-time compaction of each table
    thresholds: dict[str, int]  # its T
    written: dict[str, list[tuple[str, int]]]  # (id, event time ms) of each write, in order
    syncs: int  # sync runs recorded on `late`: one ok, one failed


def now_rows(*records: tuple[str, int]) -> pa.Table:
    """Records (id, event time in epoch ms) of region eu."""
    return pa.table(
        {
            "id": [r[0] for r in records],
            "ts": pa.array([r[1] for r in records], pa.int64()),
            "region": ["eu"] * len(records),
            "amount": [1.0] * len(records),
        }
    )


def build_fresh_store(root: Path) -> FreshStore:
    """Three version-9 tables, each compacted once at T = now - D (so D, the data latency, is what the plan was
    scheduled with): `on_time` (D = 1 h, nothing late: lag ~ D), `late` (D = 1 h, then a record 5 h old:
    lag 5 h > 2 D, right after a compaction) and `stalled` (D = 1 s, and 3 s pass: lag > 2 D, and no compaction
    since). `late` also has two sync runs (ok, failed)."""
    url = f"sqlite:///{root / 'fresh.db'}"
    upgrade(url)
    engine = make_engine(url)
    now = now_ms()
    latency = {"on_time": HOUR_MS, "late": HOUR_MS, "stalled": 1000}
    writes = {
        "on_time": [
            [("a", now - 3 * HOUR_MS)],
            [("b", now - 2 * HOUR_MS), ("c", now - 90 * 60_000)],
            [("d", now - 60_000)],
        ],
        "late": [[("a", now - 3 * HOUR_MS)], [("b", now - 2 * HOUR_MS)], [("c", now - 60_000)]],
        "stalled": [[("a", now - 30_000)], [("b", now - 20_000)], [("c", now + 60_000)]],
    }
    tables, compactions, thresholds, written = {}, {}, {}, {}
    for key, batches in writes.items():
        t = CoreTable(root / key, name=key, version=9)
        for batch in batches:
            t.write(now_rows(*batch))
        threshold = now_ms() - latency[key]
        compactions[key] = t.compact(engine, threshold)
        thresholds[key] = threshold
        written[key] = [r for batch in batches for r in batch]
        tables[key] = t
    late = ("z", now - 5 * HOUR_MS)
    tables["late"].write(now_rows(late))
    written["late"].append(late)
    for t in tables.values():
        Indexer(engine, t.table).run()
    ids = {key: table_id_of(engine, t.table.base_path) for key, t in tables.items()}
    late_id = ids["late"]
    assert late_id is not None
    started = dt.datetime.now(dt.UTC)
    record_sync_run(engine, late_id, SyncRun("hms", "thrift://catalog:9083", started, 120, "ok", 3, ""))
    record_sync_run(engine, late_id, SyncRun("hms", "thrift://catalog:9083", started, 80, "failed", 0, "refused"))
    engine.dispose()
    time.sleep(3)  # `stalled`: 3 s > 2 D = 2 s since its compaction
    return FreshStore(
        root,
        url,
        {k: int(v) for k, v in ids.items() if v is not None},
        {k: t.path for k, t in tables.items()},
        compactions,
        thresholds,
        written,
        2,
    )


@pytest.fixture(scope="session")
def fresh_store(tmp_path_factory: pytest.TempPathFactory) -> FreshStore:
    return build_fresh_store(tmp_path_factory.mktemp("fresh"))


@pytest.fixture
def fresh_client(fresh_store: FreshStore) -> Iterator[FlaskClient]:
    app = create_app({"STORE_URL": fresh_store.url, "TESTING": True})
    yield app.test_client()
    app.extensions["hudi_meta.engine"].dispose()
