"""Building event tables with many log files per slice, and comparing tables, for compaction tests."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from hudi_meta.spark import writer
from hudi_meta.spark.compat import arrow_dataframe
from pyspark.sql import SparkSession

from hudi_meta.demo.event_stream import StreamSpec, create_events_table, generate
from hudi_meta.format.block_content import decode_data_block
from hudi_meta.format.log_reader import read_blocks, read_content
from hudi_meta.table.table import HudiTable
from tests.spark.model import Model

SPEC = StreamSpec(batches=5, rows_per_batch=120, late_share=0.3, mean_lateness_ms=180_000, delete_share=0.03, seed=21)


def write_events(spark: SparkSession, path: str, spec: StreamSpec = SPEC) -> tuple[Model, list[int]]:
    """An events table written batch by batch (every write is a new log file of each slice it touches)."""
    create_events_table(path, buckets=2)
    model = Model()
    watermarks = []
    for batch in generate(spec):
        append(spark, path, model, batch.upserts, batch.deletes)
        watermarks.append(batch.watermark_ms)
    return model, watermarks


def append(spark: SparkSession, path: str, model: Model, upserts: pa.Table, deletes: pa.Table | None = None) -> None:
    instant = writer.write(arrow_dataframe(spark, upserts), HudiTable.open(path), "upsert")
    model.upsert(instant.requested_time, upserts)
    if deletes is not None and deletes.num_rows:
        instant = writer.write(arrow_dataframe(spark, deletes), HudiTable.open(path), "delete")
        model.delete(instant.requested_time, deletes.column("event_id").to_pylist())


def log_min_event_times(table: HudiTable) -> dict[str, int | None]:
    """Min `ts` of each log file in the newest slice of every file group (read from the files)."""
    out: dict[str, int | None] = {}
    for fg in table.file_groups():
        for lf in fg.ordered_slices()[-1].log_files:
            path = posixpath.join(table.base_path, lf.path)
            mins = [
                pc.min(decode_data_block(b, read_content(table.storage, path, b)).column("ts")).as_py()
                for b in read_blocks(table.storage, path)
                if b.is_data
            ]
            out[lf.path] = min(mins) if mins else None
    return out


def files_of(path: str) -> dict[str, Any]:
    """Every data file (relative path -> symlink target or size), for comparing two tables' layouts."""
    out: dict[str, Any] = {}
    for root, _, names in os.walk(path):
        if ".hoodie" in Path(root).relative_to(path).parts:
            continue
        for name in names:
            full = os.path.join(root, name)
            rel = os.path.relpath(full, path)
            out[rel] = ("link", os.readlink(full)) if os.path.islink(full) else ("file", os.path.getsize(full))
    return out
