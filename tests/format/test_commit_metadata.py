"""Commit metadata in both encodings: JSON (v6) and Avro container files (v8/v9)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.table.table import HudiTable
from tests.conftest import FIXTURES_DIR, table_zips


def test_loose_v6_json_and_v8_avro() -> None:
    v6 = CommitMetadata.from_bytes((FIXTURES_DIR / "commit_metadata" / "v6_commit.json").read_bytes())
    assert v6.operation_type == "UPSERT" and not v6.compacted
    stat = v6.partition_to_write_stats[""][0]
    assert stat.file_id == "a079bdb3-731c-4894-b855-abfcd6921007-0" and stat.num_writes == 4
    assert v6.schema is not None and "v6_nonpartitioned_record" in v6.schema
    v8 = CommitMetadata.from_bytes((FIXTURES_DIR / "commit_metadata" / "v8_deltacommit.avro").read_bytes())
    assert v8.write_stats() and all(s.file_id for s in v8.write_stats())


def test_every_fixture_commit_decodes(fixture_table: Any) -> None:
    decoded = 0
    for archive in table_zips():
        table = HudiTable.open(str(fixture_table(archive)))
        for instant in table.timeline.completed_writes():
            metadata = table.timeline.commit_metadata(instant)
            assert all(s.path for s in metadata.write_stats())
            decoded += 1
    assert decoded > 50


def test_json_round_trip_keeps_delta_fields(tmp_path: Path) -> None:
    stat = WriteStat(
        file_id="f",
        path="p/.f_1.log.1_1-0-1",
        prev_commit="1",
        log_version=1,
        log_offset=0,
        base_file="f_1-0-1_1.parquet",
        log_files=[".f_1.log.1_1-0-1"],
        min_event_time=5,
        max_event_time=9,
        partition_path="p",
    )
    metadata = CommitMetadata({"p": [stat]}, False, {"schema": "{}"}, "UPSERT")
    again = CommitMetadata.from_bytes(metadata.to_json())
    assert again == metadata
    assert CommitMetadata.from_bytes(b"") == CommitMetadata()
