"""A SparkSession set up for hudi-meta: Arrow on, no UI, workers on this Python."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pyspark.sql import SparkSession

LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")


def spark_session(master: str | None = "local[2]", app_name: str = "hudi-meta", **conf: str) -> SparkSession:
    """The session every Spark entry point of hudi-meta runs in, for `master` (local or a standalone cluster URL;
    None: the one spark-submit gives, with its own driver address).

    Arrow transfer on (tasks exchange Arrow batches with the core), Python workers on this interpreter (they
    import the same hudi_meta), session time zone UTC (event times and instants are never shifted), no UI and,
    unless spark-submit started it, the driver bound to 127.0.0.1. `conf` adds or overrides settings, `__`
    standing for dots (`spark__local__dir="/tmp/x"`). A session already running in this process is returned
    instead (`getOrCreate`), keeping its core settings. A pyarrow Table becomes a DataFrame of it through
    `hudi_meta.spark.compat.arrow_dataframe` (PySpark 3.5's `createDataFrame` does not take one).
    """
    java_opts = f"-Dlog4j2.configurationFile=file:{LOG4J_CONFIG}"
    builder = SparkSession.builder.appName(app_name)
    if master is not None:
        builder = (
            builder.master(master)
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.pyspark.python", sys.executable)
            .config("spark.pyspark.driver.python", sys.executable)
        )
    builder = (
        builder.config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.executor.extraJavaOptions", java_opts)
    )
    for key, value in conf.items():
        builder = builder.config(key.replace("__", "."), value)
    # PySpark starts local workers with $PYSPARK_PYTHON (else `python3` on PATH), not with spark.pyspark.python:
    # from a virtualenv that is not activated, `python3` would be another interpreter, without hudi_meta
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return builder.getOrCreate()
