"""HiveSyncTool's registration as pure functions. Expected values are written from HiveSchemaUtil's type
mapping (timestamps as bigint, its default) and SparkDataSourceTableUtils' properties (docs/hudi-format.md section
7)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.errors import HudiMetaError
from hudi_meta.sync.hive_schema import (
    OUTPUT_FORMAT,
    RO_INPUT_FORMAT,
    RT_INPUT_FORMAT,
    SCHEMA_PART_LENGTH,
    SERDE,
    hive_type,
    partition_values,
    sync_definitions,
)


@pytest.mark.parametrize(
    ("arrow", "hive"),
    [
        (pa.string(), "string"),
        (pa.int32(), "int"),
        (pa.int64(), "bigint"),
        (pa.float32(), "float"),
        (pa.float64(), "double"),
        (pa.bool_(), "boolean"),
        (pa.binary(), "binary"),
        (pa.date32(), "date"),
        (pa.timestamp("us", "UTC"), "bigint"),
        (pa.decimal128(10, 2), "decimal(10,2)"),
        (pa.list_(pa.int32()), "array<int>"),
        (pa.map_(pa.string(), pa.float64()), "map<string,double>"),
        (pa.struct([("a", pa.int64()), ("b", pa.list_(pa.string()))]), "struct<a:bigint,b:array<string>>"),
    ],
)
def test_hive_types(arrow: pa.DataType, hive: str) -> None:
    assert hive_type(arrow) == hive


def test_a_type_hive_has_not_is_refused_in_one_line() -> None:
    with pytest.raises(HudiMetaError, match="no Hive type"):
        hive_type(pa.null())


@pytest.mark.parametrize(
    ("path", "fields", "values"),
    [
        ("region=eu", ["region"], ("eu",)),
        ("2026/11/22", ["y", "m", "d"], ("2026", "11", "22")),
        ("y=2026/m=11", ["y", "m"], ("2026", "11")),
        ("2024/01/15/10", ["ts_str"], ("2024/01/15/10",)),  # one field, a timestamp key generator's path
        ("", [], ()),
    ],
)
def test_partition_values(path: str, fields: list[str], values: tuple[str, ...]) -> None:
    assert partition_values(path, fields) == values


def test_a_partition_path_that_does_not_match_the_fields_is_refused() -> None:
    with pytest.raises(HudiMetaError, match="one part for each partition field"):
        partition_values("a=1/b=2/c=3", ["a", "b"])


SCHEMA = pa.schema(
    [("_hoodie_commit_time", pa.string()), ("id", pa.string()), ("ts", pa.int64()), ("region", pa.string())]
)


def test_ro_and_rt_as_hive_sync_tool_registers_them() -> None:
    tables, partitions = sync_definitions(SCHEMA, ["region"], ["region=us", "region=eu"], "/t", "db", "events")
    ro, rt = tables
    assert (ro.name, rt.name) == ("events_ro", "events_rt")
    assert (ro.input_format, rt.input_format) == (RO_INPUT_FORMAT, RT_INPUT_FORMAT)
    assert {t.output_format for t in tables} == {OUTPUT_FORMAT} and {t.serde for t in tables} == {SERDE}
    assert [c.name for c in ro.columns] == ["_hoodie_commit_time", "id", "ts"]  # partition columns apart
    assert [(c.name, c.type) for c in ro.partition_columns] == [("region", "string")]
    assert ro.serde_properties == {"path": "/t", "hoodie.query.as.ro.table": "true"}
    assert rt.serde_properties == {"path": "/t", "hoodie.query.as.ro.table": "false"}
    assert ro.location == "/t" and ro.properties["EXTERNAL"] == "TRUE"
    assert ro.properties["spark.sql.sources.provider"] == "hudi"
    assert ro.properties["spark.sql.sources.schema.numPartCols"] == "1"
    assert ro.properties["spark.sql.sources.schema.partCol.0"] == "region"
    spark = json.loads(ro.properties["spark.sql.sources.schema.part.0"])
    assert [(f["name"], f["type"]) for f in spark["fields"]] == [
        ("_hoodie_commit_time", "string"),
        ("id", "string"),
        ("ts", "long"),
        ("region", "string"),
    ]
    assert [(p.values, p.location) for p in partitions] == [(("eu",), "/t/region=eu"), (("us",), "/t/region=us")]


def test_without_datasource_properties() -> None:
    tables, _ = sync_definitions(SCHEMA, ["region"], [], "/t", "db", "events", as_datasource=False)
    assert not any(k.startswith("spark.sql.") for t in tables for k in t.properties)


def test_partition_fields_must_be_columns() -> None:
    with pytest.raises(HudiMetaError, match="partition fields not in the table's schema: day"):
        sync_definitions(SCHEMA, ["day"], [], "/t", "db", "events")


@given(st.lists(st.text(alphabet="abcdefgh_", min_size=1, max_size=40), min_size=1, max_size=300, unique=True))
def test_the_spark_schema_splits_into_parts_that_join_back(names: list[str]) -> None:
    schema = pa.schema([(n, pa.int64()) for n in names])
    ro = sync_definitions(schema, [], [], "/t", "db", "e")[0][0]
    count = int(ro.properties["spark.sql.sources.schema.numParts"])
    parts = [ro.properties[f"spark.sql.sources.schema.part.{i}"] for i in range(count)]
    assert all(0 < len(p) <= SCHEMA_PART_LENGTH for p in parts)
    assert [f["name"] for f in json.loads("".join(parts))["fields"]] == names
