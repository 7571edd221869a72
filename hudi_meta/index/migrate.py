"""Schema upgrades of the metadata store: Alembic driven from code, on SQLite and PostgreSQL alike.

The revisions ship inside the package (`hudi_meta.migrations`, the repository's `migrations/` folder).
Alembic never configures logging here, so upgrading from the CLI prints nothing.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, make_url, pool

import hudi_meta.migrations
from hudi_meta.index.db import resolve_db_url


def migrations_dir() -> Path:
    """The folder holding `env.py` and `versions/`."""
    return Path(hudi_meta.migrations.__file__).resolve().parent


def alembic_config(url: str) -> Config:
    """An Alembic config for the store at `url` (a URL, or a bare path meaning a SQLite file)."""
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    # Config values go through ConfigParser interpolation: a literal `%` (e.g. in a password) needs `%%`.
    config.set_main_option("sqlalchemy.url", resolve_db_url(url).replace("%", "%%"))
    return config


def _migration_engine(url: str) -> Engine:
    # Not db.make_engine: batch mode recreates SQLite tables, and with the foreign-key pragma on, dropping
    # the old copy would cascade deletes into child tables.
    url = resolve_db_url(url)
    connect_args = {"timeout": 60} if url.startswith("sqlite") else {}
    return create_engine(url, poolclass=pool.NullPool, connect_args=connect_args)


def upgrade(url: str, revision: str = "head") -> None:
    """Upgrade the store at `url` to `revision` (default: the newest), creating its tables if needed."""
    config = alembic_config(url)
    engine = _migration_engine(url)
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, revision)
    finally:
        engine.dispose()


def downgrade(url: str, revision: str = "base") -> None:
    """Downgrade the store at `url` to `revision` (default: `base`, which drops every table)."""
    config = alembic_config(url)
    engine = _migration_engine(url)
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
