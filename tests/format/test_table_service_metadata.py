"""Tests for the compaction/clean/rollback metadata serde: round trips, Java-written files, compatibility."""

import io
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_meta.errors import CorruptFileError
from hudi_meta.format.avro_container import load_schema, read_container, write_container
from hudi_meta.format.table_service_metadata import (
    ActionInstant,
    CleanerPlan,
    CleanFileInfo,
    CleanMetadata,
    CleanPartitionMetadata,
    CompactionOperation,
    CompactionPlan,
    CompactionStrategyInfo,
    InstantInfo,
    RollbackMetadata,
    RollbackPartitionMetadata,
    RollbackPlan,
    RollbackRequest,
    SymlinkOperation,
)

# ---------------------------------------------------------------- strategies

texts = st.text(st.characters(codec="utf-8"), max_size=12)
names = st.lists(texts, max_size=4).map(tuple)
str_maps = st.dictionaries(texts, texts, max_size=3)
ints = st.integers(-(2**31), 2**31 - 1)
longs = st.integers(-(2**63), 2**63 - 1)
long_maps = st.dictionaries(texts, longs, max_size=3)
versions = st.integers(1, 3)


def tuples(elements: st.SearchStrategy[Any], min_size: int = 0) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.lists(elements, min_size=min_size, max_size=3).map(tuple)


def compaction_plans(with_symlinks: bool) -> st.SearchStrategy[CompactionPlan]:
    symlinks = tuples(st.builds(SymlinkOperation, texts, texts), min_size=1) if with_symlinks else st.just(())
    operation = st.builds(
        CompactionOperation,
        base_instant_time=texts,
        file_id=texts,
        partition_path=texts,
        data_file_path=st.none() | texts,
        delta_file_paths=names,
        metrics=st.dictionaries(texts, st.floats(allow_nan=False), max_size=3),
        bootstrap_file_path=st.none() | texts,
        symlink_operations=symlinks,
    )
    strategy = st.builds(
        CompactionStrategyInfo, compactor_class_name=st.none() | texts, strategy_params=str_maps, version=ints
    )
    return st.builds(
        CompactionPlan,
        operations=tuples(operation, min_size=1 if with_symlinks else 0),
        extra_metadata=str_maps,
        strategy=st.none() | strategy,
        preserve_hoodie_metadata=st.booleans(),
        missing_schedule_partitions=names,
    )


cleaner_plans = st.builds(
    CleanerPlan,
    earliest_instant_to_retain=st.none() | st.builds(ActionInstant, texts, texts, texts),
    last_completed_commit_timestamp=texts,
    policy=texts,
    files_to_be_deleted_per_partition=st.dictionaries(texts, names, max_size=3),
    version=versions,
    file_paths_to_be_deleted_per_partition=st.dictionaries(
        texts, tuples(st.builds(CleanFileInfo, texts, st.booleans())), max_size=3
    ),
    partitions_to_be_deleted=names,
    extra_metadata=str_maps,
)
clean_partitions = st.dictionaries(
    texts,
    st.builds(
        CleanPartitionMetadata,
        partition_path=texts,
        policy=texts,
        delete_path_patterns=names,
        success_delete_files=names,
        failed_delete_files=names,
        is_partition_deleted=st.booleans(),
    ),
    max_size=3,
)
clean_metadatas = st.builds(
    CleanMetadata,
    start_clean_time=texts,
    time_taken_in_millis=longs,
    total_files_deleted=ints,
    earliest_commit_to_retain=texts,
    last_completed_commit_timestamp=texts,
    partition_metadata=clean_partitions,
    version=versions,
    bootstrap_partition_metadata=clean_partitions,
    extra_metadata=str_maps,
)
instants = st.builds(InstantInfo, texts, texts)
rollback_plans = st.builds(
    RollbackPlan,
    instant_to_rollback=st.none() | instants,
    rollback_requests=tuples(
        st.builds(
            RollbackRequest,
            partition_path=texts,
            file_id=st.none() | texts,
            latest_base_instant=st.none() | texts,
            files_to_be_deleted=names,
            log_blocks_to_be_deleted=long_maps,
        )
    ),
    version=versions,
)
rollback_metadatas = st.builds(
    RollbackMetadata,
    start_rollback_time=texts,
    time_taken_in_millis=longs,
    total_files_deleted=ints,
    commits_rollback=names,
    partition_metadata=st.dictionaries(
        texts,
        st.builds(
            RollbackPartitionMetadata,
            partition_path=texts,
            success_delete_files=names,
            failed_delete_files=names,
            rollback_log_files=long_maps,
            log_files_from_failed_commit=long_maps,
        ),
        max_size=3,
    ),
    version=versions,
    instants_rollback=tuples(instants),
)

# ---------------------------------------------------------------- (a) round trips


@given(compaction_plans(with_symlinks=False))
def test_compaction_plan_round_trip(plan: CompactionPlan) -> None:
    assert CompactionPlan.from_bytes(plan.to_bytes()) == plan


@given(compaction_plans(with_symlinks=True))
def test_compaction_plan_with_symlinks_round_trip(plan: CompactionPlan) -> None:
    assert CompactionPlan.from_bytes(plan.to_bytes()) == plan


@given(cleaner_plans)
def test_cleaner_plan_round_trip(plan: CleanerPlan) -> None:
    assert CleanerPlan.from_bytes(plan.to_bytes()) == plan


@given(clean_metadatas)
def test_clean_metadata_round_trip(meta: CleanMetadata) -> None:
    assert CleanMetadata.from_bytes(meta.to_bytes()) == meta


@given(rollback_plans)
def test_rollback_plan_round_trip(plan: RollbackPlan) -> None:
    assert RollbackPlan.from_bytes(plan.to_bytes()) == plan


@given(rollback_metadatas)
def test_rollback_metadata_round_trip(meta: RollbackMetadata) -> None:
    assert RollbackMetadata.from_bytes(meta.to_bytes()) == meta


def test_deflate_codec_reads_back() -> None:
    plan = CompactionPlan(extra_metadata={"k": "v" * 1000})
    data = write_container(plan.to_avro(), "HoodieCompactionPlan", codec="deflate")
    assert CompactionPlan.from_bytes(data) == plan


# ---------------------------------------------------------------- (b) Java-written files

INSTANT_KINDS: dict[str, type[Any]] = {
    "compaction.requested": CompactionPlan,
    "clean.requested": CleanerPlan,
    "clean": CleanMetadata,
    "rollback.requested": RollbackPlan,
    "rollback": RollbackMetadata,
}
V8_TRIPS = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d/v8_trips_8i3u1d"


def _instant_files(root: Path) -> list[tuple[Path, type[Any]]]:
    """Active-timeline files (`.hoodie/` or `.hoodie/timeline/`, metadata tables included) of known kinds."""
    found = []
    for path in sorted(root.rglob("*")):
        kind = path.name.partition(".")[2]
        if path.parent.name in (".hoodie", "timeline") and kind in INSTANT_KINDS and path.is_file():
            found.append((path, INSTANT_KINDS[kind]))
    return found


def _without_symlinks(plan_record: dict[str, Any]) -> dict[str, Any]:
    for op in plan_record["operations"]:
        del op["symlinkOperations"]
    return plan_record


def test_every_java_written_instant_file_decodes(fixture_tables_dir: Path) -> None:
    files = _instant_files(fixture_tables_dir)
    kinds = {cls for _, cls in files}
    assert {CompactionPlan, RollbackPlan, RollbackMetadata} <= kinds, files
    for path, cls in files:
        data = path.read_bytes()
        obj = cls.from_bytes(data)
        assert cls.from_bytes(obj.to_bytes()) == obj, path
        ours = obj.to_avro()
        if cls is CompactionPlan:
            ours = _without_symlinks(ours)
        assert ours == read_container(data), f"{path}: a field was lost or changed"


def test_v8_trips_compaction_plan_values(fixture_tables_dir: Path) -> None:
    timeline = fixture_tables_dir / V8_TRIPS / ".hoodie" / "timeline"
    plan = CompactionPlan.from_bytes((timeline / "20251220210129235.compaction.requested").read_bytes())
    assert plan.version == 2
    assert plan.strategy is None
    assert plan.extra_metadata == {"_hoodie.spark.sql.writes.prepped": "true"}
    assert len(plan.operations) == 3
    assert {op.base_instant_time for op in plan.operations} == {"20251220210108078"}
    assert all(op.symlink_operations == () for op in plan.operations)
    by_partition = {op.partition_path: op for op in plan.operations}
    assert set(by_partition) == {"city=chennai", "city=san_francisco", "city=sao_paulo"}
    chennai = by_partition["city=chennai"]
    file_id = "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0"
    assert chennai.file_id == file_id
    assert chennai.data_file_path == f"{file_id}_2-986-2794_20251220210108078.parquet"
    assert chennai.delta_file_paths == (
        f".{file_id}_20251220210127080.log.1_0-1072-3078",
        f".{file_id}_20251220210128625.log.1_0-1097-3150",
    )
    assert chennai.metrics["TOTAL_LOG_FILES"] == 2.0


def test_v9_nonpartitioned_plan_has_empty_partition_path(fixture_tables_dir: Path) -> None:
    base = fixture_tables_dir / "sample_table/mor/avro/v9_txns_nonpart_nometa/v9_txns_nonpart_nometa"
    data = (base / ".hoodie/timeline/20260307135936824.compaction.requested").read_bytes()
    (op,) = CompactionPlan.from_bytes(data).operations
    assert op.partition_path == ""
    assert len(op.delta_file_paths) == 5


def test_v6_rollback_plan_and_metadata_values(fixture_tables_dir: Path) -> None:
    table = "sample_table/mor/parquet/v6_nonpartitioned_rollback/v6_nonpartitioned_rollback"
    hoodie = fixture_tables_dir / table / ".hoodie"
    plan = RollbackPlan.from_bytes((hoodie / "20250126040936578.rollback.requested").read_bytes())
    assert plan.instant_to_rollback == InstantInfo("20250126040826878", "deltacommit")
    append_request = plan.rollback_requests[1]
    assert append_request.file_id == "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0"
    assert list(append_request.log_blocks_to_be_deleted.values()) == [11828]
    meta = RollbackMetadata.from_bytes((hoodie / "20250126040936578.rollback").read_bytes())
    assert meta.commits_rollback == ("20250126040826878",)
    assert meta.total_files_deleted == 1
    assert list(meta.partition_metadata[""].rollback_log_files.values()) == [105]


# ---------------------------------------------------------------- compatibility


def _stock_plan_schema() -> dict[str, Any]:
    """Our plan schema without the `symlinkOperations` extension, i.e. Hudi's own reader schema."""
    schema = load_schema("HoodieCompactionPlan")
    operation = schema["fields"][0]["type"][1]["items"]
    operation["fields"] = [f for f in operation["fields"] if f["name"] != "symlinkOperations"]
    return schema


def test_plan_with_symlinks_is_readable_by_stock_schema() -> None:
    op = CompactionOperation(
        base_instant_time="001",
        file_id="f1",
        partition_path="p",
        delta_file_paths=(".f1_001.log.1_0-1-1",),
        symlink_operations=(SymlinkOperation(".f1_002.log.1_0-1-1", ".f1_001.log.2_0-1-1"),),
    )
    plan = CompactionPlan(operations=(op,), strategy=CompactionStrategyInfo(strategy_params={"t": "1"}))
    reader = fastavro.reader(io.BytesIO(plan.to_bytes()), reader_schema=_stock_plan_schema())
    (record,) = list(reader)
    assert record == _without_symlinks(plan.to_avro())


def test_v1_plan_with_old_writer_schema_is_migrated() -> None:
    old_schema = load_schema("HoodieCompactionPlan")
    del old_schema["fields"][3:]  # before strategy / preserveHoodieMetadata / missingSchedulePartitions
    operation = old_schema["fields"][0]["type"][1]["items"]
    operation["fields"] = [f for f in operation["fields"] if f["name"] != "symlinkOperations"]
    old_op = {
        "baseInstantTime": "001",
        "deltaFilePaths": ["hdfs://nn/tbl/p/.f1_001.log.1_0-1-1", "/tbl/p/.f1_001.log.2_0-1-1"],
        "dataFilePath": "/tbl/p/f1_0-1-1_001.parquet",
        "fileId": "f1",
        "partitionPath": "p",
        "metrics": None,
        "bootstrapFilePath": None,
    }
    old_plan = {"operations": [old_op], "extraMetadata": None, "version": 1}
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(old_schema), [old_plan])
    plan = CompactionPlan.from_bytes(buf.getvalue())
    assert plan.version == 2
    assert plan.strategy is None and plan.preserve_hoodie_metadata is False
    (op,) = plan.operations
    assert op.data_file_path == "f1_0-1-1_001.parquet"
    assert op.delta_file_paths == (".f1_001.log.1_0-1-1", ".f1_001.log.2_0-1-1")
    assert op.symlink_operations == () and op.metrics == {}


# ---------------------------------------------------------------- (c) bad input


def test_garbage_raises_corrupt_file_error() -> None:
    with pytest.raises(CorruptFileError):
        CompactionPlan.from_bytes(b"garbage")


def test_truncated_and_empty_files() -> None:
    data = RollbackPlan(rollback_requests=(RollbackRequest(partition_path="p"),)).to_bytes()
    with pytest.raises(CorruptFileError):
        RollbackPlan.from_bytes(data[:-20])
    assert read_container(b"") is None
    with pytest.raises(CorruptFileError, match="empty"):
        RollbackPlan.from_bytes(b"")


def test_wrong_record_type_raises_corrupt_file_error() -> None:
    data = RollbackPlan().to_bytes()
    with pytest.raises(CorruptFileError, match="HoodieRollbackPlan record, expected HoodieCompactionPlan"):
        CompactionPlan.from_bytes(data)
