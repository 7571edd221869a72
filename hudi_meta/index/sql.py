"""Small SQL helpers that work the same on SQLite and PostgreSQL."""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, Executable, Table, text
from sqlalchemy.dialects import postgresql, sqlite


def insert_ignore(conn: Connection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """INSERT rows, skipping any that violate a unique constraint (idempotent re-runs, racing indexers)."""
    if not rows:
        return
    insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    conn.execute(insert(table).on_conflict_do_nothing(), list(rows))


@contextmanager
def connected(bind: Engine | Connection) -> Iterator[Connection]:
    """A connection from an engine (closed after), or the caller's own connection as it is (a request's)."""
    if isinstance(bind, Connection):
        yield bind
        return
    with bind.connect() as conn:
        yield conn


def plain_rows(conn: Connection, stmt: Executable) -> list[tuple[Any, ...]]:
    """The rows of a SELECT as the driver gives them: plain tuples with no result processing (SQLite gives
    booleans as 0/1 and datetimes as text). For reads of 10^5 rows, where building SQLAlchemy rows costs as
    much as the query itself."""
    result = conn.execute(stmt)
    try:
        return list(result.cursor.fetchall())
    finally:
        result.close()


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


@contextmanager
def table_lock(engine: Engine, base_path: str) -> Iterator[None]:
    """Serialise indexers of one table across processes (PostgreSQL advisory lock; SQLite locks itself).

    The lock lives on its own connection for the whole run; a killed process drops it with the connection.
    """
    if engine.dialect.name != "postgresql":
        yield
        return
    key = zlib.crc32(base_path.encode()) & 0x7FFFFFFF
    with engine.connect() as conn:
        conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": key})
        conn.commit()
        try:
            yield
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
            conn.commit()
