"""`hudi-meta check`: exit 0 only when nothing is found, 3 with one line (or JSON object) per finding, 2 and one
stderr line for bad input with nothing written; a compaction killed with kill -9 leaves links that check names."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.compaction.run import CRASH_AT_ENV
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import current_revision, head_revision, upgrade
from tests.check.test_files import compacted_three_times, foreign_clean, links_of
from tests.cli.helpers import cli, store_dump, tree
from tests.compaction.core import CoreTable, at, rows

FINDING_KEYS = {"kind", "path", "detail", "instant", "target", "age_ms"}


@pytest.fixture
def store(tmp_path: Path) -> str:
    db = tmp_path / "store.db"
    upgrade(f"sqlite:///{db}")
    return str(db)


@pytest.fixture
def engine(store: str) -> Iterator[Engine]:
    engine = make_engine(f"sqlite:///{store}")
    yield engine
    engine.dispose()


@pytest.fixture
def compacted(engine: Engine, tmp_path: Path) -> tuple[CoreTable, list[str]]:
    t, instants = compacted_three_times(tmp_path / "t", engine, "symlink")
    Indexer(engine, t.table).run()
    return t, instants


def test_nothing_found_is_exit_0(compacted: tuple[CoreTable, list[str]], store: str) -> None:
    t, _ = compacted
    out = cli("--db", store, "check", t.path)
    assert (out.returncode, out.stdout) == (0, ""), out.stderr
    assert out.stderr == f"check: nothing found in {t.path}\n"
    out = cli("--db", store, "check", t.path, "--json")
    assert (out.returncode, json.loads(out.stdout), out.stderr) == (0, [], "")


def test_every_dangling_link_is_a_line_and_exit_3(compacted: tuple[CoreTable, list[str]], store: str) -> None:
    t, instants = compacted
    foreign_clean(t.path, keep=instants[-1])
    links = sorted(link for link, _ in links_of(t.table, instants[-1]))
    out = cli("check", t.path, "--no-index")
    assert out.returncode == 3, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split("  ")[:2] for line in lines] == [["dangling-link", link] for link in links]
    assert out.stderr.splitlines() == [
        "check: index drift not checked: --no-index",
        f"check: 3 findings in {t.path}: 3 dangling-link",
    ]
    out = cli("--db", store, "check", t.path, "--json")
    assert out.returncode == 3, out.stderr
    found = json.loads(out.stdout)
    assert all(set(f) == FINDING_KEYS for f in found)
    assert sorted(f["path"] for f in found if f["kind"] == "dangling-link") == links
    assert {f["kind"] for f in found} == {"dangling-link", "index-drift"}  # the store still lists what went


def test_index_drift_is_found_until_the_table_is_indexed(compacted: tuple[CoreTable, list[str]], store: str) -> None:
    t, _ = compacted
    w = t.write(rows(("late", 2000, 1.0)))
    out = cli("--db", store, "check", t.path)
    assert out.returncode == 3, out.stderr
    drift = [line.split("  ") for line in out.stdout.splitlines()]
    assert {d[0] for d in drift} == {"index-drift"}
    assert {w.instant, w.stats[0].path} <= {d[1] for d in drift}
    assert cli("--db", store, "check", t.path, "--no-index").returncode == 0
    assert cli("--db", store, "index", t.path).returncode == 0
    assert cli("--db", store, "check", t.path).returncode == 0


def test_orphan_line_says_its_age(compacted: tuple[CoreTable, list[str]]) -> None:
    t, _ = compacted
    part = Path(t.path, CoreTable.partition)
    name = f"{t.file_id}_1-0-1_29990101000000000.parquet"
    (part / name).write_bytes(b"PAR1")
    out = cli("check", t.path, "--no-index", "--json")
    assert out.returncode == 3, out.stderr
    (found,) = json.loads(out.stdout)
    assert (found["kind"], found["path"], found["instant"]) == (
        "orphan",
        f"{CoreTable.partition}/{name}",
        "29990101000000000",
    )
    assert 0 <= found["age_ms"] < 600_000 and " ago (" in found["detail"]


def test_a_killed_compaction_run_leaves_links_check_names(engine: Engine, store: str, tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    t.write(rows(("a", 3, 2.0)))
    for late in (101, 102, 103):
        t.write(rows((f"late{late}", late, 1.0)))
    result = schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(10)))
    assert result.instant is not None and result.plan is not None
    links = [f"{CoreTable.partition}/{s.symlink}" for op in result.plan.operations for s in op.symlink_operations]
    run = ["--db", store, "compaction", "run", t.path, "--engine", "local"]
    out = cli(*run, env={CRASH_AT_ENV: "before-commit"})
    assert out.returncode == -signal.SIGKILL, out.stderr
    out = cli("check", t.path, "--no-index")
    assert out.returncode == 3, out.stderr
    found = [line.split("  ") for line in out.stdout.splitlines()]
    assert [f[:2] for f in found] == [["uncommitted-link", link] for link in sorted(links)]
    assert all(f"compaction {result.instant}, which is inflight" in f[2] for f in found)
    assert cli(*run).returncode == 0
    assert cli("--db", store, "check", t.path).returncode == 0  # `compaction run` indexed the table


@pytest.mark.parametrize("given", ["--db", "default"])
def test_a_new_store_gets_its_schema_as_every_command_does(
    compacted: tuple[CoreTable, list[str]], tmp_path: Path, given: str
) -> None:
    """Issue 36 item 9: one rule for every command (README: "a new SQLite store gets its schema on first use"), so
    `check` on a store that does not exist yet creates it; the table is not registered there, so drift is not
    checked (a note), and the exit code is the table's: 0 here, 3 once a link dangles."""
    t, instants = compacted
    db = tmp_path / "new.db" if given == "--db" else tmp_path / "data" / "hudi-meta" / "hudi-meta.db"
    args = ["--db", str(db)] if given == "--db" else []
    env = {"HUDI_META_DB": "", "XDG_DATA_HOME": str(tmp_path / "data")}
    out = cli(*args, "check", t.path, env=env)
    assert out.returncode == 0, out.stderr
    assert (
        out.stderr.splitlines()[0]
        == f"check: index drift not checked: {t.path} is not registered in the metadata store {db}"
    )
    assert current_revision(f"sqlite:///{db}") == head_revision()
    db.unlink()
    foreign_clean(t.path, keep=instants[-1])
    out = cli(*args, "check", t.path, env=env)
    assert out.returncode == 3, out.stderr
    assert {line.split("  ")[0] for line in out.stdout.splitlines()} == {"dangling-link"}
    assert current_revision(f"sqlite:///{db}") == head_revision()


def test_a_table_the_store_does_not_know(tmp_path: Path, store: str) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    before = store_dump(store)
    out = cli("--db", store, "check", t.path)
    assert out.returncode == 0, out.stderr
    assert f"{t.path} is not registered in the metadata store {store}" in out.stderr
    assert store_dump(store) == before


@pytest.mark.parametrize("case", ["missing", "not-a-table", "no-folder-db", "not-a-db"])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, case: str) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    (tmp_path / "plain").mkdir()
    (tmp_path / "garbage.db").write_bytes(b"not a database" * 100)
    table, db = {
        "missing": (str(tmp_path / "nope"), None),
        "not-a-table": (str(tmp_path / "plain"), None),
        "no-folder-db": (t.path, str(tmp_path / "nope" / "store.db")),
        "not-a-db": (t.path, str(tmp_path / "garbage.db")),
    }[case]
    before = tree(tmp_path)
    out = cli(*(["--db", db] if db else []), "check", table, env={"HUDI_META_DB": "", "XDG_DATA_HOME": str(tmp_path)})
    assert (out.returncode, out.stdout) == (2, ""), out.stderr
    (line,) = out.stderr.splitlines()
    assert line.startswith("hudi-meta: error: ") and "Traceback" not in out.stderr
    expected = {
        "missing": "no such table path",
        "not-a-table": "not a Hudi table",
        "no-folder-db": "does not exist",
        "not-a-db": "metadata store",
    }[case]
    assert expected in line
    after = tree(tmp_path)
    after.pop("hudi-meta", None)  # the default store's folder (XDG_DATA_HOME), created by every command
    assert after == before
