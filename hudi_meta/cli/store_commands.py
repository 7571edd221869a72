"""`init-db`, `register`, `index` and `show`: the metadata store and what it knows about a table."""

from __future__ import annotations

import argparse
from typing import Any

from hudi_meta.api import SHOWN, SHOWN_FROM_FILES, init_store, open_table
from hudi_meta.cli.common import TEXT, Subparsers, add_command, whole
from hudi_meta.cli.output import write_json, write_rows
from hudi_meta.cli.terminal import terminal_progress
from hudi_meta.errors import HudiMetaError, NotIndexedError
from hudi_meta.values import JAVA_INT_MAX


def add_commands(sub: Subparsers) -> None:
    add_command(sub, "init-db", init_db, "create or upgrade the metadata store schema")

    register = add_command(sub, "register", register_command, "register a table in the metadata store")
    register.add_argument("table", type=TEXT, help="table base path or URI")
    register.add_argument(
        "--event-time-field", type=TEXT, help="record field holding the event time (default: the table's own setting)"
    )

    index = add_command(sub, "index", index_command, "index a table incrementally (registers it on first use)")
    index.add_argument("table", type=TEXT, help="table base path or URI")
    index.add_argument(
        "--event-time-field", type=TEXT, help="record field holding the event time (default: as registered)"
    )
    index.add_argument("--json", action="store_true", help="print the run's counters as JSON")
    index.add_argument(
        "--through-metadata",
        action="store_true",
        help="list the table's files through its metadata table (object stores: a few reads instead of one listing "
        "per partition; `check` first, to know they agree)",
    )
    index.add_argument(
        "--batch-files", type=whole(1, JAVA_INT_MAX), default=200, help="log files scanned per transaction"
    )

    show = add_command(sub, "show", show_command, "show a table's timeline, slices, blocks, plans or links")
    show.add_argument("what", choices=SHOWN, help="what to show")
    show.add_argument("table", type=TEXT, help="table base path or URI")
    show.add_argument("--json", action="store_true", help="a JSON array, one object per row")
    show.add_argument(
        "--from-files",
        action="store_true",
        help=f"read the table's files instead of the index ({'|'.join(SHOWN_FROM_FILES)})",
    )


def init_db(args: argparse.Namespace) -> int:
    print(f"metadata store ready: {init_store(args.db)}")
    return 0


def register_command(args: argparse.Namespace) -> int:
    with open_table(args.table, args.db) as table:
        registered = table.register(args.event_time_field)
    print(f"registered {registered.name} ({registered.base_path}) as table {registered.table_id}")
    return 0


def index_command(args: argparse.Namespace) -> int:
    with open_table(args.table, args.db) as table, terminal_progress(not args.json) as progress:
        stats = table.index(args.event_time_field, args.through_metadata, progress, batch_files=args.batch_files)
    if args.json:
        write_json([vars(stats)])
    else:
        print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in vars(stats).items()))
    return 0


def show_command(args: argparse.Namespace) -> int:
    if args.from_files and args.what not in SHOWN_FROM_FILES:
        raise HudiMetaError(f"--from-files shows {', '.join(SHOWN_FROM_FILES)}, not {args.what}")
    rows: list[dict[str, Any]]
    with open_table(args.table, args.db) as table:
        try:
            rows = table.show(args.what, args.from_files)
        except NotIndexedError as e:
            raise HudiMetaError(f"table {e.base_path} is not indexed: run `hudi-meta index {args.table}`") from e
    write_rows(rows, args.json)
    return 0
