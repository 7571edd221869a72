"""`compaction unschedule` and `rollback --completed-compaction` on an events table written by Spark (two
buckets, late data, deletes): the snapshot equals the model before and after, for our reader and hudi-rs, and
the table compacts again afterwards."""

from __future__ import annotations

from pathlib import Path

import pyarrow.compute as pc
import pytest
from hudi_meta.spark import compaction
from pyspark.sql import SparkSession
from sqlalchemy import Engine

from hudi_meta.compaction.admin import published_threshold, validate
from hudi_meta.compaction.rollback import rollback_compaction
from hudi_meta.compaction.run import set_crash_hook
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.demo.event_stream import StreamSpec, generate
from hudi_meta.errors import HudiMetaError
from hudi_meta.table.table import HudiTable
from tests.compaction.helpers import append, write_events
from tests.compaction.undo_helpers import leftovers
from tests.crashes import Crash, crash_at
from tests.spark.model import rows_of
from tests.spark.test_writer import hudi_rs


@pytest.mark.slow
def test_unschedule_and_rollback_on_a_spark_table(spark: SparkSession, engine: Engine, tmp_path: Path) -> None:
    path = str(tmp_path / "events")
    model, watermarks = write_events(spark, path)
    extra = [
        b.upserts.set_column(0, "event_id", pc.utf8_replace_slice(b.upserts.column("event_id"), 0, 1, "x"))
        for b in generate(StreamSpec(batches=4, rows_per_batch=60, start_ms=watermarks[-1], seed=7))
    ]  # new keys (x...) next to the table's (e...)
    result = schedule_compaction(engine, HudiTable.open(path), ScheduleRequest(threshold_ms=watermarks[2]))
    assert result.instant is not None and result.plan is not None
    assert any(op.symlink_operations for op in result.plan.operations)
    append(spark, path, model, extra[0])  # into the plan's slices
    with crash_at(set_crash_hook, "after-link"), pytest.raises(Crash):  # the run dies on the driver
        compaction.run(spark, HudiTable.open(path), result.instant)
    append(spark, path, model, extra[1])  # a writer while the compaction is inflight
    assert rows_of(HudiTable.open(path).read("snapshot")) == model.rows()

    report = unschedule_compaction(HudiTable.open(path), result.instant, dry_run=False)
    assert report.rollback_instant is not None
    assert sum(a.operation == "move_log_file" for a in report.actions) >= 2
    table = HudiTable.open(path)
    assert table.timeline.instant(result.instant) is None and leftovers(path) == []
    assert rows_of(table.read("snapshot")) == model.rows()
    assert rows_of(hudi_rs(path, "snapshot")) == model.rows()
    assert validate(table) == []

    # the table plans and compacts again; that compaction is rolled back before any write follows it
    again = schedule_compaction(engine, table, ScheduleRequest(threshold_ms=watermarks[3]))
    assert again.instant is not None, again.reason
    compaction.run(spark, HudiTable.open(path), again.instant)
    table = HudiTable.open(path)
    assert published_threshold(table.timeline) is not None
    rollback_compaction(table, again.instant, completed=True, dry_run=False)
    table = HudiTable.open(path)
    assert published_threshold(table.timeline) is None
    assert rows_of(table.read("snapshot")) == model.rows()
    assert rows_of(hudi_rs(path, "snapshot")) == model.rows()
    append(spark, path, model, extra[2])
    last = schedule_compaction(engine, HudiTable.open(path), ScheduleRequest(threshold_ms=watermarks[-1]))
    assert last.instant is not None, last.reason
    compaction.run(spark, HudiTable.open(path), last.instant)
    append(spark, path, model, extra[3])
    # a write went into its slices: it stays (as Java, which rolls back later commits first)
    with pytest.raises(HudiMetaError, match="appended to its slice"):
        rollback_compaction(HudiTable.open(path), last.instant, completed=True, dry_run=False)
    assert rows_of(HudiTable.open(path).read("snapshot")) == model.rows()
    assert rows_of(hudi_rs(path, "snapshot")) == model.rows()
