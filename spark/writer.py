"""The Spark MOR writer: upsert, insert and delete a DataFrame into a table (version 6, 8 or 9) with a BUCKET index.

The driver rolls back failed writes, requests the instant and plans each file group's append target.
Rows are routed to (partition, bucket); each Spark task then writes its file groups with the core's
task-level functions: one block per file group into the slice's log file, or, for the first write into a
bucket, a new file group with a base file (stock readers see every record). The driver commits the
returned write stats as one deltacommit.

Retried and speculative task attempts (spark.task.maxFailures > 1, spark.speculation) write the same file
names with the same bytes: a new bucket's file id is derived from (instant, partition, bucket), rows are
written in record key order, and the core replaces only its own earlier attempt's file. The driver keeps
the heartbeat of the instant while the job runs and accepts exactly one write stat per file group.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hudi_meta.spark.routing import BUCKET_COL, PARTITION_COL, routed
from pyspark.sql import DataFrame

from hudi_meta.errors import HudiMetaError
from hudi_meta.format import config_keys as keys
from hudi_meta.format.block_content import DeleteRecord
from hudi_meta.format.commit_metadata import WriteStat
from hudi_meta.metadata.sync import metadata_sync, rollback_hook, write_client
from hudi_meta.table import bucket_index
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Instant
from hudi_meta.write.failed_writes import rollback_failed_writes
from hudi_meta.write.write_targets import FileGroupTarget
from hudi_meta.write.writer import (
    META_COLUMNS,
    WriteClient,
    WriteContext,
    append_to_file_group,
    check_write_version,
    with_meta_columns,
    write_new_file_group,
)

OPERATIONS = ("upsert", "insert", "delete")


@dataclass(frozen=True)
class _Plan:
    """Everything a task needs (picklable): shipped to executors with the task functions."""

    ctx: WriteContext
    targets: dict[tuple[str, int], FileGroupTarget]
    num_buckets: int
    schema: pa.Schema | None  # target Arrow schema with meta columns (None for deletes)
    operation: str
    block_format: str
    fail_task_attempts: int = 0  # testing hook: attempts numbered below this fail after writing their files

    def write(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Write every file group whose rows this task received; yield one write stat (JSON) each."""
        received = list(batches)
        stats = []
        if received:
            table, keys = _by_file_group_and_key(pa.Table.from_batches(received), self.ctx)
            for part, bucket, start, length in _file_group_runs(table):
                data = table.slice(start, length).drop_columns([PARTITION_COL, BUCKET_COL])
                stat = self._write_group(part, bucket, data, keys.slice(start, length))
                if stat is not None:
                    stats.append(json.dumps(stat.to_dict()))
        if self.fail_task_attempts:
            from pyspark import TaskContext

            context = TaskContext.get()
            if context is not None and context.attemptNumber() < self.fail_task_attempts:
                raise RuntimeError(f"task attempt {context.attemptNumber()} fails after writing (testing hook)")
        yield pa.RecordBatch.from_pydict({"stat": stats}, schema=pa.schema([("stat", pa.string())]))

    def _write_group(self, partition: str, bucket: int, data: pa.Table, keys: pa.Array) -> WriteStat | None:
        """Write one file group's rows (in record key order, `keys` theirs)."""
        target = self.targets.get((partition, bucket))
        if self.operation == "delete":
            if target is None:
                return None  # nothing was ever written to this bucket
            deletes = [DeleteRecord(k, partition) for k in keys.to_pylist()]
            return append_to_file_group(self.ctx, target, None, deletes)
        data = _conform(data, self.schema)
        if self.operation == "upsert":
            data = _latest_per_key(data, keys, self.ctx)
        if target is None:
            file_id = _bucket_file_id(self.ctx, partition, bucket)
            return write_new_file_group(self.ctx, partition, data, file_id, self.schema)
        return append_to_file_group(self.ctx, target, data, (), self.block_format, self.schema)


def write_tasks(df: DataFrame, file_groups: int) -> int:
    """How many tasks write the file groups: as many as the input has partitions (the input's size decides it),
    at least four per core so that file groups hashed unevenly onto tasks still even out over the cores, never
    more than the file groups we know of. Each Python task has a fixed cost of its own, so a task per file group
    made small writes slow (bench_ingest prints the write time)."""
    cores = df.sparkSession.sparkContext.defaultParallelism
    return max(1, min(file_groups, max(4 * cores, df.rdd.getNumPartitions())))


def _bucket_file_id(ctx: WriteContext, partition: str, bucket: int) -> str:
    """The file id of a new bucket's file group: Java's shape (bucket number, then a UUID's tail), the same in
    every attempt of the task, so a retry rewrites the same base file instead of adding a second file group."""
    name = uuid.uuid5(uuid.NAMESPACE_URL, f"{ctx.base_path}/{partition}/{bucket}/{ctx.instant}")
    return f"{bucket:08d}{str(name)[8:]}-0"


def _by_file_group_and_key(table: pa.Table, ctx: WriteContext) -> tuple[pa.Table, pa.Array]:
    """The rows ordered by (partition, bucket, record key), stably, with their keys: whatever order the shuffle
    delivered them in, every attempt of a task writes the same bytes."""
    keys = ctx.record_key_array(table)
    # one chunk per column: Arrow sorts chunked columns by merging the chunks' sorts, twice as slow here
    columns = pa.table({"p": table.column(PARTITION_COL), "b": table.column(BUCKET_COL), "k": keys}).combine_chunks()
    order = pc.sort_indices(columns, sort_keys=[("p", "ascending"), ("b", "ascending"), ("k", "ascending")])
    return table.take(order), keys.take(order)


def _file_group_runs(table: pa.Table) -> Iterator[tuple[str, int, int, int]]:
    """(partition, bucket, first row, row count) of each run of rows of one file group in a sorted table."""
    partitions = pc.dictionary_encode(table.column(PARTITION_COL).combine_chunks())
    codes = partitions.indices.to_numpy()
    buckets = table.column(BUCKET_COL).to_numpy()
    starts = np.flatnonzero(np.r_[True, (codes[1:] != codes[:-1]) | (buckets[1:] != buckets[:-1])])
    ends = np.r_[starts[1:], len(codes)]
    names = partitions.dictionary.to_pylist()
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        yield names[codes[start]], int(buckets[start]), start, end - start


def _one_stat_per_file_group(stats: list[WriteStat]) -> list[WriteStat]:
    seen: dict[tuple[str, str], str] = {}
    for s in stats:
        previous = seen.setdefault((s.partition_path, s.file_id), s.path)
        if previous != s.path:
            raise HudiMetaError(f"two task results for file group {s.file_id}: {previous} and {s.path}")
    if len(seen) != len(stats):
        raise HudiMetaError("a file group was reported twice by the tasks")
    return stats


def _conform(data: pa.Table, schema: pa.Schema | None) -> pa.Table:
    if schema is None:
        return data
    columns = [f for f in schema if f.name not in META_COLUMNS]
    missing = [f.name for f in columns if f.name not in data.column_names]
    if missing:
        raise HudiMetaError(f"input lacks column(s) of the table: {', '.join(missing)}")
    return pa.Table.from_arrays([data.column(f.name).cast(f.type) for f in columns], schema=pa.schema(columns))


def _latest_per_key(data: pa.Table, keys: pa.Array, ctx: WriteContext) -> pa.Table:
    """Pre-combine an upsert batch in record key order: per key, the row with the largest ordering value (ties:
    the last)."""
    if len(keys) < 2 or not pc.any(pc.equal(keys.slice(1), keys.slice(0, len(keys) - 1))).as_py():
        return data  # no key twice in the batch: nothing to combine
    ordering = ctx.config.merge_spec().ordering_field
    n = data.num_rows
    values = data.column(ordering).to_pylist() if ordering and ordering in data.column_names else [None] * n
    best: dict[str, int] = {}
    for i, (key, value) in enumerate(zip(keys.to_pylist(), values, strict=True)):
        j = best.get(key)
        if j is None or values[j] is None or (value is not None and value >= values[j]):
            best[key] = i
    return data.take(pa.array(sorted(best.values()), pa.int64()))


def _target_schema(table: HudiTable, df: DataFrame, ctx: WriteContext) -> pa.Schema:
    """The table's schema (its latest base file) or, for a table's first write, the input's schema."""
    existing = table.arrow_schema()
    if existing is not None:
        return existing
    sample = pa.Table.from_batches([], schema=_arrow_schema_of(df))
    return with_meta_columns(sample, ctx.instant, "", "", []).schema


def _arrow_schema_of(df: DataFrame) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    schema = to_arrow_schema(df.schema)
    return pa.schema([pa.field(f.name, pa.string() if pa.types.is_large_string(f.type) else f.type) for f in schema])


def write(
    df: DataFrame,
    table: HudiTable,
    operation: str = "upsert",
    block_format: str = "avro",
    fail_task_attempts: int = 0,
) -> Instant:
    """Write `df` into `table` as one deltacommit and return the completed instant.

    `table` must be a MERGE_ON_READ table with a BUCKET index (`create_table(..., buckets=N)`), and `df` must
    hold the table's columns (for "delete": its record key and partition columns). An upsert keeps, per key,
    the row with the largest ordering value of the batch; an insert writes the rows as given; a delete writes
    delete blocks. `block_format` ("avro" or "parquet") is the data block type of log appends. The write is
    all or nothing: a failed job leaves an inflight instant that the next write rolls back once its heartbeat
    has expired (live writers are left alone), and retried task attempts rewrite the same files.
    `fail_task_attempts` is a testing hook (task attempts numbered below it fail after writing).
    """
    if operation not in OPERATIONS:
        raise HudiMetaError(f"unknown operation {operation!r}: {', '.join(OPERATIONS)}")
    check_writable(table)
    rollback_failed_writes(table, metadata_writer=rollback_hook(table))
    table.reload()
    with write_client(table) as client:
        return _write(df, table, client, operation, block_format, fail_task_attempts)


def check_writable(table: HudiTable) -> None:
    """Refuse, in one line, a table `write` cannot write: what it requires, read from the table alone, so callers
    check it before a session starts (`hudi-meta ingest`). A MERGE_ON_READ table with Hudi's simple BUCKET index
    (its bucket count set; no other index type or bucket engine named), of a version hudi-meta writes, with
    Parquet base files and a merge mode it merges by, and no metadata table partition it cannot keep in step."""
    config = table.config
    index = config.props.get(keys.INDEX_TYPE.name, "BUCKET").upper()  # absent: as a table hudi-meta created
    engine = keys.BUCKET_ENGINE.of(config.props).upper()
    unlike = (
        f"a {config.table_type} table"
        if not config.is_mor
        else f"{keys.INDEX_TYPE.name}={index}"
        if index != "BUCKET"
        else f"{keys.BUCKET_ENGINE.name}={engine}"
        if engine != "SIMPLE"
        else f"no BUCKET index ({keys.NUM_BUCKETS.name} is not set)"
        if config.num_buckets is None
        else None
    )
    if unlike is not None:
        raise HudiMetaError(
            f"{table.base_path}: {unlike}; hudi-meta writes only MERGE_ON_READ tables with a simple BUCKET index"
        )
    check_write_version(config)
    config.check_readable()  # base files are written and read as Parquet
    config.merge_spec()  # an upsert pre-combines by the table's merge mode
    metadata_sync(table)  # the metadata table is kept in step by every commit


def _write(
    df: DataFrame, table: HudiTable, client: WriteClient, operation: str, block_format: str, fail_task_attempts: int
) -> Instant:
    num_buckets = table.config.num_buckets
    assert num_buckets is not None
    schema = None if operation == "delete" else _target_schema(table, df, client.context)
    # targets after begin: a compaction planned before this write's instant existed is in its view (one planned
    # after it makes the commit fail and roll the write back, `hudi_meta.write.conflicts`)
    client.begin()
    ctx = client.context  # the instant is final once begun
    targets = {
        (part, b): t
        for (part, fid), t in client.targets().items()
        if (b := bucket_index.bucket_of_file_id(fid)) is not None
    }
    plan = _Plan(ctx, targets, num_buckets, schema, operation, block_format, fail_task_attempts)
    tasks = write_tasks(df, num_buckets * len({part for part, _ in targets} or {""}))
    by_file_group = routed(df, ctx, num_buckets).repartition(tasks, PARTITION_COL, BUCKET_COL)
    rows = by_file_group.mapInArrow(plan.write, "stat string").collect()
    client.stats = _one_stat_per_file_group([WriteStat.from_dict(json.loads(r.stat)) for r in rows])
    client.schema = schema
    return client.commit(operation.upper())
