"""`archive`: timeline archival (dry run by default, `--execute` to archive): into the LSM history on versions 8
and 9, into the 0.x archived log (`.hoodie/archived/`) on version 6."""

from __future__ import annotations

import argparse
import sys

from hudi_meta.api import KEEP_MAX_COMMITS, KEEP_MIN_COMMITS, ArchiveReport, open_table
from hudi_meta.cli.common import TEXT, Subparsers, add_command, warn_if_not_refreshed, whole
from hudi_meta.cli.output import write_json, write_table
from hudi_meta.values import JAVA_INT_MAX

COLUMNS = ("instant", "action", "completion", "file", "history", "done", "error")


def add_commands(sub: Subparsers) -> None:
    archive = add_command(
        sub,
        "archive",
        archive_command,
        "plan (dry run) or --execute the archival of old instants (into the LSM history of versions 8 and 9, the "
        "archived log of version 6)",
    )
    archive.add_argument("table", type=TEXT, help="table base path")
    archive.add_argument(
        "--min-commits",
        type=whole(1, JAVA_INT_MAX),
        help=f"completed commits the active timeline keeps (default: {KEEP_MIN_COMMITS.name}, else 20)",
    )
    archive.add_argument(
        "--max-commits",
        type=whole(2, JAVA_INT_MAX),
        help=f"completed commits above which archival runs (default: {KEEP_MAX_COMMITS.name}, else 30)",
    )
    archive.add_argument(
        "--execute", action="store_true", help="write the history (or archived log) and delete the archived instants"
    )
    archive.add_argument("--json", action="store_true", help="a JSON array, one object per timeline file")


def archive_command(args: argparse.Namespace) -> int:
    with open_table(args.table, args.db) as table:
        outcome = table.archive(args.min_commits, args.max_commits, dry_run=not args.execute)
    report = outcome.report
    if args.json:
        write_json(report.rows())
    else:
        _print(report, args.execute)
    failed = report.error
    if failed is not None:
        print(f"hudi-meta: error: {failed.error}; run archive --execute again to finish", file=sys.stderr)
        return 2
    # the store marks the archived instants (a kill before this: `check` names them, `index` marks them)
    warn_if_not_refreshed(outcome.index)
    if outcome.index.stats is not None and not args.json:
        print(f"metadata store updated: {outcome.index.stats}")
    return 0


def _print(report: ArchiveReport, execute: bool) -> None:
    rows = report.rows()
    if report.finished:
        done = "finished" if execute else "would finish"
        print(f"{done} {len(report.finished)} instants an earlier archival left on the active timeline")
    print(("archive: " if execute else "archive plan (dry run): ") + report.plan.summary)
    if rows:
        write_table(rows, columns=COLUMNS if execute else COLUMNS[:5])
    archived = report.archived
    if execute and archived:
        print(f"archived {len(archived)} instants into {report.history_file}")
    elif not archived:
        print("nothing to archive")
    else:
        print("dry run: nothing archived (--execute to archive)")
