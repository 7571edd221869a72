"""The metadata store's locks, in one place: who may index a table and who may plan on it at a time.

They live in the store, not in the table: PostgreSQL advisory locks (or SQLite's own write lock), keyed by the
table's base path, so processes sharing one store take turns. The lock FILE in the table, which Java writers
also honour, is `write/lock.py`; docs/concurrency.md section 1 lists both kinds.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, text, update

from hudi_meta.index.models import hudi_table


def _advisory_key(name: str) -> int:
    """A PostgreSQL advisory lock key from a name: the same name, the same key, in every process."""
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


@contextmanager
def index_lock(engine: Engine, base_path: str) -> Iterator[None]:
    """Serialise indexers of one table across processes (PostgreSQL advisory lock; SQLite locks itself).

    The lock lives on its own connection for the whole run; a killed process drops it with the connection.
    """
    if engine.dialect.name != "postgresql":
        yield
        return
    key = _advisory_key(base_path)
    with engine.connect() as conn:
        conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": key})
        conn.commit()
        try:
            yield
        finally:
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
            conn.commit()


@contextmanager
def schedule_lock(engine: Engine, table_id: int, base_path: str) -> Iterator[Connection]:
    """A transaction that only one planner of the table holds at a time: compaction schedulers and cleaners
    planning (PostgreSQL: an advisory transaction lock; SQLite: the database write lock, taken by a write)."""
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _advisory_key(f"schedule:{base_path}")})
        else:
            tables = hudi_table
            conn.execute(update(tables).where(tables.c.id == table_id).values(options=tables.c.options))
        yield conn
