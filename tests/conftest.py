"""Shared test fixtures: the Hudi fixture tables (Java-written), unzipped once per session; a SparkSession;
a migrated SQLite store (`engine`; tests/index overrides it with one per database)."""

import socket
import time
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hudi_meta.spark.session import spark_session
from hypothesis import settings
from pyspark.sql import SparkSession
from sqlalchemy import Engine

from hudi_meta.demo.local_servers import LocalServer, metastore
from hudi_meta.index.db import make_engine
from hudi_meta.index.migrate import upgrade

FIXTURES_DIR = Path(__file__).resolve().parent / "data" / "hudi-tables"  # Java-written tables (see data/README.md)

# no per-example deadline: speed is measured by bench/, not by timed assertions, and a loaded 2-core CI machine
# made examples miss Hypothesis's 200 ms (tests that set their own settings keep them)
settings.register_profile("hudi-meta", deadline=None)
settings.load_profile("hudi-meta")


@pytest.fixture(scope="session")
def fixture_tables_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Root holding every fixture zip unzipped into `<root>/<relative path without .zip>/`.

    A table's base path is `<root>/<relative path>/<zip stem>/`; macOS `__MACOSX/` entries are skipped.
    """
    if not FIXTURES_DIR.is_dir():
        raise RuntimeError(f"fixture tables not found at {FIXTURES_DIR}: the checkout is incomplete")
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


@dataclass(frozen=True)
class S3Server:
    """An S3 API server on loopback (moto in server mode, as s3fs tests itself): its endpoint, the credentials
    it takes, and the storage options and environment a client needs."""

    endpoint: str
    key: str = "hudi-meta-test"
    secret: str = "hudi-meta-secret"
    region: str = "us-east-1"

    @property
    def options(self) -> dict[str, object]:
        """fsspec (s3fs) storage options."""
        return {
            "key": self.key,
            "secret": self.secret,
            "endpoint_url": self.endpoint,
            "client_kwargs": {"region_name": self.region},
        }

    @property
    def env(self) -> dict[str, str]:
        """The standard variables every S3 tool honours."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.key,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_REGION": self.region,
        }

    def bucket(self) -> str:
        """A new empty bucket; its name."""
        import boto3

        name = f"t-{uuid.uuid4().hex[:20]}"
        client = boto3.client(
            "s3", endpoint_url=self.endpoint, aws_access_key_id=self.key, aws_secret_access_key=self.secret,
            region_name=self.region,
        )  # fmt: skip
        client.create_bucket(Bucket=name)
        client.close()
        return name


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's ThreadedMotoServer on 127.0.0.1, once per run (it honours S3 conditional writes)."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield S3Server(f"http://127.0.0.1:{port}")
    server.stop()


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    """A fresh SQLite store, migrated to head."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    yield engine
    engine.dispose()


def pytest_report_header(config: pytest.Config) -> str:
    """The model test's seed in pytest's header (here, not in tests/model/, so that a whole run shows it too):
    any failing run can be replayed with HUDI_META_MODEL_SEED."""
    from tests.model.test_model import EXAMPLES, SEED

    return f"hudi-meta model test: HUDI_META_MODEL_SEED={SEED} HUDI_META_MODEL_EXAMPLES={EXAMPLES}"


@pytest.fixture
def los_angeles(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process in America/Los_Angeles (7 or 8 hours behind UTC) for the test: what `LOCAL` means to a table."""
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()
