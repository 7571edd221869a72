"""Issue 25 item 5: a table written with `hoodie.populate.meta.fields=false` has no commit time in its records, so
an incremental read of it is refused in one line, as Java's incremental relations refuse it ("Incremental queries
are not supported when meta fields are disabled"); it used to answer 0 rows with exit 0 (hudi-rs answers 4).
Time travel needs no commit times and keeps reading such tables, as hudi-rs does; incremental reads of tables
with meta fields are unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi import HudiQueryType, HudiReadOptions
from hudi import HudiTable as RsTable

from hudi_meta.errors import UnsupportedTableError
from hudi_meta.table.table import HudiTable, Query
from tests.cli.helpers import cli_in_process
from tests.conftest import table_id, table_zips
from tests.table.test_fixture_reads import data_rows

NO_META_FIELDS = {  # the fixtures without meta fields, each with its only commit
    "sample_table/mor/parquet/v6_simplekeygen_hivestyle_no_metafields": "20250123001302994",
    "sample_table/cow/v6_simplekeygen_hivestyle_no_metafields": "20240426205419518",
}
ARCHIVES = [a for a in table_zips() if table_id(a) in NO_META_FIELDS]
TRIPS_8I1U = next(a for a in table_zips() if table_id(a).endswith("v6_trips_8i1u"))  # meta fields, 2 commits


def rs_rows(base_path: Path, options: HudiReadOptions) -> list[tuple[str, ...]]:
    batches = list(RsTable(str(base_path)).read(options))
    return data_rows(pa.Table.from_batches(batches)) if batches else []


@pytest.mark.parametrize("archive", ARCHIVES, ids=table_id)
@pytest.mark.parametrize("bounds", [["--begin", "0"], ["--begin", "0", "--end", "{commit}"], ["--begin", "{commit}"]])
def test_an_incremental_read_without_meta_fields_is_refused(
    archive: Path, bounds: list[str], fixture_table: Any
) -> None:
    base_path = fixture_table(archive)
    args = [a.format(commit=NO_META_FIELDS[table_id(archive)]) for a in bounds]
    out = cli_in_process("read", str(base_path), "--query", "incremental", *args)
    assert out.code == 2 and out.stdout == ""
    assert out.stderr.strip() == (
        f"hudi-meta: error: {base_path}: an incremental read needs each record's _hoodie_commit_time, which this "
        "table does not write (hoodie.populate.meta.fields=false); read a snapshot, or travel in time, "
        "instead"
    )
    table = HudiTable.open(str(base_path))  # the API refuses too, before planning or reading a slice
    for read in (table.read, table.plan_reads, lambda q: list(table.iter_read(q))):
        with pytest.raises(UnsupportedTableError, match="hoodie.populate.meta.fields=false"):
            read(Query("incremental", begin="0"))


@pytest.mark.parametrize("archive", ARCHIVES, ids=table_id)
def test_time_travel_without_meta_fields_matches_hudi_rs(archive: Path, fixture_table: Any) -> None:
    base_path = fixture_table(archive)
    commit = NO_META_FIELDS[table_id(archive)]
    table = HudiTable.open(str(base_path))
    counts = {}
    for as_of in (str(int(commit) - 1), commit, "29991231235959999"):
        ours = table.read(Query("time-travel", as_of=as_of))
        theirs = rs_rows(base_path, HudiReadOptions().with_as_of_timestamp(as_of))
        assert (data_rows(ours) if ours.num_columns else []) == theirs, as_of
        counts[as_of] = len(theirs)
    assert list(counts.values()) == [0, 4, 4]  # nothing before the commit, its 4 records from it on


@pytest.mark.parametrize("begin, end", [("0", None), ("20250331030642808", None), ("0", "20250331030642808")])
def test_incremental_reads_with_meta_fields_still_match_hudi_rs(
    begin: str, end: str | None, fixture_table: Any
) -> None:
    base_path = fixture_table(TRIPS_8I1U)
    options = HudiReadOptions().with_query_type(HudiQueryType.Incremental).with_start_timestamp(begin)
    bounds = ["--begin", begin] + (["--end", end] if end else [])
    out = cli_in_process("read", str(base_path), "--query", "incremental", *bounds)
    assert out.code == 0
    ours = pa.Table.from_pylist([json.loads(line) for line in out.stdout.splitlines()])
    theirs = rs_rows(base_path, options.with_end_timestamp(end) if end else options)
    assert data_rows(ours) == theirs and theirs
