"""Issue 36 item 11: `hudi-meta ingest` into a table it cannot write was refused only after Spark had started
(about 18 s). What the writer requires of the table (`hudi_meta.spark.writer.check_writable`, the function the
writer itself calls) and what the arguments say without Spark are now checked first: one line, exit 2, the
session factory never called, nothing written. Tables: Java-written fixtures (COW, MOR without a bucket index)
and tables made by `create_table` with one setting changed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import hudi_meta.spark.ingest
import hudi_meta.spark.session
import pytest

from hudi_meta.write.writer import create_table
from tests.cli.helpers import cli_in_process, tree
from tests.conftest import table_id, table_zips


@pytest.fixture(autouse=True)
def spark_never_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session started by a refused ingest fails the test (the CLI would exit 1, not 2)."""

    def started(*args: object, **kwargs: object) -> None:
        raise AssertionError("Spark started")

    monkeypatch.setattr(hudi_meta.spark.session, "spark_session", started)
    monkeypatch.setattr(hudi_meta.spark.ingest, "spark_session", started)


@pytest.fixture
def batch(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text('{"id": "a", "ts": 1767225600000, "region": "eu"}\n')
    return path


def refused(args: list[str], says: str) -> None:
    out = cli_in_process("ingest", *args)
    assert out.code == 2 and out.stdout == "", out.stderr
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith("hudi-meta: error: ") and says in line, line


def copied(name: str, fixture_table: Any, tmp_path: Path) -> Path:
    archive = next(a for a in table_zips() if table_id(a) == name)
    return Path(shutil.copytree(fixture_table(archive), tmp_path / "table"))


@pytest.mark.parametrize(
    ("name", "key", "says"),
    [
        ("sample_table/cow/v6_nonpartitioned", "id", "a COPY_ON_WRITE table"),
        ("sample_table/cow/v9_txns_simple_meta", "txn_id", "a COPY_ON_WRITE table"),
        ("sample_table/mor/parquet/v6_nonpartitioned", "id", "no BUCKET index"),
        ("sample_table/mor/avro/v9_txns_simple_meta", "txn_id", "no BUCKET index"),
    ],
)
def test_a_table_the_writer_cannot_write_is_refused_before_spark(
    name: str, key: str, says: str, fixture_table: Any, tmp_path: Path, batch: Path
) -> None:
    table = copied(name, fixture_table, tmp_path)
    before = tree(table)
    refused([str(table), "--input", str(batch), "--record-key", key, "--ordering-field", "ts"], says)
    refused([str(table), "--input", str(batch), "--record-key", key, "--ordering-field", "ts", "--create"], says)
    assert tree(table) == before


@pytest.mark.parametrize(
    ("props", "says"),
    [
        ({"hoodie.index.type": "SIMPLE"}, "hoodie.index.type=SIMPLE"),
        ({"hoodie.index.bucket.engine": "CONSISTENT_HASHING"}, "hoodie.index.bucket.engine=CONSISTENT_HASHING"),
        ({"hoodie.table.base.file.format": "ORC"}, "only PARQUET is supported"),
        ({"hoodie.table.metadata.partitions": "files"}, "hoodie.table.metadata.partitions=files), but"),  # no MDT
    ],
)
def test_a_bucket_table_with_a_setting_the_writer_does_not_keep_is_refused(
    props: dict[str, str], says: str, tmp_path: Path, batch: Path
) -> None:
    path = str(tmp_path / "t")
    create_table(path, "t", ["id"], "ts", ["region"], buckets=2, version=9, extra_props=props)
    before = tree(tmp_path / "t")
    refused([path, "--input", str(batch), "--record-key", "id", "--ordering-field", "ts"], says)
    assert tree(tmp_path / "t") == before


@pytest.mark.parametrize(
    ("given", "says"),
    [
        (["--partition-field", "id"], "exists with partition-field region, not id"),
        (["--event-time-field", "region"], "exists with event-time-field ts, not region"),
        (["--buckets", "8"], "exists with buckets 2, not 8"),
        (["--table-version", "6"], "exists with table-version 9, not 6"),
        (["--create", "--table-version", "8"], "exists with table-version 9, not 8"),
    ],
)
def test_a_setting_for_creating_that_the_table_does_not_have_is_refused(
    given: list[str], says: str, tmp_path: Path, batch: Path
) -> None:
    """They were ignored silently: the write went on with the table's own settings."""
    path = str(tmp_path / "t")
    create_table(path, "t", ["id"], "ts", ["region"], event_time_field="ts", buckets=2, version=9)
    before = tree(tmp_path / "t")
    refused([path, "--input", str(batch), "--record-key", "id", "--ordering-field", "ts", *given], says)
    assert tree(tmp_path / "t") == before


def test_create_at_a_file_and_an_input_of_unknown_format_are_refused(tmp_path: Path, batch: Path) -> None:
    a_file = tmp_path / "not-a-folder"
    a_file.write_text("x")
    base = ["--record-key", "id", "--ordering-field", "ts", "--create"]
    refused([str(a_file), "--input", str(batch), *base], "it is a file")
    csv = tmp_path / "in.csv"
    csv.write_text("id,ts\na,1\n")
    refused([str(tmp_path / "new"), "--input", str(csv), *base], "unknown input format")
    assert not (tmp_path / "new").exists() and a_file.read_text() == "x"
