"""`hudi-meta ingest`: read a JSON-lines or Parquet input with Spark and write it into a table."""

from __future__ import annotations

import os
from dataclasses import dataclass

from hudi_meta.spark import writer
from hudi_meta.spark.session import spark_session
from pyspark.sql import DataFrame, SparkSession

from hudi_meta.errors import HudiMetaError
from hudi_meta.metadata.init import create_metadata_table
from hudi_meta.progress import Report, silent
from hudi_meta.storage import storage_for
from hudi_meta.table.bucket_index import check_buckets
from hudi_meta.table.instant import Instant
from hudi_meta.table.table import HudiTable
from hudi_meta.table.writer import CURRENT_VERSION, create_table


@dataclass(frozen=True)
class IngestOptions:
    """What `hudi-meta ingest` was asked to do. The table settings (`ordering_field`, `event_time_field`,
    `partition_field`, `buckets`, `table_version`, `min_event_time_header`) are used only when the table is
    created: a table keeps its version (hudi-meta never upgrades a table)."""

    table: str
    input: str
    record_key: str
    ordering_field: str
    event_time_field: str | None = None
    partition_field: str | None = None
    operation: str = "upsert"
    create: bool = False
    buckets: int = 4
    table_version: int = CURRENT_VERSION
    block_format: str = "avro"
    min_event_time_header: bool = False
    spark_master: str = "local[2]"
    metadata_table: bool = True  # Hudi's default: a new table gets a metadata table (its `files` partition)

    def __post_init__(self) -> None:
        """A bucket count no table holds is refused before anything is read or Spark starts."""
        check_buckets(self.buckets)


def read_input(spark: SparkSession, path: str) -> DataFrame:
    """A Parquet or JSON-lines file, or a folder of them, by its name; anything else is a `HudiMetaError`."""
    if not os.path.exists(path):
        raise HudiMetaError(f"no such input: {path}")
    if path.endswith(".parquet") or (os.path.isdir(path) and any(p.endswith(".parquet") for p in os.listdir(path))):
        return spark.read.parquet(path)
    if path.endswith((".jsonl", ".json")) or os.path.isdir(path):
        return spark.read.json(path)
    raise HudiMetaError(f"unknown input format for {path}: use .jsonl or .parquet")


def table_exists(path: str) -> bool:
    """Whether `path` holds a Hudi table (its `hoodie.properties`), on any storage."""
    storage, base_path = storage_for(path)
    return storage.exists(f"{base_path}/.hoodie/hoodie.properties")


def open_or_create(opts: IngestOptions) -> HudiTable:
    """The table at `opts.table`, created first (MOR, BUCKET index, named after its folder) when missing, with
    its metadata table when `opts.metadata_table` (also for a table an earlier `--create` was killed before it
    had its metadata table and any commit)."""
    if table_exists(opts.table):
        table = HudiTable.open(opts.table)
        if opts.create and opts.metadata_table and not table.config.metadata_partitions and not table.timeline.instants:
            create_metadata_table(table)
            table = HudiTable.open(opts.table)
        return table
    _, base_path = storage_for(opts.table)
    partitions = [opts.partition_field] if opts.partition_field else []
    table = create_table(
        opts.table,
        os.path.basename(base_path.rstrip("/")) or "table",
        [opts.record_key],
        opts.ordering_field,
        partitions,
        event_time_field=opts.event_time_field,
        min_event_time_header=opts.min_event_time_header,
        buckets=opts.buckets,
        version=opts.table_version,
    )
    if opts.metadata_table:
        create_metadata_table(table)
        table = HudiTable.open(opts.table)
    return table


def ingest(opts: IngestOptions, spark: SparkSession | None = None, progress: Report = silent) -> Instant:
    """Write the input into the table as one deltacommit and return its instant.

    Bad input (no table without `create`, another record key, a missing input or column) is a `HudiMetaError`
    raised before anything is written, and, where it can be known without Spark, before Spark starts.
    `spark` defaults to a new session on `opts.spark_master`.
    """
    if table_exists(opts.table):
        keys = HudiTable.open(opts.table).config.record_key_fields
        if keys != (opts.record_key,):
            raise HudiMetaError(f"table {opts.table} is keyed by {','.join(keys)}, not {opts.record_key}")
    elif not opts.create:
        raise HudiMetaError(f"no table at {opts.table}: pass --create to create it")
    if not os.path.exists(opts.input):
        raise HudiMetaError(f"no such input: {opts.input}")
    progress("ingest: starting Spark", 0, None)
    spark = spark or spark_session(opts.spark_master)
    progress("ingest: reading the input", 0, None)
    df = read_input(spark, opts.input)
    for column in (opts.record_key, opts.ordering_field, opts.event_time_field, opts.partition_field):
        if column and column not in df.columns and not (opts.operation == "delete" and column != opts.record_key):
            raise HudiMetaError(f"input {opts.input} has no column {column!r} (columns: {', '.join(df.columns)})")
    table = open_or_create(opts)
    progress("ingest: writing", 0, None)
    instant: Instant = writer.write(df, table, opts.operation, opts.block_format)
    return instant
