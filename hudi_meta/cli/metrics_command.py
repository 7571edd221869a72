"""`metrics TABLE`: the table's metrics (docs/catalog-and-freshness.md section 2) in the Prometheus text format, from
the index (indexed first); the web UI serves the same over HTTP for every registered table."""

from __future__ import annotations

import argparse
import sys

from hudi_meta.api import open_table
from hudi_meta.cli.common import TEXT, Subparsers, add_command


def add_commands(sub: Subparsers) -> None:
    cmd = add_command(sub, "metrics", metrics_command, "the table's metrics in the Prometheus text format")
    cmd.add_argument("table", type=TEXT, help="table base path")


def metrics_command(args: argparse.Namespace) -> int:
    with open_table(args.table, args.db) as table:
        metrics = table.metrics()
    sys.stdout.write(metrics.exposition().decode())
    return 0
