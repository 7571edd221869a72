"""The metadata-table writer (hudi_meta/metadata/init.py, writer.py, rollback.py) on tables our writer makes, and
on a Java-written one: after each step our files-partition reader lists what storage holds and hudi-rs, listing
through the metadata table, reads what we read."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from hudi_meta.errors import HudiMetaError
from hudi_meta.file_group.fs_view import latest_slice_for_snapshot
from hudi_meta.format.block_content import DeleteRecord, decode_hfile_records, hfile_records
from hudi_meta.format.commit_metadata import CommitMetadata
from hudi_meta.format.hfile import HFileReader
from hudi_meta.format.log_block import BlockType
from hudi_meta.format.log_reader import read_blocks, read_contents
from hudi_meta.format.properties import parse_properties
from hudi_meta.metadata.init import (
    MetadataTableExistsError,
    create_metadata_table,
    initialize_partition,
    metadata_partitions_now,
)
from hudi_meta.metadata.keys import file_group_index
from hudi_meta.metadata.record import MetadataRecord
from hudi_meta.metadata.records import written_files
from hudi_meta.metadata.rollback import rollback_delta_commit
from hudi_meta.metadata.writer import write_delta_commit
from hudi_meta.table.metadata_table import read_files_partition
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action
from hudi_meta.write.failed_writes import rollback_failed_write
from hudi_meta.write.writer import WriteClient
from tests.compaction.core import CoreTable, by_id, region_rows
from tests.conftest import table_zips
from tests.metadata.helpers import (
    by_key,
    check_readers,
    commit_hook,
    files_records,
    rollback_hook,
    rs_read,
    write_failing_after_mdt,
)

MOR_FIXTURE = next(a for a in table_zips() if a.stem == "v9_txns_simple_meta" and "/mor/" in str(a))


def write(t: CoreTable, partition: str, rows: tuple[tuple[str, int, float], ...], file_id: str | None) -> str:
    """One write through WriteClient with the metadata table kept in step: a new file group, or a log file."""
    w = WriteClient(t.table, metadata_writer=commit_hook(t.path))
    w.begin()
    data = region_rows(partition.split("=")[1], *rows)
    stat = w.write_base_file(partition, data) if file_id is None else w.append_log(partition, file_id, data)
    w.commit()
    return stat.file_id


def mdt_table(path: str) -> HudiTable:
    return HudiTable.open(f"{path}/.hoodie/metadata")


@pytest.mark.parametrize("version", [6, 8, 9])
def test_writes_keep_the_metadata_table_in_step(tmp_path: Path, version: int) -> None:
    t = CoreTable(tmp_path / "t", version=version)
    t.write(region_rows("eu", ("a", 1, 1.0), ("b", 2, 2.0)))
    t.write(region_rows("eu", ("a", 3, 1.5)))
    report = create_metadata_table(t.table)
    assert report.files == 2 and report.partitions == ("region=eu",)
    assert report.instant == (
        "00000000000000000" if version >= 8 else t.table.timeline.completed()[-1].requested_time + "010"
    )
    check_readers(t.path)
    assert t.file_id is not None
    us = write(t, "region=us", (("u", 1, 1.0),), None)
    check_readers(t.path)
    for i in range(3):
        write(t, "region=eu", ((f"x{i}", 10 + i, float(i)),), t.file_id)
        write(t, "region=us", ((f"y{i}", 10 + i, float(i)),), us)
        check_readers(t.path)
    mdt = mdt_table(t.path)
    logs = [lf.name for fg in mdt.file_groups() for fs in fg.ordered_slices() for lf in fs.log_files]
    if version >= 8:
        assert len(logs) == 1 + 7  # the empty init file, then one file per deltacommit named by it
    else:
        assert len(logs) == 1  # 0.x appends every deltacommit to the slice's log file (named by the init instant)
    with pytest.raises(MetadataTableExistsError):
        create_metadata_table(t.table)


def test_metadata_table_properties_are_javas(tmp_path: Path, fixture_table) -> None:  # type: ignore[no-untyped-def]
    """Our v9 MDT's hoodie.properties hold the keys and values of the Java-written fixture's (name and checksum
    aside), and its checksum follows Java's rule."""
    t = CoreTable(tmp_path / "t", version=9)
    t.write(region_rows("eu", ("a", 1, 1.0)))
    create_metadata_table(t.table)
    ours = parse_properties((tmp_path / "t/.hoodie/metadata/.hoodie/hoodie.properties").read_text())
    archive = MOR_FIXTURE
    java = parse_properties((fixture_table(archive) / ".hoodie/metadata/.hoodie/hoodie.properties").read_text())
    differ = {"hoodie.table.name", "hoodie.table.checksum"}
    assert {k: v for k, v in ours.items() if k not in differ} == {k: v for k, v in java.items() if k not in differ}
    assert ours["hoodie.table.name"] == "core_metadata"
    data = parse_properties((tmp_path / "t/.hoodie/hoodie.properties").read_text())
    assert data["hoodie.table.metadata.partitions"] == "files"
    init_log = tmp_path / "t/.hoodie/metadata/files/.files-0000-0_00000000000000000.log.1_0-0-0"
    java_log = fixture_table(archive) / ".hoodie/metadata/files/.files-0000-0_00000000000000000.log.1_0-0-0"
    assert init_log.read_bytes() == java_log.read_bytes()


def test_creation_refused_while_a_write_is_pending(tmp_path: Path) -> None:
    t = CoreTable(tmp_path / "t", version=9)
    t.write(region_rows("eu", ("a", 1, 1.0)))
    t.write(region_rows("eu", ("a", 2, 1.0)), commit=False)
    with pytest.raises(HudiMetaError, match="is pending"):
        create_metadata_table(t.table)
    assert not (tmp_path / "t/.hoodie/metadata").exists()


def test_a_write_without_the_metadata_writer_is_refused(tmp_path: Path) -> None:
    """A client made before the metadata table was created finds it at commit and refuses to leave it behind;
    one made after is refused at once."""
    t = CoreTable(tmp_path / "t", version=9)
    t.write(region_rows("eu", ("a", 1, 1.0)))
    early = WriteClient(t.table)
    create_metadata_table(t.table)
    early.begin()
    early.append_log(t.partition, t.file_id or "", region_rows("eu", ("a", 2, 1.0)))
    with pytest.raises(HudiMetaError, match="metadata table was enabled after this write began"):
        early.commit()
    with pytest.raises(HudiMetaError, match="hoodie.table.metadata.partitions=files"):
        WriteClient(t.table)
    rollback_failed_write(t.table, early.instant, dry_run=False, force=True, metadata_writer=rollback_hook(t.path))
    check_readers(t.path)


@pytest.mark.parametrize("version", [6, 9])
def test_reapplying_an_instant_rolls_it_back_first(tmp_path: Path, version: int) -> None:
    """The MDT already holds deltacommit T (an attempt whose data commit failed): writing T again rolls it back on
    the MDT and writes it anew (Java's commitInternal); readers see T once."""
    t = CoreTable(tmp_path / "t", version=version)
    t.write(region_rows("eu", ("a", 1, 1.0)))
    create_metadata_table(t.table)
    w = WriteClient(t.table, metadata_writer=commit_hook(t.path))
    w.begin()
    stat = w.append_log(t.partition, t.file_id or "", region_rows("eu", ("a", 2, 5.0)))
    first = write_delta_commit(
        t.table, w.instant, files_records({t.partition: {stat.file_name: stat.file_size_in_bytes}})
    )
    assert not first.rolled_back
    check_readers(t.path)  # T pending on the data table: its MDT deltacommit is not read
    w.commit()
    mdt = mdt_table(t.path)
    rollbacks = [i for i in mdt.timeline.completed() if i.action == Action.ROLLBACK]
    assert len(rollbacks) == 1
    assert mdt.timeline.instant(w.instant).is_completed  # type: ignore[union-attr]
    check_readers(t.path)
    assert by_id(t.table.read())["a"] == (2, 5.0)


@pytest.mark.parametrize("version", [6, 9])
def test_data_rollback_rolls_the_metadata_table_back(tmp_path: Path, version: int) -> None:
    """A write whose MDT deltacommit completed but whose data commit did not: invisible to readers; the data
    table's rollback rolls the MDT deltacommit back (8/9: an MDT rollback at the same time; 6: an MDT deltacommit
    of the rollback's log files, then an MDT rollback at that time + 006)."""
    t = CoreTable(tmp_path / "t", version=version)
    t.write(region_rows("eu", ("a", 1, 1.0)))
    create_metadata_table(t.table)
    instant = write_failing_after_mdt(t.path, t.partition, t.file_id or "", region_rows("eu", ("a", 2, 5.0)))
    assert mdt_table(t.path).timeline.instant(instant).is_completed  # type: ignore[union-attr]
    check_readers(t.path)
    assert by_id(t.table.read())["a"] == (1, 1.0)
    report = rollback_failed_write(t.table, instant, dry_run=False, force=True, metadata_writer=rollback_hook(t.path))
    mdt = mdt_table(t.path)
    assert mdt.timeline.instant(instant) is None
    rollback = [i for i in mdt.timeline.completed() if i.action == Action.ROLLBACK]
    assert [i.requested_time for i in rollback] == [report.instant + ("006" if version == 6 else "")]
    check_readers(t.path)
    write(t, "region=eu", (("b", 3, 3.0),), t.file_id)
    check_readers(t.path)
    if version >= 8:
        assert by_id(t.table.read()) == {"a": (1, 1.0), "b": (3, 3.0)}
        assert rs_read(t.path, "snapshot") == by_key(t.table.read())


def test_java_fixture_gets_one_more_deltacommit(tmp_path: Path, fixture_table) -> None:  # type: ignore[no-untyped-def]
    """Java's v9 table with its metadata table: our writer deletes a record (a DELETE log block, our MDT
    deltacommit in the files partition after Java's); hudi-rs and our reader still read the same."""
    archive = MOR_FIXTURE
    path = tmp_path / "fx"
    shutil.copytree(fixture_table(archive), path)
    table = HudiTable.open(str(path))
    before = {r["txn_id"] for r in table.read().to_pylist()}
    fg = next(fg for fg in table.file_groups() if fg.partition == "region=apac")
    slice_rows = [r for r in table.read().to_pylist() if r["_hoodie_file_name"].startswith(fg.file_id)]
    victim, ts = slice_rows[0]["txn_id"], slice_rows[0]["txn_ts"]
    w = WriteClient(table, metadata_writer=commit_hook(path))
    w.begin()
    stat = w.append_log("region=apac", fg.file_id, deletes=[DeleteRecord(victim, "region=apac", ts + 1)])
    w.commit()
    assert written_files(table.timeline.commit_metadata(table.timeline.instant(w.instant)))  # type: ignore[arg-type]
    listing = read_files_partition(HudiTable.open(str(path)))
    assert stat.file_name in listing.files["region=apac"]
    after = {r["txn_id"] for r in HudiTable.open(str(path)).read().to_pylist()}
    assert after == before - {victim}
    from hudi import HudiTableBuilder

    rs = HudiTableBuilder.from_base_uri(str(path)).with_hudi_option("hoodie.metadata.enable", "true").build()
    rs_ids = {r for b in rs.read() for r in b.column("txn_id").to_pylist()}
    assert rs_ids == after
    assert any(stat.file_name in s.log_file_names for s in rs.get_file_slices())
    from tests.table.test_metadata_table import storage_listing

    assert {p: dict(f) for p, f in listing.files.items() if f} == storage_listing(HudiTable.open(str(path)))


def test_a_deltacommit_a_compaction_folded_in_is_not_rolled_back(tmp_path: Path, fixture_table) -> None:  # type: ignore[no-untyped-def]
    """Java's validateRollback: the fixture's MDT compaction 20260307162612567 holds deltacommit
    20260307162611195 (completed before it); rolling that back needs a restore."""
    path = tmp_path / "fx"
    shutil.copytree(fixture_table(MOR_FIXTURE), path)
    with pytest.raises(HudiMetaError, match="cannot be rolled back"):
        rollback_delta_commit(HudiTable.open(str(path)), "20260307162611195")
    assert rollback_delta_commit(HudiTable.open(str(path)), "20990101000000000") is None  # not in the MDT


def stats_record(key: str, file_name: str, count: int) -> MetadataRecord:
    """A column_stats-shaped record (type 3) for one file: enough to route and read back, not Java's key rule."""
    stats = {"fileName": file_name, "columnName": "ts", "valueCount": count, "nullCount": 0, "isDeleted": False}
    return MetadataRecord("column_stats", key, {"key": key, "type": 3, "ColumnStatsMetadata": stats})


def value_counts(path: str) -> dict[str, int]:
    return {k: r["ColumnStatsMetadata"]["valueCount"] for k, r in partition_records(path, "column_stats").items()}


def partition_records(path: str, partition: str) -> dict[str, dict[str, Any]]:
    """Key -> record of an MDT partition: each file group's committed base file, then its log blocks of completed
    MDT instants in log order, newer records replacing older ones; keys checked against their file group."""
    table = HudiTable.open(path)
    mdt = mdt_table(path)
    inputs = mdt.view_inputs()
    groups = sorted((fg for fg in mdt.file_groups() if fg.partition == partition), key=lambda fg: fg.file_id)
    out: dict[str, dict[str, Any]] = {}
    for index, fg in enumerate(groups):
        picked = latest_slice_for_snapshot(fg, inputs)
        assert picked is not None
        base, logs = picked
        found = []
        if base is not None:
            hfile = HFileReader((Path(mdt.base_path) / base.path).read_bytes())
            found += hfile_records(hfile, hfile.schema or "")
        for lf in logs:
            full = str(Path(mdt.base_path) / lf.path)
            blocks = [b for b in read_blocks(mdt.storage, full) if b.block_type == BlockType.HFILE_DATA]
            valid = [b for b in blocks if inputs.is_committed(b.instant_time or "")]
            for block, content in zip(valid, read_contents(mdt.storage, full, valid), strict=True):
                found += decode_hfile_records(content, block.schema)
        for record in found:
            assert file_group_index(record.key, len(groups)) == index
            out[record.key] = record.record
    assert table.config.metadata_partitions
    return out


@pytest.mark.parametrize("version", [6, 9])
def test_another_partition_is_initialized_and_kept(tmp_path: Path, version: int) -> None:
    """A second MDT partition (column_stats-shaped records, 2 file groups) initialized from records the caller
    derives, at the next init instant, then written with every commit: each key in its file group, readers of
    the files partition unaffected."""
    t = CoreTable(tmp_path / "t", version=version)
    t.write(region_rows("eu", ("a", 1, 1.0)))
    create_metadata_table(t.table)
    base = next(iter(written_files(t.table.timeline.commit_metadata(t.table.timeline.completed_writes()[0]))))
    first = [stats_record(f"k{i}", f"{base}-{i}", i) for i in range(5)]
    report = initialize_partition(t.table, "column_stats", 2, lambda _: first)
    assert report.instant == (
        "00000000000000001" if version >= 8 else t.table.timeline.completed()[-1].requested_time + "011"
    )
    assert metadata_partitions_now(t.table) == ("column_stats", "files")
    assert value_counts(t.path) == {f"k{i}": i for i in range(5)}
    for n in range(3):

        def hook(instant: str, metadata: CommitMetadata, n: int = n) -> None:
            stats = [stats_record(f"k{n}", "f", 100 + n), stats_record(f"n{n}", "f", n)]
            write_delta_commit(HudiTable.open(t.path), instant, [*files_records(written_files(metadata)), *stats])

        w = WriteClient(t.table, metadata_writer=hook)
        w.begin()
        w.append_log(t.partition, t.file_id or "", region_rows("eu", (f"x{n}", 10 + n, 1.0)))
        w.commit()
        check_readers(t.path)
    counts = value_counts(t.path)
    assert counts == {"k0": 100, "k1": 101, "k2": 102, "k3": 3, "k4": 4, "n0": 0, "n1": 1, "n2": 2}
