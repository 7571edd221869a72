"""`freshness TABLE`: what the read-optimized view guarantees now (docs/event-time.md section 6), from the index.

The table is indexed first, so the answer is as of the files now. Times print as ISO-8601 UTC; `--json` gives
one object with epoch milliseconds.
"""

from __future__ import annotations

import argparse

from hudi_meta.cli.common import TEXT, Subparsers, add_command
from hudi_meta.cli.output import write_json_object
from hudi_meta.freshness import Freshness
from hudi_meta.index.freshness_inputs import indexed_freshness
from hudi_meta.index.store import open_store
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import format_duration_ms, format_time_ms

TIME_FIELDS = ("threshold_ms", "watermark_ms", "min_pending_event_time_ms")


def add_commands(sub: Subparsers) -> None:
    cmd = add_command(
        sub, "freshness", freshness_command, "what the read-optimized view holds: threshold, watermark, late data"
    )
    cmd.add_argument("table", type=TEXT, help="table base path")
    cmd.add_argument("--json", action="store_true", help="one JSON object (times in epoch milliseconds)")


def table_freshness(engine_db: str | None, base_path: str, now_ms: int | None = None) -> Freshness:
    """Index the table, then compute its freshness from the store."""
    engine = open_store(engine_db)
    try:
        return indexed_freshness(engine, HudiTable.open(base_path), now_ms)
    finally:
        engine.dispose()


def freshness_command(args: argparse.Namespace) -> int:
    f = table_freshness(args.db, args.table)
    if args.json:
        write_json_object(f.as_dict())
        return 0
    for key, value in f.as_dict().items():
        shown: object = "-" if value is None else value
        if key in TIME_FIELDS and isinstance(value, int):
            shown = format_time_ms(value)
        elif key == "lag_ms" and isinstance(value, int):
            shown = format_duration_ms(value)
        print(f"{key.removesuffix('_ms').replace('_', ' ')}: {shown}")
    return 0
