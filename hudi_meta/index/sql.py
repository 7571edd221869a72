"""Small SQL helpers that work the same on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from operator import itemgetter
from typing import Any

from sqlalchemy import Connection, Engine, Executable, Table
from sqlalchemy.dialects import postgresql, sqlite

BULK_MIN_ROWS = 500  # from this many rows inserts bypass SQLAlchemy's row processing (PostgreSQL: COPY)


def insert_ignore(conn: Connection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """INSERT rows, skipping any that violate a unique constraint (idempotent re-runs, racing indexers)."""
    if not rows:
        return
    columns = list(rows[0].keys())
    if _bulk(conn, table, columns, len(rows)) and all(r.keys() == rows[0].keys() for r in rows):
        values = map(itemgetter(*columns), rows) if len(columns) > 1 else ((r[columns[0]],) for r in rows)
        _bulk_insert_ignore(conn, table, columns, list(values))
    else:
        _statement_insert_ignore(conn, table, rows)


def insert_ignore_tuples(
    conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> None:
    """`insert_ignore` of rows given as tuples of `columns`' values: for 10^5 rows, where building a dict per
    row costs as much as the driver's inserting it."""
    if not rows:
        return
    if _bulk(conn, table, columns, len(rows)):
        _bulk_insert_ignore(conn, table, columns, rows)
    else:
        _statement_insert_ignore(conn, table, [dict(zip(columns, r, strict=True)) for r in rows])


def _bulk(conn: Connection, table: Table, columns: Sequence[str], count: int) -> bool:
    """Whether `count` rows of these columns go to the driver as they are: enough rows to pay off, no column
    left out has a Python-side default and none converts values on the Python side (the driver applies
    neither; the server's own defaults, the id sequence among them, still apply)."""
    if count < BULK_MIN_ROWS or any(c.name not in columns and c.default is not None for c in table.columns):
        return False
    return all(table.c[k].type.dialect_impl(conn.dialect).bind_processor(conn.dialect) is None for k in columns)


def _bulk_insert_ignore(
    conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> None:
    if conn.dialect.name == "postgresql":
        _copy_insert_ignore(conn, table, columns, rows)
    else:
        _driver_insert_ignore(conn, table, columns, rows)


def _statement_insert_ignore(conn: Connection, table: Table, rows: Sequence[dict[str, Any]]) -> None:
    """`insert_ignore` through SQLAlchemy's statement (its types and defaults apply)."""
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    conn.execute(dialect.insert(table).on_conflict_do_nothing(), list(rows))


def _driver_insert_ignore(
    conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> None:
    """`insert_ignore` on SQLite in bulk: one executemany of plain tuples. SQLAlchemy's own executemany
    processes every row's parameters in Python, which cost as much as SQLite's inserting them."""
    quote = conn.dialect.identifier_preparer.quote
    names = ", ".join(quote(n) for n in columns)
    marks = ", ".join("?" * len(columns))
    conn.exec_driver_sql(
        f"INSERT INTO {quote(table.name)} ({names}) VALUES ({marks}) ON CONFLICT DO NOTHING", list(rows)
    )


def _copy_insert_ignore(
    conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]]
) -> None:
    """`insert_ignore` on PostgreSQL in bulk, in the caller's transaction: COPY straight into the table under a
    savepoint; if a row is already there (a re-run, a racing indexer), back to the savepoint and COPY into a
    temporary table of the same column types, then one INSERT ... SELECT ... ON CONFLICT DO NOTHING. An
    executemany sends one statement per row (SQLAlchemy batches psycopg inserts only with RETURNING), 5x
    slower at 10^5 rows; the staging copy doubles the writes, so it is kept for when it is needed."""
    from psycopg.errors import UniqueViolation  # here: psycopg is installed with PostgreSQL support only

    quote = conn.dialect.identifier_preparer.quote
    names = ", ".join(quote(n) for n in columns)
    try:
        with conn.begin_nested():
            _copy(conn, f"{quote(table.name)} ({names})", rows)
        return
    except UniqueViolation:  # the driver's own: COPY runs on its cursor
        pass
    staging = quote(f"staging_{table.name}")
    conn.exec_driver_sql(
        f"CREATE TEMPORARY TABLE {staging} ON COMMIT DROP AS SELECT {names} FROM {quote(table.name)} WITH NO DATA"
    )
    _copy(conn, f"{staging} ({names})", rows)
    conn.exec_driver_sql(
        f"INSERT INTO {quote(table.name)} ({names}) SELECT {names} FROM {staging} ON CONFLICT DO NOTHING"
    )
    conn.exec_driver_sql(f"DROP TABLE {staging}")


def _copy(conn: Connection, target: str, rows: Sequence[tuple[Any, ...]]) -> None:
    """COPY `rows` into `target` ("table (columns)", the rows' values in that order) through psycopg."""
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        with cursor.copy(f"COPY {target} FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
    finally:
        cursor.close()


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
