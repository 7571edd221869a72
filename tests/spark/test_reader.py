"""Incremental and time-travel reads, core and Spark, against a model of the stream."""

from __future__ import annotations

import pytest
from hudi_meta.spark import reader
from hudi_meta.spark.compat import to_arrow
from pyspark.sql import SparkSession

from hudi_meta.table.table import HudiTable, Query
from tests.spark.model import Model, rows_of
from tests.spark.test_writer import written  # noqa: F401  (module fixture reused)


def test_time_travel_equals_the_model_at_every_instant(spark: SparkSession, written: tuple[str, Model]) -> None:  # noqa: F811
    path, model = written
    table = HudiTable.open(path)
    for instant, _, _ in model.history:
        query = Query("time-travel", as_of=instant)
        assert rows_of(table.read(query)) == model.as_of(instant), instant
    last = model.history[-1][0]
    assert rows_of(to_arrow(reader.read(spark, path, Query("time-travel", as_of=model.history[1][0])))) == model.as_of(
        model.history[1][0]
    )
    assert rows_of(table.read(Query("time-travel", as_of=last))) == model.rows()


@pytest.mark.parametrize("span", [(0, 1), (0, 3), (1, 4), (2, -1)])
def test_incremental_equals_records_the_range_wrote(
    spark: SparkSession,
    written: tuple[str, Model],  # noqa: F811
    span: tuple[int, int],
) -> None:
    path, model = written
    instants = [h[0] for h in model.history]
    begin, end = instants[span[0]], instants[span[1]]
    query = Query("incremental", begin=begin, end=end)
    expected = model.incremental(begin, end)
    assert rows_of(HudiTable.open(path).read(query)) == expected
    assert rows_of(to_arrow(reader.read(spark, path, query))) == expected
