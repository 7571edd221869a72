"""One SparkSession (local[2]) for the whole test run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hudi_meta.spark.session import spark_session
from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkSession]:
    local_dir = tmp_path_factory.mktemp("spark-local")
    session = spark_session("local[2]", "hudi-meta-tests", spark__local__dir=str(local_dir))
    yield session
    session.stop()


@pytest.fixture
def table_path(tmp_path: Path) -> str:
    return str(tmp_path / "events")
