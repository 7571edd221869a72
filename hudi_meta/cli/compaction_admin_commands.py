"""`compaction unschedule|validate|repair` and `rollback`: taking compactions back, checking and fixing them.

Each prints one row per file it acts on or finds (operation, source, target, done, error), as a text table
or, with --json, a JSON array. Like `clean`, a command that changes the table is a dry run unless `--execute`:
it prints the same rows with nothing done. Commands that change the table
bring the metadata store up to date afterwards when the table is registered there (a rolled-back compaction's
threshold then leaves the store's timeline too). Exit codes: 0 done (or nothing found), 2 refused (one line
on stderr, nothing written), 3 validate or repair found problems that remain.
"""

from __future__ import annotations

import argparse
from typing import Any

from hudi_meta.api import AdminReport, format_time_ms, open_table
from hudi_meta.cli.common import INSTANT, TEXT, Subparsers, add_command, warn_if_not_refreshed
from hudi_meta.cli.output import write_json, write_table

EXIT_FOUND = 3
COLUMNS = ("operation", "source", "target", "done", "error")


def add_subcommands(csub: Subparsers) -> None:
    """`compaction unschedule|validate|repair` (called by the `compaction` group)."""
    unschedule = add_command(csub, "unschedule", unschedule_command, "take back a pending compaction plan")
    unschedule.add_argument("table", type=TEXT, help="table base path")
    unschedule.add_argument("instant", type=INSTANT, help="the compaction instant")
    _dry_run_and_json(unschedule)

    check = add_command(csub, "validate", validate_command, "report whether pending compactions can still run")
    check.add_argument("table", type=TEXT, help="table base path")
    check.add_argument(
        "instant", nargs="?", type=INSTANT, help="a compaction or a slice to check (default: every pending compaction)"
    )
    check.add_argument("--json", action="store_true", help="a JSON array, one object per row")

    fix = add_command(csub, "repair", repair_command, "fix what `compaction validate` finds")
    fix.add_argument("table", type=TEXT, help="table base path")
    fix.add_argument("instant", type=INSTANT, help="the compaction (or slice) to repair")
    _dry_run_and_json(fix)


def add_commands(sub: Subparsers) -> None:
    """The top-level `rollback` command."""
    rollback = add_command(sub, "rollback", rollback_command, "roll back a failed write or a compaction")
    rollback.add_argument("table", type=TEXT, help="table base path")
    rollback.add_argument("instant", type=INSTANT, help="the instant to roll back")
    rollback.add_argument(
        "--completed-compaction",
        action="store_true",
        help="allow rolling back a completed compaction (moves the published freshness back)",
    )
    rollback.add_argument("--force", action="store_true", help="roll back a write whose heartbeat is still live")
    _dry_run_and_json(rollback)


def _dry_run_and_json(parser: Any) -> None:
    parser.add_argument("--execute", action="store_true", help="do it (without: print what would be done)")
    parser.add_argument("--json", action="store_true", help="a JSON array, one object per row")


def _print(args: argparse.Namespace, report: AdminReport, summary: str) -> int:
    """The report's rows and summary, a warning if the store could not be updated; the exit code."""
    if args.json:
        write_json(report.rows())
    else:
        if report.actions:
            write_table(report.rows(), columns=COLUMNS)
        print(summary)
    warn_if_not_refreshed(report.index)
    return EXIT_FOUND if report.failed else 0


def unschedule_command(args: argparse.Namespace) -> int:
    with open_table(args.table, args.db) as table:
        report = table.unschedule(args.instant, dry_run=not args.execute)
    verb = "unscheduled" if args.execute else "would unschedule"
    via = f" (rollback {report.rollback_instant})" if report.rollback_instant else ""
    counts = f"{report.deleted_files} files deleted, {report.moved_log_files} log files moved back"
    return _print(args, report, f"{verb} compaction {args.instant}{via}: {counts}")


def rollback_command(args: argparse.Namespace) -> int:
    with open_table(args.table, args.db) as table:
        report = table.rollback(args.instant, args.completed_compaction, args.force, dry_run=not args.execute)
    verb = "rolled back" if args.execute else "would roll back"
    if report.action != "compaction":  # a failed write
        return _print(args, report, f"{verb} {report.action} {args.instant}")
    summary = f"{verb} compaction {args.instant} (rollback {report.rollback_instant})"
    before, after = report.threshold_before, report.threshold_after
    if args.execute and before != after:
        summary += f"; published threshold {_threshold(before)} -> {_threshold(after)}"
    return _print(args, report, summary)


def _threshold(found: tuple[str, int] | None) -> str:
    return f"{format_time_ms(found[1])} (compaction {found[0]})" if found else "none"


def validate_command(args: argparse.Namespace) -> int:
    with open_table(args.table, args.db) as table:
        results = table.validate(args.instant)
    rows = [row for v in results for row in v.rows()]
    if args.json:
        write_json(rows)
    elif rows:
        write_table(rows, columns=("instant", *COLUMNS))
    else:
        print("no pending compaction and no misplaced log file")
    return 0 if all(v.ok for v in results) else EXIT_FOUND


def repair_command(args: argparse.Namespace) -> int:
    with open_table(args.table, args.db) as table:
        report = table.repair(args.instant, dry_run=not args.execute)
    verb = "repaired" if args.execute else "would repair"
    summary = f"{verb} {args.instant}: {report.steps} steps, {len(report.actions) - report.steps} problems left"
    return _print(args, report, summary if report.actions else f"nothing to repair in {args.instant}")
