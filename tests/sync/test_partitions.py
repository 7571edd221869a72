"""A sync keeps a catalog table's partitions in step with the table (issue 38): partitions the table gained are
added, a partition whose location changed is moved, and partitions the table dropped are dropped, by HiveSyncTool's
rule (`TimelineUtils.getDroppedPartitions`): a completed `delete_partition` replacecommit or a clean that deleted the
partition drops it, unless a completed write touched it at or after that instant. Partitions the catalog holds for
another reason stay. The table's files are never touched (a catalog drops registrations only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from hudi_meta.format.commit_metadata import CommitMetadata
from hudi_meta.sync.catalog import Partition
from hudi_meta.sync.partitions import dropped_partitions, partition_changes
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action
from tests.compaction.core import TwoRegions, region_rows
from tests.conftest import FIXTURES_DIR
from tests.hudi_rs import rs_read_table
from tests.sync.helpers import sync
from tests.sync.memory_catalog import MemoryCatalog


def delete_partition(path: str, partition: str) -> str:
    """A completed `delete_partition` replacecommit, as Java writes one: every file group of `partition` replaced."""
    table = HudiTable.open(path)
    ids = [fg.file_id for fg in table.file_groups() if fg.partition == partition]
    instant = table.new_instant_time()
    writer = table.timeline_writer()
    writer.request(Action.REPLACE_COMMIT, instant)
    writer.start(Action.REPLACE_COMMIT, instant)
    metadata = CommitMetadata(operation_type="DELETE_PARTITION", partition_to_replace_file_ids={partition: ids})
    writer.complete(Action.REPLACE_COMMIT, instant, metadata.to_bytes(table.config.timeline_layout))
    return instant


def two_regions(path: Path) -> TwoRegions:
    t = TwoRegions(path)
    t.write(region_rows("eu", ("a", 1, 1.0)))
    t.write_us((("u", 1, 1.0),), None)
    return t


@pytest.mark.parametrize("version", [6])  # our writer writes replacecommits in JSON only
def test_a_deleted_partition_is_dropped_unless_written_again(tmp_path: Path, version: int) -> None:
    t = TwoRegions(tmp_path / "t", version=version)
    t.write(region_rows("eu", ("a", 1, 1.0)))
    us = t.write_us((("u", 1, 1.0),), None)
    assert dropped_partitions(t.table) == set()
    delete_partition(t.path, "region=us")
    assert dropped_partitions(t.table) == {"region=us"}
    assert {fg.partition for fg in t.table.file_groups()} == {"region=eu"}  # its file groups are replaced
    t.write_us((("v", 2, 2.0),), None)  # written again after the delete: it is back
    assert dropped_partitions(t.table) == set()
    assert us  # the first file group stays replaced; a new one holds region=us


def test_the_changes_a_catalog_table_needs() -> None:
    wanted = [Partition(("eu",), "/t/region=eu"), Partition(("us",), "/t/region=us")]
    registered: dict[tuple[str, ...], str] = {
        ("eu",): "file:/t/region=eu",
        ("us",): "/old/region=us",
        ("x",): "/t/region=x",
        ("by-hand",): "/h",
    }
    todo = partition_changes(wanted, registered, [("x",), ("gone-already",)])
    assert todo.added == []
    assert todo.moved == [Partition(("us",), "/t/region=us")]  # file:/t/region=eu is /t/region=eu
    assert todo.dropped == [("x",)]  # only what the table dropped; ("by-hand",) stays
    assert not partition_changes(wanted, {("eu",): "/t/region=eu", ("us",): "/t/region=us"}, [])


def test_a_sync_adds_moves_and_drops_partitions_and_then_changes_nothing(tmp_path: Path, engine: Engine) -> None:
    t = two_regions(tmp_path / "t")
    catalog = MemoryCatalog()
    sync("hms", "", t.path, str(engine.url), "db", catalog=catalog, name="core")
    assert catalog.partitions("db", "core_ro") == {("eu",): f"{t.path}/region=eu", ("us",): f"{t.path}/region=us"}
    catalog.move_partitions("db", "core_ro", [Partition(("eu",), "/somewhere/else")])
    catalog.add_partitions("db", "core_ro", [Partition(("by-hand",), "/h")])
    delete_partition(t.path, "region=us")
    report = sync("hms", "", t.path, str(engine.url), "db", catalog=catalog, name="core")
    done = {(a.operation, a.target) for a in report.actions}
    assert ("move_partitions", "db.core_ro") in done and ("drop_partitions", "db.core_rt") in done
    for name in ("core_ro", "core_rt"):
        assert set(catalog.partitions("db", name)) <= {("eu",), ("by-hand",)}
        assert catalog.partitions("db", name)[("eu",)] == f"{t.path}/region=eu"
    assert ("by-hand",) in catalog.partitions("db", "core_ro")
    assert Path(t.path, "region=us").is_dir()  # the files stay
    again = sync("hms", "", t.path, str(engine.url), "db", catalog=catalog, name="core")
    assert [a for a in again.actions if a.operation.endswith("partitions")] == []


def test_a_dry_run_says_what_it_would_drop_and_drops_nothing(tmp_path: Path, engine: Engine) -> None:
    t = two_regions(tmp_path / "t")
    catalog = MemoryCatalog()
    sync("hms", "", t.path, str(engine.url), "db", catalog=catalog, name="core")
    delete_partition(t.path, "region=us")
    registered = {k: dict(v) for k, v in catalog.registered.items()}
    report = sync("hms", "", t.path, str(engine.url), "db", catalog=catalog, name="core", dry_run=True)
    drops = [a for a in report.actions if a.operation == "drop_partitions"]
    assert [(a.target, list(a.detail)) for a in drops] == [("db.core_ro", ["us"]), ("db.core_rt", ["us"])]
    assert catalog.registered == registered


@pytest.mark.parametrize(
    "zip_name",
    ["mor/parquet/v6_simplekeygen_nonhivestyle_overwritetable.zip", "mor/avro/v9_txns_simple_overwrite.zip"],
)
def test_java_insert_overwrite_table_drops_the_partitions_it_did_not_write(fixture_table: Any, zip_name: str) -> None:
    """Java's INSERT OVERWRITE TABLE replaces every file group: the partitions it wrote stay, the others are
    dropped. Expected from the files, not from our code: every partition folder on disk, less the partitions of
    the rows hudi-rs reads."""
    path = fixture_table(FIXTURES_DIR / "sample_table" / zip_name)
    field = "byteField" if "v6" in zip_name else "region"
    folders = {p.name for p in Path(path).iterdir() if p.is_dir() and not p.name.startswith(".")}
    kept = {str(v) for v in rs_read_table(str(path)).column(field).to_pylist()}
    assert kept and kept <= folders
    assert dropped_partitions(HudiTable.open(str(path))) == folders - kept
