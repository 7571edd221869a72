"""Running `hudi-meta` as a user does (a subprocess) or in this process (to replace a part of it)."""

from __future__ import annotations

import contextlib
import io
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from hudi_meta.cli.main import main
from tests.conftest import table_id, table_zips

TRIPS = next(a for a in table_zips() if table_id(a).endswith("v6_trips_8i3d"))  # MOR v6: 3 slices, 1 log file


def cli(*args: str, env: dict[str, str] | None = None, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hudi_meta.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str


def cli_in_process(*args: str) -> Outcome:
    """`main(args)` with stdout and stderr captured (so a test can replace parts of hudi-meta for the run)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return Outcome(code, out.getvalue(), err.getvalue())


def tree(path: Path) -> dict[str, int]:
    """Every file under `path` with its size: to show a refused command wrote nothing."""
    return {str(p.relative_to(path)): p.lstat().st_size for p in sorted(path.rglob("*"))}


def store_dump(db: str) -> list[str]:
    """The SQL text of every row in a SQLite store (its bytes change when the WAL is checkpointed)."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return list(conn.iterdump())
