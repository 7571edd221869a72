"""The Spark MOR writer: what it writes reads the same with hudi-rs, our core reader and the Spark
reader, and equals a model of the stream; write stats and headers carry exact event times."""

from __future__ import annotations

import posixpath
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hudi import HudiReadOptions
from hudi import HudiTable as RsTable
from hudi_meta.spark import reader, writer
from hudi_meta.spark.compat import arrow_dataframe, to_arrow
from hudi_meta.spark.ingest import IngestOptions, open_or_create
from pyspark.sql import SparkSession

from hudi_meta.cli.main import build_parser
from hudi_meta.demo.event_stream import StreamSpec, create_events_table, generate
from hudi_meta.errors import BadValueError
from hudi_meta.format.block_content import decode_data_block
from hudi_meta.format.log_block import HeaderKey
from hudi_meta.format.log_reader import read_blocks, read_content
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.queries import block_rows
from hudi_meta.index.registry import table_id_of
from hudi_meta.table.table import HudiTable
from tests.spark.model import Model, rows_of

SPEC = StreamSpec(batches=4, rows_per_batch=150, late_share=0.2, update_share=0.3, delete_share=0.05, seed=7)


def write_stream(
    spark: SparkSession, path: str, spec: StreamSpec = SPEC, block_format: str = "avro", header: bool = False
) -> Model:
    create_events_table(path, buckets=3, min_event_time_header=header)
    model = Model()
    for batch in generate(spec):
        instant = writer.write(arrow_dataframe(spark, batch.upserts), HudiTable.open(path), "upsert", block_format)
        model.upsert(instant.requested_time, batch.upserts)
        if batch.deletes.num_rows:
            instant = writer.write(arrow_dataframe(spark, batch.deletes), HudiTable.open(path), "delete")
            model.delete(instant.requested_time, batch.deletes.column("event_id").to_pylist())
    return model


def hudi_rs(path: str, query: str) -> pa.Table:
    opts = {"hoodie.read.use.read_optimized.mode": "true"} if query == "ro" else {}
    return pa.Table.from_batches(RsTable(path).read(HudiReadOptions(hudi_options=opts)))


@pytest.fixture(scope="module")
def written(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Model]:
    path = str(tmp_path_factory.mktemp("written") / "events")
    return path, write_stream(spark, path)


@pytest.mark.parametrize("query", ["snapshot", "ro"])
def test_all_readers_agree(spark: SparkSession, written: tuple[str, Model], query: str) -> None:
    path, model = written
    ours = rows_of(HudiTable.open(path).read(query))
    assert ours == rows_of(hudi_rs(path, query))
    assert ours == rows_of(to_arrow(reader.read(spark, path, query)))
    if query == "snapshot":
        assert ours == model.rows()
    else:
        assert len(ours) > 0


def test_layout_is_bucketed_with_base_files(written: tuple[str, Model]) -> None:
    path, _ = written
    table = HudiTable.open(path)
    groups = table.file_groups()
    assert {fg.partition for fg in groups} == {"region=eu", "region=us", "region=apac"}
    assert all(fg.file_id[:8].isdigit() and int(fg.file_id[:8]) < 3 for fg in groups)
    assert all(fg.ordered_slices()[0].base_file is not None for fg in groups)
    assert sum(len(s.log_files) for fg in groups for s in fg.ordered_slices()) > 0


def test_write_stats_and_blocks_carry_exact_event_times(written: tuple[str, Model]) -> None:
    path, _ = written
    table = HudiTable.open(path)
    checked = 0
    for instant in table.timeline.completed_writes():
        for stat in table.timeline.commit_metadata(instant).write_stats():
            if stat.num_writes == 0:
                assert stat.min_event_time is None
                continue
            file = posixpath.join(path, stat.path)
            if stat.log_files:
                blocks = [
                    b
                    for b in read_blocks(table.storage, file)
                    if b.instant_time == instant.requested_time and b.is_data
                ]
                assert len(blocks) == 1  # one block per file group per write
                records = decode_data_block(blocks[0], read_content(table.storage, file, blocks[0]))
            else:
                records = pa.parquet.read_table(file)
            ts = records.column("ts")
            assert (stat.min_event_time, stat.max_event_time) == (pc.min(ts).as_py(), pc.max(ts).as_py())
            checked += 1
    assert checked > 10


def test_parquet_blocks_read_the_same(spark: SparkSession, table_path: str) -> None:
    spec = StreamSpec(batches=2, rows_per_batch=80, seed=3)
    model = write_stream(spark, table_path, spec, block_format="parquet")
    assert (
        rows_of(HudiTable.open(table_path).read("snapshot")) == model.rows() == rows_of(hudi_rs(table_path, "snapshot"))
    )


def test_min_event_time_header_opt_in(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "events")
    spec = StreamSpec(batches=2, rows_per_batch=80, seed=5)
    model = write_stream(spark, path, spec, header=True)
    table = HudiTable.open(path)
    assert rows_of(table.read("snapshot")) == model.rows()
    assert rows_of(to_arrow(reader.read(spark, path, "snapshot"))) == model.rows()
    data_blocks = [
        (lf.path, b)
        for fg in table.file_groups()
        for s in fg.ordered_slices()
        for lf in s.log_files
        for b in read_blocks(table.storage, posixpath.join(path, lf.path))
        if b.is_data
    ]
    assert data_blocks
    for rel, block in data_blocks:
        records = decode_data_block(block, read_content(table.storage, posixpath.join(path, rel), block))
        assert int(block.header[HeaderKey.MIN_EVENT_TIME]) == pc.min(records.column("ts")).as_py()
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    try:
        Indexer(engine, table).run()
        table_id = table_id_of(engine, table.base_path)
        assert table_id is not None
        indexed = [r for r in block_rows(engine, table_id) if r["type"] == "avro_data"]
        assert indexed and all(r["min_event_time_source"] == "header" for r in indexed)
    finally:
        engine.dispose()


@pytest.mark.parametrize("buckets", [0, 10**8 + 1, 10**12])
def test_ingest_refuses_a_bucket_count_before_spark_starts(tmp_path: Path, buckets: int) -> None:
    """Issue 25: `ingest --create --buckets 1000000000000` wrote a count Java reads back wrong; the options
    refuse it as they are made, before an input is read or a session starts."""
    with pytest.raises(BadValueError, match="buckets must be from 1 to 100000000"):
        IngestOptions(str(tmp_path / "t"), str(tmp_path / "in.jsonl"), "id", "ts", create=True, buckets=buckets)
    assert not (tmp_path / "t").exists()


def test_ingest_creates_the_metadata_table_unless_told_not_to(tmp_path: Path) -> None:
    """Hudi's default: a table `ingest --create` makes has a metadata table (its files partition, listing the
    table's files); `--no-metadata-table` makes one without."""
    for wanted in (True, False):
        opts = IngestOptions(
            str(tmp_path / f"t-{wanted}"), str(tmp_path / "in.jsonl"), "id", "ts", create=True, metadata_table=wanted
        )
        table = open_or_create(opts)
        assert table.config.metadata_partitions == (("files",) if wanted else ())
        assert (tmp_path / f"t-{wanted}" / ".hoodie" / "metadata" / "files").is_dir() is wanted
    base = ["ingest", "t", "--input", "in", "--record-key", "id", "--ordering-field", "ts"]
    assert build_parser().parse_args(base).metadata_table is True
    assert build_parser().parse_args([*base, "--no-metadata-table"]).metadata_table is False
