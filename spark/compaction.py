"""Run a compaction plan on Spark: one task per compaction operation, the commit on the driver."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hudi_meta.spark.errors import task_errors
from pyspark.sql import SparkSession

from hudi_meta.compaction.run import run_compaction
from hudi_meta.format.table_service_metadata import CompactionOperation
from hudi_meta.table.instant import Instant
from hudi_meta.table.table import HudiTable


def run(
    spark: SparkSession,
    table: HudiTable,
    instant: str | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> Instant:
    """Execute the pending compaction `instant` (None: the oldest pending one) on Spark; the completed instant.

    The same executor as the local run (`hudi_meta.compaction.run.run_compaction`), with each operation as one
    Spark task: tasks write the new base files, the driver makes the links and commits. A task's `HudiMetaError`
    comes back as that error, one line.
    """

    def on_spark(
        task: Callable[[CompactionOperation], dict[str, Any]], ops: Sequence[CompactionOperation]
    ) -> list[dict[str, Any]]:
        if not ops:
            return []
        with task_errors():
            return spark.sparkContext.parallelize(list(ops), len(ops)).map(task).collect()

    return run_compaction(table, instant, on_spark, on_phase)
