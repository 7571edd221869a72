"""`hudi-meta archive`: a dry run unless `--execute` (like `clean`), every timeline file with what happens to it,
`--json` rows, on version 6 (the 0.x archived log) as on 8 and 9 (the LSM history); bad input, and what is not
supported, is one line and exit 2."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import pytest

from hudi_meta.table.table import HudiTable
from hudi_meta.write.archival import archive_timeline
from hudi_meta.write.writer import WriteClient
from tests.cli.helpers import cli_in_process, tree
from tests.write.test_archival import write_table
from tests.write.test_writer import batch


@pytest.fixture
def table_path(tmp_path: Path) -> Path:
    write_table(tmp_path / "t")
    return tmp_path / "t"


def test_a_dry_run_lists_what_would_go_and_writes_nothing(table_path: Path) -> None:
    before = tree(table_path)
    out = cli_in_process("archive", str(table_path))
    assert out.code == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("archive plan (dry run): 8 completed commits, more than hoodie.keep.max.commits=4")
    assert lines[1].split() == ["instant", "action", "completion", "file", "history"]
    assert len(lines) == 2 + 6 * 3 + 1  # header, 6 instants of 3 files each, the last line
    assert lines[-1] == "dry run: nothing archived (--execute to archive)"
    assert tree(table_path) == before


def test_execute_archives_and_says_where(table_path: Path) -> None:
    out = cli_in_process("archive", str(table_path), "--execute")
    assert out.code == 0, out.stderr
    history = sorted(p.name for p in (table_path / ".hoodie" / "timeline" / "history").glob("*.parquet"))
    assert out.stdout.splitlines()[-1] == f"archived 6 instants into {history[0]}"
    again = cli_in_process("archive", str(table_path), "--execute")
    assert again.code == 0 and again.stdout.splitlines()[-1] == "nothing to archive", again.stdout


def test_json_rows_one_per_timeline_file(table_path: Path) -> None:
    out = cli_in_process("archive", str(table_path), "--execute", "--json")
    assert out.code == 0, out.stderr
    rows = json.loads(out.stdout)
    assert len(rows) == 18 and all(r["done"] and r["error"] is None for r in rows)
    assert set(rows[0]) == {"instant", "action", "completion", "file", "history", "done", "error"}
    assert len({r["history"] for r in rows}) == 1


def test_the_limits_can_be_given_and_are_checked(table_path: Path) -> None:
    out = cli_in_process("archive", str(table_path), "--min-commits", "3", "--max-commits", "7")
    assert out.code == 0 and "8 completed commits, more than hoodie.keep.max.commits=7: 5 archived" in out.stdout
    for args, message in (
        (["--min-commits", "4"], "hoodie.keep.max.commits=4 must be greater than hoodie.keep.min.commits=4"),
        (["--min-commits", "1"], "hoodie.keep.min.commits=1 must be greater than hoodie.clean.commits.retained=1"),
        (["--max-commits", "1"], "argument --max-commits: expected a whole number from 2"),
    ):
        out = cli_in_process("archive", str(table_path), *args)
        assert out.code == 2 and out.stdout == "", (args, out)
        assert len(out.stderr.splitlines()) == 1 and message in out.stderr, out.stderr


@pytest.mark.parametrize("version", [6, 9])
def test_version_6_archives_into_the_archived_log_as_9_into_the_history(tmp_path: Path, version: int) -> None:
    write_table(tmp_path / "t", version=version)
    out = cli_in_process("archive", str(tmp_path / "t"))
    assert out.code == 0, out.stderr
    assert out.stdout.splitlines()[0].startswith("archive plan (dry run): 8 completed commits, more than")
    assert len(out.stdout.splitlines()) == 2 + 6 * 3 + 1
    out = cli_in_process("archive", str(tmp_path / "t"), "--execute", "--json")
    assert out.code == 0, out.stderr
    rows = json.loads(out.stdout)
    assert len(rows) == 18 and all(r["done"] and r["error"] is None for r in rows)
    target = {r["history"] for r in rows}
    if version == 6:
        assert target == {".commits_.archive.1_1-0-1"}
        assert (tmp_path / "t" / ".hoodie" / "archived" / ".commits_.archive.1_1-0-1").is_file()
    else:
        assert target == {p.name for p in (tmp_path / "t" / ".hoodie" / "timeline" / "history").glob("*.parquet")}
    again = cli_in_process("archive", str(tmp_path / "t"), "--execute")
    assert again.code == 0 and again.stdout.splitlines()[-1] == "nothing to archive", again.stdout


def test_what_is_not_supported_and_a_missing_path_are_one_line(tmp_path: Path) -> None:
    write_table(tmp_path / "v6", version=6, writes=2)
    (tmp_path / "v6" / ".hoodie" / "archived").mkdir()
    (tmp_path / "v6" / ".hoodie" / "archived" / "mergeArchivePlan").write_bytes(b"")
    out = cli_in_process("archive", str(tmp_path / "v6"), "--execute")
    assert out.code == 2 and len(out.stderr.splitlines()) == 1
    assert "a merge of small archive files by Java's archiver did not finish" in out.stderr
    out = cli_in_process("archive", str(tmp_path / "nothing"))
    assert out.code == 2 and out.stderr.startswith("hudi-meta: error: no such table path"), out.stderr


def _stored(db: str) -> dict[str, tuple[str, str | None, bool]]:
    """requested time -> (state, completion time, archived) of every instant in the store."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT requested_time, state, completion_time, summary FROM instant").fetchall()
    return {r[0]: (r[1], r[2], bool(json.loads(r[3]).get("archived"))) for r in rows}


def _indexed_then_cleaned(tmp_path: Path, version: int) -> tuple[str, str, dict[str, str | None]]:
    """Five delta commits, indexed; a compaction of every file group (copy mode: no links); three more delta
    commits; a clean that deletes the compacted slices; the index again. The table path, the store, and the
    completed instants the store holds (requested -> completion time)."""
    write_table(tmp_path / "t", version=version, writes=5)
    path, db = str(tmp_path / "t"), str(tmp_path / "store.db")
    schedule = ["compaction", "schedule", path, "--strategy", "unbounded", "--mode", "copy"]
    schedule += ["--trigger", "num-commits", "--max-delta-commits", "1"]
    for args in (["init-db"], ["index", path], schedule, ["compaction", "run", path, "--engine", "local"]):
        out = cli_in_process("--db", db, *args)
        assert out.code == 0, (args, out)
    table = HudiTable.open(path)
    fid = next(fg.file_id for fg in table.file_groups() if fg.partition == "region=eu")
    for k in range(3):
        w = WriteClient(table)
        w.begin()
        w.append_log("region=eu", fid, batch("eu", [k], 9_000 + k))
        w.commit()
    clean = cli_in_process("--db", db, "clean", path, "--execute")
    assert clean.code == 0 and "completed clean" in clean.stdout and "6 files deleted" in clean.stdout, clean
    assert cli_in_process("--db", db, "index", path).code == 0
    before = {t: c for t, (state, c, _) in _stored(db).items() if state == "completed"}
    return path, db, before


def _archived_rule(path: str, db: str, before: dict[str, str | None]) -> None:
    """The store holds the active timeline, each instant not archived, plus every instant it held before that
    archival moved: completed, at its completion time, archived (the rule of docs/archival.md section 6)."""
    table = HudiTable.open(path)
    active = {i.requested_time: (i.state, i.completion_time) for i in table.timeline.instants}
    moved = {t: c for t, c in before.items() if t not in active}
    assert moved and set(moved) <= set(table.archived)
    expected = {t: (str(s), c, False) for t, (s, c) in active.items()}
    expected |= {t: ("completed", c, True) for t, c in moved.items()}
    assert _stored(db) == expected


@pytest.mark.parametrize("version", [6, 9])
def test_check_is_clean_right_after_archive_and_the_store_holds_the_archived_instants(
    tmp_path: Path, version: int
) -> None:
    path, db, before = _indexed_then_cleaned(tmp_path, version)
    out = cli_in_process("--db", db, "archive", path, "--execute")
    assert out.code == 0, out
    assert out.stdout.splitlines()[-1] == "metadata store updated: instants_archived=5", out.stdout
    check = cli_in_process("--db", db, "check", path)
    assert check.code == 0, check.stdout
    _archived_rule(path, db, before)
    again = cli_in_process("--db", db, "index", path, "--json")
    assert again.code == 0 and not any(json.loads(again.stdout)[0].values()), again.stdout


@pytest.mark.parametrize("version", [6, 9])
def test_an_archive_without_its_index_update_is_named_by_check_and_finished_by_index(
    tmp_path: Path, version: int
) -> None:
    """A kill between the archival and the store's update (here: archived through the Python API, which does not
    touch the store): `check` names each archived instant as archived, never as gone; `index` marks them and
    says so."""
    path, db, before = _indexed_then_cleaned(tmp_path, version)
    report = archive_timeline(HudiTable.open(path), dry_run=False)
    times = sorted(i.instant for i in report.archived)
    assert len(times) == 5
    check = cli_in_process("--db", db, "check", path)
    assert check.code == 3, check
    assert check.stdout.splitlines() == [
        f"index-drift  {t}  instant archived on the table, completed in the index (run `hudi-meta index`)"
        for t in times
    ]
    index = cli_in_process("--db", db, "index", path, "--json")
    assert index.code == 0, index
    stats = json.loads(index.stdout)[0]
    assert stats["instants_archived"] == 5 and stats["instants_removed"] == 0, stats
    assert cli_in_process("--db", db, "check", path).code == 0
    _archived_rule(path, db, before)
