"""`hudi-meta archive`: a dry run unless `--execute` (like `clean`), every timeline file with what happens to it,
`--json` rows, on version 6 (the 0.x archived log) as on 8 and 9 (the LSM history); bad input, and what is not
supported, is one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import cli_in_process, tree
from tests.table.test_archival import write_table


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
