"""`metrics TABLE`: the table's metrics (docs/catalog-and-freshness.md section 2) in the Prometheus text format, from
the index (indexed first); the web UI serves the same over HTTP for every registered table."""

from __future__ import annotations

import argparse
import sys

from hudi_meta.cli.common import TEXT, Subparsers, add_command
from hudi_meta.index.freshness_inputs import indexed_freshness
from hudi_meta.index.registry import table_id_of
from hudi_meta.index.store import open_store
from hudi_meta.metrics import render
from hudi_meta.service.step_metrics import table_metric_values
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import now_ms


def add_commands(sub: Subparsers) -> None:
    cmd = add_command(sub, "metrics", metrics_command, "the table's metrics in the Prometheus text format")
    cmd.add_argument("table", type=TEXT, help="table base path")


def metrics_command(args: argparse.Namespace) -> int:
    table = HudiTable.open(args.table)
    now = now_ms()
    engine = open_store(args.db)
    try:
        fresh = indexed_freshness(engine, table, now)
        table_id = table_id_of(engine, table.uri)
        assert table_id is not None  # indexed just now
        values = table_metric_values(engine, table_id, fresh, table.config.timeline_timezone, now)
    finally:
        engine.dispose()
    sys.stdout.write(render({table.config.name or table.base_path: values}).decode())
    return 0
