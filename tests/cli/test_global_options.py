"""Options every command takes (issue 29, the CLI): `--version`; `--db`, `--debug`, `-v` and `-q` before the
command or after it; `-q` keeps warnings off stderr (errors stay), `-v` with `-q` is a usage error."""

from __future__ import annotations

from pathlib import Path

from hudi_meta import __version__
from hudi_meta.metadata.init import create_metadata_table
from tests.cli.helpers import cli
from tests.compaction.core import CoreTable, region_rows

IGNORED = "not a positive whole number"


def test_version() -> None:
    done = cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"hudi-meta {__version__}"


def test_global_options_after_the_command(tmp_path: Path) -> None:
    store = tmp_path / "after.db"
    done = cli("init-db", "--db", f"sqlite:///{store}")
    assert done.returncode == 0, done.stderr
    assert store.exists()
    both = cli("show", "timeline", str(tmp_path), "-v", "-q")
    assert both.returncode == 2 and both.stderr.count("\n") == 1 and "-q/--quiet together" in both.stderr


def test_quiet_keeps_warnings_off_stderr(tmp_path: Path) -> None:
    """A metadata-table setting that is not a number is ignored with a warning when the compaction writes the
    MDT: shown by default, not with -q (before or after the command); the compaction completes either way."""
    for i, quiet in enumerate(([], ["-q"], ["AFTER"])):
        t = CoreTable(tmp_path / f"t{i}", props={"hoodie.metadata.cleaner.commits.retained": "x"}, version=9)
        create_metadata_table(t.table)
        t.write(region_rows("eu", ("a", 1, 1.0)))
        t.write(region_rows("eu", ("a", 2, 2.0)))
        db = ("--db", f"sqlite:///{tmp_path / f's{i}.db'}")
        assert cli(*db, "compaction", "schedule", t.path, "--strategy", "unbounded").returncode == 0
        before = [q for q in quiet if q != "AFTER"]
        after = ["-q"] if "AFTER" in quiet else []
        done = cli(*before, *db, "compaction", "run", t.path, "--engine", "local", *after)
        assert done.returncode == 0, done.stderr
        assert (IGNORED in done.stderr) == (not quiet), (quiet, done.stderr)
