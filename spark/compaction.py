"""Run a compaction plan on Spark: one task per compaction operation, the commit on the driver."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import SparkSession

from hudi_meta.compaction.run import run_compaction
from hudi_meta.format.table_service_metadata import CompactionOperation
from hudi_meta.table.instant import Instant
from hudi_meta.table.table import HudiTable


def run(spark: SparkSession, table: HudiTable, instant: str | None = None) -> Instant:
    def on_spark(
        task: Callable[[CompactionOperation], dict[str, Any]], ops: Sequence[CompactionOperation]
    ) -> list[dict[str, Any]]:
        if not ops:
            return []
        return spark.sparkContext.parallelize(list(ops), len(ops)).map(task).collect()

    return run_compaction(table, instant, on_spark)
