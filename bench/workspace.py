"""Where the benchmarks work: a scratch directory, blank metadata stores, and (for the Spark benches) a session.

Every script works in a fresh temp directory that it removes at the end, or in `--keep DIR`, which it keeps.
Stores are a SQLite file in the work directory, or a fresh PostgreSQL database created through
$HUDI_META_TEST_PG (default postgresql+psycopg://root@127.0.0.1:5432/postgres) and dropped at the end.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
from sqlalchemy import Connection, Engine, Table, create_engine, make_url, pool, text

from hudi_meta.index.db import make_engine
from hudi_meta.index.log_file_summary import refresh_summaries
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.models import hudi_table, metadata

PG_ADMIN_URL = os.environ.get("HUDI_META_TEST_PG", "postgresql+psycopg://root@127.0.0.1:5432/postgres")
BACKENDS = ("sqlite", "postgresql")
INSERT_CHUNK = 20_000  # rows per INSERT on SQLite
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z: event times of generated records are T0 + seconds


@contextmanager
def work_dir(prefix: str, keep: str | None = None) -> Iterator[Path]:
    """`keep` (created if missing, left in place), else a new temp directory removed on exit."""
    if keep is not None:
        directory = Path(keep).resolve()
        directory.mkdir(parents=True, exist_ok=True)
        yield directory
        return
    directory = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def bench_parser(doc: str | None, keep: str | None = None, runs: int | None = None) -> argparse.ArgumentParser:
    """The script's parser: `--help` prints its module docstring as written. `keep` (the option's help) adds
    `--keep DIR`, the work directory to use and keep instead of a temp one (see `work_dir`); `runs` adds
    `--runs N` with that default, the timed runs of each measurement."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if keep is not None:
        parser.add_argument("--keep", metavar="DIR", help=keep)
    if runs is not None:
        parser.add_argument("--runs", type=int, default=runs, help="timed runs of each measurement (best reported)")
    return parser


def parse_backends(parser: argparse.ArgumentParser, value: str) -> list[str]:
    """The `--backends` list (comma-separated); a usage error for anything but sqlite and postgresql."""
    backends = [b.strip() for b in value.split(",") if b.strip()]
    if not backends or set(backends) - set(BACKENDS):
        parser.error(f"--backends: expected sqlite and/or postgresql, got {value!r}")
    return backends


@contextmanager
def pg_database(keep: bool = False) -> Iterator[str]:
    """Create a uniquely named PostgreSQL database, yield its URL, drop it (unless `keep`)."""
    name = f"hudi_meta_bench_{secrets.token_hex(6)}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT", poolclass=pool.NullPool)
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
        finally:
            if keep:
                print(f"kept PostgreSQL database {name}")
            else:
                with admin.connect() as conn:
                    conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


@contextmanager
def store(backend: str, work: Path, keep: bool = False) -> Iterator[Engine]:
    """An engine on a blank store of `backend` (SQLite: `work`/hudi-meta.db), upgraded to the newest schema."""
    with ExitStack() as stack:
        if backend == "sqlite":
            url = f"sqlite:///{work / 'hudi-meta.db'}"
        elif backend == "postgresql":
            url = stack.enter_context(pg_database(keep))
        else:
            raise ValueError(f"unknown backend {backend!r}")
        upgrade(url)
        engine = make_engine(url)
        stack.callback(engine.dispose)
        yield engine


def fill_store(engine: Engine, table_row: dict[str, Any], rows: dict[str, list[dict[str, Any]]]) -> None:
    """Load a generated index into a blank store: the `hudi_table` row, then the rows of each store table named
    in `rows` (`file_group`, `file_slice`, `log_file`, `log_block`, and any other, parents first), by COPY on
    PostgreSQL (then ANALYZE) and chunked INSERTs on SQLite; then the log files' block summaries."""
    with engine.begin() as conn:
        conn.execute(hudi_table.insert(), table_row)
        for table in metadata.sorted_tables:  # parents before children
            batch = rows.get(table.name)
            if not batch:
                continue
            if conn.dialect.name == "postgresql":
                _copy_rows(conn, table, batch)
            else:
                for i in range(0, len(batch), INSERT_CHUNK):
                    conn.execute(table.insert(), batch[i : i + INSERT_CHUNK])
        if rows.get("log_block"):  # each log file's summary of its blocks, as the indexer keeps it
            refresh_summaries(conn, table_row["id"], None)
        if conn.dialect.name == "postgresql":
            conn.execute(text("ANALYZE"))


def _copy_rows(conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
    """PostgreSQL COPY (psycopg): much faster than INSERT for hundreds of thousands of rows."""
    columns = list(rows[0])
    quoted = ", ".join(f'"{c}"' for c in columns)  # "offset" is a keyword
    cursor = conn.connection.driver_connection.cursor()  # type: ignore[union-attr]  # psycopg, this transaction
    with cursor, cursor.copy(f"COPY {table.name} ({quoted}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row([row[c] for c in columns])


def records(keys: list[str], seconds: int, part: str) -> pa.Table:
    """Rows (id, ts, part, amount) of partition `part`, all at event time T0 + `seconds`."""
    return pa.table(
        {
            "id": keys,
            "ts": pa.array([T0 + seconds * 1000] * len(keys), pa.int64()),
            "part": [part] * len(keys),
            "amount": [float(seconds)] * len(keys),
        }
    )
