"""Tables written through the core API (v6) read the same with hudi-rs as with our reader."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hudi import HudiReadOptions
from hudi import HudiTable as RsTable

from hudi_meta.errors import BadValueError, InstantExistsError, UnsupportedTableError
from hudi_meta.format.block_content import DeleteRecord
from hudi_meta.format.config_keys import HEARTBEAT_INTERVAL_MS, HEARTBEAT_TOLERABLE_MISSES
from hudi_meta.format.log_block import HeaderKey
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.metadata.integrity import MetadataTableDamagedError
from hudi_meta.metadata.sync import write_client
from hudi_meta.table.table import HudiTable
from hudi_meta.write.failed_writes import rollback_failed_write
from hudi_meta.write.writer import WriteClient, append_to_file_group, create_table, write_new_file_group

COLUMNS = ["id", "ts", "amount", "region"]


def batch(region: str, ids: list[int], ts: int) -> pa.Table:
    return pa.table(
        {
            "id": [f"{region}-{i}" for i in ids],
            "ts": pa.array([ts + i for i in ids], pa.int64()),
            "amount": [float(i) * 1.5 for i in ids],
            "region": [region] * len(ids),
        }
    )


def rows(table: pa.Table) -> list[dict[str, object]]:
    out: list[dict[str, object]] = table.select(COLUMNS).sort_by("id").to_pylist()
    return out


def hudi_rs_rows(path: Path, query: str) -> list[dict[str, object]]:
    opts = {"hoodie.read.use.read_optimized.mode": "true"} if query == "ro" else {}
    return rows(pa.Table.from_batches(RsTable(str(path)).read(HudiReadOptions(hudi_options=opts))))


# Short heartbeats, so a test's dead writer expires in a fraction of a second (Java's rule: interval * misses).
HEARTBEAT_PROPS = {HEARTBEAT_INTERVAL_MS.name: "100", HEARTBEAT_TOLERABLE_MISSES.name: "2"}
EXPIRY_S = 0.2


def write_demo(path: Path, header: bool = False, version: int = 6) -> HudiTable:
    table = create_table(
        str(path),
        "demo",
        ["id"],
        "ts",
        ["region"],
        event_time_field="ts",
        min_event_time_header=header,
        extra_props=HEARTBEAT_PROPS,
        version=version,
    )
    w = WriteClient(table)
    w.begin()
    fids = {r: w.write_base_file(f"region={r}", batch(r, list(range(6)), 1_000)).file_id for r in ("eu", "us")}
    w.commit("INSERT")
    w = WriteClient(table)
    w.begin()
    w.append_log("region=eu", fids["eu"], batch("eu", [1, 2, 9], 2_000), [DeleteRecord("eu-3", "region=eu")])
    w.append_log("region=us", fids["us"], batch("us", [0, 7], 3_000), block_format="parquet")
    w.commit()
    w = WriteClient(table)
    w.begin()
    w.append_log(
        "region=us",
        fids["us"],
        None,
        [DeleteRecord("us-0", "region=us"), DeleteRecord("us-5", "region=us")],
    )
    w.append_log("region=eu", fids["eu"], batch("eu", [2], 500))  # older ordering value: loses
    w.commit()
    return HudiTable.open(str(path))


@pytest.mark.parametrize("buckets", [0, -3, 10**8 + 1, 2**31 - 1, 10**12])
def test_a_bucket_count_no_table_holds_is_refused_before_anything_is_written(tmp_path: Path, buckets: int) -> None:
    with pytest.raises(BadValueError, match="buckets must be from 1 to 100000000"):
        create_table(str(tmp_path / "t"), "t", ["id"], "ts", buckets=buckets)
    assert not (tmp_path / "t").exists()


def test_a_table_with_a_metadata_table_is_written_only_with_it(tmp_path: Path) -> None:
    """Rule: readers that list files through the metadata table (Java, hudi-rs) would miss a write that does not
    update it: the table layer's writer and rollback refuse such a table unless given the metadata writer
    (hudi_meta.metadata.sync), before anything is written; and a table whose properties name a metadata table that
    storage does not hold is refused, not trusted."""
    table = create_table(
        str(tmp_path / "t"), "t", ["id"], "ts", extra_props={"hoodie.table.metadata.partitions": "files"}
    )
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(UnsupportedTableError, match=r"partitions=files\): write through hudi_meta.metadata.sync"):
        WriteClient(table)
    with pytest.raises(UnsupportedTableError, match="roll back writes through"):
        rollback_failed_write(table, "20260101000000000", dry_run=False)
    with pytest.raises(MetadataTableDamagedError, match=r"partitions=files\), but .*/.hoodie/metadata does not exist"):
        write_client(table)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize("query", ["snapshot", "ro"])
def test_hudi_rs_reads_what_we_write(tmp_path: Path, query: str) -> None:
    table = write_demo(tmp_path / "demo")
    ours = rows(table.read(query))
    assert ours == hudi_rs_rows(tmp_path / "demo", query)
    ids = [r["id"] for r in ours]
    if query == "snapshot":
        assert "eu-3" not in ids and "us-0" not in ids and "us-5" not in ids
        assert {"eu-9", "us-7"} <= set(ids)
        assert next(r for r in ours if r["id"] == "eu-2")["ts"] == 2_002
    else:
        assert len(ids) == 12


@pytest.mark.parametrize("query", ["snapshot", "ro"])
def test_a_base_file_never_holds_a_soft_deleted_record(tmp_path: Path, query: str) -> None:
    """A record flagged `_hoodie_is_deleted` in a first write is not written (Java's create handle drops it), so a
    reader of base files alone (hudi-rs's read-optimized read, Hive, Spark on the Parquet) does not show it."""
    table = create_table(str(tmp_path / "t"), "t", ["id"], "ts", ["region"])
    data = batch("eu", [1, 2, 3], 1_000).append_column("_hoodie_is_deleted", pa.array([False, True, None]))
    w = WriteClient(table)
    w.begin()
    assert w.write_base_file("region=eu", data).num_writes == 2
    w.commit("INSERT")
    ours = rows(HudiTable.open(str(tmp_path / "t")).read(query))
    assert [r["id"] for r in ours] == ["eu-1", "eu-3"]
    assert hudi_rs_rows(tmp_path / "t", query) == ours  # before the fix hudi-rs read eu-2 as well


def test_write_stats_carry_event_times(tmp_path: Path) -> None:
    table = write_demo(tmp_path / "demo")
    tl = table.timeline
    stats = [s for i in tl.completed_writes() for s in tl.commit_metadata(i).write_stats()]
    eu_log = [s for s in stats if s.log_files and s.partition_path == "region=eu" and s.num_writes == 3]
    assert eu_log[0].min_event_time == 2_001 * 1000 and eu_log[0].max_event_time == 2_009 * 1000
    assert all(s.min_event_time is None for s in stats if s.num_writes == 0)


def test_min_event_time_header_only_when_opted_in(tmp_path: Path) -> None:
    plain = write_demo(tmp_path / "plain")
    opted = write_demo(tmp_path / "opted", header=True)
    for table, expect in ((plain, False), (opted, True)):
        blocks = [
            b
            for fg in table.file_groups()
            for fs in fg.ordered_slices()
            for lf in fs.log_files
            for b in read_blocks(table.storage, f"{table.base_path}/{lf.path}")
            if b.is_data
        ]
        assert blocks
        assert all((HeaderKey.MIN_EVENT_TIME in b.header) == expect for b in blocks)
    assert rows(opted.read("snapshot")) == rows(plain.read("snapshot"))


def test_uncommitted_write_is_invisible(tmp_path: Path) -> None:
    table = write_demo(tmp_path / "demo")
    before = rows(table.read("snapshot"))
    fg = next(fg for fg in table.file_groups() if fg.partition == "region=eu")
    w = WriteClient(table)
    w.begin()
    w.append_log("region=eu", fg.file_id, batch("eu", [1, 50], 9_000), [DeleteRecord("eu-0", "region=eu")])
    # no commit: a crashed writer
    assert rows(HudiTable.open(table.base_path).read("snapshot")) == before
    assert hudi_rs_rows(Path(table.base_path), "snapshot") == before
    w.close()  # its heartbeat stops (the instant stays pending); a thread left beating would outlive the test


def test_completed_instant_is_never_overwritten(tmp_path: Path) -> None:
    table = create_table(str(tmp_path / "t"), "t", ["id"], "ts")
    w = WriteClient(table)
    w.begin()
    w.commit()
    with pytest.raises(InstantExistsError):
        WriteClient(HudiTable.open(str(tmp_path / "t")), instant=w.instant).begin()


def test_retried_task_replaces_its_own_earlier_attempt(tmp_path: Path) -> None:
    """A task attempt that died after writing is retried with the same instant: one file, one block each."""
    path = tmp_path / "demo"
    table = write_demo(path)
    w = WriteClient(table)
    w.begin()
    fg = next(fg for fg in table.file_groups() if fg.partition == "region=eu")
    target = w.targets()[("region=eu", fg.file_id)]
    attempts = [append_to_file_group(w.context, target, batch("eu", [40, 41], 9_000)) for _ in range(2)]
    assert attempts[0].path == attempts[1].path == f"region=eu/{target.log_file}"
    blocks = read_blocks(table.storage, str(path / attempts[1].path))
    assert [(b.instant_time, b.is_data) for b in blocks] == [(w.instant, True)]
    bases = [write_new_file_group(w.context, "region=apac", batch("apac", [1], 9_000), "fixed-id-0") for _ in range(2)]
    assert bases[0].path == bases[1].path
    assert len(list((path / "region=apac").glob("*.parquet"))) == 1
    w.stats = [attempts[1], bases[1]]
    w.commit()
    ids = {r["id"] for r in rows(HudiTable.open(str(path)).read("snapshot"))}
    assert {"eu-40", "eu-41", "apac-1"} <= ids
    assert rows(HudiTable.open(str(path)).read("snapshot")) == hudi_rs_rows(path, "snapshot")
