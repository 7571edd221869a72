"""Issue 9 item 6: `compaction run` answers before Spark starts when there is nothing to run or the instant is
wrong; `read` writes each slice's records before it reads the next slice."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import hudi_meta.spark.session
import pyarrow as pa
import pytest
from hudi import HudiReadOptions
from hudi import HudiTable as RsTable

from hudi_meta.table.table import HudiTable
from tests.cli.helpers import TRIPS, cli, cli_in_process, store_dump, tree


def no_spark(*args: object, **kwargs: object) -> None:
    raise AssertionError("a Spark session was started")


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "no pending compaction on"),
        (["--instant", "20990101000000000"], "20990101000000000 is not a compaction of"),
        (["--instant", "banana"], "argument --instant: not an instant time: 'banana'"),
        (["--instant", "20250618054711154"], "20250618054711154 is not a compaction of"),  # a deltacommit
    ],
)
def test_compaction_run_refuses_before_spark(
    extra: list[str], message: str, monkeypatch: pytest.MonkeyPatch, fixture_table: Any, tmp_path: Path
) -> None:
    table = shutil.copytree(fixture_table(TRIPS), tmp_path / "trips")
    db = str(tmp_path / "store.db")
    assert cli("--db", db, "init-db").returncode == 0
    monkeypatch.setattr(hudi_meta.spark.session, "spark_session", no_spark)
    before, store_before = tree(Path(table)), store_dump(db)
    out = cli_in_process("--db", db, "compaction", "run", str(table), *extra)
    assert out.code == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], lines
    assert tree(Path(table)) == before and store_dump(db) == store_before


def hudi_rs_rows(path: str, read_optimized: bool) -> list[tuple[str, float]]:
    opts = {"hoodie.read.use.read_optimized.mode": "true"} if read_optimized else {}
    table = pa.Table.from_batches(RsTable(path).read(HudiReadOptions(hudi_options=opts)))
    return sorted((r["uuid"], r["fare"]) for r in table.select(["uuid", "fare"]).to_pylist())


@pytest.mark.parametrize("query", ["snapshot", "ro"])
@pytest.mark.parametrize("fmt", ["jsonl", "table"])
def test_read_writes_each_slice_before_reading_the_next(
    query: str, fmt: str, monkeypatch: pytest.MonkeyPatch, fixture_table: Any
) -> None:
    path = str(fixture_table(TRIPS))
    lines_seen: list[int] = []
    read_slice = HudiTable.read_slice

    def counting(self: HudiTable, *args: Any, **kwargs: Any) -> pa.Table:
        assert isinstance(sys.stdout, io.StringIO)  # cli_in_process captures it
        lines_seen.append(sys.stdout.getvalue().count("\n"))
        return read_slice(self, *args, **kwargs)

    monkeypatch.setattr(HudiTable, "read_slice", counting)
    out = cli_in_process("read", path, "--query", query, "--format", fmt, "--columns", "uuid,fare")
    assert out.code == 0, out.stderr
    if fmt == "jsonl":
        rows = [(r["uuid"], r["fare"]) for r in map(json.loads, out.stdout.splitlines())]
    else:
        header, *body = out.stdout.splitlines()
        assert header.split() == ["uuid", "fare"]
        rows = [(u, float(f)) for u, f in (line.split() for line in body)]
    assert sorted(rows) == hudi_rs_rows(path, query == "ro")
    # three slices (one per file group): each read starts after the rows of the slices before it were written
    assert len(lines_seen) == 3 and lines_seen[0] == 0
    assert lines_seen == sorted(lines_seen) and lines_seen[-1] > lines_seen[0], lines_seen
