"""Event-time partial compaction end to end: schedule from the index, run on Spark, read with our
readers and hudi-rs, links, exact mode, writers during a pending compaction."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc
import pytest
from hudi_meta.spark import compaction
from pyspark.sql import SparkSession
from sqlalchemy import Engine

from hudi_meta.compaction.run import CRASH_AT_ENV
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.strategies import Strategy
from hudi_meta.format.links import LinkMode
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.queries import link_rows, plan_rows
from hudi_meta.index.registry import table_id_of
from hudi_meta.table.table import HudiTable
from tests.compaction.helpers import append, log_min_event_times, write_events
from tests.spark.model import rows_of
from tests.spark.test_writer import hudi_rs


def compact(spark: SparkSession, engine: Engine, path: str, threshold: int, **kw: object) -> str:
    result = schedule_compaction(engine, HudiTable.open(path), ScheduleRequest(threshold_ms=threshold, **kw))  # type: ignore[arg-type]
    assert result.instant is not None, result.reason
    compaction.run(spark, HudiTable.open(path), result.instant)
    Indexer(engine, HudiTable.open(path)).run()
    return result.instant


def by_key(rows: list[dict[str, object]]) -> dict[object, dict[str, object]]:
    return {r["event_id"]: r for r in rows}


@pytest.mark.slow
def test_symlink_compaction_guarantees(spark: SparkSession, engine: Engine, tmp_path: Path) -> None:
    path = str(tmp_path / "events")
    model, watermarks = write_events(spark, path)
    before = rows_of(HudiTable.open(path).read("snapshot"))
    assert before == model.rows()
    threshold = watermarks[2]
    instant = compact(spark, engine, path, threshold)
    table = HudiTable.open(path)

    assert rows_of(table.read("snapshot")) == before  # the snapshot view is unchanged
    ro = by_key(rows_of(table.read("ro")))
    old = [r for r in model.rows() if r["ts"] <= threshold]
    assert old and all(ro.get(r["event_id"]) == r for r in old)  # RO holds every record with ts <= T
    assert any(int(str(r["ts"])) > threshold for r in ro.values())  # not exact: later records may be in RO

    mins = log_min_event_times(table)
    assert mins and all(m is None or m > threshold for m in mins.values())  # nothing <= T outside base files

    links = link_rows(engine, table_id_of(engine, table.base_path) or 0)
    assert links and all(row["state"] == "created" and row["compaction_instant"] == instant for row in links)
    for row in links:
        link = Path(path, row["partition"], row["link"])
        assert link.is_symlink() and os.readlink(link) == row["target"]
        assert link.read_bytes() == Path(path, row["partition"], row["target"]).read_bytes()
    plans = plan_rows(engine, table_id_of(engine, table.base_path) or 0)
    assert [(p["instant"], p["state"], p["threshold"]) for p in plans] == [(instant, "completed", threshold)]

    for query in ("snapshot", "ro"):
        assert rows_of(hudi_rs(path, query)) == rows_of(table.read(query)), query


@pytest.mark.slow
def test_copy_mode_exact(spark: SparkSession, engine: Engine, tmp_path: Path) -> None:
    path = str(tmp_path / "events")
    model, watermarks = write_events(spark, path)
    threshold = watermarks[1]
    compact(spark, engine, path, threshold, mode=LinkMode.COPY, exact=True)
    table = HudiTable.open(path)
    ro = rows_of(table.read("ro"))
    assert all(r["ts"] <= threshold for r in ro)  # exact: nothing after T in RO
    assert by_key(ro) == by_key(model.as_of_event_time(threshold))  # the table as of T, keys updated later too
    assert rows_of(table.read("snapshot")) == model.rows()
    links = [p for p in Path(path).rglob(".*.log.*") if "_" in p.name]
    assert links and not any(p.is_symlink() for p in links)  # copies
    for query in ("snapshot", "ro"):
        assert rows_of(hudi_rs(path, query)) == rows_of(table.read(query)), query


@pytest.mark.slow
def test_writers_during_a_pending_compaction_lose_nothing(spark: SparkSession, engine: Engine, tmp_path: Path) -> None:
    from hudi_meta.demo.event_stream import StreamSpec, generate

    path = str(tmp_path / "events")
    model, watermarks = write_events(spark, path)
    result = schedule_compaction(engine, HudiTable.open(path), ScheduleRequest(threshold_ms=watermarks[2]))
    assert result.instant is not None
    extra = [
        b.upserts.set_column(0, "event_id", pc.utf8_replace_slice(b.upserts.column("event_id"), 0, 1, "x"))
        for b in generate(StreamSpec(batches=3, rows_per_batch=80, start_ms=watermarks[-1], seed=99))
    ]  # new keys (x...) next to the table's (e...)
    append(spark, path, model, extra[0])  # lands in the compaction's slice, after the planned links
    table = HudiTable.open(path)
    assert rows_of(table.read("snapshot")) == model.rows()
    planned = {s.symlink for op in result.plan.operations for s in op.symlink_operations} if result.plan else set()
    new_logs = {
        lf.name
        for fg in table.file_groups()
        for s in fg.ordered_slices()
        for lf in s.log_files
        if lf.parsed.instant == result.instant
    }
    assert new_logs and not new_logs & planned
    # the compaction starts and dies after its first link (a running compaction), a writer appends, it resumes
    crashed = subprocess.run(
        [
            sys.executable,
            "-m",
            "hudi_meta.cli.main",
            "--db",
            str(engine.url),
            "compaction",
            "run",
            path,
            "--engine",
            "local",
        ],
        env={**os.environ, CRASH_AT_ENV: "after-link"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    append(spark, path, model, extra[1])
    assert rows_of(HudiTable.open(path).read("snapshot")) == model.rows()
    compaction.run(spark, HudiTable.open(path), result.instant)
    append(spark, path, model, extra[2])
    table = HudiTable.open(path)
    assert rows_of(table.read("snapshot")) == model.rows()
    assert rows_of(hudi_rs(path, "snapshot")) == model.rows()


def test_event_time_trigger_refuses_a_second_pending_plan(spark: SparkSession, engine: Engine, tmp_path: Path) -> None:
    path = str(tmp_path / "events")
    _, watermarks = write_events(spark, path)
    first = schedule_compaction(engine, HudiTable.open(path), ScheduleRequest(threshold_ms=watermarks[1]))
    assert first.instant is not None
    second = schedule_compaction(engine, HudiTable.open(path), ScheduleRequest(threshold_ms=watermarks[3]))
    assert second.instant is None and "pending" in second.reason


def test_an_undecodable_block_fails_a_spark_compaction_in_one_line(
    spark: SparkSession, engine: Engine, tmp_path: Path
) -> None:
    from hudi_meta.errors import HudiMetaError
    from hudi_meta.format.log_block import BlockType, HeaderKey, encode_block
    from tests.compaction.core import CoreTable, rows

    t = CoreTable(tmp_path / "t")
    first = t.write(rows(("a", 1, 1.0)))
    w = t.write(rows(("b", 2, 1.0)))
    log = Path(t.path, w.stats[0].path)
    header = {
        int(HeaderKey.INSTANT_TIME): first.instant,
        int(HeaderKey.SCHEMA): w.context.avro_schema(t.table.arrow_schema()),
    }
    with log.open("ab") as f:
        f.write(encode_block(BlockType.AVRO_DATA, header, b"\x00\x00\x00\x02\x00\x00\x00\x05\xff\xff\xff"))
    result = schedule_compaction(engine, t.table, ScheduleRequest(strategy=Strategy.UNBOUNDED))
    assert result.instant is not None
    with pytest.raises(HudiMetaError) as raised:
        compaction.run(spark, t.table, result.instant)
    message = str(raised.value)
    assert message.startswith("cannot decode the AVRO_DATA block at offset") and "\n" not in message
