"""`insert_ignore`, the store's one insert (rows as dicts, or as tuples: `insert_ignore_tuples`): every row
lands once, rows clashing with a unique constraint (stored before, or twice in one call) are skipped, on both
backends and on both paths of each: SQLAlchemy's executemany, and from `BULK_MIN_ROWS` rows the bulk path
(PostgreSQL: COPY into the table, or through a staging table when a row clashes; SQLite: the driver's
executemany of plain tuples)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

import pytest
from sqlalchemy import Connection, Engine, Table, select

from hudi_meta.index import sql
from hudi_meta.index.models import hudi_table, log_block_table, log_file_table, service_lease_table
from hudi_meta.index.sql import insert_ignore, insert_ignore_tuples
from hudi_meta.index.states import BlockStatus


def add_log_file(engine: Engine) -> None:
    table = {"id": 1, "base_path": "/t", "name": "t", "table_type": "MERGE_ON_READ", "table_version": 6}
    table |= {"timeline_layout": 1, "record_key_fields": "id"}
    log = {"id": 1, "table_id": 1, "partition_path": "p", "name": ".f_1.log.1_0-1-0", "file_id": "f"}
    log |= {"base_instant": "1", "version": 1, "write_token": "0-1-0", "size": 9, "indexed_offset": 9, "is_link": False}
    with engine.begin() as conn:
        conn.execute(hudi_table.insert(), table)
        conn.execute(log_file_table.insert(), log)


def block(offset: int, status: BlockStatus, event_time: int | None) -> dict[str, Any]:
    """Every column but the id, with values of each kind a block row holds (a StrEnum, None, big ints)."""
    return {
        "table_id": 1,
        "log_file_id": 1,
        "offset": offset,
        "length": 2**40 + offset,
        "block_type": "avro_data",
        "instant": f"2026010100000{offset % 10}000",
        "target_instant": None,
        "record_count": offset,
        "min_event_time": event_time,
        "max_event_time": None,
        "min_event_time_source": "header" if event_time is not None else None,
        "status": status,
    }


def stored(engine: Engine) -> dict[int, tuple[Any, ...]]:
    b = log_block_table
    columns = [b.c.length, b.c.status, b.c.min_event_time, b.c.instant, b.c.record_count, b.c.min_event_time_source]
    with engine.connect() as conn:
        return {r[0]: tuple(r[1:]) for r in conn.execute(select(b.c.offset, *columns))}


def expect(rows: list[dict[str, Any]]) -> dict[int, tuple[Any, ...]]:
    """What the store holds after `rows` are inserted in order: the first row of each offset."""
    out: dict[int, tuple[Any, ...]] = {}
    for r in rows:
        out.setdefault(
            r["offset"],
            (
                r["length"],
                r["status"],
                r["min_event_time"],
                r["instant"],
                r["record_count"],
                r["min_event_time_source"],
            ),
        )
    return out


def spy_bulk(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tables each bulk insert (either backend's) went to, in order."""
    calls: list[str] = []
    for name in ("_copy_insert_ignore", "_driver_insert_ignore"):
        real = getattr(sql, name)

        def counted(
            conn: Connection, table: Table, columns: Sequence[str], rows: Sequence[tuple[Any, ...]], real: Any = real
        ) -> None:
            calls.append(table.name)
            real(conn, table, columns, rows)

        monkeypatch.setattr(sql, name, counted)
    return calls


def insert_as(form: str) -> Any:
    """`insert_ignore` of dict rows, or `insert_ignore_tuples` of the same rows as tuples."""

    def insert(conn: Connection, table: Table, rows: list[dict[str, Any]]) -> None:
        if form == "dicts":
            insert_ignore(conn, table, rows)
        else:
            columns = list(rows[0])
            insert_ignore_tuples(conn, table, columns, [tuple(r[c] for c in columns) for r in rows])

    return insert


@pytest.mark.parametrize("form", ["dicts", "tuples"])
@pytest.mark.parametrize("bulk_from", [1, 10**9], ids=["bulk", "row-by-row"])
def test_insert_ignore_keeps_the_first_row_of_each_key(
    engine: Engine, bulk_from: int, form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sql, "BULK_MIN_ROWS", bulk_from)
    copies = spy_bulk(monkeypatch)
    add_log_file(engine)
    insert = insert_as(form)
    first = [block(i, BlockStatus.COMMITTED, i * 1000 if i % 3 else None) for i in range(0, 1200, 2)]
    with engine.begin() as conn:
        insert(conn, log_block_table, first)
    # a second call: half its rows clash with stored rows, some clash within the call; the first one wins
    second = [block(i, BlockStatus.UNCOMMITTED, -i) for i in range(600, 1800)]
    second += [block(i, BlockStatus.ROLLED_BACK, 7) for i in range(1700, 1900)]
    before, after = [block(4000, BlockStatus.COMMITTED, 2)], [block(5000, BlockStatus.COMMITTED, 1)]
    with engine.begin() as conn:  # a clash undoes only its own attempt: what the transaction wrote before stays
        insert(conn, log_block_table, before)
        insert(conn, log_block_table, second)
        insert(conn, log_block_table, after)
    assert stored(engine) == expect(first + before + second + after)
    assert copies == (["log_block"] * 4 if bulk_from == 1 else [])


def test_rows_relying_on_a_python_default_are_inserted_row_by_row(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bulk paths apply no SQLAlchemy-side default: rows leaving out columns that have one (hudi_table's
    `registered_at`, `options`) still get them."""
    monkeypatch.setattr(sql, "BULK_MIN_ROWS", 1)
    bulk = spy_bulk(monkeypatch)
    rows = [
        {"base_path": f"/t{i}", "name": "t", "table_type": "MERGE_ON_READ", "table_version": 6, "timeline_layout": 1}
        for i in range(3)
    ]
    with engine.begin() as conn:
        insert_ignore(conn, hudi_table, rows)
    with engine.connect() as conn:
        got = conn.execute(select(hudi_table.c.base_path, hudi_table.c.registered_at, hudi_table.c.options)).all()
    assert sorted(r.base_path for r in got) == ["/t0", "/t1", "/t2"]
    assert all(r.registered_at is not None and r.options == "{}" for r in got)
    assert bulk == []


def test_rows_whose_types_convert_in_python_are_inserted_row_by_row(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A datetime column is stored as text by SQLAlchemy on SQLite (a bind processor), which the driver's
    executemany would not do: such rows take SQLAlchemy's path there and read back as they were written."""
    monkeypatch.setattr(sql, "BULK_MIN_ROWS", 1)
    bulk = spy_bulk(monkeypatch)
    add_log_file(engine)
    now = dt.datetime(2026, 11, 25, 3, 4, 5, 678000, tzinfo=dt.UTC)
    with engine.begin() as conn:
        insert_ignore(
            conn, service_lease_table, [{"table_id": 1, "holder": "a", "acquired_at": now, "expires_at": now}]
        )
    with engine.connect() as conn:
        got = conn.execute(select(service_lease_table.c.acquired_at)).scalar_one()
    assert got.replace(tzinfo=dt.UTC) == now
    assert bulk == ([] if engine.dialect.name == "sqlite" else ["service_lease"])


def test_a_failed_transaction_leaves_nothing(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The staged rows belong to the caller's transaction: a failure after the insert keeps none of them."""
    monkeypatch.setattr(sql, "BULK_MIN_ROWS", 1)
    add_log_file(engine)
    with pytest.raises(RuntimeError), engine.begin() as conn:
        insert_ignore(conn, log_block_table, [block(i, BlockStatus.COMMITTED, i) for i in range(50)])
        raise RuntimeError("after the insert")
    assert stored(engine) == {}
    now = dt.datetime.now(dt.UTC)
    with engine.begin() as conn:  # the connection is usable again, staging table and all
        insert_ignore(conn, log_block_table, [block(i, BlockStatus.COMMITTED, i) for i in range(50)])
        insert_ignore(
            conn, service_lease_table, [{"table_id": 1, "holder": "a", "acquired_at": now, "expires_at": now}]
        )
    assert len(stored(engine)) == 50
