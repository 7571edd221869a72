"""`check` on a table with a metadata table: its `files` partition against storage (issue 28). Rule: readers that
list through the metadata table see only what it lists, so every committed data file it misses, every file it
lists that storage lacks, and every size that differs is a finding; a table whose metadata table is in step has
none. The expected findings come from what each test does to a copy of a Java-written table."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from hudi_meta.check.files import MDT_EXTRA_FILE, MDT_MISSING_FILE, MDT_SIZE_DIFFERS, MDT_UNREADABLE
from hudi_meta.check.metadata_listing import metadata_listing_findings
from hudi_meta.format.file_names import BaseFileName
from hudi_meta.table.table import HudiTable
from tests.cli.helpers import cli
from tests.conftest import table_id
from tests.table.test_metadata_table import MDT_ZIPS


@pytest.mark.parametrize("archive", MDT_ZIPS, ids=table_id)
def test_java_tables_are_in_step(archive: Path, fixture_table: Callable[[Path], Path]) -> None:
    assert metadata_listing_findings(HudiTable.open(str(fixture_table(archive)))) == []


@pytest.fixture
def java_copy(fixture_table: Callable[[Path], Path], tmp_path: Path) -> Path:
    archive = next(a for a in MDT_ZIPS if a.stem == "v9_txns_simple_meta" and "/mor/" in str(a))
    return Path(shutil.copytree(fixture_table(archive), tmp_path / "t", symlinks=True))


def _latest_base(table: Path) -> Path:
    """A base file of the table's newest committed slice (the newest base file by instant)."""
    bases = [p for p in table.rglob("*.parquet") if ".hoodie" not in p.parts]
    return max(bases, key=lambda p: BaseFileName.parse(p.name).instant)


def test_every_difference_is_a_finding(java_copy: Path) -> None:
    deleted = _latest_base(java_copy)
    deleted.unlink()
    grown = next(p for p in java_copy.rglob("*.parquet") if ".hoodie" not in p.parts)
    with grown.open("ab") as f:
        f.write(b"\0")
    parsed = BaseFileName.parse(grown.name)
    unlisted = grown.with_name(grown.name.replace(parsed.file_id, "00000000-0000-0000-0000-000000000000-0"))
    shutil.copyfile(grown, unlisted)
    found = {(f.kind, f.path) for f in metadata_listing_findings(HudiTable.open(str(java_copy)))}
    rel = {p: str(p.relative_to(java_copy)) for p in (deleted, grown, unlisted)}
    assert found == {
        (MDT_EXTRA_FILE, rel[deleted]),
        (MDT_SIZE_DIFFERS, rel[grown]),
        (MDT_MISSING_FILE, rel[unlisted]),
    }


def test_an_unreadable_metadata_table_is_one_finding(java_copy: Path) -> None:
    shutil.rmtree(java_copy / ".hoodie" / "metadata" / "files")
    found = metadata_listing_findings(HudiTable.open(str(java_copy)))
    assert [f.kind for f in found] == [MDT_UNREADABLE]


def test_the_cli_prints_one_line_per_finding_and_exits_3(java_copy: Path) -> None:
    deleted = _latest_base(java_copy)
    deleted.unlink()
    out = cli("check", str(java_copy), "--no-index")
    assert out.returncode == 3, out.stderr
    lines = [line for line in out.stdout.splitlines() if line.startswith(MDT_EXTRA_FILE)]
    assert lines == [f"{MDT_EXTRA_FILE}  {deleted.relative_to(java_copy)}  " + lines[0].split("  ", 2)[2]]
    assert "not on storage" in lines[0] and "re-create the metadata table" in lines[0]
