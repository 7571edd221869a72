"""`hudi-meta` command line. Errors a user can cause are one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
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
    parser.add_argument(
        "--db", help=f"metadata store URL or SQLite file (default: ${DB_ENV} or a local SQLite file)"
    )
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

    sub.add_parser("quickstart", help="demo: a table, indexing, an event-time compaction, sync and the UI")
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
            raise HudiMetaError(
                f"--from-files supports {', '.join(sorted(SHOW_FROM_FILES))}, not {args.what}"
            )
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
        print("hudi-meta quickstart: not yet (it arrives with event-time compaction)")
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
    table = HudiTable.open(args.table)
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    query = Query(args.query, begin=args.begin, end=args.end, as_of=args.as_of)
    rows = table.read(query, columns).to_pylist()
    if args.format == "jsonl":
        write_jsonl(rows)
    else:
        write_table(rows)
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
