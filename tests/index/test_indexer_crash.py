"""A killed indexer (kill -9, a real process) and racing indexers leave the index a complete run gives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select, text

from hudi_meta.demo.synthetic import SyntheticSpec, write_synthetic_table
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.models import (
    file_group_table,
    file_slice_table,
    instant_table,
    log_block_table,
    log_file_table,
)
from hudi_meta.table.table import HudiTable

SPEC = SyntheticSpec(partitions=2, file_groups_per_partition=10, commits=4, blocks_per_commit=150, records_per_block=2)


@pytest.fixture(scope="module")
def big_table(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("crash") / "t")
    write_synthetic_table(path, SPEC)
    return path


def dump(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    """The index content keyed by natural keys (no surrogate ids, no wall-clock times)."""
    b, f, i = log_block_table, log_file_table, instant_table
    g, s = file_group_table, file_slice_table
    with engine.connect() as conn:
        return {
            "blocks": sorted(
                tuple(r)
                for r in conn.execute(
                    select(
                        f.c.partition_path,
                        f.c.name,
                        b.c.offset,
                        b.c.length,
                        b.c.block_type,
                        b.c.instant,
                        b.c.record_count,
                        b.c.min_event_time,
                        b.c.max_event_time,
                        b.c.min_event_time_source,
                        b.c.status,
                    ).join(f, f.c.id == b.c.log_file_id)
                )
            ),
            "files": sorted(
                tuple(r) for r in conn.execute(select(f.c.partition_path, f.c.name, f.c.size, f.c.indexed_offset))
            ),
            "instants": sorted(
                tuple(r) for r in conn.execute(select(i.c.requested_time, i.c.action, i.c.state, i.c.summary))
            ),
            "slices": sorted(
                tuple(r)
                for r in conn.execute(
                    select(g.c.partition_path, g.c.file_id, s.c.base_instant, s.c.base_file).join(
                        g, g.c.id == s.c.file_group_id
                    )
                )
            ),
        }


def index_process(db_url: str, table: str) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable,
        "-m",
        "hudi_meta.cli.main",
        "--db",
        db_url,
        "index",
        table,
        "--event-time-field",
        "ts",
        "--batch-files",
        "1",
    ]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _count(engine: Engine, sql: str) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text(sql)).scalar_one())


@pytest.fixture
def reference(big_table: str, tmp_path: Path) -> Iterator[dict[str, list[tuple[Any, ...]]]]:
    url = f"sqlite:///{tmp_path / 'reference.db'}"
    upgrade(url)
    engine = make_engine(url)
    Indexer(engine, HudiTable.open(big_table)).run("ts")
    yield dump(engine)
    engine.dispose()


@pytest.mark.slow
@pytest.mark.parametrize(
    "kill_when",
    [
        "SELECT count(*) FROM log_block",  # while scanning log files
        # while resolving event times:
        "SELECT count(*) FROM log_block WHERE min_event_time_source IS NOT NULL",
    ],
    ids=["scanning", "resolving"],
)
def test_kill_9_then_rerun_equals_uninterrupted(
    db_url: str, big_table: str, reference: dict[str, Any], kill_when: str
) -> None:
    engine = make_engine(db_url)
    try:
        with index_process(db_url, big_table) as proc:
            deadline = time.monotonic() + 120
            while _count(engine, kill_when) == 0:
                assert proc.poll() is None, "the indexer ended before it could be killed"
                assert time.monotonic() < deadline
                time.sleep(0.005)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        assert proc.returncode == -signal.SIGKILL
        partial = _count(engine, "SELECT count(*) FROM log_block WHERE min_event_time_source IS NOT NULL")
        assert partial < SPEC.total_blocks  # the kill really interrupted the run
        Indexer(engine, HudiTable.open(big_table)).run("ts")
        assert dump(engine) == reference
    finally:
        engine.dispose()


@pytest.mark.slow
def test_racing_indexers_neither_duplicate_nor_lose(db_url: str, big_table: str, reference: dict[str, Any]) -> None:
    engine = make_engine(db_url)
    try:
        procs = [index_process(db_url, big_table) for _ in range(2)]
        for p in procs:
            _, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
        assert dump(engine) == reference
        assert _count(engine, "SELECT count(*) FROM log_block") == SPEC.total_blocks
    finally:
        engine.dispose()
