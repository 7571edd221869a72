"""The metadata table's own clean and archival when hudi-meta writes it (docs/metadata-table.md section 6.6).

Rules tested, from Java's metadata writer: the MDT is cleaned with KEEP_LATEST_COMMITS retaining
max(20, ceil(1.2 x the data table's retained commits)) once a compaction has made older slices replaceable; it
is archived with the data table's keep.min/max.commits + 1, never at or after the data table's earliest active
instant. After each, the MDT still lists exactly the committed files on storage, hudi-rs (1.x) reads through it
as we read, `check` finds nothing, and no file slice a reader of the MDT takes is gone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hudi_meta.check.index_drift import check_table
from hudi_meta.metadata.init import create_metadata_table
from hudi_meta.metadata.services import clean_policy
from hudi_meta.table.metadata_table import read_files_partition
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action
from hudi_meta.write.archival import archive_timeline
from tests.compaction.core import CoreTable, region_rows
from tests.metadata.helpers import by_key, expected_listing, rs_read

SMALL_TIMELINE = {"hoodie.clean.commits.retained": "1", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}


def _mdt(t: CoreTable) -> HudiTable:
    return HudiTable.open(str(Path(t.path) / ".hoodie" / "metadata"))


def _check(t: CoreTable) -> None:
    table = t.table
    listing = read_files_partition(table)
    assert {p: dict(f) for p, f in listing.files.items() if f} == expected_listing(table)
    if table.config.version >= 8:
        for query in ("snapshot", "ro"):
            assert rs_read(t.path, query) == by_key(table.read(query)), query
    assert not check_table(table).findings


@pytest.mark.parametrize("version", [6, 9])
def test_metadata_table_cleaned_and_archived(tmp_path: Path, version: int) -> None:
    t = CoreTable(tmp_path / "t", props=SMALL_TIMELINE, version=version)
    create_metadata_table(t.table)
    assert clean_policy(t.table).commits_retained == 20
    t.write(region_rows("eu", ("a", 1, 1.0)))
    for i in range(34):  # 35 MDT deltacommits: compactions at 10, 20 and 30; 20 after the first, the clean
        t.write(region_rows("eu", (f"k{i % 5}", 2 + i, float(i))))
        if i % 8 == 0:
            _check(t)
    mdt = _mdt(t)
    cleans = [i for i in mdt.timeline.completed() if i.action == Action.CLEAN]
    assert cleans, [f"{i.requested_time} {i.action}" for i in mdt.timeline.completed()]
    if version == 6:
        assert all(c.requested_time.endswith("002") for c in cleans)
    assert not list((Path(t.path) / ".hoodie" / "metadata" / "files").glob("*_00000000000000000.hfile"))
    _check(t)

    # the data table archived (down to its min commits): the MDT follows at its next deltacommit
    assert archive_timeline(t.table, dry_run=False).plan.instants
    before = len(mdt.timeline.instants)
    t.write(region_rows("eu", ("z", 99, 9.0)))
    mdt = _mdt(t)
    assert mdt.archived, "the metadata table archived instants"
    earliest = t.table.timeline.instants[0].requested_time
    assert all(i < earliest for i in mdt.archived), "an MDT instant at or after the data table's earliest active one"
    assert len(mdt.timeline.instants) < before + 1
    _check(t)


def test_settings_from_the_data_tables_properties(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """hoodie.metadata.cleaner.commits.retained, when set, is the MDT clean's retention; a value that is not a
    positive whole number is ignored with a warning (a write must not fail for it)."""
    t = CoreTable(tmp_path / "t", props={"hoodie.metadata.cleaner.commits.retained": "3"}, version=9)
    assert clean_policy(t.table).commits_retained == 3
    bad = CoreTable(tmp_path / "u", props={"hoodie.metadata.cleaner.commits.retained": "-1"}, version=9)
    assert clean_policy(bad.table).commits_retained == 20
    assert "not a positive whole number" in caplog.text
