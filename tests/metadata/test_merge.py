"""Golden tests of the metadata table's compaction merge: for every Java MDT compaction in the fixtures, the
records hudi-meta merges from each planned slice (Java's own plan: base file and log files) equal, partition by
partition, the records of the base HFile Java wrote, byte for byte once encoded; plus the merge rules of
`hudi_meta.metadata.merge` stated from Java's sources (docs/metadata-table.md 7.3), with hand-made records."""

from __future__ import annotations

import io
import posixpath
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import fastavro
import pytest

from hudi_meta.format.block_content import KeyedRecord, parsed_schema
from hudi_meta.format.hfile import HFileReader
from hudi_meta.format.table_service_metadata import CompactionPlan
from hudi_meta.metadata.compaction import base_file_records, merged_slice, slice_schema
from hudi_meta.metadata.encoding import hfile_bytes
from hudi_meta.metadata.merge import combine, kept_in_base
from hudi_meta.table.metadata_table import valid_instants
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action
from tests.conftest import FIXTURES_DIR

COMPACTED = [
    "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip",
    "sample_table/mor/avro/v9_txns_simple_meta.zip",
    "sample_table/mor/avro/v9_txns_nonpart_meta.zip",
    "sample_table/mor/avro/v9_txns_complex_meta.zip",
    "sample_table/cow/v9_txns_simple_meta.zip",
]


def _before(is_valid: Callable[[str], bool], instant: str, t: str) -> bool:
    return is_valid(t) and t < instant


def _cells(data: bytes, name: str) -> dict[bytes, bytes]:
    return dict(HFileReader(data, name).items())


def _decoded(cells: dict[bytes, bytes], schema: str) -> dict[bytes, Any]:
    parsed = parsed_schema(schema)
    return {k: fastavro.schemaless_reader(io.BytesIO(v), parsed, None) for k, v in cells.items()}


@pytest.mark.parametrize("archive", [pytest.param(FIXTURES_DIR / r, id=r.removesuffix(".zip")) for r in COMPACTED])
def test_merged_slices_equal_javas_compacted_base_files(archive: Path, fixture_table: Callable[[Path], Path]) -> None:
    base = fixture_table(archive)
    table = HudiTable.open(str(base))
    mdt = HudiTable.open(str(base / ".hoodie" / "metadata"))
    compactions = [i for i in mdt.timeline.completed() if i.action == Action.COMMIT]
    assert compactions, "the fixture has an MDT compaction"
    is_valid = valid_instants(table, mdt)
    seen: set[str] = set()
    for compaction in compactions:
        instant = compaction.requested_time
        plan: CompactionPlan = mdt.compaction_plan(instant)
        written = mdt.timeline.commit_metadata(compaction)
        by_file_id = {s.file_id: s.path for stats in written.partition_to_write_stats.values() for s in stats}
        for op in plan.operations:
            ours = merged_slice(mdt, op, partial(_before, is_valid, instant))
            if op.file_id not in by_file_id:  # Java writes no base file for a slice without records
                assert not ours, (op.partition_path, op.file_id)
                continue
            java_path = posixpath.join(mdt.base_path, by_file_id[op.file_id])
            java = _cells(Path(java_path).read_bytes(), java_path)
            records = base_file_records(op.partition_path, ours, posixpath.basename(java_path))
            schema = slice_schema(mdt, op)
            encoded = _cells(hfile_bytes(records, schema, base_file=True), "ours")
            assert encoded.keys() == java.keys(), (op.partition_path, op.file_id)
            if op.partition_path == "files":  # a map of files: Java's HashMap order is not ours, the entries are
                assert _decoded(encoded, schema) == _decoded(java, schema), op.file_id
            else:
                assert encoded == java, (op.partition_path, op.file_id, "datums differ")
            seen.add(op.partition_path)
    assert "files" in seen


WRAP = "org.apache.hudi.avro.model."


def _stats(minimum: int | None, maximum: int | None, count: int, **extra: Any) -> KeyedRecord:
    stats = {
        "fileName": "f.parquet",
        "columnName": "c",
        "minValue": None if minimum is None else (WRAP + "IntWrapper", {"value": minimum}),
        "maxValue": None if maximum is None else (WRAP + "IntWrapper", {"value": maximum}),
        "valueCount": count,
        "nullCount": 1,
        "totalSize": 10,
        "totalUncompressedSize": 20,
        "isDeleted": False,
        "isTightBound": False,
    } | extra
    return KeyedRecord("k", {"key": "k", "type": 3, "ColumnStatsMetadata": stats})


def test_column_stats_widen_unless_a_tombstone_or_a_tight_bound_is_newer() -> None:
    """mergeColumnStatsRecords: min of minimums and max of maximums (a null side ignored), counts and sizes
    summed; a tombstone on either side or a newer tight bound: the newer record as it is."""
    merged = combine(_stats(5, 9, 3), _stats(2, None, 4)).record["ColumnStatsMetadata"]
    assert merged["minValue"][1]["value"] == 2 and merged["maxValue"][1]["value"] == 9
    assert (merged["valueCount"], merged["nullCount"], merged["totalSize"], merged["totalUncompressedSize"]) == (
        7,
        2,
        20,
        40,
    )
    tombstone = _stats(None, None, 0, isDeleted=True)
    assert combine(_stats(5, 9, 3), tombstone).record == tombstone.record
    fresh = _stats(7, 8, 1)
    assert combine(tombstone, fresh).record == fresh.record
    tight = _stats(6, 6, 1, isTightBound=True)
    assert combine(_stats(1, 9, 3), tight).record == tight.record


def test_index_records_take_the_newer_and_deleted_secondary_entries_leave_the_base() -> None:
    old = KeyedRecord("k", {"key": "k", "type": 5, "recordIndexMetadata": {"fileIndex": 1}})
    new = KeyedRecord("k", {"key": "k", "type": 5, "recordIndexMetadata": {"fileIndex": 2}})
    assert combine(old, new) is new
    gone = KeyedRecord("s", {"key": "s", "type": 7, "SecondaryIndexMetadata": {"isDeleted": True}})
    live = KeyedRecord("s", {"key": "s", "type": 7, "SecondaryIndexMetadata": {"isDeleted": False}})
    assert not kept_in_base(gone) and kept_in_base(live) and kept_in_base(old)
    with pytest.raises(ValueError, match="cannot merge"):
        combine(old, live)
