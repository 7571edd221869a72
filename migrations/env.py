"""Alembic environment for the metadata store (`hudi_meta.index.models`).

Offline mode (`--sql`) renders a script from the `sqlalchemy.url` main option. Online mode reuses a
connection passed in `config.attributes["connection"]` (see `hudi_meta.index.migrate`), else opens one
from `sqlalchemy.url`. SQLite runs in batch mode (ALTER through copy-and-move). Logging is left to the
caller on purpose: no `fileConfig`, so nothing is printed when the CLI upgrades a store.
"""

from __future__ import annotations

from typing import Any

from alembic import context
from sqlalchemy import Connection, create_engine, make_url, pool

from hudi_meta.index.models import metadata

config = context.config
target_metadata = metadata


def _options(dialect_name: str) -> dict[str, Any]:
    return {
        "target_metadata": target_metadata,
        "compare_type": True,
        "render_as_batch": dialect_name == "sqlite",
    }


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no database: set sqlalchemy.url or pass attributes['connection'] to Alembic")
    return url


def run_migrations_offline() -> None:
    url = _url()
    context.configure(
        url=url,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        **_options(make_url(url).get_backend_name()),
    )
    with context.begin_transaction():
        context.run_migrations()


def _run_on(connection: Connection) -> None:
    context.configure(connection=connection, **_options(connection.dialect.name))
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run_on(connection)
        return
    url = _url()
    # No foreign-key pragma here: batch mode recreates SQLite tables, and with foreign keys on the
    # implicit DELETE of a dropped table would cascade into its children.
    connect_args = {"timeout": 60} if url.startswith("sqlite") else {}
    engine = create_engine(url, poolclass=pool.NullPool, connect_args=connect_args)
    try:
        with engine.connect() as connection:
            _run_on(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
