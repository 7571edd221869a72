"""Schema upgrades of the metadata store: Alembic driven from code, on SQLite and PostgreSQL alike.

The revisions ship inside the package (`hudi_meta.migrations`, the repository's `migrations/` folder).
Alembic never configures logging here, so upgrading from the CLI prints nothing.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, make_url, pool

from hudi_meta.index.db import resolve_db_url


def migrations_dir() -> Path:
    """The folder holding `env.py` and `versions/`."""
    package = importlib.import_module("hudi_meta.migrations")  # mapped to migrations/, which mypy does not follow
    assert package.__file__ is not None
    return Path(package.__file__).resolve().parent


def alembic_config(url: str) -> Config:
    """An Alembic config for the store at `url` (a URL, or a bare path meaning a SQLite file)."""
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    # Config values go through ConfigParser interpolation: a literal `%` (e.g. in a password) needs `%%`.
    config.set_main_option("sqlalchemy.url", resolve_db_url(url).replace("%", "%%"))
    return config


def _migration_engine(url: str, writes: bool = False) -> Engine:
    """Not db.make_engine: batch mode recreates SQLite tables, and with the foreign-key pragma on, dropping the
    old copy would cascade deletes into child tables.

    With `writes` on SQLite, each transaction is the database's own, begun with BEGIN IMMEDIATE: the driver
    runs DDL (CREATE, ALTER, DROP) outside any transaction by itself, so a migration killed halfway left its
    first steps done (a batch copy's temporary table) and every later upgrade failing; and two upgrades at
    once now take turns (the second finds the store upgraded) instead of both starting on the same revision.
    """
    url = resolve_db_url(url)
    if not url.startswith("sqlite"):
        return create_engine(url, poolclass=pool.NullPool)
    engine = create_engine(url, poolclass=pool.NullPool, connect_args={"timeout": 60})
    if writes:

        @event.listens_for(engine, "connect")
        def _driver_leaves_transactions_alone(dbapi_connection, _record):  # type: ignore[no-untyped-def]
            dbapi_connection.isolation_level = None

        @event.listens_for(engine, "begin")
        def _begin_immediate(connection):  # type: ignore[no-untyped-def]
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def upgrade(url: str, revision: str = "head") -> None:
    """Upgrade the store at `url` to `revision` (default: the newest), creating its tables if needed."""
    config = alembic_config(url)
    engine = _migration_engine(url, writes=True)
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    finally:
        engine.dispose()


def downgrade(url: str, revision: str = "base") -> None:
    """Downgrade the store at `url` to `revision` (default: `base`, which drops every table)."""
    config = alembic_config(url)
    engine = _migration_engine(url, writes=True)
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, revision)
    finally:
        engine.dispose()


def current_revision(url: str) -> str | None:
    """The revision the store at `url` is at, or None for a store never upgraded (or a missing file)."""
    url = resolve_db_url(url)
    database = make_url(url).database
    if url.startswith("sqlite") and database and database != ":memory:" and not Path(database).exists():
        return None  # connecting would create an empty file
    engine = _migration_engine(url)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def head_revision() -> str | None:
    """The newest revision shipped with the package."""
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
