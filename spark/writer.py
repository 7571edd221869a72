"""The Spark MOR writer: upsert, insert and delete a DataFrame into a table version 6 with a BUCKET index.

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

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql.types import IntegerType, StringType, StructField, StructType

from hudi_meta.errors import HudiMetaError
from hudi_meta.format.block_content import DeleteRecord
from hudi_meta.format.commit_metadata import WriteStat
from hudi_meta.table import bucket_index
from hudi_meta.table.instant import Instant
from hudi_meta.table.rollback import rollback_failed_writes
from hudi_meta.table.table import HudiTable
from hudi_meta.table.write_targets import FileGroupTarget
from hudi_meta.table.writer import (
    META_COLUMNS,
    WriteClient,
    WriteContext,
    append_to_file_group,
    with_meta_columns,
    write_new_file_group,
)

OPERATIONS = ("upsert", "insert", "delete")
PARTITION_COL = "_hm_partition"
BUCKET_COL = "_hm_bucket"


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

    def route(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Add the partition path and bucket of each row."""
        config = self.ctx.config
        fields = config.partition_fields
        hash_fields = config.bucket_hash_fields
        paths: dict[tuple[object, ...], str] = {}
        for batch in batches:
            table = pa.Table.from_batches([batch])
            keys = self.ctx.record_keys(table)
            columns = [table.column(f).to_pylist() for f in fields]
            partitions = [""] * len(keys)
            if fields:
                partitions = [
                    paths.get(vals) or paths.setdefault(vals, config.partition_path(vals))
                    for vals in zip(*columns, strict=True)
                ]
            buckets = bucket_index.bucket_ids(keys, self.num_buckets, hash_fields)
            yield from (
                table.append_column(PARTITION_COL, pa.array(partitions, pa.string()))
                .append_column(BUCKET_COL, pa.array(buckets, pa.int32()))
                .to_batches()
            )

    def write(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Write every file group whose rows this task received; yield one write stat (JSON) each."""
        groups: dict[tuple[str, int], list[pa.RecordBatch]] = {}
        for batch in batches:
            table = pa.Table.from_batches([batch])
            for part, bucket in set(
                zip(table.column(PARTITION_COL).to_pylist(), table.column(BUCKET_COL).to_pylist(), strict=True)
            ):
                mask = pc.and_(pc.equal(table.column(PARTITION_COL), part), pc.equal(table.column(BUCKET_COL), bucket))
                groups.setdefault((part, bucket), []).extend(table.filter(mask).to_batches())
        stats = []
        for (part, bucket), parts in sorted(groups.items()):
            data = pa.Table.from_batches(parts).drop_columns([PARTITION_COL, BUCKET_COL])
            stat = self._write_group(part, bucket, data)
            if stat is not None:
                stats.append(json.dumps(stat.to_dict()))
        if self.fail_task_attempts:
            from pyspark import TaskContext

            context = TaskContext.get()
            if context is not None and context.attemptNumber() < self.fail_task_attempts:
                raise RuntimeError(f"task attempt {context.attemptNumber()} fails after writing (testing hook)")
        yield pa.RecordBatch.from_pydict({"stat": stats}, schema=pa.schema([("stat", pa.string())]))

    def _write_group(self, partition: str, bucket: int, data: pa.Table) -> WriteStat | None:
        target = self.targets.get((partition, bucket))
        data = _in_key_order(data, self.ctx)  # the same bytes in every attempt of this task
        if self.operation == "delete":
            if target is None:
                return None  # nothing was ever written to this bucket
            deletes = [DeleteRecord(k, partition) for k in self.ctx.record_keys(data)]
            return append_to_file_group(self.ctx, target, None, deletes)
        data = _conform(data, self.schema)
        if self.operation == "upsert":
            data = _latest_per_key(data, self.ctx)
        if target is None:
            file_id = _bucket_file_id(self.ctx, partition, bucket)
            return write_new_file_group(self.ctx, partition, data, file_id, self.schema)
        return append_to_file_group(self.ctx, target, data, (), self.block_format, self.schema)


def _bucket_file_id(ctx: WriteContext, partition: str, bucket: int) -> str:
    """The file id of a new bucket's file group: Java's shape (bucket number, then a UUID's tail), the same in
    every attempt of the task, so a retry rewrites the same base file instead of adding a second file group."""
    name = uuid.uuid5(uuid.NAMESPACE_URL, f"{ctx.base_path}/{partition}/{bucket}/{ctx.instant}")
    return f"{bucket:08d}{str(name)[8:]}-0"


def _in_key_order(data: pa.Table, ctx: WriteContext) -> pa.Table:
    """Rows sorted by record key (stable), whatever order the shuffle delivered them in."""
    keys = pa.array(ctx.record_keys(data), pa.string())
    return data.take(pc.sort_indices(keys))


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


def _latest_per_key(data: pa.Table, ctx: WriteContext) -> pa.Table:
    """Pre-combine an upsert batch: per key, the row with the largest ordering value (ties: the last)."""
    keys = ctx.record_keys(data)
    if len(set(keys)) == len(keys):
        return data  # no key twice in the batch: nothing to combine
    ordering = ctx.config.merge_spec().ordering_field
    values = data.column(ordering).to_pylist() if ordering and ordering in data.column_names else [None] * len(keys)
    best: dict[str, int] = {}
    for i, (key, value) in enumerate(zip(keys, values, strict=True)):
        j = best.get(key)
        if j is None or values[j] is None or (value is not None and value >= values[j]):
            best[key] = i
    if len(best) == len(keys):
        return data
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
    num_buckets = table.config.num_buckets
    if not table.config.is_mor or num_buckets is None:
        raise HudiMetaError(f"{table.base_path} is not a MERGE_ON_READ table with a BUCKET index")
    rollback_failed_writes(table)
    table.reload()
    with WriteClient(table) as client:
        return _write(df, table, client, operation, block_format, fail_task_attempts)


def _write(
    df: DataFrame, table: HudiTable, client: WriteClient, operation: str, block_format: str, fail_task_attempts: int
) -> Instant:
    num_buckets = table.config.num_buckets
    assert num_buckets is not None
    ctx = client.context
    targets = {
        (part, b): t
        for (part, fid), t in client.targets().items()
        if (b := bucket_index.bucket_of_file_id(fid)) is not None
    }
    schema = None if operation == "delete" else _target_schema(table, df, ctx)
    plan = _Plan(ctx, targets, num_buckets, schema, operation, block_format, fail_task_attempts)
    routed_schema = StructType(
        [*df.schema.fields, StructField(PARTITION_COL, StringType()), StructField(BUCKET_COL, IntegerType())]
    )
    routed = df.mapInArrow(plan.route, routed_schema)
    # One task per (partition, bucket) file group as far as we know them, so Spark can even out the load.
    known_partitions = {part for part, _ in targets} or {""}
    tasks = max(1, min(num_buckets * len(known_partitions), 256))
    client.begin()
    rows = routed.repartition(tasks, PARTITION_COL, BUCKET_COL).mapInArrow(plan.write, "stat string").collect()
    client.stats = _one_stat_per_file_group([WriteStat.from_dict(json.loads(r.stat)) for r in rows])
    client.schema = schema
    return client.commit(operation.upper())
