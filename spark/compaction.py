"""Run a compaction plan on Spark: tasks of a few compaction operations each, the commit on the driver."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hudi_meta.spark.errors import task_errors
from pyspark.sql import SparkSession

from hudi_meta.compaction.run import run_compaction
from hudi_meta.format.table_service_metadata import CompactionOperation
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Instant


def run(
    spark: SparkSession,
    table: HudiTable,
    instant: str | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> Instant:
    """Execute the pending compaction `instant` (None: the oldest pending one) on Spark; the completed instant.

    The same executor as the local run (`hudi_meta.compaction.run.run_compaction`), the operations spread over
    Spark tasks: tasks write the new base files, the driver makes the links and commits. A task's `HudiMetaError`
    comes back as that error, one line.
    """

    def on_spark(
        task: Callable[[CompactionOperation], dict[str, Any]], ops: Sequence[CompactionOperation]
    ) -> list[dict[str, Any]]:
        if not ops:
            return []
        with task_errors():
            tasks = _task_count(len(ops), spark.sparkContext.defaultParallelism)
            return spark.sparkContext.parallelize(list(ops), tasks).map(task).collect()

    return run_compaction(table, instant, on_spark, on_phase)


OPS_PER_TASK = 8


def _task_count(operations: int, cores: int) -> int:
    """Tasks for `operations`: two per core, more when that would put over `OPS_PER_TASK` operations in one.
    Each Python task has a fixed cost of its own, so one task per operation was slower than a few tasks that
    each run several (bench_compaction prints the run time)."""
    return max(1, min(operations, max(2 * cores, -(-operations // OPS_PER_TASK))))
