"""`read --query ro --complete-before T [--strict]` (issue 11): RO when its watermark is at or after T, else
the snapshot view with one line on stderr, or exit 3 with --strict. The table: T = 10 s compacted a (5 s) and
b (2 s); c (50 s) is in a log file, so the watermark is T and RO holds a and b only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import Engine

from tests.cli.helpers import cli
from tests.compaction.core import at
from tests.sync.helpers import compacted_table


@pytest.fixture
def table(engine: Engine, tmp_path: Path) -> tuple[str, str]:
    t, _ = compacted_table(tmp_path / "t", engine)
    return str(engine.url), t.path


def ids(stdout: str) -> list[str]:
    return sorted(json.loads(line)["id"] for line in stdout.splitlines())


def test_ro_when_it_is_complete_before_t(table: tuple[str, str]) -> None:
    db, path = table
    out = cli("--db", db, "read", path, "--query", "ro", "--complete-before", str(at(10)), "--strict")
    assert (out.returncode, out.stderr, ids(out.stdout)) == (0, "", ["a", "b"])


def test_the_snapshot_view_said_on_stderr_when_ro_is_not_complete(table: tuple[str, str]) -> None:
    db, path = table
    out = cli("--db", db, "read", path, "--query", "ro", "--complete-before", "2026-01-01T00:00:11Z")
    assert out.returncode == 0 and ids(out.stdout) == ["a", "b", "c"]
    assert out.stderr.splitlines() == [
        "hudi-meta: the read-optimized view holds all data before 2026-01-01T00:00:10.000Z only, not all data "
        "before 2026-01-01T00:00:11.000Z: reading the snapshot view instead"
    ]


def test_strict_exits_3_with_nothing_read(table: tuple[str, str]) -> None:
    db, path = table
    out = cli("--db", db, "read", path, "--query", "ro", "--complete-before", str(at(11)), "--strict")
    assert (out.returncode, out.stdout) == (3, "") and len(out.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--query", "snapshot", "--complete-before", "0"], "hudi-meta: error: --complete-before goes with --query ro"),
        (["--query", "ro", "--strict"], "hudi-meta: error: --strict goes with --complete-before"),
        (
            ["--query", "ro", "--complete-before", "soon"],
            "hudi-meta read: error: argument --complete-before: "
            "not a time: 'soon' (use ISO-8601 or epoch milliseconds)",
        ),
    ],
)
def test_bad_combinations_are_one_line(table: tuple[str, str], args: list[str], message: str) -> None:
    db, path = table
    out = cli("--db", db, "read", path, *args)
    assert out.returncode == 2 and out.stdout == "" and out.stderr.strip() == message
