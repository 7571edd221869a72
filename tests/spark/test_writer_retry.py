"""Retried Spark tasks (spark.task.maxFailures > 1): every task's first attempt fails after writing its files,
the second succeeds. The table must hold exactly one file group per bucket, one base file per file group,
one block per write in each log file, and the rows of a model of the stream (hudi-rs reads the same).

Spark runs in a subprocess (this module is the program): the master "local[2,3]" gives maxFailures=3 in local
mode, and one JVM holds one SparkContext, the shared test session's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hudi_meta.spark.compat import arrow_dataframe

from hudi_meta.demo.event_stream import StreamSpec, create_events_table, generate
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.table import bucket_index
from hudi_meta.table.table import HudiTable
from tests.spark.model import Model, rows_of
from tests.spark.test_writer import hudi_rs

REPO = Path(__file__).resolve().parents[2]
SPEC = StreamSpec(batches=2, rows_per_batch=200, late_share=0.2, update_share=0.3, delete_share=0.0, seed=23)
BUCKETS = 3


def _main(path: str) -> None:
    """Write SPEC's batches with every task's first attempt failing; print the instants as JSON."""
    from hudi_meta.spark import writer
    from hudi_meta.spark.session import spark_session

    spark = spark_session("local[2,3]", "hudi-meta-retry", spark__sql__shuffle__partitions="4")
    create_events_table(path, buckets=BUCKETS)
    instants = []
    for batch in generate(SPEC):
        df = arrow_dataframe(spark, batch.upserts)
        instants.append(writer.write(df, HudiTable.open(path), "upsert", fail_task_attempts=1).requested_time)
    spark.stop()
    print(json.dumps(instants))


@pytest.mark.slow
def test_retried_tasks_leave_one_file_per_bucket_and_one_block_per_write(tmp_path: Path) -> None:
    path = str(tmp_path / "events")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "tests.spark.test_writer_retry", path],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    instants = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(instants) == SPEC.batches

    table = HudiTable.open(path)
    groups = table.file_groups()
    per_bucket = Counter((fg.partition, bucket_index.bucket_of_file_id(fg.file_id)) for fg in groups)
    assert per_bucket and set(per_bucket.values()) == {1}
    for fg in groups:
        slices = fg.ordered_slices()
        assert len(slices) == 1 and slices[0].base_file is not None
        assert len(list(Path(path, fg.partition).glob(f"{fg.file_id}_*.parquet"))) == 1
        for lf in slices[0].log_files:
            blocks = read_blocks(table.storage, f"{table.base_path}/{lf.path}")
            assert len(blocks) == 1 and blocks[0].instant_time == instants[1]
    for instant in table.timeline.completed_writes():
        stats = table.timeline.commit_metadata(instant).write_stats()
        assert len({(s.partition_path, s.file_id) for s in stats}) == len(stats)
        for s in stats:
            assert Path(path, s.path).stat().st_size == s.file_size_in_bytes

    model = Model()
    for instant, batch in zip(instants, generate(SPEC), strict=True):
        model.upsert(instant, batch.upserts)
    assert rows_of(table.read("snapshot")) == model.rows()
    assert rows_of(hudi_rs(path, "snapshot")) == model.rows()


if __name__ == "__main__":
    _main(sys.argv[1])
