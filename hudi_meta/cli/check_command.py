"""`check TABLE`: integrity of a table's files, links, plans and published freshness, and index drift.

Exit codes: 0 nothing found, 3 findings (one line each: kind, path, detail; `--json` a list of objects),
2 bad input (not a table, a store that does not work), 1 a bug. Index drift is checked when the store (`--db`,
`$HUDI_META_DB` or the default SQLite file) exists and the table is registered in it; otherwise a note on
stderr says why not.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter

from sqlalchemy import Engine

from hudi_meta.check.index_drift import check_table
from hudi_meta.cli.common import TEXT, Subparsers, add_command
from hudi_meta.cli.output import write_json
from hudi_meta.index.db import DB_ENV, make_engine, resolve_db_url
from hudi_meta.index.migrate import current_revision
from hudi_meta.index.store import open_store, store_label
from hudi_meta.table.table import HudiTable

EXIT_FINDINGS = 3
KINDS_HELP = (
    "finds: dangling-link, link-to-link, missing-link, copy-differs, orphan (with its age), plan-input-missing, "
    "uncommitted-link, unsupported-freshness, index-drift, and on a table with a metadata table mdt-unreadable, "
    "mdt-missing-file, mdt-extra-file, mdt-size-differs. Exit 0: nothing found; 3: findings; 2: bad input."
)


def add_commands(sub: Subparsers) -> None:
    check = add_command(
        sub, "check", check_command, "check a table's files, links, plans and freshness, and the index against them"
    )
    check.epilog = KINDS_HELP
    check.add_argument("table", type=TEXT, help="table base path")
    check.add_argument("--json", action="store_true", help="a JSON array, one object per finding")
    check.add_argument("--no-index", action="store_true", help="skip the index drift check (no fresh index)")


def _store(db: str | None) -> tuple[Engine | None, str | None]:
    """The store to compare with: the one named (`--db`, $HUDI_META_DB) must work; the default SQLite file is
    used only when it exists with a schema (check never creates a store)."""
    if db or os.environ.get(DB_ENV):
        url = resolve_db_url(db)
        return open_store(db, create=False), store_label(url)
    url = resolve_db_url(None)
    if current_revision(url) is None:
        return None, None
    return make_engine(url), store_label(url)


def check_command(args: argparse.Namespace) -> int:
    table = HudiTable.open(args.table)
    engine, label = (None, None) if args.no_index else _store(args.db)
    try:
        report = check_table(table, engine, label)
    finally:
        if engine is not None:
            engine.dispose()
    if args.no_index:
        report.notes = ["index drift not checked: --no-index"]
    if args.json:
        write_json([f.to_row() for f in report.findings])
    else:
        for finding in report.findings:
            print(finding.line())
    for note in report.notes:
        print(f"check: {note}", file=sys.stderr)
    if report.clean:
        if not args.json:
            print(f"check: nothing found in {table.base_path}", file=sys.stderr)
        return 0
    counts = Counter(f.kind for f in report.findings)
    summary = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    print(f"check: {len(report.findings)} findings in {table.base_path}: {summary}", file=sys.stderr)
    return EXIT_FINDINGS
