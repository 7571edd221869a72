"""`clean`: Hudi's cleaner for tables with links (dry run by default, `--execute` to delete)."""

from __future__ import annotations

import argparse
import sys

from hudi_meta.api import MAX_HOURS_RETAINED, MAX_RETAINED, Policy, format_reports, open_table
from hudi_meta.cli.common import TEXT, SpelledChoice, Subparsers, add_command, whole
from hudi_meta.cli.output import write_json, write_table
from hudi_meta.cli.terminal import terminal_progress

# Hudi spells policies as enum names (`hoodie.clean.policy=KEEP_LATEST_COMMITS`); Choice folds them to ours
POLICY = SpelledChoice(Policy)
COLUMNS = ("instant", "operation", "path", "reason", "done", "error")


def add_commands(sub: Subparsers) -> None:
    clean = add_command(
        sub, "clean", clean_command, "plan (dry run) or --execute a clean that keeps every file a live link needs"
    )
    clean.add_argument("table", type=TEXT, help="table base path")
    clean.add_argument(
        "--policy",
        type=POLICY,
        metavar="{" + ",".join(Policy.spellings()) + "}",
        default=None,
        help="cleaning policy, Hudi's names accepted (default: hoodie.clean.policy, else keep-latest-commits)",
    )
    clean.add_argument(
        "--retained",
        type=whole(0, MAX_RETAINED),
        help="commits (keep-latest-commits) or file versions (keep-latest-file-versions) to retain (default: "
        "hoodie.clean.commits.retained, 10, or hoodie.clean.fileversions.retained, 3)",
    )
    clean.add_argument(
        "--hours",
        type=whole(0, MAX_HOURS_RETAINED),
        help="hours to retain, keep-latest-by-hours (default: hoodie.clean.hours.retained, 24)",
    )
    clean.add_argument("--execute", action="store_true", help="write the clean instants and delete the files")
    clean.add_argument("--json", action="store_true", help="a JSON array, one object per file")


def clean_command(args: argparse.Namespace) -> int:
    with open_table(args.table, args.db) as table, terminal_progress(not args.json) as progress:
        outcome = table.clean(args.policy, args.retained, args.hours, dry_run=not args.execute, progress=progress)
    rows = format_reports(outcome.reports)
    failed = [r for r in outcome.reports if r.error]
    if args.json:
        write_json(rows)
    else:
        for instant in outcome.finished:
            print(f"finished pending clean {instant}")
        if outcome.plan is not None:
            print(("clean " if args.execute else "clean plan (dry run): ") + outcome.plan.summary)
        if rows:
            shown: tuple[str, ...] = COLUMNS if args.execute else COLUMNS[:4]
            if not any(r["instant"] for r in rows):
                shown = shown[1:]  # a dry run without pending cleans: no instant yet
            write_table(rows, columns=shown)
        deleted = outcome.deleted
        if outcome.instant:
            print(f"completed clean {outcome.instant}: {deleted} files deleted, {len(failed)} not")
        elif outcome.note:
            print(outcome.note)
        elif not args.execute:
            print("dry run: nothing deleted (--execute to clean)")
    if failed:
        print(
            f"hudi-meta: error: {len(failed)} files could not be deleted: {failed[0].path}: {failed[0].error}",
            file=sys.stderr,
        )
        return 2
    return 0
