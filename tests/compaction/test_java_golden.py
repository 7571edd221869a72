"""Golden test against Java's own output (issue 27): the version 9 fixture `v9_txns_simple_nometa` holds Java's
compaction plan 20260307135839895, every input of it and the base files Java wrote for it. On a copy taken back to
the moment after that plan was scheduled (the commit, its base files and the later instants removed), hudi-meta's
executor runs Java's plan; every record of every base file it writes equals Java's, field by field (the file name
differs only by its write token), and the commit metadata carries what Java's readers use from it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from hudi_meta.compaction.run import run_compaction
from hudi_meta.format.commit_metadata import CommitMetadata
from hudi_meta.format.file_names import BaseFileName
from hudi_meta.table.table import HudiTable
from tests.conftest import table_zips

PLAN = "20260307135839895"
LATER = ("20260307135840454", "20260307135840975")  # a clustering and a delta commit after the compaction


def taken_back(fixture_table: Any, tmp_path: Path) -> tuple[Path, dict[str, Path], CommitMetadata]:
    """The copy as it was right after Java scheduled the plan; Java's base files of it by file id; Java's commit."""
    archive = next(a for a in table_zips() if a.stem == "v9_txns_simple_nometa" and "/mor/" in str(a))
    table = Path(shutil.copytree(fixture_table(archive), tmp_path / "t"))
    timeline = table / ".hoodie" / "timeline"
    (java_commit,) = timeline.glob(f"{PLAN}_*.commit")
    metadata = CommitMetadata.from_bytes(java_commit.read_bytes())
    java_dir = tmp_path / "java"
    java_dir.mkdir()
    java: dict[str, Path] = {}
    for path in table.rglob(f"*_{PLAN}.parquet"):
        java[BaseFileName.parse(path.name).file_id] = Path(shutil.move(path, java_dir / path.name))
    java_commit.unlink()
    (timeline / f"{PLAN}.compaction.inflight").unlink()
    for later in LATER:
        for path in set(table.rglob(f"*{later}*")):  # its instant files and the files it wrote
            path.unlink()
    return table, java, metadata


def records(path: Path) -> list[dict[str, object]]:
    rows = pq.read_table(path).to_pylist()
    for r in rows:
        r.pop("_hoodie_file_name")  # names the file: differs by the write token
    return sorted(rows, key=lambda r: str(r["_hoodie_record_key"]))


def test_our_executor_on_javas_plan_writes_javas_base_files(fixture_table: Any, tmp_path: Path) -> None:
    table, java, java_metadata = taken_back(fixture_table, tmp_path)
    plan = HudiTable.open(str(table)).compaction_plan(PLAN)
    assert {op.file_id for op in plan.operations} == set(java) and len(java) == 2
    run_compaction(HudiTable.open(str(table)), PLAN)
    ours = {BaseFileName.parse(p.name).file_id: p for p in table.rglob(f"*_{PLAN}.parquet")}
    assert set(ours) == set(java)
    for file_id, path in ours.items():
        theirs = records(java[file_id])
        assert theirs and records(path) == theirs, file_id
        assert pq.read_schema(path).names == pq.read_schema(java[file_id]).names
        # the footer: Java's Hudi entries (key range, bloom filter type), and no pyarrow copy of the schema
        # repeating them (it made our files 2.3 times Java's size). The bloom filter is the old base file's, not
        # rebuilt: it holds every key of the new file (docs/hudi-1x.md 4.1), Java's counts only the new file's.
        ours_footer, theirs_footer = (pq.ParquetFile(p).metadata.metadata for p in (path, java[file_id]))
        for key in (b"hoodie_min_record_key", b"hoodie_max_record_key", b"hoodie_bloom_filter_type_code"):
            assert ours_footer[key] == theirs_footer[key], key
        assert b"org.apache.hudi.bloomfilter" in ours_footer and b"ARROW:schema" not in ours_footer
        assert path.stat().st_size < 1.1 * java[file_id].stat().st_size

    done = HudiTable.open(str(table)).timeline
    metadata = done.commit_metadata(next(i for i in done.completed() if i.requested_time == PLAN))
    assert metadata.compacted and metadata.operation_type == java_metadata.operation_type == "COMPACT"
    assert json.loads(metadata.extra_metadata["schema"]) == json.loads(java_metadata.extra_metadata["schema"])
    ours_stats = {s.file_id: s for s in metadata.write_stats()}
    for s in java_metadata.write_stats():  # what the metadata table and listing rollbacks read from a write stat
        mine = ours_stats[s.file_id]
        assert (mine.partition_path, mine.prev_commit) == (s.partition_path, s.prev_commit)
        assert BaseFileName.parse(mine.file_name).file_id == s.file_id and mine.path.endswith(f"_{PLAN}.parquet")
        assert mine.file_size_in_bytes == (table / mine.path).stat().st_size
        assert mine.num_writes == s.num_writes and mine.total_log_files_compacted == s.total_log_files_compacted
        assert mine.total_log_records == s.total_log_records  # data and delete records read from the log files
