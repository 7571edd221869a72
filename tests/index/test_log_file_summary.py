"""Each log file's block summary (`hudi_meta.index.log_file_summary`) against the plain rules of
`summary_model`, on SQLite and PostgreSQL: after any sequence of block inserts, deletes, status and event-time
changes, each followed by a refresh of the files it touched, every stored summary equals its blocks'."""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, delete, insert, select, update

from hudi_meta.index.log_file_summary import refresh_summaries
from hudi_meta.index.models import hudi_table, log_block_table, log_file_table
from tests.index.conftest import module_store
from tests.index.summary_model import summary_drift

FILES = 3
TYPES = ["avro_data", "parquet_data", "cdc_data", "delete", "command", "corrupt"]
STATUSES = ["committed", "uncommitted", "rolled_back", "corrupt"]
SOURCES = [None, "header", "write_stat", "record_scan", "none", "unavailable"]
INSTANTS = [None, "20260101000001000", "20260101000002000", "20260101000003000"]
table_ids = itertools.count(1)


@dataclass(frozen=True)
class Insert:
    file: int
    block_type: str
    status: str
    instant: str | None
    min_event_time: int | None
    source: str | None


@dataclass(frozen=True)
class Delete:
    file: int  # its oldest block


@dataclass(frozen=True)
class SetStatus:
    instant: str | None  # every block of this instant, as `resolve_status` does
    status: str


@dataclass(frozen=True)
class SetTime:
    file: int  # its newest block
    min_event_time: int | None
    source: str | None


files = st.integers(0, FILES - 1)
times = st.none() | st.integers(-5, 5)
steps = st.one_of(
    st.builds(
        Insert, files, st.sampled_from(TYPES), st.sampled_from(STATUSES), st.sampled_from(INSTANTS), times,
        st.sampled_from(SOURCES),
    ),
    st.builds(Delete, files),
    st.builds(SetStatus, st.sampled_from(INSTANTS), st.sampled_from(STATUSES)),
    st.builds(SetTime, files, times, st.sampled_from(SOURCES)),
)  # fmt: skip


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """One store a backend for every example (each writes a table of its own)."""
    with module_store(request.param, tmp_path_factory) as engine:
        yield engine


def new_table(engine: Engine) -> tuple[int, list[int]]:
    """A registered table with `FILES` log files and no block: its id and the files' ids."""
    table_id = next(table_ids)
    row = {"id": table_id, "base_path": f"/t{table_id}", "name": "t", "table_type": "MERGE_ON_READ"}
    row |= {"table_version": 6, "timeline_layout": 1, "record_key_fields": "id", "options": "{}"}
    row |= {"registered_at": dt.datetime.now(dt.UTC)}
    with engine.begin() as conn:
        conn.execute(insert(hudi_table), row)
        ids = []
        for v in range(FILES):
            log = {"table_id": table_id, "partition_path": "p", "name": f".f_1.log.{v + 1}_0-1-0", "file_id": "f"}
            log |= {"base_instant": "1", "version": v + 1, "write_token": "0-1-0", "size": 1, "indexed_offset": 1}
            inserted = conn.execute(insert(log_file_table).values(log | {"is_link": False})).inserted_primary_key
            assert inserted is not None
            ids.append(inserted[0])
    return table_id, ids


def apply(engine: Engine, table_id: int, file_ids: list[int], step: Any, offsets: Iterator[int]) -> None:
    """One change to the blocks and the refresh of the files it touched, in one transaction."""
    b = log_block_table
    with engine.begin() as conn:
        touched: set[int] = set()
        if isinstance(step, Insert):
            block: dict[str, Any] = {
                "table_id": table_id,
                "log_file_id": file_ids[step.file],
                "offset": next(offsets),
                "length": 1,
            }
            block |= {"block_type": step.block_type, "status": step.status, "instant": step.instant}
            block |= {"min_event_time": step.min_event_time, "min_event_time_source": step.source}
            conn.execute(insert(b), block)
            touched.add(file_ids[step.file])
        elif isinstance(step, Delete | SetTime):
            order = b.c.offset if isinstance(step, Delete) else b.c.offset.desc()
            found = conn.execute(
                select(b.c.id).where(b.c.log_file_id == file_ids[step.file]).order_by(order).limit(1)
            ).scalar()
            if found is not None:
                if isinstance(step, Delete):
                    conn.execute(delete(b).where(b.c.id == found))
                else:
                    values = {"min_event_time": step.min_event_time, "min_event_time_source": step.source}
                    conn.execute(update(b).where(b.c.id == found).values(values))
                touched.add(file_ids[step.file])
        else:
            match = b.c.instant.is_(None) if step.instant is None else b.c.instant == step.instant
            changes = (b.c.table_id == table_id) & match
            touched.update(conn.execute(select(b.c.log_file_id).where(changes)).scalars())
            conn.execute(update(b).where(changes).values(status=step.status))
        refresh_summaries(conn, table_id, touched)


@settings(max_examples=100, deadline=None)
@given(sequence=st.lists(steps, max_size=25))
def test_every_refreshed_summary_equals_its_blocks(store: Engine, sequence: list[Any]) -> None:
    table_id, file_ids = new_table(store)
    offsets = itertools.count()
    for step in sequence:
        apply(store, table_id, file_ids, step, offsets)
        assert summary_drift(store, table_id) == {}, f"after {step}"
    with store.begin() as conn:
        assert refresh_summaries(conn, table_id, None) == 0  # nothing was left stale


def test_a_refresh_rewrites_only_the_files_it_is_given(store: Engine) -> None:
    """Blocks changed without a refresh leave their file's summary stale (that is why every writer refreshes);
    a refresh of another file does not repair it, a refresh of it or of the whole table does."""
    table_id, (first, second, _) = new_table(store)
    block = {"table_id": table_id, "offset": 0, "length": 1, "block_type": "avro_data", "status": "committed"}
    block |= {"instant": "20260101000001000", "min_event_time": 7, "min_event_time_source": "header"}
    with store.begin() as conn:
        conn.execute(insert(log_block_table), [block | {"log_file_id": first}, block | {"log_file_id": second}])
        assert refresh_summaries(conn, table_id, {second}) == 1
    assert set(summary_drift(store, table_id)) == {"p/.f_1.log.1_0-1-0"}
    with store.begin() as conn:
        assert refresh_summaries(conn, table_id, set()) == 0
        assert refresh_summaries(conn, table_id, None) == 1
    assert summary_drift(store, table_id) == {}
    with store.connect() as conn:
        f = log_file_table
        row = conn.execute(select(f).where(f.c.id == first)).one()
    assert (row.min_event_time, row.last_block_instant) == (7, "20260101000001000")
    assert not row.has_uncommitted and not row.has_unknown_event_time
