"""Embedded defaults for a newcomer: on a fresh machine the commands that need the store make the embedded
SQLite store and its schema on first use; a store behind the code, or a server database without a schema, gets
one line naming `init-db` and is never migrated behind its owner's back."""

from __future__ import annotations

from pathlib import Path

from hudi_meta.index.migrate import current_revision, head_revision, upgrade
from tests.cli.helpers import cli
from tests.compaction.core import CoreTable, at, rows
from tests.index.conftest import pg_database


def test_a_fresh_machine_schedules_without_init_db(tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    t.write(rows(("a", 2, 2.0)))
    env = {"HUDI_META_DB": "", "XDG_DATA_HOME": str(tmp_path / "data")}
    done = cli("compaction", "schedule", t.path, "--threshold", str(at(10)), env=env)
    assert done.returncode == 0 and done.stdout.startswith("scheduled compaction"), done.stderr
    store = tmp_path / "data" / "hudi-meta" / "hudi-meta.db"
    assert current_revision(f"sqlite:///{store}") == head_revision()
    assert cli("compaction", "run", t.path, "--engine", "local", env=env).returncode == 0


def test_an_old_store_and_a_blank_server_database_are_not_migrated(tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t")
    t.write(rows(("a", 1, 1.0)))
    old = f"sqlite:///{tmp_path / 'old.db'}"
    upgrade(old, "0002")
    done = cli("--db", old, "index", t.path)
    assert done.returncode == 2 and "run `hudi-meta init-db` to upgrade it" in done.stderr
    assert current_revision(old) == "0002"
    with pg_database() as blank:
        done = cli("--db", blank, "index", t.path)
        assert done.returncode == 2 and "run `hudi-meta init-db` first" in done.stderr
        assert current_revision(blank) is None
        assert cli("--db", blank, "init-db").returncode == 0
        assert cli("--db", blank, "index", t.path).returncode == 0
