"""Planning's input read from the index (`candidate_slices`) against a plain model of the rules it states.

Random store contents (file groups with several slices, log files of any instant, version, write token and
.cdc suffix, links, blocks of every type and status, pending and completed plans) are written to a store
(SQLite, then PostgreSQL), one table per example, and the slices read back are compared with what these
rules give, computed from the generated rows alone:

- a candidate is the newest slice before the compaction instant of a file group that is not replaced and not
  under a pending plan, and whose base file (if any) is committed; a slice without log files is left out;
- log files are in Hudi's order: instant, version, write token as a string (Java's LogFileComparator), then .cdc;
- a log file's min event time is the least over its committed data and delete blocks; it has a known event
  time unless such a block's time is unresolved or unavailable; it is committed unless one of its data or
  delete blocks is uncommitted or of an instant not before ours, and every file after such a file is not;
- candidates come in (partition, file id) order.
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, insert

from hudi_meta.compaction.candidates import candidate_slices
from hudi_meta.compaction.plan_records import LogFileInfo, SliceInfo
from hudi_meta.index.log_file_summary import refresh_summaries
from hudi_meta.index.models import (
    compaction_operation_table,
    compaction_plan_table,
    file_group_table,
    file_slice_table,
    hudi_table,
    log_block_table,
    log_file_table,
)
from tests.index.conftest import module_store

INSTANTS = [f"2026010100000{i}000" for i in range(1, 8)]
TOKENS = ["1-0-1", "2-0-1", "10-0-1", "9-1-1"]
BLOCK_TYPES = ["avro_data", "parquet_data", "cdc_data", "delete", "command", "hfile_data"]
DATA = {"avro_data", "parquet_data", "cdc_data", "delete"}
STATUSES = ["committed", "uncommitted", "rolled_back", "corrupt"]
SOURCES = [None, "header", "write_stat", "record_scan", "none", "unavailable"]


@dataclass
class Block:
    block_type: str
    status: str
    instant: str | None
    min_event_time: int | None
    source: str | None


@dataclass
class Log:
    instant: str
    version: int
    token: str
    cdc: bool
    link_target: str | None
    attached: bool  # False: the file belongs to no slice (file_slice_id NULL)
    blocks: list[Block] = field(default_factory=list)


@dataclass
class Slice:
    base_instant: str
    base_file: bool
    base_committed: bool
    logs: list[Log]


@dataclass
class Group:
    partition: str
    replaced: bool
    slices: list[Slice]
    plan_state: str | None  # the state of a plan operating on this group, if any


blocks = st.builds(
    Block,
    st.sampled_from(BLOCK_TYPES),
    st.sampled_from(STATUSES),
    st.one_of(st.none(), st.sampled_from(INSTANTS)),
    st.one_of(st.none(), st.integers(0, 50)),
    st.sampled_from(SOURCES),
)
logs = st.builds(
    Log,
    st.sampled_from(INSTANTS),
    st.integers(1, 3),
    st.sampled_from(TOKENS),
    st.booleans(),
    st.one_of(st.none(), st.just("p/.target_1.log.1_1-0-1")),
    st.integers(0, 9).map(lambda n: n > 0),
    st.lists(blocks, max_size=3),
)
slices = st.builds(
    Slice, st.sampled_from(INSTANTS), st.booleans(), st.integers(0, 4).map(lambda n: n > 0), st.lists(logs, max_size=4)
)
groups = st.builds(
    Group,
    st.sampled_from(["", "a", "b"]),
    st.integers(0, 5).map(lambda n: n == 0),
    st.lists(slices, min_size=1, max_size=3, unique_by=lambda s: s.base_instant),
    st.sampled_from([None, None, "requested", "inflight", "completed"]),
)


def log_name(file_id: str, log: Log) -> str:
    return f".{file_id}_{log.instant}.log.{log.version}_{log.token}" + (".cdc" if log.cdc else "")


def expected_slices(table: list[Group], before: str) -> list[SliceInfo]:
    """The rules of the module doc, over the generated rows."""
    out = []
    for g, group in enumerate(table):
        file_id = f"fg{g}"
        if group.replaced or group.plan_state in ("requested", "inflight"):
            continue
        older = [s for s in group.slices if s.base_instant < before]
        if not older:
            continue
        newest = max(older, key=lambda s: s.base_instant)
        if newest.base_file and not newest.base_committed:
            continue
        files = [log for log in unique_logs(file_id, group)[group.slices.index(newest)] if log.attached]
        files.sort(key=lambda f: (f.instant, f.version, f.token, f.cdc))
        infos, waiting = [], False
        for log in files:
            data = [b for b in log.blocks if b.block_type in DATA]
            committed = [b for b in data if b.status == "committed"]
            times = [b.min_event_time for b in committed if b.min_event_time is not None]
            waiting = waiting or any(b.status == "uncommitted" or (b.instant or "") >= before for b in data)
            known = not any(b.source in (None, "unavailable") for b in committed)
            target = posixpath.basename(log.link_target) if log.link_target else None
            size = 10 * log.version
            infos.append(
                LogFileInfo(
                    log_name(file_id, log), log.version, size, min(times, default=None), target, not waiting, known
                )
            )
        if infos:
            base_file = f"{file_id}_1-0-1_{newest.base_instant}.parquet" if newest.base_file else None
            out.append(SliceInfo(group.partition, file_id, newest.base_instant, base_file, tuple(infos)))
    return sorted(out, key=lambda s: (s.partition, s.file_id))


def unique_logs(file_id: str, group: Group) -> list[list[Log]]:
    """Each slice's log files, a name kept once in its file group (names are unique in a partition)."""
    seen: set[str] = set()
    out: list[list[Log]] = []
    for sl in group.slices:
        out.append([])
        for log in sl.logs:
            if log_name(file_id, log) not in seen:
                seen.add(log_name(file_id, log))
                out[-1].append(log)
    return out


ids = itertools.count(1)


def write_table(engine: Engine, table: list[Group]) -> int:
    """The generated table as the indexer would store it; returns its table id."""
    table_id = next(ids)
    row = {"id": table_id, "base_path": f"/t{table_id}", "name": "t", "table_type": "MERGE_ON_READ"}
    row |= {"table_version": 6, "timeline_layout": 1, "record_key_fields": "id"}
    with engine.begin() as conn:
        conn.execute(insert(hudi_table), row)
        plans = {state: next(ids) for state in ("requested", "inflight", "completed")}
        for state, plan_id in plans.items():
            conn.execute(
                insert(compaction_plan_table), {"id": plan_id, "table_id": table_id, "instant": plan_id, "state": state}
            )
        for g, group in enumerate(table):
            file_id, group_id = f"fg{g}", next(ids)
            conn.execute(
                insert(file_group_table),
                {
                    "id": group_id,
                    "table_id": table_id,
                    "partition_path": group.partition,
                    "file_id": file_id,
                    "replaced": group.replaced,
                },
            )
            if group.plan_state is not None:
                op = {"plan_id": plans[group.plan_state], "partition_path": group.partition, "file_id": file_id}
                conn.execute(insert(compaction_operation_table), op)
            for sl, sl_logs in zip(group.slices, unique_logs(file_id, group), strict=True):
                slice_id = next(ids)
                base_file = f"{file_id}_1-0-1_{sl.base_instant}.parquet" if sl.base_file else None
                conn.execute(
                    insert(file_slice_table),
                    {
                        "id": slice_id,
                        "file_group_id": group_id,
                        "base_instant": sl.base_instant,
                        "base_file": base_file,
                        "base_committed": sl.base_committed,
                    },
                )
                for log in sl_logs:
                    log_id = next(ids)
                    conn.execute(
                        insert(log_file_table), log_row(table_id, log_id, slice_id, group.partition, file_id, log)
                    )
                    for offset, b in enumerate(log.blocks):
                        block: dict[str, Any] = {"table_id": table_id, "log_file_id": log_id, "offset": offset}
                        block |= {"length": 1}
                        block |= {"block_type": b.block_type, "status": b.status, "instant": b.instant}
                        block |= {"min_event_time": b.min_event_time, "min_event_time_source": b.source}
                        conn.execute(insert(log_block_table), block)
        refresh_summaries(conn, table_id, None)  # as every indexer transaction that writes blocks does
    return table_id


def log_row(table_id: int, log_id: int, slice_id: int, partition: str, file_id: str, log: Log) -> dict[str, Any]:
    """A log file of no slice (file_slice_id NULL) is stored under a partition of its own."""
    return {
        "id": log_id,
        "table_id": table_id,
        "file_slice_id": slice_id if log.attached else None,
        "partition_path": partition if log.attached else f"{partition}/detached{log_id}",
        "name": log_name(file_id, log),
        "file_id": file_id,
        "base_instant": log.instant,
        "version": log.version,
        "write_token": log.token,
        "size": 10 * log.version,
        "indexed_offset": 1,
        "is_link": log.link_target is not None,
        "link_target": log.link_target,
    }


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    """One store a backend for every example (each writes a table of its own)."""
    with module_store(request.param, tmp_path_factory) as engine:
        yield engine


@settings(max_examples=150, deadline=None)
@given(table=st.lists(groups, max_size=6), before=st.sampled_from(INSTANTS))
def test_candidate_slices_follow_the_planning_rules(store: Engine, table: list[Group], before: str) -> None:
    table_id = write_table(store, table)
    assert candidate_slices(store, table_id, before) == expected_slices(table, before)
