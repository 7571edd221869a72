"""How Hudi's HiveSyncTool registers a Merge-On-Read table (docs/hudi-format.md section 7), as pure functions: which
names it registers (`Layout`: `skip_ro_suffix` and the table strategy) and their definitions from the table's
schema, partition fields, partitions and base path.

Types follow HiveSchemaUtil with timestamps as `bigint` (HiveSyncTool's default, `support_timestamp=false`);
the `spark.sql.sources.*` properties carry Spark's own JSON schema, partition columns last, as
SparkDataSourceTableUtils writes them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa

from hudi_meta.errors import HudiMetaError
from hudi_meta.format.config_keys import QUERY_AS_RO_TABLE
from hudi_meta.spelling import Spelled
from hudi_meta.sync.catalog import CatalogTable, Column, Partition

RO_SUFFIX = "_ro"
RT_SUFFIX = "_rt"
RO_INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
RT_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
SCHEMA_PART_LENGTH = 4000  # hoodie.datasource.hive_sync.schema_string_length_thresh


class TableStrategy(Spelled):
    """Which views of a Merge-On-Read table HiveSyncTool registers (`hoodie.datasource.hive_sync.table.strategy`):
    the read-optimized view alone, the snapshot (real-time) view alone, both."""

    RO = "ro"
    RT = "rt"
    ALL = "all"


@dataclass(frozen=True)
class Layout:
    """The names HiveSyncTool registers a Merge-On-Read table `NAME` under (`HiveSyncTool.initTableNameVars` and
    `doSync`): ALL registers the read-optimized view as `NAME_ro`, or as `NAME` with `skip_ro_suffix`
    (`hoodie.datasource.hive_sync.skip_ro_suffix`), and the snapshot view as `NAME_rt`; RO and RT register their one
    view as `NAME` itself, whatever `skip_ro_suffix` says."""

    skip_ro_suffix: bool = False
    strategy: TableStrategy = TableStrategy.ALL

    def registrations(self, name: str) -> list[tuple[str, bool]]:
        """(catalog table name, whether it is the read-optimized view) of each table this layout registers."""
        if self.strategy == TableStrategy.RO:
            return [(name, True)]
        if self.strategy == TableStrategy.RT:
            return [(name, False)]
        return [(name if self.skip_ro_suffix else name + RO_SUFFIX, True), (name + RT_SUFFIX, False)]


def candidate_names(name: str) -> tuple[str, ...]:
    """Every name some layout registers `name` under: where an existing registration of the table is looked for."""
    return (name, name + RO_SUFFIX, name + RT_SUFFIX)


def is_read_optimized(table: CatalogTable) -> bool:
    """Whether a registered table reads the read-optimized view: Hudi's non-real-time input format, or
    `hoodie.query.as.ro.table` true in its serde properties (what Spark's Hudi data source reads)."""
    flag = table.serde_properties.get(QUERY_AS_RO_TABLE.name)
    if flag is not None:
        return flag.lower() == "true"
    return "realtime" not in table.input_format.lower()


def hive_type(t: pa.DataType) -> str:
    """The Hive type of an Arrow type (Parquet's logical types as HiveSchemaUtil maps them)."""
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int64(t) or pa.types.is_uint32(t) or pa.types.is_timestamp(t) or pa.types.is_time64(t):
        return "bigint"
    if pa.types.is_integer(t) and t.bit_width <= 32 or pa.types.is_time32(t):
        return "int"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "binary"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"array<{hive_type(t.value_type)}>"
    if pa.types.is_map(t):
        return f"map<{hive_type(t.key_type)},{hive_type(t.item_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"{f.name}:{hive_type(f.type)}" for f in t) + ">"
    raise HudiMetaError(f"no Hive type for the column type {t}")


def spark_type(t: pa.DataType) -> object:
    """The type as Spark's StructType JSON writes it."""
    simple = {
        "string": "string",
        "boolean": "boolean",
        "int": "integer",
        "float": "float",
        "double": "double",
        "date": "date",
        "binary": "binary",
    }
    if pa.types.is_timestamp(t):
        return "timestamp"
    if pa.types.is_int64(t) or pa.types.is_uint32(t) or pa.types.is_time64(t):
        return "long"
    if pa.types.is_int16(t) or pa.types.is_uint8(t):
        return "short"
    if pa.types.is_int8(t):
        return "byte"
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return {"type": "array", "elementType": spark_type(t.value_type), "containsNull": True}
    if pa.types.is_map(t):
        return {
            "type": "map",
            "keyType": spark_type(t.key_type),
            "valueType": spark_type(t.item_type),
            "valueContainsNull": True,
        }
    if pa.types.is_struct(t):
        return spark_struct(list(t))
    return simple[hive_type(t)]


def spark_struct(fields: Iterable[pa.Field]) -> dict[str, object]:
    return {
        "type": "struct",
        "fields": [{"name": f.name, "type": spark_type(f.type), "nullable": True, "metadata": {}} for f in fields],
    }


def partition_values(partition_path: str, fields: Sequence[str]) -> tuple[str, ...]:
    """The values of a partition path as HiveSyncTool's default extractors read them: one field takes the whole
    path (SinglePartPartitionValueExtractor; a timestamp key generator writes `2024/01/15/10` for one field),
    several take one part each (MultiPartKeysValueExtractor); `field=` prefixes (hive style) are dropped."""
    if len(fields) == 1 and partition_path:
        prefix = f"{fields[0]}="
        return (partition_path[len(prefix) :] if partition_path.startswith(prefix) else partition_path,)
    parts = partition_path.split("/") if partition_path else []
    if len(parts) != len(fields):
        raise HudiMetaError(
            f"partition {partition_path!r} does not have one part for each partition field ({', '.join(fields)})"
        )
    return tuple(p.split("=", 1)[1] if "=" in p else p for p in parts)


def sync_definitions(
    schema: pa.Schema,
    partition_fields: Sequence[str],
    partition_paths: Iterable[str],
    base_path: str,
    database: str,
    name: str,
    as_datasource: bool = True,
    layout: Layout = Layout(),
) -> tuple[list[CatalogTable], list[Partition]]:
    """The tables `layout` registers `name` under (by default `<name>_ro` and `<name>_rt`) as HiveSyncTool creates
    them (without `last_commit_time_sync`, which a sync sets last), and the partitions each gets. `as_datasource`
    (HiveSyncTool's `sync_as_datasource`, default on)
    adds the `spark.sql.sources.*` properties: Spark then reads the table through its `hudi` data source, and
    a Spark without the Hudi bundle cannot open it at all, not even for SHOW TBLPROPERTIES."""
    missing = [f for f in partition_fields if f not in schema.names]
    if missing:
        raise HudiMetaError(f"partition fields not in the table's schema: {', '.join(missing)}")
    data = [f for f in schema if f.name not in partition_fields]
    parts = [schema.field(f) for f in partition_fields]
    spark_schema = json.dumps(spark_struct(data + parts), separators=(",", ":"))
    chunks = [spark_schema[i : i + SCHEMA_PART_LENGTH] for i in range(0, len(spark_schema), SCHEMA_PART_LENGTH)]
    properties = {"EXTERNAL": "TRUE"}
    if as_datasource:
        properties["spark.sql.sources.provider"] = "hudi"
        properties["spark.sql.sources.schema.numParts"] = str(len(chunks))
        properties.update({f"spark.sql.sources.schema.part.{i}": c for i, c in enumerate(chunks)})
    if parts and as_datasource:
        properties["spark.sql.sources.schema.numPartCols"] = str(len(parts))
        properties.update({f"spark.sql.sources.schema.partCol.{i}": f.name for i, f in enumerate(parts)})
    tables = [
        CatalogTable(
            database=database,
            name=table_name,
            columns=tuple(Column(f.name, hive_type(f.type)) for f in data),
            partition_columns=tuple(Column(f.name, hive_type(f.type)) for f in parts),
            location=base_path,
            input_format=RO_INPUT_FORMAT if read_optimized else RT_INPUT_FORMAT,
            output_format=OUTPUT_FORMAT,
            serde=SERDE,
            serde_properties={"path": base_path, QUERY_AS_RO_TABLE.name: str(read_optimized).lower()},
            properties=dict(properties),
        )
        for table_name, read_optimized in layout.registrations(name)
    ]
    partitions = [
        Partition(partition_values(p, partition_fields), f"{base_path.rstrip('/')}/{p}")
        for p in sorted(set(partition_paths))
        if partition_fields
    ]
    return tables, partitions
