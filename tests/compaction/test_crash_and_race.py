"""Crash safety and concurrency of compaction: kill -9 at each executor step, then `compaction run`
ends in the same table as an uninterrupted run; two schedulers racing produce exactly one plan."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from hudi_meta.compaction.run import CRASH_AT_ENV, run_compaction, run_lock_path
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.errors import UnsupportedTableError
from hudi_meta.index.db import make_engine
from hudi_meta.index.migrate import upgrade
from hudi_meta.metadata.integrity import MetadataTableDamagedError
from hudi_meta.table.table import HudiTable
from hudi_meta.write.lock import run_lock
from hudi_meta.write.writer import create_table
from tests.cli.helpers import cli
from tests.compaction.helpers import files_of, write_events
from tests.conftest import table_zips
from tests.spark.model import rows_of


@pytest.fixture(scope="module")
def scheduled(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A table with a scheduled (not yet run) compaction that keeps links, and its store."""
    root = tmp_path_factory.mktemp("scheduled")
    path = root / "events"
    _, watermarks = write_events(spark, str(path))
    url = f"sqlite:///{root / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    result = schedule_compaction(engine, HudiTable.open(str(path)), ScheduleRequest(threshold_ms=watermarks[2]))
    engine.dispose()
    assert result.instant is not None and result.plan is not None
    assert any(op.symlink_operations for op in result.plan.operations)
    return path, url, result.instant


def copy_table(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


@pytest.mark.slow
@pytest.mark.parametrize("step", ["after-base-file", "after-link", "before-commit"])
def test_kill_9_at_each_step_then_run(scheduled: tuple[Path, str, str], tmp_path: Path, step: str) -> None:
    source, url, instant = scheduled
    reference = copy_table(source, tmp_path / "reference")
    run_compaction(HudiTable.open(str(reference)), instant)

    crashed = copy_table(source, tmp_path / "crashed")
    db = shutil.copy(url.removeprefix("sqlite:///"), tmp_path / "store.db")
    out = cli("--db", str(db), "compaction", "run", str(crashed), "--engine", "local", env={CRASH_AT_ENV: step})
    assert out.returncode == -signal.SIGKILL, out.stderr
    assert not HudiTable.open(str(crashed)).timeline.instant(instant).is_completed  # type: ignore[union-attr]
    out = cli("--db", str(db), "compaction", "run", str(crashed), "--engine", "local")
    assert out.returncode == 0, out.stderr

    done, ref = HudiTable.open(str(crashed)), HudiTable.open(str(reference))
    assert done.timeline.instant(instant).is_completed  # type: ignore[union-attr]
    for query in ("snapshot", "ro"):
        assert rows_of(done.read(query)) == rows_of(ref.read(query))
    assert files_of(str(crashed)) == files_of(str(reference))
    again = cli("--db", str(db), "compaction", "run", str(crashed), "--instant", instant, "--engine", "local")
    assert again.returncode == 2 and "already completed" in again.stderr  # never executed twice


@pytest.mark.slow
def test_two_schedulers_racing_make_one_plan(spark: SparkSession, db_url: str, tmp_path: Path) -> None:
    path = tmp_path / "events"
    _, watermarks = write_events(spark, str(path))
    assert cli("--db", db_url, "index", str(path)).returncode == 0
    args = ["--db", db_url, "compaction", "schedule", str(path), "--threshold", str(watermarks[2]), "--json"]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "hudi_meta.cli.main", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), results
    instants = [__import__("json").loads(out)[0]["instant"] for out, _ in results]
    assert sum(i is not None for i in instants) == 1, instants
    assert len(list((path / ".hoodie").glob("*.compaction.requested"))) == 1
    plans = cli("--db", db_url, "show", "plans", str(path), "--json").stdout
    assert len(__import__("json").loads(plans)) == 1


def test_metadata_table_partitions_not_kept_are_refused_by_name(fixture_table: object, tmp_path: Path) -> None:
    """Rule (issue 28): a metadata table partition hudi-meta cannot keep correct, or one the properties name and
    storage does not hold, is refused in one line naming it, before anything is written."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    archive = next(a for a in table_zips() if a.stem == "v9_txns_simple_meta" and "/mor/" in str(a))
    base = Path(shutil.copytree(fixture_table(archive), tmp_path / "t", symlinks=True))  # type: ignore[operator]
    props = base / ".hoodie" / "hoodie.properties"
    text = props.read_text()
    for edited, expected in (
        (text.replace("partitions=column_stats,", "partitions=expr_index_x,column_stats,"), "'expr_index_x'"),
        (text.replace("partitions.inflight=", "partitions.inflight=bloom_filters"), "'bloom_filters' is being built"),
    ):
        props.write_text(edited)
        before = sorted(p.relative_to(base) for p in base.rglob("*"))
        with pytest.raises(UnsupportedTableError, match=expected):
            schedule_compaction(engine, HudiTable.open(str(base)), ScheduleRequest(threshold_ms=0))
        assert sorted(p.relative_to(base) for p in base.rglob("*")) == before
    props.write_text(text)
    v6 = create_table(
        str(tmp_path / "v6"), "v6", ["id"], "ts", extra_props={"hoodie.table.metadata.partitions": "files"}
    )
    missing = r"names metadata table partitions \(hoodie.table.metadata.partitions=files\), but .* does not exist"
    with pytest.raises(MetadataTableDamagedError, match=missing):
        schedule_compaction(engine, v6, ScheduleRequest(threshold_ms=0))
    nometa = next(a for a in table_zips() if a.stem == "v9_txns_simple_nometa")
    with pytest.raises(UnsupportedTableError, match="version 6"):
        schedule_compaction(engine, HudiTable.open(str(fixture_table(nometa))), ScheduleRequest(threshold_ms=0))  # type: ignore[operator]
    engine.dispose()


def test_cli_errors_are_one_line(scheduled: tuple[Path, str, str], tmp_path: Path) -> None:
    source, url, _ = scheduled
    table = copy_table(source, tmp_path / "t")
    db = shutil.copy(url.removeprefix("sqlite:///"), tmp_path / "store.db")
    cases = [
        (["compaction", "schedule", str(table)], "needs --threshold T or --data-latency D"),
        (["compaction", "schedule", str(table), "--threshold", "yesterday"], "not a time"),
        (["compaction", "schedule", str(table), "--data-latency", "soon"], "not a duration"),
        (["compaction", "run", str(table), "--instant", "20990101000000000", "--engine", "local"], "not a compaction"),
    ]
    for args, message in cases:
        out = cli("--db", str(db), *args)
        assert out.returncode == 2 and message in out.stderr and len(out.stderr.strip().splitlines()) == 1, args
    busy = cli("--db", str(db), "compaction", "schedule", str(table), "--threshold", "0")
    assert busy.returncode == 0 and busy.stdout.startswith("nothing scheduled: a compaction or clustering is pending")


def test_a_second_run_of_a_running_compaction_is_refused(scheduled: tuple[Path, str, str], tmp_path: Path) -> None:
    """Rule (docs/concurrency.md section 1): one process runs a compaction at a time. A second run of the same plan
    would first delete, then rewrite, base files the first may have committed meanwhile (a kill in between loses
    committed records); it is refused in one line before anything is written, and runs once the first is done."""
    source, url, instant = scheduled
    table = copy_table(source, tmp_path / "t")
    db = shutil.copy(url.removeprefix("sqlite:///"), tmp_path / "store.db")
    opened = HudiTable.open(str(table))
    before = files_of(str(table))
    with run_lock(opened.storage, run_lock_path(opened, instant), opened.config.props, "run compaction (test)"):
        out = cli("--db", str(db), "compaction", "run", str(table), "--engine", "local")
        assert out.returncode == 2 and f"run compaction {instant}: the lock" in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
        assert files_of(str(table)) == before
    out = cli("--db", str(db), "compaction", "run", str(table), "--engine", "local")
    assert out.returncode == 0, out.stderr
    assert not list((table / ".hoodie" / ".aux").glob("*.lock")), "the lock goes with the run"
