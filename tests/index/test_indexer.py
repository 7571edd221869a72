"""The incremental indexer on SQLite and PostgreSQL: fixtures, incremental runs, status and event times."""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from sqlalchemy import Engine, delete, select, update

from hudi_meta.demo.synthetic import SyntheticSpec, write_synthetic_table
from hudi_meta.format.block_content import decode_data_block
from hudi_meta.format.file_names import LogFileName
from hudi_meta.format.log_reader import read_blocks, read_content
from hudi_meta.index import files
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.models import instant_table, log_block_table, log_file_table
from hudi_meta.index.queries import block_rows, slice_rows, timeline_rows
from hudi_meta.index.registry import table_id_of
from hudi_meta.storage import LocalStorage
from hudi_meta.table.event_time import to_epoch_ms
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.archival_plan import ArchivalSettings
from hudi_meta.timeline.instant import instant_epoch_ms
from hudi_meta.write.archival import archive_timeline
from hudi_meta.write.writer import WriteClient
from tests.conftest import table_zips
from tests.write.test_archival import write_table
from tests.write.test_writer import batch

EVENT_FIELDS = ("ts", "txn_datetime", "timestampField")


def event_field(table: HudiTable) -> str | None:
    schema = table.config.props.get("hoodie.table.create.schema", "")
    return next((f for f in EVENT_FIELDS if f'"{f}"' in schema), None)


def direct_scan(table: HudiTable, field: str | None) -> dict[tuple[str, int], tuple[str, int | None, int | None]]:
    """(file, offset) -> (type, min, max) computed straight from the files, for committed blocks."""
    storage = LocalStorage()
    inputs = table.view_inputs()
    out = {}
    for path in sorted(Path(table.base_path).rglob(".*")):
        if ".hoodie" in path.relative_to(table.base_path).parts or LogFileName.try_parse(path.name) is None:
            continue
        rel = str(path.relative_to(table.base_path))
        for block in read_blocks(storage, str(path)):
            lo = hi = None
            if block.is_data and field is not None:
                column = decode_data_block(block, read_content(storage, str(path), block)).column(field)
                lo, hi = to_epoch_ms(pc.min(column).as_py()), to_epoch_ms(pc.max(column).as_py())
            elif block.block_type.label == "delete" and block.instant_time:
                lo = hi = instant_epoch_ms(block.instant_time)
            if block.instant_time and inputs.is_committed(block.instant_time) and not block.is_rollback:
                out[(rel, block.offset)] = (block.block_type.label, lo, hi)
    return out


def test_every_fixture_table_indexes_like_a_direct_scan(engine: Engine, fixture_table: Any) -> None:
    for archive in table_zips():
        table = HudiTable.open(str(fixture_table(archive)))
        field = event_field(table)
        Indexer(engine, table).run(field)
        indexed = {
            (r["file"], r["offset"]): (r["type"], r["min_event_time"], r["max_event_time"])
            for r in block_rows(engine, _table_id(engine, table))
            if r["status"] == "committed" and r["type"] != "command"
        }
        assert indexed == direct_scan(table, field), archive.name
        timeline = timeline_rows(engine, _table_id(engine, table))
        assert [r["requested_time"] for r in timeline] == [i.requested_time for i in table.timeline.instants]
        assert len(slice_rows(engine, _table_id(engine, table))) == sum(
            len(fg.slices) for fg in table.all_file_groups()
        )


def _table_id(engine: Engine, table: HudiTable) -> int:
    found = table_id_of(engine, table.base_path)
    assert found is not None
    return found


def test_rolled_back_blocks_are_marked(engine: Engine, fixture_table: Any) -> None:
    archive = next(a for a in table_zips() if a.stem == "v6_nonpartitioned_rollback")
    table = HudiTable.open(str(fixture_table(archive)))
    Indexer(engine, table).run()
    statuses = sorted((r["type"], r["status"]) for r in block_rows(engine, _table_id(engine, table)))
    assert statuses == [
        ("command", "committed"),
        ("parquet_data", "committed"),
        ("parquet_data", "rolled_back"),
    ]


class CountingStorage(LocalStorage):
    def __init__(self) -> None:
        self.opened: list[str] = []

    def open_read(self, path: str) -> Any:
        if LogFileName.try_parse(posixpath.basename(path)):
            self.opened.append(path)
        return super().open_read(path)


def _open_counting(path: str) -> tuple[HudiTable, CountingStorage]:
    table = HudiTable.open(path)
    storage = CountingStorage()
    table.storage = storage
    return table, storage


def test_incremental_runs_read_only_what_is_new(engine: Engine, tmp_path: Path) -> None:
    spec = SyntheticSpec(partitions=2, file_groups_per_partition=3, commits=2, blocks_per_commit=2)
    path = str(tmp_path / "t")
    write_synthetic_table(path, spec)
    table, storage = _open_counting(path)
    first = Indexer(engine, table).run()
    assert first.blocks_added == spec.total_blocks and first.log_files_scanned == 6

    table, storage = _open_counting(path)
    nothing = Indexer(engine, table).run()
    assert storage.opened == []
    assert (nothing.blocks_added, nothing.log_files_scanned, nothing.instants_added) == (0, 0, 0)

    # a new deltacommit writes a new log file into two of the six file groups
    table = HudiTable.open(path)
    groups = table.file_groups()[:2]
    client = WriteClient(table)
    client.begin()
    for fg in groups:
        data = pa.table(
            {
                "id": [f"new-{fg.file_id}"],
                "ts": pa.array([spec.start_ms + 10], pa.int64()),
                "value": [1.0],
                "part": [fg.partition.split("=")[1]],
            }
        )
        client.append_log(fg.partition, fg.file_id, data)
    client.commit()
    table, storage = _open_counting(path)
    second = Indexer(engine, table).run()
    assert (second.blocks_added, second.log_files_scanned, second.instants_added) == (2, 2, 1)
    assert sorted(set(storage.opened)) == sorted(posixpath.join(path, s.path) for s in client.stats)
    rows = block_rows(engine, _table_id(engine, table))
    new = [r for r in rows if r["instant"] == client.instant]
    assert len(new) == 2 and all(r["min_event_time_source"] == "write_stat" for r in new)
    assert all(r["min_event_time"] == spec.start_ms + 10 for r in new)


def test_uncommitted_blocks_then_commit(engine: Engine, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_synthetic_table(
        path, SyntheticSpec(partitions=1, file_groups_per_partition=1, commits=1, blocks_per_commit=1)
    )
    table = HudiTable.open(path)
    fg = table.file_groups()[0]
    client = WriteClient(table)
    client.begin()
    data = pa.table({"id": ["late"], "ts": pa.array([5], pa.int64()), "value": [1.0], "part": ["0"]})
    client.append_log(fg.partition, fg.file_id, data)
    Indexer(engine, HudiTable.open(path)).run()
    pending = [r for r in block_rows(engine, _table_id(engine, table)) if r["instant"] == client.instant]
    assert [(r["status"], r["min_event_time"]) for r in pending] == [("uncommitted", None)]
    client.commit()
    Indexer(engine, HudiTable.open(path)).run()
    done = [r for r in block_rows(engine, _table_id(engine, table)) if r["instant"] == client.instant]
    assert [(r["status"], r["min_event_time"]) for r in done] == [("committed", 5000)]


def test_removed_files_leave_the_index(engine: Engine, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_synthetic_table(
        path, SyntheticSpec(partitions=1, file_groups_per_partition=2, commits=1, blocks_per_commit=3)
    )
    Indexer(engine, HudiTable.open(path)).run()
    victim = next(Path(path).rglob(".*.log.*"))
    victim.unlink()
    stats = Indexer(engine, HudiTable.open(path)).run()
    assert stats.log_files_removed == 1
    assert all(victim.name not in r["file"] for r in block_rows(engine, _table_id(engine, HudiTable.open(path))))


def test_header_min_event_time_wins(engine: Engine, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    write_synthetic_table(path, SyntheticSpec(commits=1, min_event_time_header=True, late_every=2))
    table = HudiTable.open(path)
    Indexer(engine, table).run()
    rows = [r for r in block_rows(engine, _table_id(engine, table)) if r["type"] == "avro_data"]
    assert rows and all(r["min_event_time_source"] == "header" for r in rows)
    expected = direct_scan(table, "ts")
    assert all(r["min_event_time"] == expected[(r["file"], r["offset"])][1] for r in rows)


@pytest.mark.parametrize("field", ["ts"])
def test_register_with_a_new_event_time_field_rescans(engine: Engine, fixture_table: Any, field: str) -> None:
    archive = next(a for a in table_zips() if a.stem == "v6_trips_8i1u")
    table = HudiTable.open(str(fixture_table(archive)))
    Indexer(engine, table).run()
    before = block_rows(engine, _table_id(engine, table))
    assert [r["min_event_time_source"] for r in before] == ["unavailable"]
    Indexer(engine, table).run(field)
    after = block_rows(engine, _table_id(engine, table))
    assert [r["min_event_time_source"] for r in after] == ["record_scan"]
    assert after[0]["min_event_time"] == json.loads("1695046462179")


def test_a_racing_indexer_reports_only_the_blocks_it_added(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two indexers scan the same files at once; the second to commit inserts nothing (its rows are the first's)
    and must say so: every block is counted once across both runs, and the store holds each block once.
    SQLite only: on PostgreSQL indexers of one table take turns (an advisory lock held for the whole run)."""
    upgrade(sqlite_url)
    engine = make_engine(sqlite_url)
    spec = SyntheticSpec(partitions=2, file_groups_per_partition=2, commits=2, blocks_per_commit=3)
    path = str(tmp_path / "t")
    write_synthetic_table(path, spec)
    racer: list[Any] = []
    real_read = read_blocks  # what `files` calls

    def read_after_a_racer(storage: Any, log_path: str, start: int = 0) -> Any:
        if not racer:  # the other indexer runs to the end between our scan and our commit
            racer.append(None)  # (its own reads go straight to the files)
            racer[0] = Indexer(engine, HudiTable.open(path)).run()
        return real_read(storage, log_path, start)

    Indexer(engine, HudiTable.open(path)).run()  # registers the table and its timeline; scans every file
    with engine.begin() as conn:  # forget the blocks and offsets: both runs below scan every file again
        conn.execute(delete(log_block_table))
        conn.execute(update(log_file_table).values(indexed_offset=0, size=0))
    monkeypatch.setattr(files, "read_blocks", read_after_a_racer)
    ours = Indexer(engine, HudiTable.open(path)).run()
    assert racer[0].blocks_added == spec.total_blocks
    assert (ours.blocks_added, ours.blocks_event_time_resolved) == (0, 0)
    rows = block_rows(engine, _table_id(engine, HudiTable.open(path)))
    assert len(rows) == len({(r["file"], r["offset"]) for r in rows}) == spec.total_blocks
    engine.dispose()


# ---- archived instants (docs/archival.md section 6) ------------------------------------------------------------


@pytest.mark.parametrize("version", [6, 9])
def test_a_write_the_store_saw_pending_then_archived_stays_completed(
    tmp_path: Path, sqlite_url: str, version: int
) -> None:
    """The store indexes a write while it is in flight; it completes, and archival moves it before the next index
    run. It stays, completed at the archive's completion time, archived; not removed as a failed write."""
    upgrade(sqlite_url)
    archive_store = make_engine(sqlite_url)
    table = write_table(tmp_path / "t", version=version, writes=2)
    fid = next(fg.file_id for fg in table.file_groups() if fg.partition == "region=eu")
    w = WriteClient(table)
    pending = w.begin()
    w.append_log("region=eu", fid, batch("eu", [1], 5_000))
    Indexer(archive_store, HudiTable.open(table.base_path)).run()
    known = {i.requested_time for i in HudiTable.open(table.base_path).timeline.instants}
    w.commit()
    for k in range(4):
        w = WriteClient(table)
        w.begin()
        w.append_log("region=eu", fid, batch("eu", [k], 6_000 + k))
        w.commit()
    report = archive_timeline(HudiTable.open(table.base_path), dry_run=False, settings=ArchivalSettings(2, 3))
    assert pending in {i.instant for i in report.archived}
    after = HudiTable.open(table.base_path)
    stats = Indexer(archive_store, after).run()
    table_id = table_id_of(archive_store, after.uri)
    assert table_id is not None
    it = instant_table
    with archive_store.connect() as conn:
        rows = conn.execute(select(it.c.requested_time, it.c.state, it.c.completion_time, it.c.summary)).all()
    got = {r[0]: (r[1], r[2], bool(json.loads(r[3]).get("archived"))) for r in rows}
    completion = after.archived[pending][0] if version == 9 else None  # layout 1 names no completion time
    assert got[pending] == ("completed", completion, True)
    moved = {i.instant for i in report.archived}
    assert {t for t, (_, _, archived) in got.items() if archived} == known & moved  # the unseen are not added
    assert vars(stats)["instants_archived"] == len(known & moved) == 3 and stats.instants_removed == 0
    archive_store.dispose()
