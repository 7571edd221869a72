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
from hudi_meta.table.bucket_index import DEFAULT_BUCKETS, check_buckets
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Instant
from hudi_meta.write.writer import CURRENT_VERSION, create_table


@dataclass(frozen=True)
class IngestOptions:
    """What `hudi-meta ingest` was asked to do. The table settings (`ordering_field`, `event_time_field`,
    `partition_field`, `buckets`, `table_version`, `min_event_time_header`) are used only when the table is
    created: a table keeps its version (hudi-meta never upgrades a table), and a partition field, event-time field,
    bucket count or version given for a table that exists must be its own (`check_before_spark`)."""

    table: str
    input: str
    record_key: str
    ordering_field: str
    event_time_field: str | None = None
    partition_field: str | None = None
    operation: str = "upsert"
    create: bool = False
    buckets: int | None = None  # None: DEFAULT_BUCKETS when creating
    table_version: int | None = None  # None: CURRENT_VERSION when creating
    block_format: str = "avro"
    min_event_time_header: bool = False
    spark_master: str = "local[2]"
    metadata_table: bool = True  # Hudi's default: a new table gets a metadata table (its `files` partition)

    def __post_init__(self) -> None:
        """A bucket count no table holds is refused before anything is read or Spark starts."""
        if self.buckets is not None:
            check_buckets(self.buckets)


def input_format(path: str) -> str:
    """ "parquet" or "json" for a Parquet or JSON-lines file, or a folder of them, by its name; anything else is a
    `HudiMetaError` (known without Spark)."""
    if not os.path.exists(path):
        raise HudiMetaError(f"no such input: {path}")
    if path.endswith(".parquet") or (os.path.isdir(path) and any(p.endswith(".parquet") for p in os.listdir(path))):
        return "parquet"
    if path.endswith((".jsonl", ".json")) or os.path.isdir(path):
        return "json"
    raise HudiMetaError(f"unknown input format for {path}: use .jsonl or .parquet")


def read_input(spark: SparkSession, path: str) -> DataFrame:
    """The input at `path` (see `input_format`)."""
    if input_format(path) == "parquet":
        return spark.read.parquet(path)
    return spark.read.json(path)


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
        buckets=opts.buckets or DEFAULT_BUCKETS,
        version=opts.table_version or CURRENT_VERSION,
    )
    if opts.metadata_table:
        create_metadata_table(table)
        table = HudiTable.open(opts.table)
    return table


def check_before_spark(opts: IngestOptions) -> None:
    """Refuse, before a session starts, what can be known without Spark: a table the writer cannot write
    (`writer.check_writable`), keyed by another field, or whose settings differ from the ones given to create it
    (a table keeps them: they are used only when creating); no table without `create`, or a path that is no
    folder; a missing input or one of an unknown format."""
    if table_exists(opts.table):
        table = HudiTable.open(opts.table)
        keys = table.config.record_key_fields
        if keys != (opts.record_key,):
            raise HudiMetaError(f"table {opts.table} is keyed by {','.join(keys)}, not {opts.record_key}")
        writer.check_writable(table)
        _check_kept_settings(opts, table)
    elif not opts.create:
        raise HudiMetaError(f"no table at {opts.table}: pass --create to create it")
    else:
        storage, base_path = storage_for(opts.table)
        if storage.exists(base_path) and not storage.is_dir(base_path):
            raise HudiMetaError(f"cannot create a table at {opts.table}: it is a file")
    input_format(opts.input)


def _check_kept_settings(opts: IngestOptions, table: HudiTable) -> None:
    """A setting given for creating that the existing table does not have would be ignored: refused instead."""
    config = table.config
    given = {
        "--partition-field": (opts.partition_field, ",".join(config.partition_fields)),
        "--event-time-field": (opts.event_time_field, config.event_time_field or ""),
        "--buckets": (None if opts.buckets is None else str(opts.buckets), str(config.num_buckets)),
        "--table-version": (None if opts.table_version is None else str(opts.table_version), str(config.version)),
    }
    for option, (wanted, kept) in given.items():
        if wanted is not None and wanted != kept:
            hint = " (to index by another field: hudi-meta register TABLE --event-time-field F)"
            raise HudiMetaError(
                f"table {opts.table} exists with {option.removeprefix('--')} {kept or '(none)'}, not {wanted}: "
                f"{option} is a setting for creating a table, which keeps its own"
                + (hint if option == "--event-time-field" else "")
            )


def ingest(opts: IngestOptions, spark: SparkSession | None = None, progress: Report = silent) -> Instant:
    """Write the input into the table as one deltacommit and return its instant.

    Bad input (no table without `create`, another record key, a missing input or column) is a `HudiMetaError`
    raised before anything is written, and, where it can be known without Spark, before Spark starts.
    `spark` defaults to a new session on `opts.spark_master`.
    """
    check_before_spark(opts)
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
