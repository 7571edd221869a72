"""`read`: a table's records, streamed slice by slice as JSON lines or a text table."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from hudi_meta.api import QueryKind, check_query, open_table
from hudi_meta.cli.common import COLUMNS, POINT, TEXT, TIME, Choice, Subparsers, add_command
from hudi_meta.cli.output import write_jsonl, write_table_stream
from hudi_meta.errors import HudiMetaError

QUERY = Choice.of(QueryKind.spellings(), QueryKind.aliases())  # Hudi's `hoodie.datasource.query.type` spellings too
FORMAT = Choice.of(("jsonl", "table"))
EXIT_NOT_FRESH = 3  # --strict: the read-optimized view is not complete before T
BATCH_ROWS = 1024  # rows turned into Python objects at a time


def add_commands(sub: Subparsers) -> None:
    read = add_command(sub, "read", read_command, "read a table's records")
    read.add_argument("table", type=TEXT, help="table base path or URI")
    QUERY.add(read, "--query", "snapshot", "query type (read_optimized is accepted for ro)")
    FORMAT.add(read, "--format", "jsonl", "jsonl: one JSON object per record; table: aligned text")
    read.add_argument("--columns", type=COLUMNS, help="comma-separated columns to return (default: all)")
    read.add_argument("--begin", type=POINT, help="incremental: records committed after this time or instant")
    read.add_argument(
        "--end", type=POINT, help="incremental: records committed up to this time or instant (default: latest)"
    )
    read.add_argument("--as-of", type=POINT, help="time-travel: the table as of this time or instant")
    read.add_argument(
        "--complete-before",
        type=TIME,
        metavar="T",
        help="ro: read RO only if it holds all data with event time before T (ISO-8601 or epoch ms), else the "
        "snapshot view, saying so on stderr",
    )
    read.add_argument("--strict", action="store_true", help="exit 3 instead of reading the snapshot view")


def read_command(args: argparse.Namespace) -> int:
    kind = check_query(args.query, args.begin, args.end, args.as_of)  # its arguments, before the table is opened
    if args.strict and args.complete_before is None:
        raise HudiMetaError("--strict goes with --complete-before")
    if args.complete_before is not None and kind != QueryKind.RO:
        raise HudiMetaError("--complete-before goes with --query ro")
    table = open_table(args.table, args.db)
    if args.complete_before is not None:
        with table:
            short = table.shortfall(args.complete_before)
        if short is not None:
            if args.strict:
                print(f"hudi-meta: {short}", file=sys.stderr)
                return EXIT_NOT_FRESH
            print(f"hudi-meta: {short}: reading the snapshot view instead", file=sys.stderr)
            kind = QueryKind.SNAPSHOT
    slices = table.scan(kind, args.columns, args.begin, args.end, args.as_of)
    if args.format == "jsonl":
        write_jsonl(row for rows in _row_batches(slices) for row in rows)
    else:
        write_table_stream(_row_batches(slices))
    return 0


def _row_batches(slices: Iterator[pa.Table]) -> Iterator[list[dict[str, Any]]]:
    """Python rows a batch at a time: one slice's Arrow data is held, never all its rows as objects."""
    for records in slices:
        for batch in records.to_batches(max_chunksize=BATCH_ROWS):
            yield batch.to_pylist()
