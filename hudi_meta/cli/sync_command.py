"""`sync TABLE --mode hms|hiveserver2 --uri URI`: publish the RO freshness into a catalog (docs/catalog-and-freshness.md
section 3).

The table is indexed first and its freshness computed from the store (as `freshness` does); then the table's
registrations (found under HiveSyncTool's names; none: `<name>_ro` and `<name>_rt`, or as `--skip-ro-suffix` and
`--sync-strategy` say) are registered if missing, their partitions brought in step, and our properties set where
they changed.
`--dry-run` prints what would change and writes nothing.
"""

from __future__ import annotations

import argparse

from hudi_meta.api import MAX_TIMEOUT_S, MIN_TIMEOUT_S, MODES, SYNC_STRATEGIES, SyncTarget, open_table
from hudi_meta.cli.common import TEXT, Subparsers, add_command, arg_type
from hudi_meta.cli.output import write_json
from hudi_meta.values import parse_identifier, parse_seconds

TIMEOUT = arg_type(lambda text: parse_seconds(text, MIN_TIMEOUT_S, MAX_TIMEOUT_S), "seconds")
IDENTIFIER = arg_type(parse_identifier, "name")


def add_commands(sub: Subparsers) -> None:
    cmd = add_command(sub, "sync", sync_command, "publish the read-optimized freshness to a Hive metastore")
    cmd.add_argument("table", type=TEXT, help="table base path")
    cmd.add_argument("--mode", required=True, choices=MODES, help="hms: metastore Thrift; hiveserver2: SQL (PyHive)")
    cmd.add_argument("--uri", type=TEXT, required=True, help="thrift://host:9083 (hms) or host:10000 (hiveserver2)")
    cmd.add_argument(
        "--database", type=IDENTIFIER, help="database (default: the table's hoodie.database.name, else default)"
    )
    cmd.add_argument(
        "--table",
        dest="name",
        type=IDENTIFIER,
        help="the catalog name (default: hoodie.table.name): NAME_ro and NAME_rt by default",
    )
    cmd.add_argument(
        "--skip-ro-suffix",
        action="store_true",
        default=None,
        help="register the read-optimized view as NAME, not NAME_ro (HiveSyncTool's skip_ro_suffix) (default: the "
        "registrations found, else NAME_ro)",
    )
    cmd.add_argument(
        "--sync-strategy",
        type=str.lower,
        choices=SYNC_STRATEGIES,
        help="the views to register: ro or rt (as NAME), or all (hoodie.datasource.hive_sync.table.strategy) "
        "(default: the registrations found, whatever layout made them, else all)",
    )
    cmd.add_argument("--timeout", type=TIMEOUT, default=30.0, help="seconds to wait for each catalog call")
    cmd.add_argument(
        "--no-sync-as-datasource",
        action="store_true",
        help="register no spark.sql.sources.* properties (HiveSyncTool's sync_as_datasource=false): with them, "
        "as by default, Spark opens the table through the Hudi bundle only",
    )
    cmd.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    cmd.add_argument("--json", action="store_true", help="one JSON object")


def sync_command(args: argparse.Namespace) -> int:
    SyncTarget(args.mode, args.uri, args.database, args.name, args.timeout).validate(
        labels=("--uri", "--database", "--table")
    )  # before the table is opened, naming the options (the API names its parameters)
    with open_table(args.table, args.db) as table:
        report = table.sync(
            args.mode,
            args.uri,
            args.database,
            args.name,
            args.timeout,
            as_datasource=not args.no_sync_as_datasource,
            dry_run=args.dry_run,
            skip_ro_suffix=args.skip_ro_suffix,
            sync_strategy=args.sync_strategy,
        )
    if args.json:
        write_json([report.to_dict()])
        return 0
    verb = "would" if args.dry_run else "did"
    if not report.actions:
        print(f"{', '.join(report.tables)}: up to date (nothing written)")
    for action in report.actions:
        detail = ", ".join(f"{k}={'(removed)' if v is None else v}" for k, v in action.detail.items())
        print(f"{verb} {action.operation} {action.target}{': ' + detail if detail else ''}")
    return 0
