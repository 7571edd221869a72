"""`init-db`, `register`, `index` and `show`: the metadata store and what it knows about a table."""

from __future__ import annotations

import argparse
from typing import Any

from hudi_meta.api import open_table
from hudi_meta.cli.common import TEXT, Subparsers, add_command, whole
from hudi_meta.cli.output import write_json, write_rows
from hudi_meta.cli.show import SHOW_FROM_FILES
from hudi_meta.cli.terminal import terminal_progress
from hudi_meta.errors import HudiMetaError
from hudi_meta.index.db import resolve_db_url
from hudi_meta.index.event_time_source import check_event_time_field
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.queries import SHOW_FROM_INDEX
from hudi_meta.index.registry import register_table
from hudi_meta.index.store import open_store, store_label
from hudi_meta.index.table_format import require_current_index
from hudi_meta.table.table import HudiTable
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
    show.add_argument("what", choices=sorted(SHOW_FROM_INDEX), help="what to show")
    show.add_argument("table", type=TEXT, help="table base path or URI")
    show.add_argument("--json", action="store_true", help="a JSON array, one object per row")
    show.add_argument(
        "--from-files",
        action="store_true",
        help=f"read the table's files instead of the index ({'|'.join(sorted(SHOW_FROM_FILES))})",
    )


def init_db(args: argparse.Namespace) -> int:
    url = resolve_db_url(args.db)
    open_store(args.db, must_exist=False)  # names a store that cannot be opened before Alembic tries
    upgrade(url)
    print(f"metadata store ready: {store_label(url)}")
    return 0


def register_command(args: argparse.Namespace) -> int:
    table = HudiTable.open(args.table)
    if args.event_time_field:
        check_event_time_field(table, args.event_time_field)  # no column of the table: refused before the store opens
    table_id = register_table(open_store(args.db), table, args.event_time_field)
    print(f"registered {table.config.name} ({table.base_path}) as table {table_id}")
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
    table = HudiTable.open(args.table)
    rows: list[dict[str, Any]]
    if args.from_files:
        if args.what not in SHOW_FROM_FILES:
            raise HudiMetaError(f"--from-files shows {', '.join(sorted(SHOW_FROM_FILES))}, not {args.what}")
        rows = SHOW_FROM_FILES[args.what](table)
    else:
        engine = open_store(args.db)
        table_id = require_current_index(engine, table)  # refused in one line when upgraded since indexed
        if table_id is None:
            raise HudiMetaError(f"table {table.base_path} is not indexed: run `hudi-meta index {args.table}`")
        rows = SHOW_FROM_INDEX[args.what](engine, table_id)
    write_rows(rows, args.json)
    return 0
