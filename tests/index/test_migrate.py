"""Alembic migrations of the metadata store on SQLite and PostgreSQL: round trips, drift, names, shipping."""

from __future__ import annotations

import datetime as dt
import io
import signal
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, func, inspect, pool, select
from sqlalchemy.engine import Inspector
from sqlalchemy.exc import IntegrityError

import hudi_meta
from hudi_meta.index.migrate import (
    alembic_config,
    current_revision,
    downgrade,
    head_revision,
    migrations_dir,
    upgrade,
)
from hudi_meta.index.models import (
    cleaned_file_table,
    hudi_table,
    log_block_table,
    log_file_table,
    metadata,
    service_lease_table,
    service_step_table,
    sync_run_table,
)

APP_TABLES = set(metadata.tables)
REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_url(request: pytest.FixtureRequest) -> str:
    """A blank database of this test alone, on each backend."""
    name = "sqlite_url" if request.param == "sqlite" else "pg_fresh_url"
    url: str = request.getfixturevalue(name)
    return url


def table_names(url: str) -> set[str]:
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def schema_diff(url: str) -> list[object]:
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True})
            return list(compare_metadata(context, metadata))
    finally:
        engine.dispose()


def index_names(insp: Inspector, table: str) -> set[str | None]:
    """Explicit indexes only: PostgreSQL also reports the index backing each unique constraint."""
    return {ix["name"] for ix in insp.get_indexes(table) if not ix.get("duplicates_constraint")}


def test_single_linear_history() -> None:
    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    assert script.get_heads() == ["0009"]
    assert head_revision() == "0009"
    revisions = ["0009", "0008", "0007", "0006", "0005", "0004", "0003", "0002", "0001"]
    assert [rev.revision for rev in script.walk_revisions()] == revisions


def test_migrations_ship_as_a_package() -> None:
    directory = migrations_dir()
    assert directory == (REPO_ROOT / "migrations").resolve()
    assert (directory / "env.py").is_file()
    assert (directory / "script.py.mako").is_file()
    assert (directory / "versions" / "0001_initial.py").is_file()


def test_pyproject_lists_every_package() -> None:
    """Packages are listed by hand (package-dir maps migrations/); a new folder must be added to the list."""
    setuptools_cfg = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools_cfg["packages"])
    package_root = Path(hudi_meta.__file__).resolve().parent
    folders = {"hudi_meta"} | {
        "hudi_meta." + ".".join(path.relative_to(package_root).parts)
        for path in package_root.rglob("*")
        if path.is_dir() and path.name != "__pycache__" and any(path.iterdir())
    }
    folders |= {"hudi_meta.migrations", "hudi_meta.migrations.versions", "hudi_meta.spark", "hudi_meta.web"}
    assert not folders - listed, f"add these to [tool.setuptools] packages in pyproject.toml: {folders - listed}"
    assert setuptools_cfg["package-dir"] == {
        "hudi_meta": "hudi_meta",
        "hudi_meta.migrations": "migrations",
        "hudi_meta.spark": "spark",
        "hudi_meta.web": "web",
    }


def test_round_trip(fresh_url: str) -> None:
    assert current_revision(fresh_url) is None

    upgrade(fresh_url)
    assert current_revision(fresh_url) == head_revision()
    assert table_names(fresh_url) == APP_TABLES | {"alembic_version"}

    downgrade(fresh_url)
    assert current_revision(fresh_url) is None
    assert not table_names(fresh_url) & APP_TABLES

    upgrade(fresh_url, "head")
    assert current_revision(fresh_url) == head_revision()
    assert table_names(fresh_url) == APP_TABLES | {"alembic_version"}
    assert schema_diff(fresh_url) == []


def test_0002_adds_sync_runs_and_steps_back_keeping_the_rest(fresh_url: str) -> None:
    """One revision up and down: registered tables survive both steps; sync runs exist only at 0002."""
    upgrade(fresh_url, "0001")
    engine = create_engine(fresh_url, poolclass=pool.NullPool)
    row = {"id": 1, "base_path": "/t", "name": "t", "table_type": "MERGE_ON_READ", "table_version": 6}
    row |= {"timeline_layout": 1, "record_key_fields": "id", "options": "{}", "registered_at": dt.datetime.now(dt.UTC)}
    try:
        with engine.begin() as conn:
            conn.execute(hudi_table.insert(), row)
        upgrade(fresh_url, "0002")
        assert current_revision(fresh_url) == "0002" and "sync_run" in table_names(fresh_url)
        run = {"table_id": 1, "mode": "hms", "uri": "thrift://h:9083", "started_at": dt.datetime.now(dt.UTC)}
        run |= {"duration_ms": 5, "outcome": "ok", "changes": 2, "message": ""}
        with engine.begin() as conn:
            conn.execute(sync_run_table.insert(), run)
        downgrade(fresh_url, "0001")
        assert current_revision(fresh_url) == "0001" and "sync_run" not in table_names(fresh_url)
        with engine.connect() as conn:
            assert conn.execute(hudi_table.select()).one().base_path == "/t"
    finally:
        engine.dispose()


def test_0003_adds_cleaned_files_and_steps_back_keeping_the_rest(fresh_url: str) -> None:
    """One revision up and down: sync runs survive both steps; cleaned files exist only at 0003, and two rows
    for the same file of the same clean are refused (the indexer's idempotent inserts rely on it)."""
    upgrade(fresh_url, "0002")
    engine = create_engine(fresh_url, poolclass=pool.NullPool)
    row = {"id": 1, "base_path": "/t", "name": "t", "table_type": "MERGE_ON_READ", "table_version": 6}
    row |= {"timeline_layout": 1, "record_key_fields": "id", "options": "{}", "registered_at": dt.datetime.now(dt.UTC)}
    run = {"table_id": 1, "mode": "hms", "uri": "thrift://h:9083", "started_at": dt.datetime.now(dt.UTC)}
    run |= {"duration_ms": 5, "outcome": "ok", "changes": 2, "message": ""}
    cleaned = {"table_id": 1, "clean_instant": "20260101000000000", "partition_path": "p", "name": ".f_1.log.1_0"}
    try:
        with engine.begin() as conn:
            conn.execute(hudi_table.insert(), row)
            conn.execute(sync_run_table.insert(), run)
        upgrade(fresh_url, "0003")
        assert current_revision(fresh_url) == "0003" and "cleaned_file" in table_names(fresh_url)
        with engine.begin() as conn:
            conn.execute(cleaned_file_table.insert(), cleaned)
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(cleaned_file_table.insert(), cleaned)
        downgrade(fresh_url, "0002")
        assert current_revision(fresh_url) == "0002" and "cleaned_file" not in table_names(fresh_url)
        with engine.connect() as conn:
            assert conn.execute(sync_run_table.select()).one().uri == "thrift://h:9083"
    finally:
        engine.dispose()


def test_0004_adds_service_state_and_steps_back_keeping_the_rest(fresh_url: str) -> None:
    """One revision up and down: cleaned files survive both steps; step records and leases exist only at 0004,
    and a table has one lease at most (the service's mutual exclusion relies on it)."""
    upgrade(fresh_url, "0003")
    engine = create_engine(fresh_url, poolclass=pool.NullPool)
    now = dt.datetime.now(dt.UTC)
    row = {"id": 1, "base_path": "/t", "name": "t", "table_type": "MERGE_ON_READ", "table_version": 6}
    row |= {"timeline_layout": 1, "record_key_fields": "id", "options": "{}", "registered_at": now}
    cleaned = {"table_id": 1, "clean_instant": "20260101000000000", "partition_path": "p", "name": ".f_1.log.1_0"}
    lease = {"table_id": 1, "holder": "a", "acquired_at": now, "expires_at": now}
    step = {"table_id": 1, "worker": "a", "step": "index", "status": "idle", "started_at": now, "detail": "{}"}
    try:
        with engine.begin() as conn:
            conn.execute(hudi_table.insert(), row)
            conn.execute(cleaned_file_table.insert(), cleaned)
        upgrade(fresh_url, "0004")
        assert current_revision(fresh_url) == "0004"
        assert {"service_step", "service_lease"} <= table_names(fresh_url)
        with engine.begin() as conn:
            conn.execute(service_lease_table.insert(), lease)
            conn.execute(service_step_table.insert(), step)
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(service_lease_table.insert(), lease | {"holder": "b"})
        downgrade(fresh_url, "0003")
        assert current_revision(fresh_url) == "0003"
        assert not {"service_step", "service_lease"} & table_names(fresh_url)
        with engine.connect() as conn:
            assert conn.execute(cleaned_file_table.select()).one().name == ".f_1.log.1_0"
    finally:
        engine.dispose()


def one_block() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Rows of a table, one log file and one committed block of it (min event time 5), as 0001-0007 take them."""
    row = {"id": 1, "base_path": "/t", "name": "t", "table_type": "MERGE_ON_READ", "table_version": 6}
    row |= {"timeline_layout": 1, "record_key_fields": "id", "options": "{}", "registered_at": dt.datetime.now(dt.UTC)}
    log = {"id": 1, "table_id": 1, "partition_path": "p", "name": ".f_1.log.1_0-1-0", "file_id": "f"}
    log |= {"base_instant": "1", "version": 1, "write_token": "0-1-0", "size": 9, "indexed_offset": 9, "is_link": False}
    block = {"table_id": 1, "log_file_id": 1, "offset": 0, "length": 9, "block_type": "avro_data"}
    block |= {"status": "committed", "min_event_time": 5}
    return row, log, block


def test_0005_swaps_the_log_file_index_for_the_summary_index_keeping_blocks(fresh_url: str) -> None:
    """One revision up and down: blocks survive both steps; at 0005 the covering summary index replaces the
    one-column log file index (the unique (log_file_id, offset) index still leads with log_file_id)."""
    upgrade(fresh_url, "0004")
    engine = create_engine(fresh_url, poolclass=pool.NullPool)
    row, log, block = one_block()

    def log_block_indexes() -> set[str | None]:
        return index_names(inspect(engine), "log_block")

    try:
        with engine.begin() as conn:
            conn.execute(hudi_table.insert(), row)
            conn.execute(log_file_table.insert(), log)
            conn.execute(log_block_table.insert(), block)
        assert "ix_log_block_log_file_id" in log_block_indexes()
        upgrade(fresh_url, "0005")
        assert "ix_log_block_file_summary" in log_block_indexes()
        assert "ix_log_block_log_file_id" not in log_block_indexes()
        downgrade(fresh_url, "0004")
        assert current_revision(fresh_url) == "0004"
        assert "ix_log_block_log_file_id" in log_block_indexes()
        assert "ix_log_block_file_summary" not in log_block_indexes()
        with engine.connect() as conn:
            assert conn.execute(select(log_block_table.c.min_event_time)).scalar_one() == 5
    finally:
        engine.dispose()


def test_0006_fills_each_log_file_summary_from_its_blocks_and_steps_back(fresh_url: str) -> None:
    """One revision up and down: at 0006 each log file already indexed carries the summary of its data and
    delete blocks, worked out by hand below from the rules of `hudi_meta.index.log_file_summary`; blocks and
    files survive both steps."""
    upgrade(fresh_url, "0005")
    engine = create_engine(fresh_url, poolclass=pool.NullPool)
    row, log, _ = one_block()
    logs = [log | {"id": i, "name": f".f_1.log.{i}_0-1-0", "version": i} for i in (1, 2, 3, 4)]

    def block(file: int, offset: int, kind: str, status: str, instant: str, lo: int | None, source: str | None) -> Any:
        row = {"table_id": 1, "log_file_id": file, "offset": offset, "length": 9, "block_type": kind}
        return row | {"status": status, "instant": instant, "min_event_time": lo, "min_event_time_source": source}

    blocks = [
        block(1, 0, "avro_data", "committed", "101", 50, "header"),  # file 1: min of the committed blocks,
        block(1, 9, "delete", "committed", "103", 40, "write_stat"),  # the newest instant of any block
        block(1, 18, "avro_data", "rolled_back", "105", 10, "header"),
        block(2, 0, "avro_data", "uncommitted", "107", None, None),  # file 2: uncommitted, no committed time
        block(3, 0, "parquet_data", "committed", "102", None, None),  # file 3: a committed block unresolved
        block(3, 9, "avro_data", "committed", "102", 70, "record_scan"),
        block(4, 0, "command", "committed", "109", None, None),  # file 4: no data or delete block
    ]
    expected = {
        1: (40, "105", False, False),
        2: (None, "107", True, False),
        3: (70, "102", False, True),
        4: (None, None, False, False),
    }
    f = log_file_table.c
    try:
        with engine.begin() as conn:  # at 0005: the model's new columns are left out of these inserts
            conn.execute(hudi_table.insert(), row)
            conn.execute(log_file_table.insert(), logs)
            conn.execute(log_block_table.insert(), blocks)
        upgrade(fresh_url, "0006")
        with engine.connect() as conn:
            summaries = select(
                f.id, f.min_event_time, f.last_block_instant, f.has_uncommitted, f.has_unknown_event_time
            )
            got = {r[0]: (r[1], r[2], bool(r[3]), bool(r[4])) for r in conn.execute(summaries)}
        assert got == expected
        downgrade(fresh_url, "0005")
        assert current_revision(fresh_url) == "0005"
        columns = {c["name"] for c in inspect(engine).get_columns("log_file")}
        assert not {"min_event_time", "last_block_instant", "has_uncommitted", "has_unknown_event_time"} & columns
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(log_block_table)).scalar() == len(blocks)
            assert conn.execute(select(func.count()).select_from(log_file_table)).scalar() == len(logs)
    finally:
        engine.dispose()


def test_0007_drops_the_blocks_table_foreign_key_keeping_blocks_and_the_rest(fresh_url: str) -> None:
    """One revision up and down: blocks, their indexes, unique key and log file foreign key survive both
    steps; only the foreign key from `log_block.table_id` to `hudi_table` goes, and comes back."""
    upgrade(fresh_url, "0006")
    engine = create_engine(fresh_url, poolclass=pool.NullPool)
    row, log, block = one_block()

    def shape() -> tuple[set[str | None], set[tuple[str, ...]], set[str | None]]:
        insp = inspect(engine)
        keys = {tuple(fk["constrained_columns"]) for fk in insp.get_foreign_keys("log_block")}
        uniques = {u["name"] for u in insp.get_unique_constraints("log_block")}
        return index_names(insp, "log_block"), keys, uniques

    try:
        with engine.begin() as conn:
            conn.execute(hudi_table.insert(), row)
            conn.execute(log_file_table.insert(), log)
            conn.execute(log_block_table.insert(), block)
        before = shape()
        assert before[1] == {("table_id",), ("log_file_id",)}
        upgrade(fresh_url, "0007")
        after = shape()
        assert after == (before[0], {("log_file_id",)}, before[2])
        downgrade(fresh_url, "0006")
        assert shape() == before
        with engine.connect() as conn:
            assert conn.execute(select(log_block_table.c.min_event_time)).scalar_one() == 5
    finally:
        engine.dispose()


def test_0008_drops_the_unused_freshness_table_and_steps_back(fresh_url: str) -> None:
    """One revision up and down: registered tables survive both steps; `freshness` (never written or read)
    exists only before 0008 and comes back empty with its constraints and index."""
    upgrade(fresh_url, "0007")
    engine = create_engine(fresh_url, poolclass=pool.NullPool)
    row, _, _ = one_block()

    def freshness_shape() -> tuple[set[str | None], set[str | None], list[str]]:
        insp = inspect(engine)
        uniques = {u["name"] for u in insp.get_unique_constraints("freshness")}
        keys = {fk["name"] for fk in insp.get_foreign_keys("freshness")}
        return uniques | keys, index_names(insp, "freshness"), [c["name"] for c in insp.get_columns("freshness")]

    try:
        with engine.begin() as conn:
            conn.execute(hudi_table.insert(), row)
        before = freshness_shape()
        assert before[1] == {"ix_freshness_table_id"} and "late_blocks" in before[2]
        upgrade(fresh_url, "0008")
        assert current_revision(fresh_url) == "0008" and "freshness" not in table_names(fresh_url)
        downgrade(fresh_url, "0007")
        assert current_revision(fresh_url) == "0007" and freshness_shape() == before
        with engine.connect() as conn:
            assert conn.execute(hudi_table.select()).one().base_path == "/t"
    finally:
        engine.dispose()


def test_0009_adds_late_record_counts_to_blocks_and_steps_back(fresh_url: str) -> None:
    """One revision up and down: blocks survive both steps; at 0009 they have empty late-record counts (the next
    index run counts them), which take a count and the threshold it was counted at."""
    upgrade(fresh_url, "0008")
    engine = create_engine(fresh_url, poolclass=pool.NullPool)
    row, log, block = one_block()
    b = log_block_table.c

    def columns() -> set[str]:
        return {c["name"] for c in inspect(engine).get_columns("log_block")}

    try:
        with engine.begin() as conn:
            conn.execute(hudi_table.insert(), row)
            conn.execute(log_file_table.insert(), log)
            conn.execute(log_block_table.insert(), block)
        assert not {"late_threshold", "late_records"} & columns()
        upgrade(fresh_url, "0009")
        with engine.begin() as conn:
            assert conn.execute(select(b.late_threshold, b.late_records)).one() == (None, None)
            conn.execute(log_block_table.update().values(late_threshold=10, late_records=3))
            assert conn.execute(select(b.min_event_time, b.late_threshold, b.late_records)).one() == (5, 10, 3)
        downgrade(fresh_url, "0008")
        assert current_revision(fresh_url) == "0008" and not {"late_threshold", "late_records"} & columns()
        with engine.connect() as conn:
            assert conn.execute(select(b.min_event_time, b.record_count)).one() == (5, None)
    finally:
        engine.dispose()


KILL_AT_COPY = """
import os, signal, sys
from sqlalchemy import Engine, event
from hudi_meta.index.migrate import upgrade

def kill_at_the_copy(conn, cursor, statement, *_):
    if statement.startswith("INSERT INTO _alembic_tmp_log_block"):
        os.kill(os.getpid(), signal.SIGKILL)

event.listen(Engine, "before_cursor_execute", kill_at_the_copy)
upgrade(sys.argv[1])
"""


def test_an_upgrade_killed_halfway_leaves_nothing_of_itself(sqlite_url: str) -> None:
    """kill -9 in the middle of 0007's batch copy, after it created its temporary table. SQLite's driver ran
    DDL outside any transaction, so that table stayed and every later upgrade failed on it; an upgrade is now
    one transaction: the store is as before the kill and the next upgrade succeeds."""
    upgrade(sqlite_url, "0006")
    engine = create_engine(sqlite_url, poolclass=pool.NullPool)
    row, log, block = one_block()
    with engine.begin() as conn:
        conn.execute(hudi_table.insert(), row)
        conn.execute(log_file_table.insert(), log)
        conn.execute(log_block_table.insert(), block)
    killed = subprocess.run([sys.executable, "-c", KILL_AT_COPY, sqlite_url], capture_output=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    try:
        assert current_revision(sqlite_url) == "0006"
        assert "_alembic_tmp_log_block" not in table_names(sqlite_url)
        upgrade(sqlite_url)
        assert current_revision(sqlite_url) == head_revision()
        with engine.connect() as conn:
            assert conn.execute(select(log_block_table.c.min_event_time)).scalar_one() == 5
    finally:
        engine.dispose()


def test_round_trip_through_env_url(fresh_url: str) -> None:
    """Without a connection in `config.attributes`, env.py opens its own from `sqlalchemy.url` (CLI use)."""
    config = alembic_config(fresh_url)
    command.upgrade(config, "head")
    assert current_revision(fresh_url) == head_revision()
    command.downgrade(config, "base")
    assert not table_names(fresh_url) & APP_TABLES
    command.upgrade(config, "head")
    assert schema_diff(fresh_url) == []


def test_upgrade_is_idempotent(db_url: str) -> None:
    upgrade(db_url)
    assert current_revision(db_url) == head_revision()


def test_no_drift_after_upgrade(db_url: str) -> None:
    assert schema_diff(db_url) == []


def test_constraint_names_follow_convention(db_url: str) -> None:
    engine = create_engine(db_url, poolclass=pool.NullPool)
    try:
        insp = inspect(engine)
        log_block_uniques = {uc["name"] for uc in insp.get_unique_constraints("log_block")}
        assert log_block_uniques == {"uq_log_block_log_file_id_offset"}
        assert insp.get_pk_constraint("log_block")["name"] == "pk_log_block"
        assert {fk["name"] for fk in insp.get_foreign_keys("log_block")} == {"fk_log_block_log_file_id_log_file"}
        assert index_names(insp, "log_block") == {
            "ix_log_block_file_summary",
            "ix_log_block_table_instant",
            "ix_log_block_table_status_min",
        }
        assert {uc["name"] for uc in insp.get_unique_constraints("hudi_table")} == {"uq_hudi_table_base_path"}

        # Every table: exactly the names the models' naming convention yields.
        for table in metadata.sorted_tables:
            expected_uq = {c.name for c in table.constraints if c.__visit_name__ == "unique_constraint"}
            expected_uq |= {f"uq_{table.name}_{c.name}" for c in table.columns if c.unique}
            expected_fk = {fk.name for fk in table.foreign_key_constraints}
            expected_ix = {ix.name for ix in table.indexes}
            assert {uc["name"] for uc in insp.get_unique_constraints(table.name)} == expected_uq, table.name
            assert {fk["name"] for fk in insp.get_foreign_keys(table.name)} == expected_fk, table.name
            assert index_names(insp, table.name) == expected_ix, table.name
            assert insp.get_pk_constraint(table.name)["name"] == f"pk_{table.name}", table.name
    finally:
        engine.dispose()


@pytest.mark.parametrize("url", ["sqlite:///unused.db", "postgresql+psycopg://user@localhost/unused"])
def test_offline_mode_renders_sql(url: str) -> None:
    buffer = io.StringIO()
    config = alembic_config(url)
    config.output_buffer = buffer
    command.upgrade(config, "head", sql=True)
    command.downgrade(config, "head:base", sql=True)
    script = buffer.getvalue()
    assert "CREATE TABLE log_block" in script
    assert 'CONSTRAINT uq_log_block_log_file_id_offset UNIQUE (log_file_id, "offset")' in script
    assert "DROP TABLE hudi_table" in script


def test_migrations_print_nothing(sqlite_url: str, capfd: pytest.CaptureFixture[str]) -> None:
    upgrade(sqlite_url)
    downgrade(sqlite_url)
    assert current_revision(sqlite_url) is None
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_current_revision_of_missing_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.db"
    assert current_revision(str(path)) is None
    assert not path.exists()


def test_current_revision_of_blank_postgres(pg_url: str) -> None:
    assert current_revision(pg_url) is None
