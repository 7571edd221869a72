"""`compaction run` says what it did (issue 29): operations, records and bytes written, log files merged, files
kept as links, duration; `--json` as one object. Expected values are read from the files on disk (pyarrow, the
file system), not from hudi-meta's commit metadata."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq

from tests.cli.helpers import cli
from tests.compaction.core import T0, CoreTable, region_rows


def test_compaction_run_reports_what_it_wrote(tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t", version=9)
    t.write(region_rows("eu", ("a", 1, 1.0), ("b", 2, 2.0)))
    t.write(region_rows("eu", ("a", 10, 3.0)))
    t.write(region_rows("eu", ("c", 50, 4.0)))  # after T: kept as a link
    db = ("--db", f"sqlite:///{tmp_path / 's.db'}")
    scheduled = cli(*db, "compaction", "schedule", t.path, "--threshold", str(T0 + 30_000), "--json")
    assert scheduled.returncode == 0, scheduled.stderr
    instant = json.loads(scheduled.stdout)[0]["instant"]
    done = cli(*db, "compaction", "run", t.path, "--engine", "local", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    partition = Path(t.path) / "region=eu"
    base = next(p for p in partition.glob(f"*_{instant}.parquet"))
    links = [p for p in partition.iterdir() if p.is_symlink() and f"_{instant}.log." in p.name]
    assert summary["instant"] == instant and summary["operations"] == 1
    assert summary["records_written"] == pq.read_metadata(base).num_rows == 2  # a (merged) and b
    assert summary["bytes_written"] == os.path.getsize(base)
    assert summary["log_files_compacted"] == 1 and summary["links"] == len(links) == 1
    assert summary["duration_ms"] >= 0
    text = cli(*db, "compaction", "schedule", t.path, "--strategy", "unbounded")
    assert text.returncode == 0, text.stderr
    assert text.stdout.strip().endswith("links (symlink), threshold -, exact: no"), text.stdout  # no reprs
    again = cli(*db, "compaction", "run", t.path, "--engine", "local")
    assert again.returncode == 0 and again.stdout.startswith("completed compaction ") and " in " in again.stdout
