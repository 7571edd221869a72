"""Every Java-written fixture table reads the same with our reader as with hudi-rs (snapshot and RO)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi import HudiReadOptions
from hudi import HudiTable as RsTable

from hudi_meta.errors import UnsupportedTableError
from hudi_meta.table.table import HudiTable
from tests.conftest import table_id, table_zips

META = {
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
    "_hoodie_operation",
}


def data_rows(table: pa.Table) -> list[tuple[str, ...]]:
    cols = sorted(c for c in table.column_names if c not in META)
    return sorted(tuple(repr(row[c]) for c in cols) for row in table.select(cols).to_pylist())


def read_with_hudi_rs(base_path: Path, query: str) -> list[pa.RecordBatch]:
    options: dict[str, Any] = {"hoodie.read.use.read_optimized.mode": "true"} if query == "ro" else {}
    return list(RsTable(str(base_path)).read(HudiReadOptions(hudi_options=options)))


@pytest.mark.parametrize("query", ["snapshot", "ro"])
@pytest.mark.parametrize("archive", table_zips(), ids=table_id)
def test_reads_match_hudi_rs(archive: Path, query: str, fixture_table: Any) -> None:
    base_path = fixture_table(archive)
    table = HudiTable.open(str(base_path))
    if table.config.base_file_format != "PARQUET":
        with pytest.raises(UnsupportedTableError, match="hoodie.table.base.file.format"):
            table.read(query)
        return
    ours = table.read(query)
    expected = read_with_hudi_rs(base_path, query)
    if not expected:
        assert ours.num_rows == 0
        return
    theirs = pa.Table.from_batches(expected)
    assert ours.num_rows == theirs.num_rows
    assert data_rows(ours) == data_rows(theirs)
    assert set(META - {"_hoodie_operation"}) <= set(ours.column_names) or not table.config.populate_meta_fields


def test_known_row_counts(fixture_table: Any) -> None:
    """Counts from the fixtures' README, checked by hand against the SQL that wrote them."""
    by_id = {table_id(a): a for a in table_zips()}
    expected = {
        ("quickstart_trips_table/mor/avro/v6_trips_8i3d", "snapshot"): 5,
        ("quickstart_trips_table/mor/avro/v6_trips_8i3d", "ro"): 8,
        ("quickstart_trips_table/mor/avro/v8_trips_8i3u1d", "snapshot"): 6,
        ("sample_table/mor/parquet/v6_nonpartitioned_rollback", "snapshot"): 3,
        ("sample_table/mor/avro/v9_txns_nonpart_nometa", "snapshot"): 14,
        ("sample_table/mor/parquet/v6_simplekeygen_nonhivestyle_overwritetable", "snapshot"): 1,
    }
    for (name, query), rows in expected.items():
        assert HudiTable.open(str(fixture_table(by_id[name]))).read(query).num_rows == rows, (name, query)
