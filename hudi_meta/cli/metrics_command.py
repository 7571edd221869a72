"""`metrics TABLE`: the table's metrics (design.md section 8) in the Prometheus text format, from the index
(indexed first) and the timeline; the web UI serves the same over HTTP."""

from __future__ import annotations

import argparse
import datetime as dt
import sys

from hudi_meta.cli.common import Subparsers, add_command, open_store
from hudi_meta.index.freshness_inputs import indexed_freshness
from hudi_meta.index.registry import table_id_of
from hudi_meta.index.sync_runs import last_sync_run
from hudi_meta.metrics import last_run, metric_values, render
from hudi_meta.table.instant import Action, instant_epoch_ms
from hudi_meta.table.table import HudiTable


def add_commands(sub: Subparsers) -> None:
    cmd = add_command(sub, "metrics", metrics_command, "the table's metrics in the Prometheus text format")
    cmd.add_argument("table", help="table base path")


def metrics_command(args: argparse.Namespace) -> int:
    table = HudiTable.open(args.table)
    now_ms = int(dt.datetime.now(dt.UTC).timestamp() * 1000)
    engine = open_store(args.db)
    try:
        fresh = indexed_freshness(engine, table, now_ms)
        table_id = table_id_of(engine, table.base_path)
        sync = last_sync_run(engine, table_id) if table_id is not None else None
    finally:
        engine.dispose()
    tl = table.timeline
    zone = table.config.timeline_timezone
    pending = tl.pending_compactions()
    oldest = instant_epoch_ms(pending[0].requested_time, zone) if pending else None
    compactions = [i for i in tl.instants if tl.is_compaction(i.requested_time)]
    cleans = [i for i in tl.instants if i.action == Action.CLEAN]
    values = metric_values(fresh, oldest, last_run(compactions), last_run(cleans), sync, now_ms)
    sys.stdout.write(render(table.config.name or table.base_path, values).decode())
    return 0
