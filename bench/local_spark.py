"""The SparkSession of the Spark benchmarks: local[2], its scratch space inside the bench's work directory."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hudi_meta.spark.session import spark_session
from pyspark.sql import SparkSession

MASTER = "local[2]"


@contextmanager
def local_spark(app_name: str, work: Path) -> Iterator[SparkSession]:
    """A session on `MASTER` that spills into `work`/spark-local; stopped on exit."""
    spark = spark_session(MASTER, app_name, spark__local__dir=str(work / "spark-local"))
    try:
        yield spark
    finally:
        spark.stop()
