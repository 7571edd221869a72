"""`check` on the metadata table's indexes (issue 36 item 4). Rules (docs/metadata-table.md section 8): the record
index maps exactly the snapshot's keys to their partition and file group; each secondary index holds one
`value$key` entry per snapshot record; each live column-stats record names a committed file and claims nothing
the file does not hold, and every file of the latest slices has one per indexed column; a file of these partitions
that cannot be read is one `mdt-unreadable` finding naming it. Java-written tables have no finding; each damage
below gives exactly the findings for what was done, the expected keys and files taken from the damage itself (or
from the independent MDT reader of tests/metadata/helpers.py), not from the code under test."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudi_meta.check.files import (
    MDT_COLUMN_STATS,
    MDT_PARTITION_STATS,
    MDT_RECORD_INDEX,
    MDT_SECONDARY_INDEX,
    MDT_UNREADABLE,
)
from hudi_meta.check.metadata_indexes import claims, metadata_index_findings
from hudi_meta.check.metadata_listing import metadata_listing_findings
from hudi_meta.check.metadata_structure import metadata_structure_findings
from hudi_meta.file_group.fs_view import latest_slice_for_snapshot
from hudi_meta.format.commit_metadata import CommitMetadata
from hudi_meta.metadata.column_ranges import ColumnRange, ValueType
from hudi_meta.metadata.keys import column_stats_key, partition_stats_key, secondary_index_key
from hudi_meta.metadata.record import MetadataRecord
from hudi_meta.metadata.records import secondary_value_text
from hudi_meta.metadata.writer import write_delta_commit
from hudi_meta.table.metadata_table import slice_records, valid_instants
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import WriteClient
from tests.cli.helpers import cli
from tests.conftest import table_id
from tests.metadata.helpers import commit_hook, mdt_partition, record_index_file_id
from tests.table.test_metadata_table import MDT_ZIPS

# the Java tables with a record index, secondary indexes and column stats (brief: issue 36 item 4)
NAMED = ("v8_trips_8i3u1d", "v9_txns_simple_meta", "v9_txns_nonpart_meta", "v9_txns_complex_meta")


def _archive(stem: str) -> Path:
    return next(a for a in MDT_ZIPS if a.stem == stem and "/mor/" in str(a))


@pytest.fixture(params=NAMED)
def java_copy(request: pytest.FixtureRequest, fixture_table: Callable[[Path], Path], tmp_path: Path) -> Path:
    return Path(shutil.copytree(fixture_table(_archive(request.param)), tmp_path / "t", symlinks=True))


def _found(path: Path) -> set[tuple[str, str]]:
    return {(f.kind, f.path) for f in metadata_index_findings(HudiTable.open(str(path)))}


@pytest.mark.parametrize("archive", MDT_ZIPS, ids=table_id)
def test_java_tables_have_no_index_finding(archive: Path, fixture_table: Callable[[Path], Path]) -> None:
    assert metadata_index_findings(HudiTable.open(str(fixture_table(archive)))) == []


def _secondary(path: Path) -> dict[str, str]:
    """Secondary index partition -> its column, from the table's index definitions."""
    defs = json.loads((path / ".hoodie" / ".index_defs" / "index.json").read_text())["indexDefinitions"]
    return {name: d["sourceFields"][0] for name, d in defs.items() if name.startswith("secondary_index_")}


def test_a_write_that_bypassed_the_indexes(java_copy: Path) -> None:
    """A writer that keeps only the `files` partition (the test hook) inserts a new key into a file group: the record
    index lacks that key, each secondary index its entry, column stats the new log file, and (partitioned tables)
    the partition's stats no longer count all its non-null values; nothing else."""
    table = HudiTable.open(str(java_copy))
    current = table.read("snapshot")
    row = current.slice(0, 1).to_pylist()[0]
    key_field = table.config.record_key_fields[0]
    data_columns = [c for c in current.column_names if not c.startswith("_hoodie_")]
    new_key = f"{row[key_field]}-new"
    data = current.select(data_columns).slice(0, 1)
    data = data.set_column(data.schema.get_field_index(key_field), key_field, pa.array([new_key]))
    file_id = row["_hoodie_file_name"].split("_")[0]
    w = WriteClient(table, metadata_writer=commit_hook(java_copy))
    w.begin()
    stat = w.append_log(row["_hoodie_partition_path"], file_id, data)
    w.commit()
    keys_before = set(current.column("_hoodie_record_key").to_pylist())
    (record_key,) = (
        set(HudiTable.open(str(java_copy)).read("snapshot").column("_hoodie_record_key").to_pylist()) - keys_before
    )
    expected = {(MDT_RECORD_INDEX, record_key), (MDT_COLUMN_STATS, stat.path)}
    for partition, column in _secondary(java_copy).items():
        expected.add(
            (MDT_SECONDARY_INDEX, f"{partition}/{secondary_index_key(secondary_value_text(row[column]), record_key)}")
        )
    if "partition_stats" in table.config.metadata_partitions:
        expected.add((MDT_PARTITION_STATS, row["_hoodie_partition_path"]))
    assert metadata_listing_findings(HudiTable.open(str(java_copy))) == []  # the `files` partition is in step
    assert _found(java_copy) == expected


def _mdt_deltacommit(path: Path, records: list[MetadataRecord]) -> None:
    """A data-table deltacommit writing no file, whose MDT deltacommit holds `records` (the damage) and nothing
    else: what a writer that records a wrong index entry leaves."""

    def mdt_only(instant: str, metadata: CommitMetadata) -> None:
        write_delta_commit(HudiTable.open(str(path)), instant, records)

    w = WriteClient(HudiTable.open(str(path)), metadata_writer=mdt_only)
    w.begin()
    w.commit()


def test_a_key_deleted_from_the_record_index(java_copy: Path) -> None:
    """A later MDT deltacommit deletes one snapshot key from the record index (a DELETE-block entry): that key is
    the one finding."""
    table = HudiTable.open(str(java_copy))
    key = sorted(table.read("snapshot").column("_hoodie_record_key").to_pylist())[0]
    _mdt_deltacommit(java_copy, [MetadataRecord("record_index", key, None)])
    assert key not in _record_index(HudiTable.open(str(java_copy)))  # the independent reader sees the damage
    assert _found(java_copy) == {(MDT_RECORD_INDEX, key)}


@pytest.mark.parametrize("stem", ["v9_txns_simple_meta", "v9_txns_nonpart_meta"])
def test_a_deleted_record_index_log_file(stem: str, fixture_table: Callable[[Path], Path], tmp_path: Path) -> None:
    """Removing a record-index log file of a completed MDT deltacommit drops the keys it located: exactly the keys
    whose entry the independent reader sees change are findings (tables with record-index logs after the MDT's
    last compaction)."""
    java_copy = Path(shutil.copytree(fixture_table(_archive(stem)), tmp_path / "t", symlinks=True))
    table = HudiTable.open(str(java_copy))
    before = _record_index(table)
    folder = java_copy / ".hoodie" / "metadata" / "record_index"
    logs = sorted(p for p in folder.iterdir() if p.name.startswith(".record-index") and p.stat().st_size > 200)
    for log in reversed(logs):  # the newest log file whose removal changes what readers see
        kept = log.read_bytes()
        log.unlink()
        after = _record_index(HudiTable.open(str(java_copy)))
        if after != before:
            break
        log.write_bytes(kept)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed
    assert _found(java_copy) == {(MDT_RECORD_INDEX, k) for k in changed}


def _record_index(table: HudiTable) -> dict[str, tuple[str, str]]:
    index = mdt_partition(table, "record_index")
    return {
        k: (v["recordIndexMetadata"]["partitionName"], record_index_file_id(v["recordIndexMetadata"]))
        for k, v in index.items()
    }


def test_a_flipped_record_index_hfile_is_one_unreadable_finding(java_copy: Path) -> None:
    folder = java_copy / ".hoodie" / "metadata" / "record_index"
    hfile = max(folder.glob("record-index-*.hfile"), key=lambda p: (p.stat().st_size, p.name))  # one with records
    damaged = bytearray(hfile.read_bytes())
    damaged[:8] = bytes(b ^ 0xFF for b in damaged[:8])  # the first data block's magic
    hfile.write_bytes(bytes(damaged))
    rel = str(hfile.relative_to(java_copy))
    # the structure scan names it (what every writer refuses); the index scans then read nothing of a damaged MDT
    found = metadata_structure_findings(HudiTable.open(str(java_copy)))
    assert {(f.kind, f.path) for f in found} == {(MDT_UNREADABLE, rel)}
    assert _found(java_copy) == {(MDT_UNREADABLE, rel)}  # the index scan, called alone, names it too
    out = cli("check", str(java_copy), "--no-index")
    assert out.returncode == 3 and "Traceback" not in out.stderr, out.stderr
    assert [line.split("  ")[:2] for line in out.stdout.splitlines()] == [[MDT_UNREADABLE, rel]]


def test_a_narrowed_column_stats_range(java_copy: Path) -> None:
    """A later MDT deltacommit records a tight-bound range of one column of a latest-slice base file whose max lies
    below the file's (a tight bound replaces the older record, docs section 7.3): readers would skip the file for
    its largest values. Exactly that file is a finding, naming the max."""
    table = HudiTable.open(str(java_copy))
    bases = {}
    for fg in table.file_groups():
        picked = latest_slice_for_snapshot(fg, table.view_inputs())
        if picked is not None and picked[0] is not None:
            bases[picked[0].path.rsplit("/", 1)[-1]] = fg.partition
    name, column, stats = _numeric_stats(table, "column_stats", set(bases))
    partition = bases[name]
    key = column_stats_key(column, partition, name)
    _mdt_deltacommit(java_copy, [_narrowed("column_stats", key, 3, stats)])
    found = metadata_index_findings(HudiTable.open(str(java_copy)))
    where = f"{partition}/{name}" if partition else name
    assert [(f.kind, f.path) for f in found] == [(MDT_COLUMN_STATS, where)]
    assert found[0].detail.startswith(f"column {column}: max ")


@pytest.mark.parametrize("stem", ["v8_trips_8i3u1d", "v9_txns_simple_meta", "v9_txns_complex_meta"])
def test_a_narrowed_partition_stats_range(stem: str, fixture_table: Callable[[Path], Path], tmp_path: Path) -> None:
    """The same for a partition's record (the partitioned tables): its max one below the largest value the files of
    the partition's latest slices hold. Exactly that partition is a finding."""
    java_copy = Path(shutil.copytree(fixture_table(_archive(stem)), tmp_path / "t", symlinks=True))
    table = HudiTable.open(str(java_copy))
    partitions = {fg.partition for fg in table.file_groups()}
    partition, column, stats = _numeric_stats(table, "partition_stats", partitions)
    key = partition_stats_key(column, partition)
    _mdt_deltacommit(java_copy, [_narrowed("partition_stats", key, 6, stats)])
    found = metadata_index_findings(HudiTable.open(str(java_copy)))
    assert [(f.kind, f.path) for f in found] == [(MDT_PARTITION_STATS, partition)]
    assert found[0].detail.startswith(f"column {column}: max ")


def _narrowed(partition: str, key: str, kind: int, stats: dict[str, Any]) -> MetadataRecord:
    """`stats` with its max one lower, as a tight bound (which replaces the older record when merged)."""
    wrapper, inner = stats["maxValue"]
    narrowed = {**stats, "maxValue": (wrapper, {"value": inner["value"] - 1}), "isTightBound": True}
    payload: dict[str, Any] = {"key": key, "type": kind, "ColumnStatsMetadata": narrowed}
    payload.update({f: None for f in ("filesystemMetadata", "BloomFilterMetadata", "recordIndexMetadata")})
    payload["SecondaryIndexMetadata"] = None
    return MetadataRecord(partition, key, payload)


def _numeric_stats(table: HudiTable, mdt_partition: str, names: set[str]) -> tuple[str, str, dict[str, Any]]:
    """(file name or partition, column, the record's stats, decoded tagged) of a record of MDT `mdt_partition` naming
    one of `names`, whose long or double range spans more than one."""
    mdt = HudiTable.open(str(Path(table.base_path) / ".hoodie" / "metadata"))
    is_valid = valid_instants(table, mdt)
    for fg in (g for g in mdt.file_groups() if g.partition == mdt_partition):
        picked = latest_slice_for_snapshot(fg, mdt.view_inputs())
        assert picked is not None
        base, logs = picked
        in_base, in_logs = slice_records(mdt, base.path if base else None, [lf.path for lf in logs], is_valid)
        for r in [*in_base.values(), *(x for x in in_logs if not isinstance(x, str))]:
            stats = r.record["ColumnStatsMetadata"]
            low, high = stats["minValue"], stats["maxValue"]
            if stats["fileName"] not in names or low is None or high is None:
                continue
            if low[0].endswith(("LongWrapper", "DoubleWrapper")) and low[1]["value"] < high[1]["value"] - 1:
                return stats["fileName"], stats["columnName"], stats
    raise AssertionError(f"no record with a numeric range in {mdt_partition}")


def test_a_column_stats_record_of_a_file_that_is_not_committed(java_copy: Path) -> None:
    """A live record naming a file the table does not hold (a clean that wrote no tombstone, a stray writer) is a
    finding naming that file; the record of the real file stays in step."""
    table = HudiTable.open(str(java_copy))
    fg = next(iter(table.file_groups()))
    name, column, stats = _numeric_stats(table, "column_stats", _files_of(table))
    stray = f"{fg.file_id}_0-0-0_29990101000000000.parquet"
    key = column_stats_key(column, fg.partition, stray)
    record = {**stats, "fileName": stray}
    payload: dict[str, Any] = {"key": key, "type": 3, "ColumnStatsMetadata": record}
    payload.update({f: None for f in ("filesystemMetadata", "BloomFilterMetadata", "recordIndexMetadata")})
    payload["SecondaryIndexMetadata"] = None
    _mdt_deltacommit(java_copy, [MetadataRecord("column_stats", key, payload)])
    assert _found(java_copy) == {(MDT_COLUMN_STATS, stray)}


def _files_of(table: HudiTable) -> set[str]:
    return {f.name for p in Path(table.base_path).iterdir() if p.is_dir() for f in p.iterdir()} | {
        p.name for p in Path(table.base_path).iterdir() if p.is_file()
    }


def _range(low: object, high: object, nulls: int, values: int) -> ColumnRange:
    return ColumnRange("f.parquet", "c", low, high, nulls, values, 0, 0, ValueType.LONG)


def _stats(low: int | None, high: int | None, nulls: int, values: int) -> dict[str, Any]:
    def wrap(v: int | None) -> tuple[str, dict[str, int]] | None:
        return None if v is None else ("org.apache.hudi.avro.model.LongWrapper", {"value": v})

    return {"minValue": wrap(low), "maxValue": wrap(high), "nullCount": nulls, "valueCount": values}


@pytest.mark.parametrize(
    ("recorded", "problem"),
    [
        (_stats(1, 9, 2, 10), None),  # exactly the file
        (_stats(0, 12, 3, 14), None),  # wider, more nulls and values: a merge of records of one file only widens
        (_stats(2, 9, 2, 10), "min 2 in the record, 1 in the file"),  # skips the file for c = 1
        (_stats(1, 8, 2, 10), "max 8 in the record, 9 in the file"),
        (_stats(None, None, 2, 10), "min None in the record, 1 in the file"),  # as if the column were all null
        (_stats(1, 9, 0, 8), "0 nulls in the record, 2 in the file"),  # skips the file for `c IS NULL`
        (_stats(1, 9, 2, 9), "7 non-null values in the record, 8 in the file"),
    ],
)
def test_a_record_must_claim_nothing_its_file_does_not_hold(recorded: dict[str, Any], problem: str | None) -> None:
    """The rule of docs/metadata-table.md section 8.2 on a file with values 1..9 in column c, 2 nulls of 10."""
    found = claims(recorded, _range(1, 9, 2, 10))
    assert found == problem if problem is None else (found is not None and found.startswith(problem))


def test_a_damaged_data_file_leaves_the_record_index_uncompared(java_copy: Path) -> None:
    """A base file that cannot be read is the listing's finding (its size differs); the snapshot cannot be read
    whole, so the record index is not compared (a partial snapshot would make every key of that file a finding)."""
    table = HudiTable.open(str(java_copy))
    base = next(p for fg in table.file_groups() if (p := _latest_base(table, fg)) is not None)
    (java_copy / base).write_bytes(b"PAR1 not parquet")
    found = _found(java_copy)
    assert not {kind for kind, _ in found} & {MDT_RECORD_INDEX, MDT_SECONDARY_INDEX}, found


def _latest_base(table: HudiTable, fg: Any) -> str | None:
    picked = latest_slice_for_snapshot(fg, table.view_inputs())
    return picked[0].path if picked is not None and picked[0] is not None else None
