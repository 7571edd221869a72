"""`hudi_meta.spark.reader.read_complete_before`: the DataFrame of RO when it is complete before T, else of
the snapshot view (or NotFreshError when strict). Same table and reasoning as tests/cli/test_read_complete_before."""

from __future__ import annotations

from pathlib import Path

import pytest
from hudi_meta.spark.reader import read_complete_before
from pyspark.sql import SparkSession
from sqlalchemy import Engine

from hudi_meta.errors import NotFreshError
from tests.compaction.core import at
from tests.sync.helpers import compacted_table


def test_ro_when_complete_else_the_snapshot(spark: SparkSession, engine: Engine, tmp_path: Path) -> None:
    t, _ = compacted_table(tmp_path / "t", engine)
    fresh = read_complete_before(spark, t.path, at(10), engine)
    assert sorted(r.id for r in fresh.collect()) == ["a", "b"]
    fallback = read_complete_before(spark, t.path, at(11), engine)
    assert sorted(r.id for r in fallback.collect()) == ["a", "b", "c"]
    with pytest.raises(NotFreshError, match="holds all data before 2026-01-01T00:00:10.000Z only"):
        read_complete_before(spark, t.path, at(11), engine, strict=True)
