"""`freshness TABLE`: what the read-optimized view guarantees now (docs/event-time.md section 6), from the index.

The table is indexed first, so the answer is as of the files now. Times print as ISO-8601 UTC; `--json` gives
one object with epoch milliseconds.
"""

from __future__ import annotations

import argparse

from hudi_meta.api import open_table
from hudi_meta.cli.common import TEXT, Subparsers, add_command
from hudi_meta.cli.output import readable, write_json_object


def add_commands(sub: Subparsers) -> None:
    cmd = add_command(
        sub, "freshness", freshness_command, "what the read-optimized view holds: threshold, watermark, late data"
    )
    cmd.add_argument("table", type=TEXT, help="table base path")
    cmd.add_argument("--json", action="store_true", help="one JSON object (times in epoch milliseconds)")


def freshness_command(args: argparse.Namespace) -> int:
    with open_table(args.table, args.db) as table:
        f = table.freshness()
    if args.json:
        write_json_object(f.to_dict())
        return 0
    for key, value in readable(f.to_dict()).items():
        print(f"{key.removesuffix('_ms').replace('_', ' ')}: {'-' if value is None else value}")
    return 0
