"""`compaction unschedule|validate|repair` and `rollback` on the command line: per-file rows as a table or JSON,
the store brought up to date, and bad input as one line on stderr, exit 2, nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudi_meta.compaction.run import run_compaction
from hudi_meta.index.db import make_engine
from hudi_meta.index.migrate import upgrade
from tests.cli.helpers import cli, cli_in_process, store_dump, tree
from tests.compaction.core import CoreTable, at, rows
from tests.compaction.undo_helpers import pending_with_appends
from tests.conftest import table_zips

COLUMNS = ["instant", "operation", "source", "target", "done", "error"]


@pytest.fixture
def store(tmp_path: Path) -> str:
    db = str(tmp_path / "store.db")
    upgrade(f"sqlite:///{db}")
    return db


@pytest.fixture
def pending(store: str, tmp_path: Path) -> tuple[CoreTable, str]:
    engine = make_engine(f"sqlite:///{store}")
    try:
        return pending_with_appends(engine, tmp_path / "t")
    finally:
        engine.dispose()


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


def test_unschedule_prints_rows_and_updates_the_store(pending: tuple[CoreTable, str], store: str) -> None:
    t, instant = pending
    before = t.read()
    dry = cli_in_process("--db", store, "compaction", "unschedule", t.path, instant, "--json")
    assert dry.code == 0, dry.stderr
    planned = json.loads(dry.stdout)
    assert [list(r) for r in planned] == [COLUMNS] * len(planned) and not any(r["done"] for r in planned)
    assert cli_in_process("--db", store, "show", "plans", t.path, "--json").stdout.count(instant) == 1

    out = cli_in_process("--db", store, "compaction", "unschedule", t.path, instant, "--execute")
    assert out.code == 0, out.stderr
    assert out.stdout.splitlines()[0].split() == COLUMNS[1:]
    assert out.stdout.splitlines()[-1] == (f"unscheduled compaction {instant}: 0 files deleted, 2 log files moved back")
    assert t.read() == before
    assert json.loads(cli_in_process("--db", store, "show", "plans", t.path, "--json").stdout) == []


def test_rollback_of_a_completed_compaction_names_the_threshold_it_moves_back(store: str, tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{store}")
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    t.write(rows(("a", 5, 2.0)))
    first = t.compact(engine, at(10))
    t.write(rows(("b", 20, 1.0)))
    second = t.compact(engine, at(30))
    engine.dispose()
    before = t.read()

    refused = cli_in_process("--db", store, "rollback", t.path, second, "--execute")
    assert refused.code == 2 and "--completed-compaction" in one_line(refused.stderr)

    out = cli_in_process("--db", store, "rollback", t.path, second, "--completed-compaction", "--execute")
    assert out.code == 0, out.stderr
    summary = out.stdout.splitlines()[-1]
    assert summary.startswith(f"rolled back compaction {second} (rollback ")
    assert f"(compaction {second}) -> " in summary and f"(compaction {first})" in summary
    timeline = json.loads(cli_in_process("--db", store, "show", "timeline", t.path, "--json").stdout)
    assert second not in {r["requested_time"] for r in timeline}
    assert [r["action"] for r in timeline].count("rollback") == 1
    assert t.read() == before


def test_validate_exits_3_on_problems_and_repair_fixes_them(store: str, tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{store}")
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    t.write(rows(("a", 5, 2.0)))
    t.write(rows(("b", 50, 1.0)))  # linked
    done = t.compact(engine, at(10))
    engine.dispose()
    before = t.read()
    link = next(Path(t.path, t.partition).glob(f".*_{done}.log.*"))
    link.unlink()

    ok = cli_in_process("--db", store, "compaction", "validate", t.path)  # no pending compaction
    assert ok.code == 0 and ok.stdout.strip() == "no pending compaction and no misplaced log file"
    found = cli_in_process("--db", store, "compaction", "validate", t.path, done, "--json")
    assert found.code == 3, found.stderr
    rows_ = json.loads(found.stdout)
    assert [(r["operation"], r["done"]) for r in rows_] == [("validate (completed)", False), ("link", False)]
    assert rows_[1]["source"].endswith(link.name) and "repair: relink" in rows_[1]["error"]

    fixed = cli_in_process("--db", store, "compaction", "repair", t.path, done, "--execute")
    assert fixed.code == 0, fixed.stderr
    assert fixed.stdout.splitlines()[-1] == f"repaired {done}: 1 steps, 0 problems left"
    assert link.is_symlink() and t.read() == before
    assert cli_in_process("--db", store, "compaction", "validate", t.path, done).code == 0


def test_a_failed_write_is_rolled_back_from_the_command_line(store: str, tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    failed = t.write(rows(("b", 2, 1.0)), commit=False)
    failed.close()
    out = cli_in_process("--db", store, "rollback", t.path, failed.instant, "--force", "--json", "--execute")
    assert out.code == 0, out.stderr
    assert [r["operation"] for r in json.loads(out.stdout)] == ["append_rollback_block"]
    assert t.table.timeline.instant(failed.instant) is None
    assert sorted(t.read()) == ["a"]


def hudi_rs_keys(path: Path) -> list[str]:
    from hudi import HudiReadOptions
    from hudi import HudiTable as RsTable

    table = pa.Table.from_batches(RsTable(str(path)).read(HudiReadOptions()))
    return sorted(table.column("txn_id").to_pylist())


def test_a_failed_write_on_a_1x_table_is_rolled_back_in_layout_2(
    store: str, tmp_path: Path, fixture_table: Any
) -> None:
    """Rule (docs/hudi-1x.md section 5): on version 8/9 a failed write's files are deleted (no command blocks), the
    rollback instant is written in timeline layout 2 (requested plan, inflight, `<t>_<c>.rollback` with `c` after
    every time on the timeline), and the failed instant's inflight and requested files are removed. Readers see
    the table as before (hudi-rs agrees)."""
    archive = next(a for a in table_zips() if a.stem == "v9_txns_simple_nometa")  # metadata table off
    table = Path(shutil.copytree(fixture_table(archive), tmp_path / "v9"))
    timeline = table / ".hoodie" / "timeline"
    failed = "20991231000000000"
    (timeline / f"{failed}.deltacommit.requested").write_bytes(b"")  # a writer died here
    (timeline / f"{failed}.deltacommit.inflight").write_bytes(b"")
    partition = next(p for p in table.iterdir() if p.name.startswith("region="))
    orphan = partition / f".{next(partition.glob('*.parquet')).name.split('_')[0]}_{failed}.log.1_0-1-0"
    orphan.write_bytes(b"#HUDI#")  # the half-written log file of the failed write
    markers = table / ".hoodie" / ".temp" / failed / partition.name
    markers.mkdir(parents=True)
    (markers / f"{orphan.name}.marker.CREATE").write_bytes(b"")
    before = hudi_rs_keys(table)
    assert before  # the fixture holds rows
    out = cli_in_process("--db", store, "rollback", str(table), failed, "--force", "--json", "--execute")
    assert out.code == 0, out.stderr
    assert [r["operation"] for r in json.loads(out.stdout)] == ["delete"]
    assert not orphan.exists()
    names = sorted(p.name for p in timeline.iterdir() if p.is_file())
    assert not [n for n in names if n.startswith(failed)]
    rollback = [n for n in names if "rollback" in n]
    assert len(rollback) == 3, rollback
    completed = next(n for n in rollback if "_" in n)
    requested, completion = completed.split(".")[0].split("_")
    assert f"{requested}.rollback.requested" in rollback and f"{requested}.rollback.inflight" in rollback
    others = [t for n in names if n != completed for t in n.split(".")[0].split("_")]
    assert completion > max(others)
    assert hudi_rs_keys(table) == before


def test_bad_input_is_one_line_exit_2_and_nothing_written(
    pending: tuple[CoreTable, str], store: str, tmp_path: Path
) -> None:
    t, instant = pending
    engine = make_engine(f"sqlite:///{store}")
    other = CoreTable(tmp_path / "other")
    other.write(rows(("a", 1, 1.0)))
    other.write(rows(("a", 2, 2.0)))
    completed = other.compact(engine, at(10))
    engine.dispose()
    first = t.table.timeline.instants[0].requested_time
    writing = t.write(rows(("z", 80, 1.0)), commit=False)  # a writer still running on t
    writing.close()
    cases = [
        (["compaction", "unschedule", str(tmp_path / "nowhere"), instant], "no such table path"),
        (["compaction", "unschedule", str(tmp_path), instant], "not a Hudi table"),
        (["compaction", "unschedule", t.path, "20990101000000000"], "no instant 20990101000000000"),
        (["compaction", "unschedule", t.path, first], f"{first} is a deltacommit, not a compaction"),
        (["compaction", "unschedule", t.path, instant], f"deltacommit {writing.instant} is still inflight"),
        (["compaction", "unschedule", other.path, completed], "is completed: unschedule takes back pending"),
        (["rollback", other.path, completed], "pass --completed-compaction"),
        (["rollback", t.path, instant], "only requested (it never ran)"),
        (["rollback", t.path, first], f"{first} is a completed deltacommit"),
        (["rollback", t.path, "20990101000000000"], "no instant 20990101000000000"),
        (["compaction", "repair", t.path, "20990101000000000"], "no instant 20990101000000000"),
        (["compaction", "validate", t.path, first], "is a deltacommit, not a compaction"),
        (["compaction", "validate", t.path, "--json", "--bogus"], "unrecognized arguments"),
    ]
    tables = {p: tree(Path(p)) for p in (t.path, other.path)}
    dump = store_dump(store)
    for args, message in cases:
        out = cli_in_process("--db", store, *args)
        assert out.code == 2, (args, out.stderr)
        assert message in one_line(out.stderr), (args, out.stderr)
        assert out.stdout == "", args
    assert {p: tree(Path(p)) for p in tables} == tables
    assert store_dump(store) == dump


@pytest.mark.slow
def test_unschedule_as_a_program(pending: tuple[CoreTable, str], store: str) -> None:
    t, instant = pending
    before = t.read()
    out = cli("--db", store, "compaction", "unschedule", t.path, instant, "--json", "--execute")
    assert out.returncode == 0, out.stderr
    assert all(r["done"] for r in json.loads(out.stdout))
    assert t.read() == before
    again = cli("--db", store, "compaction", "schedule", t.path, "--threshold", str(at(10)), "--json")
    assert again.returncode == 0, again.stderr
    scheduled = json.loads(again.stdout)[0]["instant"]
    assert scheduled is not None
    run_compaction(t.table, scheduled)
    assert t.read() == before
