"""`hudi_meta/check/index_drift.py`: index drift (the store against a fresh index of the files), on SQLite and
PostgreSQL stores, combined with the file-level findings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from hudi_meta.check.files import DANGLING_LINK, INDEX_DRIFT
from hudi_meta.check.index_drift import check_table, drift_findings
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.table.table import HudiTable
from tests.check.test_files import compacted_three_times, foreign_clean, links_of
from tests.compaction.core import CoreTable, rows
from tests.index.conftest import _pg_upgraded_template, db_url  # noqa: F401  (fixtures)


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:  # noqa: F811
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


def test_drift_findings_name_each_row_once() -> None:
    stored: dict[str, list[tuple[Any, ...]]] = {
        "instants": [("100", "deltacommit", "completed", None, False, "{}")],
        "log_files": [("p", ".f_1.log.1_1-0-1", None, "f", "1", 1, "1-0-1", 10, 10, False, None)],
        "blocks": [("p", ".f_1.log.1_1-0-1", 0, 10, "avro_data", "100", None, 1, "committed", 5, 5, "known")],
        "links": [],
    }
    fresh: dict[str, list[tuple[Any, ...]]] = {
        "instants": [
            ("100", "deltacommit", "completed", None, False, "{}"),
            ("200", "deltacommit", "completed", None, False, "{}"),
        ],
        "log_files": [("p", ".f_1.log.1_1-0-1", None, "f", "1", 1, "1-0-1", 20, 20, False, None)],
        "blocks": [
            ("p", ".f_1.log.1_1-0-1", 0, 10, "avro_data", "100", None, 1, "committed", 5, 5, "known"),
            ("p", ".f_1.log.1_1-0-1", 10, 10, "avro_data", "200", None, 1, "committed", 7, 7, "known"),
        ],
        "links": [("p", ".f_3.log.2_1-0-1", ".f_1.log.1_1-0-1", None, "300", "created")],
    }
    findings = drift_findings(stored, fresh)
    assert [(f.kind, f.path) for f in findings] == [
        (INDEX_DRIFT, "200"),
        (INDEX_DRIFT, "p/.f_1.log.1_1-0-1"),
        (INDEX_DRIFT, "p/.f_3.log.2_1-0-1"),
    ]
    instant, log, link = findings
    assert instant.detail.startswith("instant in the table, missing from the index")
    assert link.detail.startswith("link in the table, missing from the index")
    assert log.detail.startswith("log file differs: size 10 in the index, 20 in the table; indexed_offset 10")
    assert "; 1 block differs (run `hudi-meta index`)" in log.detail
    assert drift_findings(fresh, fresh) == []


def test_index_drift_after_files_change_without_reindex(engine: Engine, tmp_path: Path) -> None:
    t, instants = compacted_three_times(tmp_path / "t", engine, "symlink")
    Indexer(engine, t.table).run()
    report = check_table(t.table, engine)
    assert report.index_checked and report.findings == [] and report.notes == []

    writer = t.write(rows(("late", 2000, 1.0)))  # a new log file the store has not seen
    new_log = next(s.path for s in writer.stats)
    report = check_table(HudiTable.open(t.path), engine)
    assert {f.kind for f in report.findings} == {INDEX_DRIFT}
    paths = {f.path for f in report.findings}
    assert new_log in paths and writer.instant in paths
    assert any(f.path == new_log and "in the table, missing from the index" in f.detail for f in report.findings)

    Indexer(engine, HudiTable.open(t.path)).run()
    assert check_table(HudiTable.open(t.path), engine).findings == []

    # a cleaner that ignores links: dangling links, and the index still lists the deleted files
    deleted = foreign_clean(t.path, keep=instants[-1])
    report = check_table(HudiTable.open(t.path), engine)
    dangling = {f.path for f in report.findings if f.kind == DANGLING_LINK}
    assert dangling == {link for link, _ in links_of(t.table, instants[-1])}
    drift = {f.path for f in report.findings if f.kind == INDEX_DRIFT}
    deleted_logs = {f"{CoreTable.partition}/{n}" for n in deleted if n.startswith(".")}
    assert deleted_logs <= drift
    gone = [f for f in report.findings if f.kind == INDEX_DRIFT and f.path in deleted_logs]
    assert all("in the index, gone from the table" in f.detail for f in gone)


def test_a_table_the_store_does_not_know_is_checked_without_the_index(engine: Engine, tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    report = check_table(t.table, engine, "the store")
    assert not report.index_checked and report.findings == []
    assert report.notes == [
        f"index drift not checked: {t.table.base_path} is not registered in the metadata store the store"
    ]
