"""Metadata-store fixtures: SQLite files and throwaway PostgreSQL databases, upgraded through Alembic.

PostgreSQL is required, never skipped: the admin URL (default below, override with $HUDI_META_TEST_PG)
must reach a server where the user may create databases. Request `db_url` to run a test on both backends.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, make_url, pool, text
from sqlalchemy.exc import DBAPIError

from hudi_meta.index.db import make_engine
from hudi_meta.index.migrate import upgrade

PG_ADMIN_ENV = "HUDI_META_TEST_PG"
PG_ADMIN_URL = os.environ.get(PG_ADMIN_ENV, "postgresql+psycopg://root@127.0.0.1:5432/postgres")


@contextmanager
def pg_database(template: str | None = None) -> Iterator[str]:
    """Create a uniquely named database (optionally copied from `template`), yield its URL, drop it."""
    name = f"hudi_meta_test_{secrets.token_hex(8)}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT", poolclass=pool.NullPool)
    try:
        error: DBAPIError | None = None
        try:
            with admin.connect() as conn:
                copy = f' TEMPLATE "{template}"' if template else ""
                conn.execute(text(f'CREATE DATABASE "{name}"{copy}'))
        except DBAPIError as exc:
            error = exc
        if error is not None:  # failed outside the handler: no chained traceback in the report
            pytest.fail(
                f"cannot create a PostgreSQL test database through {PG_ADMIN_URL}: {error.orig}\n"
                f"Start PostgreSQL there, or set ${PG_ADMIN_ENV} to the admin URL of a server where the user "
                "may CREATE DATABASE.",
                pytrace=False,
            )
        try:
            yield make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
        finally:
            with admin.connect() as conn:
                conn.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        " WHERE datname = :name AND pid <> pg_backend_pid()"
                    ),
                    {"name": name},
                )
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """URL of a SQLite file that does not exist yet (blank, not upgraded)."""
    return f"sqlite:///{tmp_path / 'hudi-meta.db'}"


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """URL of a blank PostgreSQL database shared by the whole session."""
    with pg_database() as url:
        yield url


@pytest.fixture
def pg_fresh_url() -> Iterator[str]:
    """URL of a blank PostgreSQL database of this test alone (for migration round trips)."""
    with pg_database() as url:
        yield url


@pytest.fixture(scope="session")
def _pg_upgraded_template() -> Iterator[str]:
    """Name of a database upgraded to head once per session; `db_url` copies it (CREATE ... TEMPLATE)."""
    with pg_database() as url:
        upgrade(url)  # leaves no connection open: a template must be idle to be copied
        database = make_url(url).database
        assert database is not None
        yield database


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """URL of a fresh store upgraded to head, once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'hudi-meta.db'}"
        upgrade(url)
        yield url
        return
    template = request.getfixturevalue("_pg_upgraded_template")
    with pg_database(template=template) as url:
        yield url


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """An engine on a fresh store (`db_url`: once on SQLite, once on PostgreSQL)."""
    store = make_engine(db_url)
    yield store
    store.dispose()


@contextmanager
def module_store(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """An engine on a store upgraded to head, for a module whose hypothesis examples each write a table of
    their own (a store per example would cost more than the examples)."""
    with ExitStack() as stack:
        if backend == "sqlite":
            url = f"sqlite:///{tmp_path_factory.mktemp('store') / 'store.db'}"
        else:
            url = stack.enter_context(pg_database())
        upgrade(url)
        engine = make_engine(url)
        try:
            yield engine
        finally:
            engine.dispose()
