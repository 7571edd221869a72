"""DataFrame readers: read-optimized, snapshot, incremental and time travel, one Spark task per file slice.

The driver plans the slices with the core table; each task opens the table and merges its slice with the
stateless file-group reader, so Spark and the core read identically.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema
from sqlalchemy import Engine

from hudi_meta.errors import NotFreshError
from hudi_meta.freshness import view_for_complete_before
from hudi_meta.index.freshness_inputs import indexed_freshness
from hudi_meta.table.table import HudiTable, Query, SliceRead

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _SliceReader:
    uri: str  # the table's full URI and storage options: what an executor opens it from
    options: dict[str, object]
    query: Query
    schema: pa.Schema

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = HudiTable.open(self.uri, self.options)
        for batch in batches:
            for raw in batch.column(0).to_pylist():
                read = SliceRead(**{**json.loads(raw), "log_files": tuple(json.loads(raw)["log_files"])})
                records = table.read_slice(read, self.query)
                if records.num_rows:
                    yield from records.select(self.schema.names).cast(self.schema).to_batches()


def read(
    spark: SparkSession, base_path: str, query: Query | str = "snapshot", options: dict[str, object] | None = None
) -> DataFrame:
    """The records of `query` ("snapshot", "ro", or a `Query` for incremental and time travel) as a DataFrame.

    One partition per file slice, merged by the core's file-group reader, so Spark reads the same rows as
    `HudiTable.read`. The schema is the newest committed base file's (meta columns included). The slices are
    planned now, on the driver; they are read when an action runs. `base_path` may be any table URI, with fsspec
    storage `options` (they travel to the executors).
    """
    table = HudiTable.open(base_path, options)
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
        _SliceReader(table.uri, table.storage.options, query, schema), spark_schema
    )


def read_complete_before(
    spark: SparkSession, base_path: str, complete_before_ms: int, store: Engine, strict: bool = False
) -> DataFrame:
    """The read-optimized view if it holds every record with an event time before `complete_before_ms` (its
    watermark, from the metadata store after indexing the table, is at or after it); else the snapshot view,
    with a warning saying why, or `NotFreshError` when `strict`."""
    short = view_for_complete_before(indexed_freshness(store, HudiTable.open(base_path)), complete_before_ms)
    if short is None:
        return read(spark, base_path, "ro")
    if strict:
        raise NotFreshError(short)
    log.warning("%s: reading the snapshot view instead", short)
    return read(spark, base_path, "snapshot")
