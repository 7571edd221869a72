"""The upgrade helper (tests/table/upgrade.py) does to a version-6 table what Java's 6 -> 8 upgrade does: the
timeline moves to `.hoodie/timeline/`, completed instants carry completion times and Avro commit metadata,
hoodie.properties says version 8 and layout 2; and the table reads the same before and after, with hudi-rs and
with hudi-meta (snapshot and read-optimized). The downgrade helper takes it back."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from hudi_meta.format.commit_metadata import CommitMetadata
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Instant
from tests.compaction.core import TwoRegions, compact_three_times, hudi_rs_read
from tests.table.upgrade import downgrade_8_to_6, upgrade_6_to_8

QUERIES = ("snapshot", "ro")


def compacted_v6(tmp_path: Path, engine: Engine) -> TwoRegions:
    """A version-6 table compacted three times by hudi-meta (links in its slices), one write after."""
    t = TwoRegions(tmp_path / "t")
    compact_three_times(t, engine)
    return t


Rows = dict[str, tuple[int, float]]


def reads(t: TwoRegions) -> dict[str, tuple[Rows, Rows]]:
    return {q: (t.read(q), hudi_rs_read(t.path, q)) for q in QUERIES}


def test_an_upgraded_table_reads_the_same_with_hudi_rs_and_hudi_meta(tmp_path: Path, engine: Engine) -> None:
    t = compacted_v6(tmp_path, engine)
    before = reads(t)
    for ours, theirs in before.values():
        assert ours == theirs
    completed_before = {i.requested_time for i in t.table.timeline.completed()}

    upgrade_6_to_8(t.path)

    table = HudiTable.open(t.path)
    assert (table.config.version, table.config.timeline_layout) == (8, 2)
    assert table.config.props["hoodie.table.initial.version"] == "6"
    assert table.config.props["hoodie.record.merge.mode"] == "EVENT_TIME_ORDERING"
    meta = Path(t.path) / ".hoodie"
    assert not [p for p in meta.iterdir() if Instant.parse(p.name)]  # every instant file moved
    completed = table.timeline.completed()
    assert {i.requested_time for i in completed} == completed_before
    for instant in completed:
        assert instant.completion_time is not None and instant.completion_time >= instant.requested_time
        content = (meta / "timeline" / instant.file_name(2)).read_bytes()
        assert content[:4] == b"Obj\x01"  # Avro (CommitMetadataSerDeV2)
        assert CommitMetadata.from_bytes(content).write_stats()
    assert reads(t) == before


def test_a_downgrade_takes_it_back(tmp_path: Path, engine: Engine) -> None:
    t = compacted_v6(tmp_path, engine)
    before = reads(t)
    names = sorted(p.name for p in (Path(t.path) / ".hoodie").iterdir() if Instant.parse(p.name))
    upgrade_6_to_8(t.path)
    downgrade_8_to_6(t.path)
    table = HudiTable.open(t.path)
    assert (table.config.version, table.config.timeline_layout) == (6, 1)
    assert sorted(p.name for p in (Path(t.path) / ".hoodie").iterdir() if Instant.parse(p.name)) == names
    assert reads(t) == before


def test_a_table_with_a_0x_archive_is_refused(tmp_path: Path, engine: Engine) -> None:
    t = compacted_v6(tmp_path, engine)
    archived = Path(t.path) / ".hoodie" / "archived"
    archived.mkdir(exist_ok=True)
    (archived / ".commits_.archive.1_1-0-1").write_bytes(b"x")
    with pytest.raises(ValueError, match="0.x archive"):
        upgrade_6_to_8(t.path)
