"""DataFrame readers: read-optimized, snapshot, incremental and time travel, one Spark task per file slice.

The driver plans the slices with the core table; each task opens the table and merges its slice with the
stateless file-group reader, so Spark and the core read identically.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from hudi_meta.table.table import HudiTable, Query, SliceRead


@dataclass(frozen=True)
class _SliceReader:
    base_path: str
    query: Query
    schema: pa.Schema

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = HudiTable.open(self.base_path)
        for batch in batches:
            for raw in batch.column(0).to_pylist():
                read = SliceRead(**{**json.loads(raw), "log_files": tuple(json.loads(raw)["log_files"])})
                records = table.read_slice(read, self.query)
                if records.num_rows:
                    yield from records.select(self.schema.names).cast(self.schema).to_batches()


def read(spark: SparkSession, base_path: str, query: Query | str = "snapshot") -> DataFrame:
    """The records of `query` ("snapshot", "ro", or a `Query` for incremental and time travel) as a DataFrame.

    One partition per file slice, merged by the core's file-group reader, so Spark reads the same rows as
    `HudiTable.read`. The schema is the newest committed base file's (meta columns included). The slices are
    planned now, on the driver; they are read when an action runs.
    """
    table = HudiTable.open(base_path)
    query = Query.of(query)
    reads = table.plan_reads(query)
    schema = table.arrow_schema()
    if schema is None:
        return spark.createDataFrame([], "_hoodie_record_key string")
    spark_schema = from_arrow_schema(schema)
    if not reads:
        return spark.createDataFrame([], spark_schema)
    slices = spark.sparkContext.parallelize([(json.dumps(asdict(r)),) for r in reads], len(reads))
    return spark.createDataFrame(slices, "slice string").mapInArrow(
        _SliceReader(table.base_path, query, schema), spark_schema
    )
