"""What hudi-meta uses from PySpark 4 that PySpark 3.5 lacks (docs/dependencies.md, "Spark versions").

Two things, both Arrow tables in and out of Spark, which PySpark 4.0 added:

- `SparkSession.createDataFrame` of a `pyarrow.Table` (3.5 reads the table as a list of rows and fails with
  CANNOT_INFER_SCHEMA_FOR_TYPE `ChunkedArray`). `arrow_dataframe` does it on both: on 4.x it is
  `createDataFrame`, on 3.5 the same steps as 4.0's `_create_from_arrow_table` through the JVM helpers 3.5
  already has (Arrow batches into the JVM as they are, no pandas in between).
- `DataFrame.toArrow()` (3.5: no such attribute). `to_arrow` does it on both; on 3.5 through the Arrow collect
  that 3.5's `toPandas` uses.

The quickstart, the tests and the benchmarks call these two instead of the 4.x methods; PySpark's own classes
are left as they are (a library does not change a user's session).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyspark
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType, TimestampType

SPARK_MAJOR = int(pyspark.__version__.split(".")[0])


def arrow_dataframe(spark: SparkSession, table: pa.Table, schema: StructType | list[str] | None = None) -> DataFrame:
    """`table` as a DataFrame of `spark`, column types from the table's Arrow types (or `schema`)."""
    if SPARK_MAJOR >= 4:
        return spark.createDataFrame(table, schema)
    return _from_arrow_table_35(spark, table, schema)


def to_arrow(df: DataFrame) -> pa.Table:
    """The rows of `df` as one Arrow table (collected to the driver)."""
    if SPARK_MAJOR >= 4:
        return df.toArrow()
    return _to_arrow_35(df)


def _from_arrow_table_35(spark: SparkSession, table: pa.Table, schema: StructType | list[str] | None) -> DataFrame:
    """PySpark 4.0's `_create_from_arrow_table` on 3.5: the Spark schema from the Arrow one, naive timestamps read
    in the session time zone (as 4.0 does for TIMESTAMP_LTZ), the table cast to the schema's Arrow types and
    streamed to the JVM one batch per partition (`spark.sql.execution.arrow.maxRecordsPerBatch` rows)."""
    from pyspark.sql.pandas.serializers import ArrowStreamSerializer
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

    if isinstance(schema, (list, tuple)):
        table = table.rename_columns(list(schema))
        schema = None
    if schema is None:
        schema = from_arrow_schema(table.schema)
    time_zone = spark.conf.get("spark.sql.session.timeZone") or "UTC"
    for i, (arrow_field, spark_field) in enumerate(zip(table.schema, schema.fields, strict=True)):
        naive = pa.types.is_timestamp(arrow_field.type) and arrow_field.type.tz is None
        if naive and isinstance(spark_field.dataType, TimestampType):
            local = pc.assume_timezone(table.column(i), time_zone, ambiguous="earliest", nonexistent="earliest")
            table = table.set_column(i, arrow_field.name, local)
    if schema.fields:  # a cast of a table without columns would lose its row count
        table = table.cast(to_arrow_schema(schema))
    batch_size = int(spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch") or 10000)
    batches = table.to_batches(max_chunksize=batch_size if batch_size > 0 else None)
    sc: Any = spark.sparkContext
    jvm: Any = sc._jvm
    j_iter = sc._serialize_to_jvm(
        batches,
        ArrowStreamSerializer(),
        lambda name: jvm.PythonSQLUtils.readArrowStreamFromFile(name),
        lambda: jvm.ArrowIteratorServer(),
    )
    jdf = jvm.PythonSQLUtils.toDataFrame(j_iter, schema.json(), spark._jsparkSession)
    df = DataFrame(jdf, spark)
    df._schema = schema  # what 3.5's own pandas path sets too: no round trip to the JVM for it
    return df


def _to_arrow_35(df: DataFrame) -> pa.Table:
    from pyspark.sql.pandas.types import to_arrow_schema

    batches = df._collect_as_arrow()  # type: ignore[operator]
    if not batches:
        return to_arrow_schema(df.schema).empty_table()
    return pa.Table.from_batches(batches)
