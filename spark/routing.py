"""Where each input row of a write goes: its partition path and its bucket (the file group it joins).

The rules are the core's (`TableConfig.partition_path`, `bucket_index.bucket_id`). Where the table's key and
partition fields are text or integers, Spark computes them itself, as column expressions: the rows then reach
Python only once, in the task that writes them. Other tables route in a Python task with the core's functions.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ByteType, DataType, IntegerType, LongType, ShortType, StringType, StructField, StructType

from hudi_meta.table import bucket_index
from hudi_meta.table.config import DEFAULT_PARTITION_PATH, TableConfig
from hudi_meta.write.writer import WriteContext, partition_path_array

PARTITION_COL = "_hm_partition"
BUCKET_COL = "_hm_bucket"


def routed(df: DataFrame, ctx: WriteContext, num_buckets: int) -> DataFrame:
    """`df` with two more columns: each row's partition path and bucket."""
    columns = _route_columns(df, ctx.config, num_buckets)
    if columns is not None:
        partition, bucket = columns
        return df.withColumns({PARTITION_COL: partition, BUCKET_COL: bucket})
    schema = StructType(
        [*df.schema.fields, StructField(PARTITION_COL, StringType()), StructField(BUCKET_COL, IntegerType())]
    )
    return df.mapInArrow(_PythonRoute(ctx, num_buckets), schema)


@dataclass(frozen=True)
class _PythonRoute:
    """The route as a Python task: any key and partition field types."""

    ctx: WriteContext
    num_buckets: int

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        config = self.ctx.config
        for batch in batches:
            table = pa.Table.from_batches([batch])
            keys = self.ctx.record_key_array(table)
            partitions = partition_path_array(config, table)
            buckets = bucket_index.bucket_id_array(keys, self.num_buckets, config.bucket_hash_fields)
            yield pa.RecordBatch.from_arrays(
                [*batch.columns, partitions, buckets], names=[*batch.schema.names, PARTITION_COL, BUCKET_COL]
            )


def _route_columns(df: DataFrame, config: TableConfig, num_buckets: int) -> tuple[Column, Column] | None:
    """The partition path and bucket as Spark expressions, or None where Spark would not spell a value as Python's
    `str` does (floats, booleans, dates...) or the key is complex or hashes on several fields."""
    types = {f.name: f.dataType for f in df.schema.fields}
    key_fields, hash_fields = config.record_key_fields, config.bucket_hash_fields
    if config.is_complex_key or len(key_fields) != 1 or len(hash_fields) != 1:
        return None
    texts: dict[str, Column] = {}
    for name in {*key_fields, *config.partition_fields}:
        text = _as_text(_column(name), types.get(name))
        if text is None:
            return None
        texts[name] = text
    key = F.coalesce(texts[key_fields[0]], F.lit("None"))
    levels = [_partition_level(config, name, texts[name]) for name in config.partition_fields]
    partition = F.concat_ws("/", *levels) if levels else F.lit("")
    return partition, _bucket(key, hash_fields[0], num_buckets)


def _column(name: str) -> Column:
    return F.col("`" + name.replace("`", "``") + "`")


def _as_text(column: Column, kind: DataType | None) -> Column | None:
    """The column as Python's `str` spells its values (nulls stay null), for text and integer columns."""
    if isinstance(kind, StringType):
        return column
    if isinstance(kind, ByteType | ShortType | IntegerType | LongType):
        return column.cast("string")
    return None


def _partition_level(config: TableConfig, name: str, text: Column) -> Column:
    """`TableConfig.partition_part` of the column."""
    level = F.when(text.isNull() | (text == F.lit("")), F.lit(DEFAULT_PARTITION_PATH)).otherwise(text)
    return F.concat(F.lit(f"{name}="), level) if config.hive_style_partitioning else level


def _bucket(key: Column, hash_field: str, num_buckets: int) -> Column:
    """`bucket_index.bucket_id` of one hash field: the key itself, or in a key of `field:value` pairs the last
    pair's value for the field; Java's `List.hashCode` of that one string (String.hashCode through `reflect`)."""
    pairs = F.filter(F.split(key, ","), lambda part: part.startswith(f"{hash_field}:"))
    value = F.split(F.try_element_at(pairs, F.lit(-1)), ":", 2).getItem(1)
    hashed = F.when(F.instr(key, ":") == 0, key).otherwise(F.coalesce(value, key))
    string_hash = F.reflect(F.lit("java.util.Objects"), F.lit("hashCode"), hashed).cast("bigint")
    return ((F.lit(31) + string_hash).bitwiseAND(F.lit(0x7FFFFFFF)) % F.lit(num_buckets)).cast("int")
