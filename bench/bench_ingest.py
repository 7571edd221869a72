"""Benchmark the Spark MOR writer (`hudi_meta.spark.writer.write`) against Spark's plain Parquet write.

    python bench/bench_ingest.py [--rows 1000000] [--buckets 8] [--block-format avro|parquet] [--runs 2]

One input of `--rows` rows (columns of `hudi_meta.demo.event_stream`: event_id, ts, region, amount, payload;
unique keys, 3 regions) is built once with pyarrow, written to a Parquet file, read back with Spark,
repartitioned to 2 x the session's parallelism and cached (`.cache()` + `.count()`); the update batch
likewise. Building and caching the input is timed and printed but is not part of any measurement. Then, in
this same process and one SparkSession (local[2]), `--runs` times, interleaved, best run reported:

- (a) baseline: `df.write.mode("overwrite").parquet(...)` of the cached input (JVM only, no Python).
- (b) first upsert: `writer.write(df, table, "upsert")` into a NEW table (3 x `--buckets` file groups,
  each created with a base file). Each run writes its own new table.
- (c) update upsert: 10% of the keys (every 10th row) with a larger ts and a new amount, upserted into
  that now-existing table: one `--block-format` log block per file group. Its rows/s counts the update
  rows only, so the fixed cost of a write (Spark jobs, Python workers, timeline) weighs more here.
- (d) Spark's plain Parquet write of the update rows alone: the same fixed costs of a Spark job, for the
  ratio (c)/(d).
- (e) floor of a writer whose tasks run Python: the input shuffled by (region, key) into as many tasks as (b)
  uses, and handed to Python as Arrow batches that are only counted. Every bucketed writer shuffles (a file
  group's rows must meet in one task); (b) pays this and then writes.
- (f) floor of a writer that stays in the JVM: Spark's plain Parquet write after the same shuffle.

rows/s = rows written / wall seconds. The ratios (b)/(a) and (c)/(a) compare rows/s: 0.25 means our
writer ingests a quarter as many rows per second as Spark writes plain Parquet. Compare ratios within one
run of the script, not absolute figures across machines; (a) takes only seconds, so load from other
processes moves the ratios more than the figures of (b). Figures only: after each run the core reader
checks (not timed as a measurement) that the snapshot holds `--rows` distinct keys and that every update
won; the script exits non-zero if not.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pyspark
from hudi_meta.spark import writer
from local_spark import MASTER, local_spark
from pyspark.sql import DataFrame, SparkSession
from timing import Timings, measure
from workspace import bench_parser, work_dir

from hudi_meta.demo.event_stream import SCHEMA, StreamSpec, create_events_table
from hudi_meta.table.table import HudiTable

UPDATE_SHIFT_MS = 86_400_000  # updates are a day "later" than any input row, so they win the merge


def build_input(rows: int, seed: int = 0) -> pa.Table:
    """`rows` unique events with the event stream's schema, 3 regions, ts increasing with jitter."""
    spec = StreamSpec()
    rng = np.random.default_rng(seed)
    ids = pc.cast(pa.array(np.arange(rows, dtype=np.int64)), pa.string())
    event_id = pc.binary_join_element_wise("e", pc.utf8_lpad(ids, 9, "0"), "")
    ts = spec.start_ms + np.arange(rows, dtype=np.int64) * 60 - rng.integers(0, 60_000, rows)
    region = pa.array(spec.regions).take(pa.array(rng.integers(0, len(spec.regions), rows)))
    payloads = pa.array([f'{{"n": {n}, "v": {v}}}' for n in range(10) for v in range(10)])
    payload = payloads.take(pa.array(rng.integers(0, len(payloads), rows)))
    amount = np.round(rng.uniform(1, 500, rows), 2)
    return pa.Table.from_arrays([event_id, pa.array(ts), region, pa.array(amount), payload], schema=SCHEMA)


def build_updates(data: pa.Table) -> pa.Table:
    """Every 10th row with ts moved a day later and the amount changed."""
    picked = data.take(pa.array(np.arange(0, data.num_rows, 10)))
    picked = picked.set_column(1, "ts", pc.add(picked.column("ts"), UPDATE_SHIFT_MS))
    return picked.set_column(3, "amount", pc.add(picked.column("amount"), 1000.0))


def cached(spark: SparkSession, data: pa.Table, path: Path) -> DataFrame:
    pq.write_table(data, path)
    parallelism = spark.sparkContext.defaultParallelism * 2
    df = spark.read.parquet(str(path)).repartition(parallelism).cache()
    df.count()
    return df


def upsert(df: DataFrame, path: str, block_format: str) -> None:
    """One `writer.write` upsert, opening the table included (as a new process would)."""
    writer.write(df, HudiTable.open(path), "upsert", block_format)


def count_rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """A Python task that takes its rows and does nothing with them but count them."""
    rows = sum(batch.num_rows for batch in batches)
    yield pa.RecordBatch.from_pydict({"rows": [rows]}, schema=pa.schema([("rows", pa.int64())]))


def shuffled(df: DataFrame, buckets: int) -> DataFrame:
    """`df` hash-partitioned by (region, key) into as many tasks as (b) writes a new table with."""
    return df.repartition(writer.write_tasks(df, buckets), "region", "event_id")


def check(path: str, data: pa.Table) -> tuple[int, int, int]:
    """Snapshot rows, distinct keys, and rows whose ts lies beyond the input's (updates that won)."""
    snapshot = HudiTable.open(path).read("snapshot", ["event_id", "ts"])
    distinct = pc.count_distinct(snapshot.column("event_id")).as_py()
    won = pc.sum(pc.greater(snapshot.column("ts"), pc.max(data.column("ts")))).as_py() or 0
    return snapshot.num_rows, distinct, won


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser(__doc__, keep="work in DIR and keep it (input, table, baseline)", runs=2)
    parser.add_argument("--rows", type=int, default=1_000_000, help="input rows (unique keys)")
    parser.add_argument("--buckets", type=int, default=8, help="buckets per partition (3 partitions)")
    parser.add_argument("--block-format", choices=("avro", "parquet"), default="avro")
    args = parser.parse_args(argv)

    with work_dir("bench-ingest-", args.keep) as directory, local_spark("bench-ingest", directory) as spark:
        prep, data = measure(lambda: build_input(args.rows))
        updates = build_updates(data)
        load, (df, update_df) = measure(
            lambda: (
                cached(spark, data, directory / "input.parquet"),
                cached(spark, updates, directory / "updates.parquet"),
            )
        )
        n, u = data.num_rows, updates.num_rows

        plain, first, update, plain_update = Timings(), Timings(), Timings(), Timings()
        to_python, shuffle_write = Timings(), Timings()
        for run in range(args.runs):  # interleaved, so load from other processes hits all six alike
            plain.run(lambda: df.write.mode("overwrite").parquet(str(directory / "plain")))
            plain_update.run(lambda: update_df.write.mode("overwrite").parquet(str(directory / "plain-update")))
            counted = to_python.run(lambda: shuffled(df, args.buckets).mapInArrow(count_rows, "rows long").collect())
            assert sum(r.rows for r in counted) == n, counted
            shuffle_write.run(
                lambda: shuffled(df, args.buckets).write.mode("overwrite").parquet(str(directory / "shuffled"))
            )
            path = str(directory / f"events-{run}")
            create_events_table(path, buckets=args.buckets)
            first.run(partial(upsert, df, path, args.block_format))
            update.run(partial(upsert, update_df, path, args.block_format))
            # What the writes did (not how long they took).
            checked, (rows, distinct, won) = measure(partial(check, path, data))
            if (rows, distinct, won) != (n, n, u):
                print(f"unexpected snapshot of run {run}: {rows=} {distinct=} updated rows that won: {won}")
                return 1

        print("hudi-meta Spark MOR writer vs Spark plain Parquet write")
        print(
            f"  input: {n:,} rows (3 regions), update batch {u:,} rows; built in {prep.best:.1f} s, "
            f"written + cached in Spark in {load.best:.1f} s (not measured)"
        )
        print(
            f"  table: 3 partitions x {args.buckets} buckets, block format {args.block_format}; "
            f"snapshot check with the core reader: {rows:,} rows, {distinct:,} keys, "
            f"{won:,} updated, read in {checked.best:.1f} s (not measured)"
        )
        print(
            f"  python {platform.python_version()}, pyspark {pyspark.__version__}, pyarrow {pa.__version__}, "
            f"master {MASTER}, {spark.sparkContext.defaultParallelism * 2} input partitions, "
            f"best of {args.runs} runs each"
        )
        print()
        table = [
            ("(a) Spark plain Parquet write", n, plain),
            ("(b) upsert into a new table (base files)", n, first),
            (f"(c) upsert of 10% updates ({args.block_format} log blocks)", u, update),
            ("(d) Spark plain Parquet write of the updates", u, plain_update),
            ("(e) floor, Python tasks: shuffle + Arrow to Python", n, to_python),
            ("(f) floor, JVM writer: shuffle + plain write", n, shuffle_write),
        ]
        width = max(len(name) for name, _, _ in table)
        print(f"{'write':<{width}}  {'rows':>10}  {'best s':>8}  {'median s':>8}  {'rows/s':>10}")
        for name, count, t in table:
            print(f"{name:<{width}}  {count:>10,}  {t.best:>8.2f}  {t.median:>8.2f}  {count / t.best:>10,.0f}")
        print()
        base_rate = n / plain.best
        print(f"ratio (b)/(a) in rows/s: {n / first.best / base_rate:.3f}")
        print(f"ratio (c)/(a) in rows/s: {u / update.best / base_rate:.3f}")
        print(f"ratio (c)/(d) in rows/s: {plain_update.best / update.best:.3f}")
        print(f"ratio (d)/(a) in rows/s: {u / plain_update.best / base_rate:.3f} (the most (c)/(a) could reach)")
        print(f"ratio (e)/(a) in rows/s: {n / to_python.best / base_rate:.3f} (the most (b)/(a) could reach)")
        print(f"ratio (f)/(a) in rows/s: {n / shuffle_write.best / base_rate:.3f}")
        print(f"ratio (b)/(e) in rows/s: {to_python.best / first.best:.3f}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
