"""Routing of a write's rows to (partition path, bucket): Spark's column expressions and the Python route task
must each give, for every row, what the core's per-row rules give (`TableConfig.partition_path` and
`bucket_index.bucket_id`, whose hashing is tested against Java's values in tests/table/test_bucket_index.py)."""

from __future__ import annotations

import datetime as dt
import random

import pytest
from hudi_meta.spark.routing import BUCKET_COL, PARTITION_COL, _route_columns, routed
from pyspark.sql import SparkSession

from hudi_meta.table.bucket_index import bucket_id
from hudi_meta.table.config import TableConfig
from hudi_meta.write.writer import WriteContext

BUCKETS = 7
TRICKY_KEYS = [
    "",
    "plain",
    "é𝄞x",  # UTF-16 surrogate pairs: String.hashCode counts code units
    "a:b",  # ':' without the hash field's name: the whole key is hashed
    "id:7",  # a key that looks like a complex key naming the hash field: the value is hashed
    "id:1,id:2",  # the last pair wins
    "x:1,id:2,y",
    "id:",
    ",,",
    "polygenelubricants",  # hashes to Integer.MIN_VALUE
]


def keys(seed: int, n: int = 300) -> list[str | None]:
    rng = random.Random(seed)
    alphabet = "ab:,é𝄞 z09"
    drawn: list[str | None] = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8))) for _ in range(n)]
    return [*TRICKY_KEYS, *drawn, None]


def context(**props: str) -> WriteContext:
    base = {"hoodie.table.recordkey.fields": "id", "hoodie.bucket.index.num.buckets": str(BUCKETS)}
    return WriteContext("/t", "/t/.hoodie", {**base, **props}, "20260101000000000")


def expected(row: dict[str, object], config: TableConfig) -> tuple[str, int]:
    """The core's per-row rules, one row at a time."""
    if config.is_complex_key:
        key = ",".join(f"{f}:{row[f]}" for f in config.record_key_fields)
    else:
        key = str(row[config.record_key_fields[0]])
    partition = config.partition_path([row[f] for f in config.partition_fields])
    return partition, bucket_id(key, BUCKETS, config.bucket_hash_fields)


CASES: dict[str, tuple[dict[str, str], dict[str, list[object]], bool]] = {
    # name: (table properties, column values, Spark computes the route itself)
    "text key, hive-style text partition": (
        {"hoodie.table.partition.fields": "region", "hoodie.datasource.write.hive_style_partitioning": "true"},
        {"region": ["eu", "", None, "a/b", "é"]},
        True,
    ),
    "text key, two partition levels, one an integer": (
        {"hoodie.table.partition.fields": "region,day"},
        {"region": ["eu", "", None], "day": [1, -5, None, 2**40]},
        True,
    ),
    "unpartitioned": ({}, {}, True),
    "hash field named": ({"hoodie.bucket.index.hash.field": "id"}, {}, True),
    "date partition: Python's spelling": (
        {"hoodie.table.partition.fields": "day"},
        {"day": [dt.date(2026, 1, 2), None]},
        False,
    ),
    "complex key: Python route": (
        {"hoodie.table.recordkey.fields": "id,region", "hoodie.table.partition.fields": "region"},
        {"region": ["eu", None, "x:y"]},
        False,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_row_goes_where_the_core_rules_send_it(spark: SparkSession, case: str) -> None:
    props, columns, in_spark = CASES[case]
    ctx = context(**props)
    rng = random.Random(case)
    rows = [{"id": k, **{name: rng.choice(values) for name, values in columns.items()}} for k in keys(len(case))]
    df = spark.createDataFrame(rows)
    assert (_route_columns(df, ctx.config, BUCKETS) is not None) == in_spark
    got = [(r.asDict(), r[PARTITION_COL], r[BUCKET_COL]) for r in routed(df, ctx, BUCKETS).collect()]
    assert len(got) == len(rows)
    for row, partition, bucket in got:
        assert (partition, bucket) == expected(row, ctx.config), row


def test_integer_keys_route_in_spark_as_their_text(spark: SparkSession) -> None:
    ctx = context()
    df = spark.createDataFrame([{"id": v} for v in (0, 1, -1, 2**31, -(2**63), 123456789)])
    assert _route_columns(df, ctx.config, BUCKETS) is not None
    for r in routed(df, ctx, BUCKETS).collect():
        assert (r[PARTITION_COL], r[BUCKET_COL]) == ("", bucket_id(str(r.id), BUCKETS, ("id",)))
