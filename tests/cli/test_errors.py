"""Issue 9 item 4: an error line names the problem (never an exception class); only what a user can cause is
exit 2, a bug is exit 1 with its traceback in a log file (or on stderr with --debug), Ctrl-C is 130. Each refused
command writes nothing, and the table and the store work afterwards."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hudi_meta.table.table import HudiTable
from tests.cli.helpers import TRIPS, cli, cli_in_process, store_dump, tree

CLASS_NAME = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception)\b")


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.fixture
def trips(fixture_table: Any, tmp_path: Path) -> Path:
    return Path(shutil.copytree(fixture_table(TRIPS), tmp_path / "trips"))


@pytest.fixture
def store(tmp_path: Path) -> str:
    db = str(tmp_path / "store.db")
    assert cli("--db", db, "init-db").returncode == 0
    return db


def test_a_missing_file_is_named_not_its_exception_class(trips: Path, store: str) -> None:
    log = next(trips.rglob(".*.log.*"))
    log.unlink()
    log.symlink_to(trips / "gone")  # a link whose target is missing: open() fails with ENOENT
    before = tree(trips)
    out = cli("--db", store, "read", str(trips))
    assert out.returncode == 2
    line = one_line(out.stderr)
    assert line == f"hudi-meta: error: {log}: No such file or directory"
    assert not CLASS_NAME.search(line)
    assert tree(trips) == before


@pytest.mark.parametrize("kind", ["missing folder", "a folder", "not a database"])
def test_a_bad_db_path_is_named(kind: str, tmp_path: Path, fixture_table: Any) -> None:
    if kind == "missing folder":
        db = tmp_path / "no" / "such" / "store.db"
    elif kind == "a folder":
        db = tmp_path / "folder.db"
        db.mkdir()
    else:
        db = tmp_path / "text.db"
        db.write_text("not sqlite\n" * 100)
    before = tree(tmp_path)
    for args in (["init-db"], ["index", str(fixture_table(TRIPS))], ["show", "timeline", str(fixture_table(TRIPS))]):
        out = cli("--db", str(db), *args)
        assert out.returncode == 2, (args, out.stderr)
        line = one_line(out.stderr)
        assert line.startswith("hudi-meta: error: ") and str(db) in line, line
        assert not CLASS_NAME.search(line), line
    assert tree(tmp_path) == before


def test_an_unknown_store_url_is_one_line(tmp_path: Path) -> None:
    out = cli("--db", "nosuchdialect://host/db", "init-db")
    assert out.returncode == 2
    assert one_line(out.stderr).startswith("hudi-meta: error: metadata store nosuchdialect://host/db: ")


def test_a_bug_is_exit_1_with_the_traceback_in_a_log(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fixture_table: Any
) -> None:
    """A ValueError from inside hudi-meta is not bad input (it was exit 2 as `error: ValueError: ...`)."""

    def broken(self: HudiTable, *args: object, **kwargs: object) -> None:
        raise ValueError("slice bookkeeping went wrong")

    monkeypatch.setattr(HudiTable, "iter_read", broken)
    monkeypatch.setenv("HUDI_META_LOG_DIR", str(tmp_path))
    out = cli_in_process("read", str(fixture_table(TRIPS)))
    assert out.code == 1
    line = one_line(out.stderr)
    found = re.fullmatch(
        r"hudi-meta: internal error: slice bookkeeping went wrong \(a bug in hudi-meta; traceback in (.+)\)", line
    )
    assert found, line
    log = Path(found[1])
    assert log.parent == tmp_path
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "in broken" in text and "ValueError" in text

    debug = cli_in_process("--debug", "read", str(fixture_table(TRIPS)))
    assert debug.code == 1
    assert "Traceback (most recent call last)" in debug.stderr and "in broken" in debug.stderr
    assert debug.stderr.strip().splitlines()[-1] == "hudi-meta: internal error: slice bookkeeping went wrong"
    assert len(list(tmp_path.glob("hudi-meta-*.log"))) == 1  # --debug prints instead of writing a log


def test_ctrl_c_in_a_command_is_130_without_a_traceback(monkeypatch: pytest.MonkeyPatch, fixture_table: Any) -> None:
    def interrupted(self: HudiTable, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(HudiTable, "iter_read", interrupted)
    out = cli_in_process("read", str(fixture_table(TRIPS)))
    assert out.code == 130 and one_line(out.stderr) == "hudi-meta: interrupted"


def test_sigint_to_a_running_command_exits_130(tmp_path: Path) -> None:
    output = tmp_path / "stream"
    with subprocess.Popen(
        [sys.executable, "-m", "hudi_meta.cli.main", "generate", str(output), "--batches", "9999", "--rows", "5000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as from a terminal: a shell that started this run in the background may have set SIGINT to ignored,
        # and a process inherits that (Python then installs no KeyboardInterrupt handler)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    ) as proc:
        deadline = time.monotonic() + 120
        while not list(output.glob("batch-*")) and time.monotonic() < deadline:  # running, past its imports
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        try:
            stdout, stderr = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 130, stderr
    assert stderr.strip() == "hudi-meta: interrupted" and stdout == ""


def test_refusals_write_nothing_and_the_store_works_afterwards(trips: Path, store: str) -> None:
    """Bad arguments, values and query shapes: one line, exit 2, no file in the table or store changed."""
    t = str(trips)
    assert cli("--db", store, "index", t).returncode == 0
    bad = [
        (["compaction", "schedule", t, "--threshold", "0", "--data-latency", "1h"], "not allowed with argument"),
        (["compaction", "schedule", t, "--trigger", "SOMETIMES", "--threshold", "0"], "expected one of event-time"),
        (["compaction", "run", t, "--instant", "banana", "--engine", "local"], "not an instant time: 'banana'"),
        (["read", t, "--query", "incremental"], "needs --begin"),
        (["read", t, "--columns", "nope"], "unknown column"),
        (["index", t, "--batch-files", "0"], "argument --batch-files: expected a whole number from 1"),
        (["generate", str(trips / "gen"), "--late-share", "2"], "argument --late-share: expected a share from 0 to 1"),
        (["show", "plans", t, "--from-files"], "--from-files shows"),
    ]
    store_before = store_dump(store)
    before = tree(trips)
    for args, message in bad:
        out = cli("--db", store, *args)
        assert out.returncode == 2, (args, out.stderr)
        line = one_line(out.stderr)
        assert message in line and not CLASS_NAME.search(line), (args, line)
        assert "Traceback" not in out.stderr
    assert tree(trips) == before and store_dump(store) == store_before
    assert cli("--db", store, "index", t).returncode == 0
    timeline = json.loads(cli("--db", store, "show", "timeline", t, "--json").stdout)
    assert [r["action"] for r in timeline] == ["deltacommit", "deltacommit"]


@pytest.mark.parametrize(
    "command",
    [
        ["compaction", "run", "{table}"],
        ["ingest", "{table}", "--input", "{input}", "--record-key", "uuid", "--ordering-field", "ts", "--create"],
        ["quickstart", "--workdir", "{workdir}"],
    ],
)
def test_a_missing_spark_extra_is_one_line_naming_the_install(command: list[str], trips: Path, store: str) -> None:
    """pyspark absent (an import of it fails as when it is not installed): refused before anything runs."""
    root = trips.parent
    (root / "in.jsonl").write_text('{"uuid": "a", "ts": 1}\n')
    paths = {"table": str(trips), "input": str(root / "in.jsonl"), "workdir": str(root / "qs")}
    args = ["--db", store, *(a.format(**paths) for a in command)]
    if command[0] == "ingest":
        args[args.index(str(trips))] = str(root / "new-table")
    program = (
        "import sys; sys.modules['pyspark'] = None\n"  # `import pyspark` now fails, as when it is missing
        "from hudi_meta.cli.main import main\n"
        f"sys.exit(main({args!r}))\n"
    )
    before = tree(root)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    line = one_line(out.stderr)
    assert line.startswith("hudi-meta: error: ") and "pip install 'hudi-meta[spark]'" in line, line
    assert tree(root) == before


def test_a_sqlite_store_needs_no_postgresql_driver(trips: Path, store: str) -> None:
    """psycopg comes with the `postgres` extra only: without it, indexing into and reading from a SQLite store
    work (a module-level import of it once broke every command on a plain install)."""
    program = (
        "import sys; sys.modules['psycopg'] = None\n"  # `import psycopg` now fails, as when it is missing
        "from hudi_meta.cli.main import main\n"
        "code = main(sys.argv[1:3] + ['index', sys.argv[3]])\n"
        "sys.exit(code or main(sys.argv[1:3] + ['show', 'blocks', sys.argv[3], '--json']))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", program, "--db", store, str(trips)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert '"status": "committed"' in out.stdout
