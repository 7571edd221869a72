"""A Spark writer killed with kill -9 mid-write: reads equal the state before that write, a write started
meanwhile leaves it alone while its heartbeat is live, and once the heartbeat expired the next write rolls the
failed one back and succeeds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hudi_meta.spark import writer
from hudi_meta.spark.compat import arrow_dataframe
from pyspark.sql import SparkSession

from hudi_meta.demo.event_stream import StreamSpec, create_events_table, generate, write_batches
from hudi_meta.format.config_keys import HEARTBEAT_INTERVAL_MS, HEARTBEAT_TOLERABLE_MISSES
from hudi_meta.format.properties import format_properties, parse_properties, with_checksum
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action
from hudi_meta.write.failed_writes import rollback_failed_writes
from tests.spark.model import Model, rows_of
from tests.spark.test_writer import hudi_rs

HEARTBEAT_PROPS = {
    HEARTBEAT_INTERVAL_MS.name: "500",
    HEARTBEAT_TOLERABLE_MISSES.name: "4",
}  # expired after 2 s (Java: interval * misses)
EXPIRY_S = 2.0


def with_short_heartbeats(path: Path) -> None:
    """Set the heartbeat properties in hoodie.properties, where every writer of the table reads them."""
    props_file = path / ".hoodie" / "hoodie.properties"
    props = {**parse_properties(props_file.read_text()), **HEARTBEAT_PROPS}
    props_file.write_text(format_properties(with_checksum(props)))


def _markers(path: Path) -> list[Path]:
    return [p for p in (path / ".hoodie" / ".temp").rglob("*.marker.*")]


@pytest.mark.slow
def test_kill_9_mid_write_then_next_write(spark: SparkSession, tmp_path: Path) -> None:
    path = tmp_path / "events"
    create_events_table(str(path), buckets=4)
    with_short_heartbeats(path)
    first, second = list(generate(StreamSpec(batches=2, rows_per_batch=300, seed=11)))
    model = Model()
    instant = writer.write(arrow_dataframe(spark, first.upserts), HudiTable.open(str(path)))
    model.upsert(instant.requested_time, first.upserts)
    before = rows_of(HudiTable.open(str(path)).read("snapshot"))
    assert before == model.rows()

    big = write_batches(StreamSpec(batches=1, rows_per_batch=120_000, update_share=0.0, seed=12), tmp_path / "big")[0]
    cmd = [
        sys.executable,
        "-m",
        "hudi_meta.cli.main",
        "ingest",
        str(path),
        "--input",
        str(big),
        "--record-key",
        "event_id",
        "--ordering-field",
        "ts",
    ]
    with subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True) as proc:
        deadline = time.monotonic() + 240
        while not _markers(path):
            assert proc.poll() is None, "the writer finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert rollback_failed_writes(HudiTable.open(str(path))) == []  # a live writer: its heartbeat is fresh
        assert proc.poll() is None, "the writer finished before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)  # the driver, its JVM and the Python workers
        proc.wait()
    table = HudiTable.open(str(path))
    pending = [i for i in table.timeline.pending() if i.action == Action.DELTA_COMMIT]
    assert len(pending) == 1  # the killed write never completed
    assert rows_of(table.read("snapshot")) == before
    assert rows_of(hudi_rs(str(path), "snapshot")) == before

    time.sleep(EXPIRY_S * 1.5)  # the killed writer's heartbeat expires
    instant = writer.write(arrow_dataframe(spark, second.upserts), HudiTable.open(str(path)))
    model.upsert(instant.requested_time, second.upserts)
    table = HudiTable.open(str(path))
    assert [i.action for i in table.timeline.completed()][-2:] == [Action.ROLLBACK, Action.DELTA_COMMIT]
    assert rows_of(table.read("snapshot")) == model.rows()
    assert rows_of(hudi_rs(str(path), "snapshot")) == model.rows()
