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

from hudi_meta.cli.common import INSTANT, TEXT, Subparsers, add_command, reindex_if_registered
from hudi_meta.cli.output import write_json, write_table
from hudi_meta.compaction.admin import published_threshold, repair, validate
from hudi_meta.compaction.rollback import rollback_compaction
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.errors import HudiMetaError
from hudi_meta.metadata.sync import rollback_hook
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import format_time_ms
from hudi_meta.timeline.instant import Action
from hudi_meta.write.failed_writes import pending_rollback_of, rollback_failed_write
from hudi_meta.write.file_actions import FileAction

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


def _print(args: argparse.Namespace, instant: str, actions: list[FileAction], summary: str) -> None:
    rows = [{"instant": instant, **a.row()} for a in actions]
    if args.json:
        write_json(rows)
        return
    if rows:
        write_table(rows, columns=COLUMNS)
    print(summary)


def _failed(actions: list[FileAction]) -> bool:
    return any(a.error for a in actions)


def unschedule_command(args: argparse.Namespace) -> int:
    table = HudiTable.open(args.table)
    report = unschedule_compaction(table, args.instant, dry_run=not args.execute)
    moved = sum(a.operation == "move_log_file" for a in report.actions)
    deleted = sum(a.operation.startswith("delete_") and a.operation != "delete_instant" for a in report.actions)
    verb = "unscheduled" if args.execute else "would unschedule"
    via = f" (rollback {report.rollback_instant})" if report.rollback_instant else ""
    _print(
        args,
        args.instant,
        report.actions,
        f"{verb} compaction {args.instant}{via}: {deleted} files deleted, {moved} log files moved back",
    )
    if args.execute:
        reindex_if_registered(args, table)
    return EXIT_FOUND if _failed(report.actions) else 0


def rollback_command(args: argparse.Namespace) -> int:
    table = HudiTable.open(args.table)
    tl = table.timeline
    state = tl.instant(args.instant)
    if tl.is_compaction(args.instant) or (state is None and pending_rollback_of(table, args.instant)):
        before = published_threshold(tl)
        report = rollback_compaction(table, args.instant, args.completed_compaction, dry_run=not args.execute)
        after = published_threshold(table.timeline)
        verb = "rolled back" if args.execute else "would roll back"
        summary = f"{verb} compaction {args.instant} (rollback {report.instant})"
        if args.execute and before != after:
            summary += f"; published threshold {_threshold(before)} -> {_threshold(after)}"
    elif state is None:
        raise HudiMetaError(f"no instant {args.instant} on {table.base_path}")
    elif state.action in (Action.DELTA_COMMIT, Action.COMMIT) and not state.is_completed:
        report = rollback_failed_write(
            table, args.instant, dry_run=not args.execute, force=args.force, metadata_writer=rollback_hook(table)
        )
        summary = f"{'rolled back' if args.execute else 'would roll back'} {state.action} {args.instant}"
    elif state.is_completed:
        raise HudiMetaError(
            f"{args.instant} is a completed {state.action}: hudi-meta rolls back failed writes and compactions"
        )
    else:
        raise HudiMetaError(f"{args.instant} is a {state.action}: hudi-meta rolls back writes and compactions")
    _print(args, args.instant, report.actions, summary)
    if args.execute:
        reindex_if_registered(args, table)
    return EXIT_FOUND if _failed(report.actions) else 0


def _threshold(found: tuple[str, int] | None) -> str:
    return f"{format_time_ms(found[1])} (compaction {found[0]})" if found else "none"


def validate_command(args: argparse.Namespace) -> int:
    table = HudiTable.open(args.table)
    results = validate(table, args.instant)
    rows = [row for v in results for row in v.rows()]
    if args.json:
        write_json(rows)
    elif rows:
        write_table(rows, columns=("instant", *COLUMNS))
    else:
        print("no pending compaction and no misplaced log file")
    return 0 if all(v.ok for v in results) else EXIT_FOUND


def repair_command(args: argparse.Namespace) -> int:
    table = HudiTable.open(args.table)
    report = repair(table, args.instant, dry_run=not args.execute)
    unrepaired = [
        FileAction(f.check, f.path, False, f"{f.problem} (repair cannot fix this)", f.target) for f in report.unrepaired
    ]
    actions = report.actions + unrepaired
    verb = "repaired" if args.execute else "would repair"
    summary = f"{verb} {args.instant}: {len(report.actions)} steps, {len(unrepaired)} problems left"
    _print(args, args.instant, actions, summary if actions else f"nothing to repair in {args.instant}")
    if args.execute and report.actions:
        reindex_if_registered(args, table)
    return EXIT_FOUND if _failed(actions) else 0
