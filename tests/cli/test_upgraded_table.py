"""`hudi-meta` on a table a Java writer upgraded from version 6 to 8 after it was indexed (tests/table/upgrade.py):
`show` and `check` refuse the stale index in one line (exit 2, and 3 for check's one finding) until `index` runs,
which says so in one line on stderr and indexes the table again; then `show` lists what is on disk."""

from __future__ import annotations

import json
from pathlib import Path

from hudi_meta.index.db import make_engine
from hudi_meta.index.migrate import upgrade
from hudi_meta.table.table import HudiTable
from tests.cli.helpers import cli
from tests.compaction.core import CoreTable, at, rows
from tests.table.upgrade import upgrade_6_to_8


def test_the_cli_refuses_the_stale_index_in_one_line_until_index_runs(tmp_path: Path) -> None:
    store = str(tmp_path / "store.db")
    upgrade(f"sqlite:///{store}")
    engine = make_engine(f"sqlite:///{store}")
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 10, 1.0), ("b", 20, 2.0)))
    t.write(rows(("a", 40, 1.1), ("c", 90, 3.0)))
    t.compact(engine, at(50))  # indexed, with a plan and a link
    engine.dispose()
    upgrade_6_to_8(t.path)
    base = HudiTable.open(t.path).base_path
    line = f"table {base} was upgraded from version 6 to 8 since it was indexed: run `hudi-meta index {base}`"

    shown = cli("--db", store, "show", "timeline", t.path)
    assert (shown.returncode, shown.stdout) == (2, "")
    assert shown.stderr.splitlines() == [f"hudi-meta: error: {line}"]
    checked = cli("--db", store, "check", t.path)
    assert checked.returncode == 3
    drift = [x for x in checked.stdout.splitlines() if "index-drift" in x]
    assert len(drift) == 1 and line in drift[0]  # one finding, not one per file

    indexed = cli("--db", store, "index", t.path)
    assert indexed.returncode == 0, indexed.stderr
    assert [x for x in indexed.stderr.splitlines() if "upgraded" in x] == [
        f"table {base} was upgraded from version 6 to 8 since it was indexed: indexing it again from scratch"
    ]
    timeline = json.loads(cli("--db", store, "show", "timeline", t.path, "--json").stdout)
    done = [r for r in timeline if r["state"] == "completed"]
    assert done and all(r["completion_time"] for r in done)
    assert cli("--db", store, "check", t.path).returncode == 0
