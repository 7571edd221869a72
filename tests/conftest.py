"""Shared test fixtures: the Hudi fixture tables (Java-written), unzipped once per session; a SparkSession;
a migrated SQLite store (`engine`; tests/index overrides it with one per database)."""

import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hudi_meta.spark.session import spark_session
from pyspark.sql import SparkSession
from sqlalchemy import Engine

from hudi_meta.index.db import make_engine
from hudi_meta.index.migrate import upgrade
from hudi_meta.sync.local_servers import LocalServer, metastore

FIXTURES_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "hudi-tables"


@pytest.fixture(scope="session")
def fixture_tables_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Root holding every fixture zip unzipped into `<root>/<relative path without .zip>/`.

    A table's base path is `<root>/<relative path>/<zip stem>/`; macOS `__MACOSX/` entries are skipped.
    """
    if not FIXTURES_DIR.is_dir():
        raise RuntimeError(f"fixture tables not found at {FIXTURES_DIR}: check out shared/ beside the repo")
    root = tmp_path_factory.mktemp("hudi-tables")
    for archive in sorted(FIXTURES_DIR.rglob("*.zip")):
        dest = root / archive.relative_to(FIXTURES_DIR).with_suffix("")
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(dest, [name for name in zf.namelist() if not name.startswith("__MACOSX/")])
    return root


def table_zips() -> list[Path]:
    """Every fixture table zip, for parametrizing (collected before any fixture runs)."""
    return sorted(FIXTURES_DIR.rglob("*.zip"))


def table_id(archive: Path) -> str:
    return str(archive.relative_to(FIXTURES_DIR).with_suffix(""))


@pytest.fixture(scope="session")
def fixture_table(fixture_tables_dir: Path):  # type: ignore[no-untyped-def]
    """A function mapping a fixture zip to the base path of its unzipped table."""

    def base_path(archive: Path) -> Path:
        return fixture_tables_dir / archive.relative_to(FIXTURES_DIR).with_suffix("") / archive.stem

    return base_path


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    """One SparkSession (local[2]) for the whole test run."""
    local_dir = tmp_path_factory.mktemp("spark-local")
    session = spark_session("local[2]", "hudi-meta-tests", spark__local__dir=str(local_dir))
    yield session
    session.stop()


@pytest.fixture(scope="session")
def metastore_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """A real Hive 2.3 metastore on Derby from the pyspark jars, once per run (sync, UI and service tests)."""
    server = metastore(tmp_path_factory.mktemp("metastore")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def metastore_uri(metastore_server: LocalServer) -> str:
    return f"thrift://127.0.0.1:{metastore_server.port}"


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    """A fresh SQLite store, migrated to head."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    yield engine
    engine.dispose()
