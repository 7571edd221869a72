"""Issue 25 item 9: every argument of every command is parsed and range-checked before anything is read or
written. A bad value (negative, empty, huge, non-ASCII digits, a wrong unit, a time before 1970) is exit 2 with
one stderr line naming the option; no store file appears at a fresh `--db` path, no output folder is made, and
the table is unchanged. Values at the edges of each range are taken."""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hudi_meta.spark.ingest
import hudi_meta.spark.session
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.cli import data_commands
from hudi_meta.cli.main import build_parser
from tests.cli.helpers import TRIPS, cli_in_process, tree

# (arguments, what the error line names); {table} is a copy of a real table, {new} and {out} paths that must
# not appear. Each was accepted, or refused only after the store was created or the table indexed, before.
INGEST = ["ingest", "{new}", "--input", "{table}", "--record-key", "k", "--ordering-field", "o"]  # later ones win
BAD: list[tuple[list[str], str]] = [
    # compaction schedule
    (["compaction", "schedule", "{table}", "--threshold", "-5"], "--threshold"),
    (["compaction", "schedule", "{table}", "--threshold", ""], "--threshold"),
    (["compaction", "schedule", "{table}", "--threshold", "１２３"], "--threshold"),
    (["compaction", "schedule", "{table}", "--threshold", "²"], "--threshold"),
    (["compaction", "schedule", "{table}", "--threshold", "99999999999999999999999"], "--threshold"),
    (["compaction", "schedule", "{table}", "--threshold", "2999-01-01"], "--threshold"),  # after now
    (["compaction", "schedule", "{table}", "--threshold", "0001-01-01T00:00:00Z"], "--threshold"),
    (["compaction", "schedule", "{table}", "--data-latency", "9999999999999999d"], "--data-latency"),
    (["compaction", "schedule", "{table}", "--data-latency", ""], "--data-latency"),
    (["compaction", "schedule", "{table}", "--data-latency", "１m"], "--data-latency"),
    (["compaction", "schedule", "{table}", "--data-latency", "5"], "--data-latency"),  # no unit
    (["compaction", "schedule", "{table}", "--data-latency", "5w"], "--data-latency"),
    (["compaction", "schedule", "{table}", "--data-latency", "21000d"], "--data-latency"),  # T before 1970
    (["compaction", "schedule", "{table}", "--strategy", "unbounded", "--threshold", "1"], "threshold"),
    (["compaction", "schedule", ""], "argument table"),
    # read
    (["read", "{table}", "--query", "ro", "--complete-before", "-5"], "--complete-before"),
    (["read", "{table}", "--query", "ro", "--complete-before", "１２３"], "--complete-before"),
    (["read", "{table}", "--query", "ro", "--complete-before", ""], "--complete-before"),
    (["read", "{table}", "--query", "ro", "--complete-before", "99999999999999999999999"], "--complete-before"),
    (["read", "{table}", "--query", "snapshot", "--complete-before", "0"], "--complete-before"),
    (["read", "{table}", "--query", "ro", "--strict"], "--strict"),
    (["read", "{table}", "--query", "incremental", "--begin", "-5"], "--begin"),
    (["read", "{table}", "--query", "incremental", "--begin", "１２３"], "--begin"),
    (["read", "{table}", "--query", "incremental", "--begin", "20250101000000", "--end", ""], "--end"),
    (["read", "{table}", "--query", "time-travel", "--as-of", "1900-01-01"], "--as-of"),
    (["read", "{table}", "--query", "time-travel", "--as-of", "20250230000000"], "--as-of"),
    (["read", "{table}", "--columns", ""], "--columns"),
    (["read", "{table}", "--columns", ","], "--columns"),
    # ingest (Spark never starts: see `no_long_runs`)
    ([*INGEST, "--create", "--buckets", "1000000000000"], "--buckets"),
    ([*INGEST, "--create", "--buckets", "100000001"], "--buckets"),  # 9 digits: read back as another bucket
    ([*INGEST, "--create", "--buckets", "0"], "--buckets"),
    ([*INGEST, "--create", "--buckets", "１"], "--buckets"),
    ([*INGEST, "--record-key", ""], "--record-key"),
    ([*INGEST, "--ordering-field", " "], "--ordering-field"),
    ([*INGEST, "--input", ""], "--input"),
    ([*INGEST, "--spark-master", ""], "--spark-master"),
    # clean
    (["clean", "{table}", "--retained", "-1"], "--retained"),
    (["clean", "{table}", "--retained", "１"], "--retained"),
    (["clean", "{table}", "--retained", "2147483648"], "--retained"),
    (["clean", "{table}", "--policy", "keep-latest-by-hours", "--hours", "2147483647"], "--hours"),
    (["clean", "{table}", "--policy", "keep-latest-by-hours", "--hours", "-1"], "--hours"),
    # index, register, show
    (["index", "{table}", "--batch-files", "１"], "--batch-files"),
    (["index", "{table}", "--batch-files", "0"], "--batch-files"),
    (["index", "{table}", "--batch-files", "99999999999999999999999"], "--batch-files"),
    (["index", "{table}", "--event-time-field", ""], "--event-time-field"),
    (["register", "{table}", "--event-time-field", ""], "--event-time-field"),
    (["show", "timeline", ""], "argument table"),
    # generate
    (["generate", "{out}", "--batches", "0"], "--batches"),
    (["generate", "{out}", "--batches", "１"], "--batches"),
    (["generate", "{out}", "--batches", "99999999999999999999"], "--batches"),
    (["generate", "{out}", "--rows", "10000001"], "--rows"),
    (["generate", "{out}", "--late-share", "１"], "--late-share"),
    (["generate", "{out}", "--late-share", "nan"], "--late-share"),
    (["generate", "{out}", "--update-share", "inf"], "--update-share"),
    (["generate", "{out}", "--delete-share", "-0.1"], "--delete-share"),
    (["generate", "{out}", "--mean-lateness", "9999999999999999d"], "--mean-lateness"),
    (["generate", "{out}", "--mean-lateness", "１m"], "--mean-lateness"),
    (["generate", "{out}", "--start", "-5"], "--start"),
    (["generate", "{out}", "--start", "１２３"], "--start"),
    (["generate", "{out}", "--start", "9999-12-31T23:55:00Z", "--batches", "10"], "--start"),
    (["generate", "{out}", "--seed", "-1"], "--seed"),
    (["generate", "{out}", "--seed", "１"], "--seed"),
    (["generate", ""], "argument output"),
    # quickstart (never runs: see `no_long_runs`)
    (["quickstart", "--workdir", "{out}", "--port", "²"], "--port"),
    (["quickstart", "--workdir", ""], "--workdir"),
    # compaction run, unschedule, validate, repair; rollback
    (["compaction", "run", "{table}", "--instant", "", "--engine", "local"], "--instant"),
    (["compaction", "run", "{table}", "--instant", "banana", "--engine", "local"], "--instant"),
    (["compaction", "run", "{table}", "--instant", "２０２５０６１８０５４７１１１５４"], "--instant"),
    (["compaction", "run", "{table}", "--spark-master", ""], "--spark-master"),
    (["compaction", "unschedule", "{table}", ""], "argument instant"),
    (["compaction", "validate", "{table}", "x"], "argument instant"),
    (["compaction", "repair", "{table}", "2025"], "argument instant"),
    (["rollback", "{table}", ""], "argument instant"),
    # check, freshness, metrics
    (["check", ""], "argument table"),
    (["freshness", " "], "argument table"),
    (["metrics", ""], "argument table"),
    # sync
    (["sync", "{table}", "--mode", "hms", "--uri", ""], "--uri"),
    (["sync", "{table}", "--mode", "hms", "--uri", "thrift://h:99999"], "--uri"),
    (["sync", "{table}", "--mode", "hms", "--uri", "thrift://h:９０"], "--uri"),
    (["sync", "{table}", "--mode", "hms", "--uri", "thrift://h:²"], "--uri"),
    (["sync", "{table}", "--mode", "hiveserver2", "--uri", "thrift://h:1"], "--uri"),
    (["sync", "{table}", "--mode", "hms", "--uri", "h:1", "--timeout", "0.0000001"], "--timeout"),
    (["sync", "{table}", "--mode", "hms", "--uri", "h:1", "--timeout", "１"], "--timeout"),
    (["sync", "{table}", "--mode", "hms", "--uri", "h:1", "--timeout", "nan"], "--timeout"),
    (["sync", "{table}", "--mode", "hms", "--uri", "h:1", "--database", "dé"], "--database"),
    (["sync", "{table}", "--mode", "hms", "--uri", "h:1", "--table", ""], "--table"),
    # serve (never serves: see `no_long_runs`), config
    (["serve", "--port", "１２３"], "--port"),
    (["serve", "--port", "²"], "--port"),
    (["serve", "--port", "65536"], "--port"),
    (["serve", "--port", "0", "--threads", "１"], "--threads"),
    (["serve", "--port", "0", "--threads", "65"], "--threads"),
    (["serve", "--host", ""], "--host"),
    (["serve", "--config", ""], "--config"),
    (["serve", "--sync-mode", "hms", "--sync-uri", "x:99999999", "--port", "0"], "--sync-uri"),
    (["config", "check", ""], "argument file"),
]


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.fixture(scope="module")
def table(fixture_table: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Path(shutil.copytree(fixture_table(TRIPS), tmp_path_factory.mktemp("arguments") / "trips"))


@pytest.fixture(autouse=True)
def no_long_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a wrongly accepted argument would start (a server, Spark, the demo, endless batches) fails at once."""

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("started with a bad argument")

    monkeypatch.setattr("waitress.serve", started)
    monkeypatch.setattr("waitress.server.create_server", started)
    monkeypatch.setattr(data_commands, "run_quickstart", started)
    monkeypatch.setattr(data_commands, "write_batches", started)
    monkeypatch.setattr(hudi_meta.spark.session, "spark_session", started)
    monkeypatch.setattr(hudi_meta.spark.ingest, "ingest", started)


@pytest.mark.parametrize(("args", "option"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_a_bad_argument_is_one_line_and_nothing_is_written(
    args: list[str], option: str, table: Path, tmp_path: Path
) -> None:
    db, new, out = tmp_path / "store.db", tmp_path / "new", tmp_path / "out"
    before = tree(table)
    given = [a.format(table=table, new=new, out=out) for a in args]
    result = cli_in_process("--db", str(db), *given)
    assert result.code == 2, result.stderr
    line = one_line(result.stderr)
    assert line.startswith("hudi-meta") and option in line, line
    assert "Traceback" not in result.stderr
    assert not db.exists() and not new.exists() and not out.exists()
    assert tree(table) == before


def test_an_empty_db_is_refused_and_no_default_store_appears(
    table: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("HUDI_META_DB", raising=False)
    result = cli_in_process("--db", "", "index", str(table))
    assert result.code == 2 and "argument --db: must not be empty" in one_line(result.stderr)
    assert not (tmp_path / "data").exists()


def parse(*args: str) -> argparse.Namespace:
    return build_parser().parse_args(list(args))


def test_values_at_the_edges_are_taken() -> None:
    assert parse("compaction", "schedule", "t", "--threshold", "0").threshold == 0
    assert parse("compaction", "schedule", "t", "--threshold", "1767225600").threshold == 1_767_225_600_000
    assert parse("compaction", "schedule", "t", "--data-latency", "0ms").data_latency == 0
    ingest = ["ingest", "t", "--input", "i", "--record-key", "k", "--ordering-field", "o"]
    assert parse(*ingest, "--buckets", "100000000").buckets == 10**8
    assert parse(*ingest, "--buckets", "1").buckets == 1
    assert parse("clean", "t", "--retained", "2147483647").retained == 2**31 - 1
    assert parse("clean", "t", "--hours", "876000").hours == 876_000
    gen = parse("generate", "o", "--batches", "9999", "--rows", "10000000", "--late-share", "1", "--start", "0")
    assert (gen.batches, gen.rows, gen.late_share, gen.start) == (9999, 10_000_000, 1.0, 0)
    assert parse("generate", "o", "--seed", str(2**63 - 1)).seed == 2**63 - 1
    assert parse("generate", "o").mean_lateness == 600_000  # the default goes through the same parser
    assert parse("sync", "t", "--mode", "hms", "--uri", "u", "--timeout", "0.001").timeout == 0.001
    assert (parse("serve", "--port", "0").port, parse("serve", "--threads", "64").threads) == (0, 64)
    read = parse("read", "t", "--query", "incremental", "--begin", "20250618054711154", "--end", "2026-01-01")
    assert (read.begin, read.end) == ("20250618054711154", "2026-01-01")  # placed in the table's zone later
    assert parse("read", "t", "--columns", "a, b,").columns == ["a", "b"]
    assert parse("rollback", "t", "00000000000001").instant == "00000000000001"


@given(st.text(max_size=40))
def test_any_threshold_on_the_command_line_is_a_value_or_one_usage_line(text: str) -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), suppress_exit() as exited:
        parse("compaction", "schedule", "t", f"--threshold={text}")
    if exited:
        assert exited == [2] and len(err.getvalue().strip().splitlines()) == 1, err.getvalue()


@contextlib.contextmanager
def suppress_exit() -> Iterator[list[object]]:
    codes: list[object] = []
    try:
        yield codes
    except SystemExit as e:
        codes.append(e.code)
