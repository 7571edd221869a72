"""Long commands draw progress on a terminal and nothing else: on a pseudo-terminal `index` and `compaction run`
show their bars on stderr; with `--json`, or with stderr a pipe, stderr stays empty."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.index.db import make_engine
from tests.compaction.core import CoreTable, at, rows


def on_a_terminal(*args: str) -> tuple[int, str, str]:
    """Run `hudi-meta ARGS` with stderr on a pseudo-terminal (stdout a pipe): exit code, stdout, what the
    terminal received."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a terminal has a size
    try:
        done = subprocess.run(
            [sys.executable, "-m", "hudi_meta.cli.main", *args],
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            timeout=300,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
        return done.returncode, done.stdout, b"".join(chunks).decode(errors="replace")
    finally:
        os.close(leader)


def table_with_logs(root: Path) -> CoreTable:
    t = CoreTable(root / "t")
    t.write(rows(("a", 1, 1.0), ("b", 2, 1.0)))
    for n in range(3, 8):
        t.write(rows((f"k{n}", n, 1.0)))
    return t


def test_index_and_compaction_show_progress_on_a_terminal(tmp_path: Path) -> None:
    t = table_with_logs(tmp_path)
    db = f"sqlite:///{tmp_path / 'store.db'}"
    code, out, terminal = on_a_terminal("--db", db, "index", t.path)
    assert code == 0 and "log files added: 5" in out
    assert "index: log files scanned" in terminal and "/5 " in terminal
    engine = make_engine(db)
    assert schedule_compaction(engine, t.table, ScheduleRequest(threshold_ms=at(100))).instant is not None
    engine.dispose()
    code, out, terminal = on_a_terminal("--db", db, "compaction", "run", t.path, "--engine", "local")
    assert code == 0 and out.startswith("completed compaction")
    assert "compaction: file groups" in terminal and "compaction: committing" in terminal


def test_json_and_pipes_stay_quiet(tmp_path: Path) -> None:
    t = table_with_logs(tmp_path)
    db = f"sqlite:///{tmp_path / 'store.db'}"
    code, out, terminal = on_a_terminal("--db", db, "index", t.path, "--json")
    assert code == 0 and out.startswith("[") and terminal == ""
    piped = subprocess.run(
        [sys.executable, "-m", "hudi_meta.cli.main", "--db", db, "clean", t.path, "--execute"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr


def test_verbose_logs_each_change_to_the_table(tmp_path: Path) -> None:
    """`-v`: every command that writes to the table says on stderr what it wrote (the instant and the table),
    so a user can follow what happened; without it the same commands leave stderr empty (above)."""
    t = table_with_logs(tmp_path)
    db = f"sqlite:///{tmp_path / 'store.db'}"

    def verbose(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "hudi_meta.cli.main", "--db", db, "-v", *args],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return done.stderr

    assert f"indexed {t.path}: " in (first := verbose("index", t.path)) and "log_files_added=5" in first, first
    assert verbose("index", t.path) == ""  # nothing new: a polling service stays quiet
    scheduled = verbose("compaction", "schedule", t.path, "--threshold", str(at(100)))
    t.table.reload()
    instant = t.table.timeline.instants[-1].requested_time
    assert f"scheduled compaction {instant}" in scheduled
    assert f"compaction {instant} completed" in verbose("compaction", "run", t.path, "--engine", "local")
    rolled = verbose("rollback", t.path, instant, "--completed-compaction", "--execute")
    assert f"of completed compaction {instant} completed" in rolled
