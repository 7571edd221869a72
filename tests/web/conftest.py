"""One store for the UI tests, built once per session and never changed by a read test: a table compacted three
times in symlink mode then cleaned, at table version 9 (links removed by the clean, late data), a copy-mode table
whose name and partition hold HTML (with a pending plan), and Java-written fixture tables (v6 empty, v8, v9) indexed
as they are. Tests that act on tables work on copies (`writable_store`)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hudi_meta.web import create_app
from sqlalchemy import Engine

from hudi_meta.clean.plan import KEEP_LATEST_COMMITS, CleanPolicy
from hudi_meta.clean.run import run_clean
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.format.links import LinkMode
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.registry import table_id_of
from hudi_meta.table.instant import instant_epoch_ms
from hudi_meta.table.table import HudiTable
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
