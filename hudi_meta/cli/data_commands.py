"""`generate`, `ingest` and `quickstart`: demo data and writing it into tables (Spark)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from hudi_meta.api import (
    CURRENT_VERSION,
    DEFAULT_BUCKETS,
    MAX_BUCKETS,
    MAX_TIME_MS,
    WRITE_VERSIONS,
    format_time_ms,
    open_table,
)
from hudi_meta.cli.common import (
    DURATION,
    SHARE,
    TEXT,
    TIME,
    Choice,
    Subparsers,
    add_command,
    require_hive,
    require_spark,
    whole,
)
from hudi_meta.cli.serve_command import PORT, require_web
from hudi_meta.cli.terminal import terminal_progress
from hudi_meta.demo.event_stream import StreamSpec, write_batches
from hudi_meta.demo.quickstart import run_quickstart
from hudi_meta.errors import HudiMetaError
from hudi_meta.service.sockets import listening_socket
from hudi_meta.values import JAVA_LONG_MAX

OPERATION = Choice.of(("upsert", "insert", "delete"))
BLOCK_FORMAT = Choice.of(("avro", "parquet"))
STREAM_FORMAT = Choice.of(("jsonl", "parquet"))
START = format_time_ms(StreamSpec().start_ms)
MAX_BATCHES = 9999  # batch-NNNN: four digits keep the files in order
MAX_ROWS = 10_000_000  # a batch is built in memory


def add_commands(sub: Subparsers) -> None:
    ingest = add_command(sub, "ingest", ingest_command, "write a JSON-lines or Parquet input into a table with Spark")
    ingest.add_argument("table", type=TEXT, help="table base path")
    ingest.add_argument("--input", type=TEXT, required=True, help="input file or folder (.jsonl or .parquet)")
    ingest.add_argument("--record-key", type=TEXT, required=True, help="record key field(s), comma-separated")
    ingest.add_argument("--ordering-field", type=TEXT, required=True, help="field whose larger value wins a merge")
    ingest.add_argument("--event-time-field", type=TEXT, help="record field holding the event time")
    ingest.add_argument("--partition-field", type=TEXT, help="partition by this field (default: not partitioned)")
    OPERATION.add(ingest, "--operation", "upsert", "write operation")
    ingest.add_argument("--create", action="store_true", help="create the table (MOR, bucket index) if missing")
    # the settings for creating default to None: given for a table that exists, they must be its own
    ingest.add_argument(
        "--table-version",
        type=int,
        choices=WRITE_VERSIONS,
        help=f"Hudi table version when creating: 6 (Hudi 0.14/0.15), 8 (1.0) or 9 (1.1; default {CURRENT_VERSION})",
    )
    ingest.add_argument(
        "--buckets",
        type=whole(1, MAX_BUCKETS),
        help=f"buckets per partition when creating, 1 to {MAX_BUCKETS} (a file id holds its bucket in 8 digits; "
        f"default {DEFAULT_BUCKETS})",
    )
    BLOCK_FORMAT.add(ingest, "--block-format", "avro", "log block format when creating")
    ingest.add_argument("--min-event-time-header", action="store_true", help="opt in to the MIN_EVENT_TIME header")
    ingest.add_argument(
        "--metadata-table",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="when creating: give the table Hudi's metadata table (files partition), as Hudi does by default",
    )
    ingest.add_argument("--spark-master", type=TEXT, default="local[2]", help="Spark master URL")

    generate = add_command(sub, "generate", generate_command, "write a realistic event stream as batch files")
    generate.add_argument("output", type=TEXT, help="folder for batch-NNNN.<format> files")
    generate.add_argument("--batches", type=whole(1, MAX_BATCHES), default=10, help="number of batch files")
    generate.add_argument("--rows", type=whole(1, MAX_ROWS), default=1000, help="records per batch")
    generate.add_argument("--late-share", type=SHARE, default=0.1, help="share of records that arrive late")
    generate.add_argument(
        "--mean-lateness", type=DURATION, default="10m", help="mean lateness of late records (e.g. 90s, 10m, 2h)"
    )
    generate.add_argument("--update-share", type=SHARE, default=0.2, help="share of records updating earlier keys")
    generate.add_argument("--delete-share", type=SHARE, default=0.02, help="share of records deleting earlier keys")
    generate.add_argument(
        "--start", type=TIME, help=f"event time of the first batch, ISO-8601 or epoch ms (default: {START})"
    )
    STREAM_FORMAT.add(generate, "--format", "jsonl", "batch file format")
    generate.add_argument("--seed", type=whole(0, JAVA_LONG_MAX), default=0, help="random seed (same seed, same files)")

    quick = add_command(sub, "quickstart", quickstart_command, "demo: a table with late data, index, compaction")
    quick.add_argument(
        "--workdir", type=TEXT, default="hudi-meta-quickstart", help="folder for the demo table and store"
    )
    quick.add_argument("--port", type=PORT, default=8080, help="port of the web UI it serves at the end")
    quick.add_argument("--no-ui", action="store_true", help="exit after the sync instead of serving the web UI")
    quick.add_argument(
        "--overwrite", action="store_true", help="replace the work folder of an earlier quickstart (never another)"
    )


def ingest_command(args: argparse.Namespace) -> int:
    require_spark("ingest")
    from hudi_meta.spark.ingest import IngestOptions, ingest  # the `spark` extra: imported only when used

    opts = IngestOptions(
        table=args.table,
        input=args.input,
        record_key=args.record_key,
        ordering_field=args.ordering_field,
        event_time_field=args.event_time_field,
        partition_field=args.partition_field,
        operation=args.operation,
        create=args.create,
        buckets=args.buckets,
        table_version=args.table_version,
        block_format=args.block_format,
        min_event_time_header=args.min_event_time_header,
        spark_master=args.spark_master,
        metadata_table=args.metadata_table,
    )
    with terminal_progress() as progress:
        instant = ingest(opts, progress=progress)
    with open_table(args.table, args.db) as table:
        summary = table.commit_summary(instant.requested_time)
    print(
        f"committed {instant.action} {instant.requested_time} to {args.table}: {summary.get('num_writes', 0)} "
        f"records written, {summary.get('num_deletes', 0)} deleted, {summary.get('files', 0)} files in "
        f"{len(summary.get('partitions', ()))} partitions"
    )
    return 0


def generate_command(args: argparse.Namespace) -> int:
    spec = StreamSpec(
        batches=args.batches,
        rows_per_batch=args.rows,
        late_share=args.late_share,
        mean_lateness_ms=args.mean_lateness,
        update_share=args.update_share,
        delete_share=args.delete_share,
        seed=args.seed,
    )
    if args.start is not None:
        spec = dataclasses.replace(spec, start_ms=args.start)
    last_ms = spec.start_ms + spec.batches * spec.batch_interval_ms
    if last_ms > MAX_TIME_MS:
        last = format_time_ms(MAX_TIME_MS)
        raise HudiMetaError(f"--start {format_time_ms(spec.start_ms)}: the last batch's events would be after {last}")
    files = write_batches(spec, Path(args.output), args.format)
    print(f"wrote {len(files)} files to {args.output}")
    return 0


def quickstart_command(args: argparse.Namespace) -> int:
    require_spark("quickstart")
    require_hive("quickstart")
    if not args.no_ui:
        require_web()
        listening_socket("127.0.0.1", args.port).close()  # a port in use is said now, not after the demo
    run_quickstart(Path(args.workdir).resolve(), ui_port=None if args.no_ui else args.port, overwrite=args.overwrite)
    return 0
