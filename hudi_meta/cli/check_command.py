"""`check TABLE`: integrity of a table's files, links, plans and published freshness, and index drift.

Exit codes: 0 nothing found, 3 findings (one line each: kind, path, detail; `--json` a list of objects),
2 bad input (not a table, a store that does not work), 1 a bug. The store (`--db`, `$HUDI_META_DB` or the
default SQLite file) is opened as every command opens it: a new SQLite store gets its schema, a server database
without one is refused naming `init-db`. Index drift is checked when the table is registered in it; otherwise a
note on stderr says why not.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from hudi_meta.api import open_table
from hudi_meta.cli.common import TEXT, Subparsers, add_command
from hudi_meta.cli.output import write_json

EXIT_FINDINGS = 3
KINDS_HELP = (
    "finds: dangling-link, link-to-link, missing-link, copy-differs, orphan (with its age), plan-input-missing, "
    "uncommitted-link, unsupported-freshness, index-drift, and on a table with a metadata table mdt-unreadable, "
    "mdt-duplicate-base-file, mdt-lost-base-file, mdt-missing-file, mdt-extra-file, mdt-size-differs, "
    "mdt-record-index, mdt-secondary-index, mdt-column-stats, "
    "mdt-partition-stats. "
    "Exit 0: nothing found; 3: findings; 2: bad input."
)


def add_commands(sub: Subparsers) -> None:
    check = add_command(
        sub, "check", check_command, "check a table's files, links, plans and freshness, and the index against them"
    )
    check.epilog = KINDS_HELP
    check.add_argument("table", type=TEXT, help="table base path")
    check.add_argument("--json", action="store_true", help="a JSON array, one object per finding")
    check.add_argument("--no-index", action="store_true", help="skip the index drift check (no fresh index)")


def check_command(args: argparse.Namespace) -> int:
    with open_table(args.table, args.db) as table:
        report = table.check(index=not args.no_index)
    if args.json:
        write_json([f.to_row() for f in report.findings])
    else:
        for finding in report.findings:
            print(finding)
    # the API's note on the index drift it was not asked to check, in the option's words
    notes = ["index drift not checked: --no-index"] if args.no_index else report.notes
    for note in notes:
        print(f"check: {note}", file=sys.stderr)
    if report.clean:
        if not args.json:
            print(f"check: nothing found in {table.hudi.base_path}", file=sys.stderr)
        return 0
    counts = Counter(f.kind for f in report.findings)
    summary = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    print(f"check: {len(report.findings)} findings in {table.hudi.base_path}: {summary}", file=sys.stderr)
    return EXIT_FINDINGS
