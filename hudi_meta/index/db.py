"""Store URLs, engines and schema upgrades (Alembic) for the metadata store."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import Engine, create_engine, event

DB_ENV = "HUDI_META_DB"


def default_db_url() -> str:
    """A SQLite file under the user's data directory ($XDG_DATA_HOME/hudi-meta/hudi-meta.db)."""
    data_home = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    directory = data_home / "hudi-meta"
    directory.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{directory / 'hudi-meta.db'}"


def resolve_db_url(db: str | None = None) -> str:
    """`--db`, else $HUDI_META_DB, else the default SQLite file. Bare paths mean SQLite files."""
    url = db or os.environ.get(DB_ENV) or default_db_url()
    if "://" not in url:
        url = f"sqlite:///{Path(url).resolve()}"
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 60})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):  # type: ignore[no-untyped-def]
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=60000")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)
