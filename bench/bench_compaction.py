"""Benchmark event-time compaction on Spark against Spark's plain Parquet rewrite of the same rows.

    python bench/bench_compaction.py [--rows 500000] [--batches 6] [--buckets 4] [--block-format avro|parquet]
                                     [--keep DIR]

A table (3 regions x `--buckets` buckets; every write rolls over to a new log file) is built with the
Spark writer from `hudi_meta.demo.event_stream` batches totalling `--rows` rows (updates of earlier keys,
late records and deletes included): the first upsert creates the base files, every later upsert (as
`--block-format` data blocks) and delete adds a log file to each slice. Building is timed and printed but
is not part of any measurement. Then, in this same process and one SparkSession (local[2]):

- index: a first `Indexer.run()` on a fresh SQLite store (one run; printed for reference).
- schedule: `schedule_compaction(...)` of an event-time compaction with T = the watermark of the
  second-to-last batch, so most log files (all holding a record <= T) are merged and the rest linked.
  It re-runs the (now idle) indexer, plans from the store and writes the plan. One run.
- (a) baseline: the table's snapshot records, read with the Spark reader (one partition per file slice)
  and cached (`.cache()` + `.count()`, not measured), rewritten with `df.write.parquet(...)`. Best of 2.
- (b) ours: `hudi_meta.spark.compaction.run(spark, table, instant)`: one Spark task per operation, each
  merging base file + log files with the core file-group reader and writing a new base file. One run.

rows/s = rows written / wall seconds; MB/s = bytes of Parquet files written / wall seconds (our figures
count the compaction's new base files only). ratio = ours / baseline in rows/s, so 0.25 means we write a
quarter as many rows per second as Spark rewrites them. Both sides run in the same process on the same
rows; compare ratios within one run, not absolute figures across machines. Figures only: the script checks
(not timed) that the snapshot is unchanged by the compaction and exits non-zero if not.
"""

from __future__ import annotations

import dataclasses
import platform
import shutil
import sys
from pathlib import Path

import pyarrow as pa
import pyspark
from hudi_meta.spark import compaction, reader, writer
from hudi_meta.spark.compat import arrow_dataframe
from local_spark import MASTER, local_spark
from pyspark.sql import SparkSession
from timing import measure
from workspace import bench_parser, store, work_dir

from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.demo.event_stream import StreamSpec, create_events_table, generate
from hudi_meta.index.indexer import Indexer
from hudi_meta.table.table import HudiTable

BASELINE_RUNS = 2  # the baseline is quick: its best of two; ours runs once (a compaction is not repeatable)


def build_table(
    spark: SparkSession, path: str, spec: StreamSpec, buckets: int, block_format: str
) -> tuple[int, list[int]]:
    """Write every batch of `spec` (upserts, then deletes); return rows written and batch watermarks."""
    create_events_table(path, buckets=buckets)
    rows, watermarks = 0, []
    for batch in generate(spec):
        for data, operation in ((batch.upserts, "upsert"), (batch.deletes, "delete")):
            if data.num_rows:
                writer.write(arrow_dataframe(spark, data), HudiTable.open(path), operation, block_format)
                rows += data.num_rows
        watermarks.append(batch.watermark_ms)
    return rows, watermarks


def parquet_bytes(directory: Path, pattern: str) -> int:
    return sum(p.stat().st_size for p in directory.rglob(pattern) if not p.is_symlink())


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, keep="work in DIR and keep it (table, store, baseline)")
    parser.add_argument("--rows", type=int, default=500_000, help="rows written to the table, in total")
    parser.add_argument("--batches", type=int, default=6, help="upsert batches (each then deletes some keys)")
    parser.add_argument("--buckets", type=int, default=4, help="buckets per partition (3 partitions)")
    parser.add_argument("--block-format", choices=("avro", "parquet"), default="avro", help="log data blocks")
    args = parser.parse_args(argv)

    spec = dataclasses.replace(StreamSpec(seed=7), batches=args.batches, rows_per_batch=args.rows // args.batches)
    with work_dir("bench-compaction-", args.keep) as directory, local_spark("bench-compaction", directory) as spark:
        path = str(directory / "events")
        build, (written, watermarks) = measure(lambda: build_table(spark, path, spec, args.buckets, args.block_format))
        before = HudiTable.open(path).read("snapshot")
        logs = sum(len(fg.ordered_slices()[-1].log_files) for fg in HudiTable.open(path).file_groups())

        request = ScheduleRequest(threshold_ms=watermarks[-2])
        with store("sqlite", directory) as engine:
            index, _ = measure(lambda: Indexer(engine, HudiTable.open(path)).run())
            schedule, scheduled = measure(lambda: schedule_compaction(engine, HudiTable.open(path), request))
        if scheduled.instant is None or scheduled.plan is None:
            print(f"nothing scheduled: {scheduled.reason}")
            return 1
        instant, ops = scheduled.instant, scheduled.plan.operations

        df = reader.read(spark, path, "snapshot").cache()
        load, cached_rows = measure(df.count)
        plain = directory / "plain"
        baseline, _ = measure(
            lambda: df.write.parquet(str(plain)), BASELINE_RUNS, lambda: shutil.rmtree(plain, ignore_errors=True)
        )
        plain_bytes = parquet_bytes(plain, "*.parquet")
        df.unpersist()

        ours, _ = measure(lambda: compaction.run(spark, HudiTable.open(path), instant))
        table = HudiTable.open(path)
        committed = table.timeline.instant(instant)
        assert committed is not None and committed.is_completed, committed
        stats = table.timeline.commit_metadata(committed).partition_to_write_stats
        ours_rows = sum(s.num_writes for ss in stats.values() for s in ss)
        ours_bytes = parquet_bytes(Path(path), f"*_{instant}.parquet")

        # What the compaction did (not how long it took).
        after = table.read("snapshot")
        key = [("_hoodie_record_key", "ascending")]
        columns = ["_hoodie_record_key", "ts", "amount", "payload"]
        if not after.select(columns).sort_by(key).equals(before.select(columns).sort_by(key)):
            print("the snapshot changed with the compaction")
            return 1

        print("hudi-meta event-time compaction on Spark vs Spark plain Parquet rewrite of the snapshot")
        print(
            f"  table: 3 regions x {args.buckets} buckets, {spec.batches} upsert batches "
            f"(+ deletes), {written:,} rows written, {logs} log files ({args.block_format} data blocks); "
            f"built in {build.best:.1f} s (not measured)"
        )
        print(
            f"  snapshot: {before.num_rows:,} rows, {before.num_columns} columns; "
            f"read + cached in Spark in {load.best:.1f} s ({cached_rows:,} rows, not measured)"
        )
        print(
            f"  plan: {len(ops)} operations, {sum(len(o.delta_file_paths) for o in ops)} log files to merge, "
            f"{sum(len(o.symlink_operations) for o in ops)} to link "
            f"(T = watermark of batch {spec.batches - 1} of {spec.batches})"
        )
        print(
            f"  python {platform.python_version()}, pyspark {pyspark.__version__}, pyarrow {pa.__version__}, "
            f"master {MASTER}"
        )
        print(f"\nindex (first run, fresh SQLite store): {index.best:.2f} s")
        print(f"schedule (idle index run + plan + write plan): {schedule.best:.2f} s\n")
        lines = [
            (f"(a) Spark plain Parquet rewrite, best of {BASELINE_RUNS}", cached_rows, plain_bytes, baseline.best),
            ("(b) hudi-meta compaction on Spark, 1 run", ours_rows, ours_bytes, ours.best),
        ]
        width = max(len(name) for name, *_ in lines)
        print(f"{'write':<{width}}  {'rows':>9}  {'MB':>7}  {'s':>7}  {'rows/s':>9}  {'MB/s':>6}")
        for name, rows, size, seconds in lines:
            mb = size / 1e6
            rates = f"{rows / seconds:>9,.0f}  {mb / seconds:>6.1f}"
            print(f"{name:<{width}}  {rows:>9,}  {mb:>7.1f}  {seconds:>7.2f}  {rates}")
        ratio = (ours_rows / ours.best) / (cached_rows / baseline.best)
        print(f"\nratio (b)/(a) in rows/s: {ratio:.3f}")
        print(f"ratio (b)/(a) in MB/s: {(ours_bytes / ours.best) / (plain_bytes / baseline.best):.3f}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
