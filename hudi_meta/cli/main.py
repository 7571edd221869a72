"""`hudi-meta` command line. Errors a user can cause are one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from hudi_meta.cli.output import write_json, write_jsonl, write_rows, write_table
from hudi_meta.cli.show import SHOW_FROM_FILES
from hudi_meta.errors import HudiMetaError
from hudi_meta.index.db import DB_ENV, make_engine, resolve_db_url
from hudi_meta.index.queries import SHOW_FROM_INDEX
from hudi_meta.table.table import QUERIES, HudiTable, Query

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"hudi-meta: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="hudi-meta", description="Metadata and event-time compaction for Hudi MOR tables")
    parser.add_argument("--db", help=f"metadata store URL or SQLite file (default: ${DB_ENV} or a local SQLite file)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    sub.add_parser("init-db", help="create or upgrade the metadata store schema")

    register = sub.add_parser("register", help="register a table in the metadata store")
    register.add_argument("table", help="table base path or URI")
    register.add_argument("--event-time-field", help="record field holding the event time")

    index = sub.add_parser("index", help="index a table incrementally (registers it on first use)")
    index.add_argument("table", help="table base path or URI")
    index.add_argument("--event-time-field", help="record field holding the event time")
    index.add_argument("--json", action="store_true", help="print the run's counters as JSON")
    index.add_argument("--batch-files", type=int, default=200, help="log files scanned per transaction")

    show = sub.add_parser("show", help="show a table's timeline, slices, blocks, plans or links")
    show.add_argument("what", choices=sorted(SHOW_FROM_INDEX))
    show.add_argument("table", help="table base path or URI")
    show.add_argument("--json", action="store_true", help="a JSON array, one object per row")
    show.add_argument(
        "--from-files",
        action="store_true",
        help="read the table's files instead of the index (timeline|slices|blocks)",
    )

    read = sub.add_parser("read", help="read a table's records")
    read.add_argument("table", help="table base path or URI")
    read.add_argument("--query", choices=QUERIES, default="snapshot")
    read.add_argument("--format", choices=("jsonl", "table"), default="jsonl")
    read.add_argument("--columns", help="comma-separated columns to return")
    read.add_argument("--begin", help="incremental: records committed after this instant")
    read.add_argument("--end", help="incremental: records committed up to this instant (default: latest)")
    read.add_argument("--as-of", help="time-travel: the table as of this instant")

    ingest = sub.add_parser("ingest", help="write a JSON-lines or Parquet input into a table with Spark")
    ingest.add_argument("table", help="table base path")
    ingest.add_argument("--input", required=True, help="input file or folder (.jsonl or .parquet)")
    ingest.add_argument("--record-key", required=True)
    ingest.add_argument("--ordering-field", required=True)
    ingest.add_argument("--event-time-field")
    ingest.add_argument("--partition-field")
    ingest.add_argument("--operation", choices=("upsert", "insert", "delete"), default="upsert")
    ingest.add_argument("--create", action="store_true", help="create the table (MOR, v6, bucket index) if missing")
    ingest.add_argument("--buckets", type=int, default=4, help="buckets per partition when creating")
    ingest.add_argument("--block-format", choices=("avro", "parquet"), default="avro")
    ingest.add_argument("--min-event-time-header", action="store_true", help="opt in to the MIN_EVENT_TIME header")
    ingest.add_argument("--spark-master", default="local[2]")

    generate = sub.add_parser("generate", help="write a realistic event stream as batch files")
    generate.add_argument("output", help="folder for batch-NNNN.<format> files")
    generate.add_argument("--batches", type=int, default=10)
    generate.add_argument("--rows", type=int, default=1000, help="records per batch")
    generate.add_argument("--late-share", type=float, default=0.1)
    generate.add_argument("--mean-lateness", default="10m", help="mean lateness of late records (e.g. 90s, 10m, 2h)")
    generate.add_argument("--update-share", type=float, default=0.2)
    generate.add_argument("--delete-share", type=float, default=0.02)
    generate.add_argument("--start", help="event time of the first batch (ISO-8601 or epoch ms)")
    generate.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl")
    generate.add_argument("--seed", type=int, default=0)

    compaction = sub.add_parser("compaction", help="schedule or run compactions")
    csub = compaction.add_subparsers(dest="compaction_command", required=True, parser_class=_Parser)
    schedule = csub.add_parser("schedule", help="plan a compaction from the index")
    schedule.add_argument("table", help="table base path")
    schedule.add_argument("--threshold", help="event time T (ISO-8601 or epoch ms)")
    schedule.add_argument("--data-latency", help="T = now - D, e.g. 30m, 2h")
    schedule.add_argument("--mode", choices=("symlink", "copy"), default="symlink")
    schedule.add_argument("--exact", action="store_true", help="records after T stay out of the base file")
    schedule.add_argument("--strategy", choices=("event-time", "log-file-size", "unbounded"), default="event-time")
    schedule.add_argument(
        "--trigger", choices=("EVENT_TIME_TRIGGER", "NUM_COMMITS", "TIME_ELAPSED"), default="EVENT_TIME_TRIGGER"
    )
    schedule.add_argument("--json", action="store_true")
    crun = csub.add_parser("run", help="execute a pending compaction (default: the oldest)")
    crun.add_argument("table", help="table base path")
    crun.add_argument("--instant", help="the compaction instant to run")
    crun.add_argument("--spark-master", default="local[2]")
    crun.add_argument("--engine", choices=("spark", "local"), default="spark", help="local: in this process")

    quick = sub.add_parser("quickstart", help="demo: a table with late data, indexing, an event-time compaction")
    quick.add_argument("--workdir", default="hudi-meta-quickstart", help="folder for the demo table and store")
    return parser


def _engine(args: argparse.Namespace, must_exist: bool = True) -> Engine:
    from hudi_meta.index.migrate import current_revision

    url = resolve_db_url(args.db)
    if must_exist and current_revision(url) is None:
        raise HudiMetaError("the metadata store has no schema yet: run `hudi-meta init-db` first")
    return make_engine(url)


def _show(args: argparse.Namespace) -> int:
    table = HudiTable.open(args.table)
    rows: list[dict[str, Any]]
    if args.from_files:
        if args.what not in SHOW_FROM_FILES:
            raise HudiMetaError(f"--from-files supports {', '.join(sorted(SHOW_FROM_FILES))}, not {args.what}")
        rows = SHOW_FROM_FILES[args.what](table)
    else:
        from hudi_meta.index.indexer import table_id_of

        engine = _engine(args)
        table_id = table_id_of(engine, table.base_path)
        if table_id is None:
            raise HudiMetaError(f"table {table.base_path} is not indexed: run `hudi-meta index {args.table}`")
        rows = SHOW_FROM_INDEX[args.what](engine, table_id)
    write_rows(rows, args.json)
    return 0


def _run(args: argparse.Namespace) -> int:
    if args.command == "quickstart":
        from pathlib import Path

        from hudi_meta.quickstart import run_quickstart

        run_quickstart(Path(args.workdir).resolve())
        return 0
    if args.command == "init-db":
        from hudi_meta.index.migrate import upgrade

        url = resolve_db_url(args.db)
        upgrade(url)
        print(f"metadata store ready: {make_engine(url).url.render_as_string(hide_password=True)}")
        return 0
    if args.command in ("register", "index"):
        from hudi_meta.index.indexer import Indexer, register_table

        table = HudiTable.open(args.table)
        engine = _engine(args)
        if args.command == "register":
            table_id = register_table(engine, table, args.event_time_field)
            print(f"registered {table.config.name} ({table.base_path}) as table {table_id}")
            return 0
        stats = Indexer(engine, table, batch_files=args.batch_files).run(args.event_time_field)
        if args.json:
            write_json([vars(stats)])
        else:
            print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in vars(stats).items()))
        return 0
    if args.command == "show":
        return _show(args)
    if args.command == "ingest":
        return _ingest(args)
    if args.command == "compaction":
        return _compaction(args)
    if args.command == "generate":
        return _generate(args)
    table = HudiTable.open(args.table)
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    query = Query(args.query, begin=args.begin, end=args.end, as_of=args.as_of)
    rows = table.read(query, columns).to_pylist()
    if args.format == "jsonl":
        write_jsonl(rows)
    else:
        write_table(rows)
    return 0


def _ingest(args: argparse.Namespace) -> int:
    try:
        from hudi_meta.spark.ingest import IngestOptions, ingest
    except ImportError as e:
        raise HudiMetaError(f"ingest needs Spark: pip install 'hudi-meta[spark]' ({e})") from e
    if args.buckets < 1:
        raise HudiMetaError("--buckets must be at least 1")
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
        block_format=args.block_format,
        min_event_time_header=args.min_event_time_header,
        spark_master=args.spark_master,
    )
    instant = ingest(opts)
    print(f"committed {instant.action} {instant.requested_time} to {args.table}")
    return 0


def _compaction(args: argparse.Namespace) -> int:
    from hudi_meta.compaction.run import run_compaction
    from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
    from hudi_meta.index.indexer import Indexer
    from hudi_meta.times import format_time_ms, parse_duration_ms, parse_time_ms

    table = HudiTable.open(args.table)
    engine = _engine(args)
    if args.compaction_command == "schedule":
        if args.strategy == "event-time" and not (args.threshold or args.data_latency):
            raise HudiMetaError("an event-time compaction needs --threshold T or --data-latency D")
        request = ScheduleRequest(
            threshold_ms=parse_time_ms(args.threshold) if args.threshold else None,
            data_latency_ms=parse_duration_ms(args.data_latency) if args.data_latency else None,
            mode=args.mode,
            exact=args.exact,
            strategy=args.strategy,
            trigger=args.trigger,
        )
        result = schedule_compaction(engine, table, request)
        row = {
            "instant": result.instant,
            "reason": result.reason,
            "threshold": format_time_ms(result.threshold_ms) if result.threshold_ms is not None else None,
            "threshold_ms": result.threshold_ms,
            "operations": len(result.plan.operations) if result.plan else 0,
            "links": sum(len(op.symlink_operations) for op in result.plan.operations) if result.plan else 0,
        }
        if args.json:
            write_json([row])
        elif result.instant:
            print(
                f"scheduled compaction {result.instant}: {row['operations']} operations, {row['links']} links, "
                f"threshold {row['threshold']}"
            )
        else:
            print(f"nothing scheduled: {result.reason}")
        return 0
    if args.engine == "local":
        instant = run_compaction(table, args.instant)
    else:
        from hudi_meta.spark.compaction import run
        from hudi_meta.spark.session import spark_session

        instant = run(spark_session(args.spark_master), table, args.instant)
    Indexer(engine, HudiTable.open(args.table)).run()
    print(f"completed compaction {instant.requested_time}")
    return 0


def _generate(args: argparse.Namespace) -> int:
    from pathlib import Path

    from hudi_meta.event_stream import StreamSpec, write_batches
    from hudi_meta.times import parse_duration_ms, parse_time_ms

    spec = StreamSpec(
        batches=args.batches,
        rows_per_batch=args.rows,
        late_share=args.late_share,
        mean_lateness_ms=parse_duration_ms(args.mean_lateness),
        update_share=args.update_share,
        delete_share=args.delete_share,
        seed=args.seed,
    )
    if args.start:
        spec = dataclasses.replace(spec, start_ms=parse_time_ms(args.start))
    files = write_batches(spec, Path(args.output), args.format)
    print(f"wrote {len(files)} files to {args.output}")
    return 0


def _one_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except BrokenPipeError:  # the reader went away (e.g. `| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except HudiMetaError as e:
        print(f"hudi-meta: error: {_one_line(e)}", file=sys.stderr)
    except SQLAlchemyError as e:
        cause = getattr(e, "orig", None) or e
        print(f"hudi-meta: error: metadata store: {_one_line(cause)}", file=sys.stderr)
    except (OSError, ValueError) as e:
        print(f"hudi-meta: error: {type(e).__name__}: {_one_line(e)}", file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
