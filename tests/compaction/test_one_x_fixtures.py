"""Every table service on the Java-written 1.x MOR tables: with the metadata table off (issue 27),
`v9_txns_simple_nometa` (partitioned by region, a clustering and a Java compaction on its timeline) and
`v9_txns_nonpart_nometa` (not partitioned); with it on (issue 28), `v9_txns_simple_meta`, `v9_txns_nonpart_meta`
(files, column_stats, partition_stats, record_index and two secondary indexes) and `v8_trips_8i3u1d` (a version 8
table with the same partitions and one secondary index). Event time: `txn_ts` (epoch ms, the txns tables' ordering
field), `ts` on the trips table.

The rules checked after every step come from the design, not from the code: no step changes what a snapshot or
a time-travel read returns (each compared with the reads before any step; hudi-meta's writer adds late and fresh
data first, so that the compactions have log files on both sides of T); hudi-rs reads snapshot and
read-optimized exactly as hudi-meta does (through the metadata table where there is one, whose `files` partition
lists exactly the committed files on storage); `check` finds nothing; after an event-time compaction the freshness the
index computes keeps the promise (every key whose current version has an event time below the watermark has that
version in the read-optimized view), and its threshold is the compaction's T.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from sqlalchemy import Engine

from hudi_meta.check.files import check_files
from hudi_meta.clean.run import run_clean
from hudi_meta.compaction.admin import validate
from hudi_meta.compaction.rollback import rollback_compaction
from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.errors import CleanedDataError
from hudi_meta.format.block_content import DeleteRecord
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.format.links import LinkMode
from hudi_meta.index.freshness_inputs import indexed_freshness
from hudi_meta.index.registry import register_table
from hudi_meta.metadata.compaction import compact_if_necessary
from hudi_meta.metadata.records import RECORD_INDEX, SECONDARY_INDEX_PREFIX, secondary_index_records
from hudi_meta.metadata.sync import write_client
from hudi_meta.table.metadata_table import read_files_partition
from hudi_meta.table.table import HudiTable, Query
from hudi_meta.timeline.instant import Action
from hudi_meta.write.archival import archive_timeline
from hudi_meta.write.clean_plan import KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, CleanPolicy
from hudi_meta.write.lock import table_lock
from tests.conftest import table_zips
from tests.hudi_rs import rs_read_table
from tests.metadata.helpers import expected_listing, mdt_partition, record_index_file_id

EVENT_TIME = "txn_ts"
META_TABLES = {"v9_txns_simple_meta": "txn_ts", "v9_txns_nonpart_meta": "txn_ts", "v8_trips_8i3u1d": "ts"}
META = ("_hoodie_commit_seqno", "_hoodie_file_name")  # say where a record sits: a compaction moves it
Rows = list[tuple[Any, ...]]


def rows(table: pa.Table) -> Rows:
    cols = sorted(c for c in table.column_names if c not in META and c != "_hoodie_operation")
    return sorted(tuple(repr(r[c]) for c in cols) for r in table.select(cols).to_pylist())


def file_id_of(file_name: str) -> str:
    """The file id a record's `_hoodie_file_name` names (Java 1.x writes the bare file id in log records)."""
    parsed = BaseFileName.try_parse(file_name) or LogFileName.try_parse(file_name)
    return parsed.file_id if parsed is not None else file_name


def rs_rows(path: Path, query: str) -> Rows:
    """hudi-rs's read; it lists through the metadata table when the table has one."""
    read = rs_read_table(str(path), query)
    return rows(read) if read.num_columns else []


class JavaTable:
    """A copy of the fixture, the reads before any step, and the checks after each."""

    def __init__(self, path: Path, engine: Engine, event_time: str = EVENT_TIME) -> None:
        self.path = path
        self.engine = engine
        self.event_time = event_time
        register_table(engine, self.table, event_time)
        self.java_instants = {i.requested_time for i in self.table.timeline.instants}
        defs_path = path / ".hoodie" / ".index_defs" / "index.json"
        defs = json.loads(defs_path.read_text())["indexDefinitions"] if defs_path.exists() else {}
        self.secondary = {name: d["sourceFields"][0] for name, d in defs.items() if name.startswith("secondary_index_")}
        self.travel: dict[str, Rows] = {}
        self.reads_before()
        self.cleaned_before: str | None = None  # reads as of an instant before this may be refused after a clean

    def reads_before(self) -> None:
        """What every later step must keep: the snapshot, and time travel as of each completed write."""
        table = self.table
        self.snapshot = rows(table.read("snapshot"))
        assert self.snapshot == rs_rows(self.path, "snapshot")
        for i in table.timeline.completed():
            if i.requested_time not in self.travel:
                self.travel[i.requested_time] = rows(table.read(Query("time-travel", as_of=i.requested_time)))

    def update(self, count: int, event_time_ms: int) -> str:
        """hudi-meta's writer updates `count` records of the Java table (each in the file group that holds it), their
        event time set to `event_time_ms`; the delta commit."""
        table = self.table
        current = table.read("snapshot")
        data_columns = [c for c in current.column_names if not c.startswith("_hoodie_")]
        w = write_client(table)
        w.begin()
        for r in current.to_pylist()[:count]:
            file_id = file_id_of(r["_hoodie_file_name"])
            row = {c: r[c] for c in data_columns} | {self.event_time: event_time_ms}
            data = pa.Table.from_pylist([row], schema=current.select(data_columns).schema)
            w.append_log(r["_hoodie_partition_path"], file_id, data)
        w.commit()
        self.reads_before()
        return w.instant

    def change_keys(self) -> str:
        """hudi-meta's writer inserts a record under a new key, deletes one, and changes one record's first indexed
        secondary column (a string one) in the file groups that hold them: the write that moves the record index and
        the secondary indexes. The delta commit."""
        table = self.table
        current = table.read("snapshot").to_pylist()
        data_columns = [c for c in current[0] if not c.startswith("_hoodie_")]
        key_field = table.config.record_key_fields[0]
        text_columns = [c for c in self.secondary.values() if isinstance(current[2][c], str)]
        w = write_client(table)
        w.begin()
        for n, r in enumerate(current[:3]):
            file_id = file_id_of(r["_hoodie_file_name"])
            row = {c: r[c] for c in data_columns}
            if n == 1:
                w.append_log(r["_hoodie_partition_path"], file_id, deletes=[DeleteRecord(r[key_field], None)])
                continue
            if n == 0:
                row[key_field] = f"{r[key_field]}-new"
            elif text_columns:
                row[text_columns[0]] = f"{r[text_columns[0]]}-changed"
            data = pa.Table.from_pylist([row], schema=pa.table({c: [r[c]] for c in data_columns}).schema)
            w.append_log(r["_hoodie_partition_path"], file_id, data.cast(self.data_schema(table)))
        w.commit()
        self.reads_before()
        return w.instant

    def data_schema(self, table: HudiTable) -> pa.Schema:
        current = table.read("snapshot")
        return current.select([c for c in current.column_names if not c.startswith("_hoodie_")]).schema

    @property
    def table(self) -> HudiTable:
        return HudiTable.open(str(self.path))

    def event_times(self) -> list[int]:
        return sorted(int(t) for t in self.table.read("snapshot").column(self.event_time).to_pylist())

    def check(self, threshold_ms: int | None = None) -> None:
        table = self.table
        assert rows(table.read("snapshot")) == self.snapshot == rs_rows(self.path, "snapshot")
        ro = table.read("ro")
        assert rows(ro) == rs_rows(self.path, "ro")
        for instant, expected in self.travel.items():
            try:
                assert rows(table.read(Query("time-travel", as_of=instant))) == expected, instant
            except CleanedDataError:
                assert self.cleaned_before is not None and instant < self.cleaned_before, instant
        assert not check_files(table), check_files(table)
        if table.config.metadata_partitions:
            self.check_metadata_table(table)
        f = indexed_freshness(self.engine, table, 0)
        if threshold_ms is not None:
            assert f.threshold_ms == threshold_ms
        if f.watermark_ms is not None:
            in_ro = {r["_hoodie_record_key"]: r for r in ro.to_pylist()}
            for r in table.read("snapshot").to_pylist():
                if r[self.event_time] < f.watermark_ms:
                    got = in_ro.get(r["_hoodie_record_key"])
                    assert got is not None and got[self.event_time] == r[self.event_time], (r["_hoodie_record_key"], f)

    def check_metadata_table(self, table: HudiTable) -> None:
        """The metadata table lists what storage holds, has a deltacommit for every instant hudi-meta completed
        (a 1.x rollback takes its target's back instead), and its record index and secondary indexes hold exactly
        the snapshot's keys, locations and values."""
        listing = read_files_partition(table)
        assert {p: dict(f) for p, f in listing.files.items() if f} == expected_listing(table)
        mdt = HudiTable.open(str(self.path / ".hoodie" / "metadata"))
        ours = [i for i in table.timeline.completed() if i.requested_time not in self.java_instants]
        for i in ours:
            if i.action != Action.ROLLBACK:
                assert mdt.timeline.is_completed(i.requested_time), i
        snapshot = table.read("snapshot")
        keys = snapshot.column("_hoodie_record_key").to_pylist()
        if RECORD_INDEX in table.config.metadata_partitions:
            located = {
                k: (p, file_id_of(f))
                for k, p, f in zip(
                    keys,
                    snapshot.column("_hoodie_partition_path").to_pylist(),
                    snapshot.column("_hoodie_file_name").to_pylist(),
                    strict=True,
                )
            }
            index = mdt_partition(table, RECORD_INDEX)
            got = {
                k: (v["recordIndexMetadata"]["partitionName"], record_index_file_id(v["recordIndexMetadata"]))
                for k, v in index.items()
            }
            assert got == located
        for partition in (p for p in table.config.metadata_partitions if p.startswith(SECONDARY_INDEX_PREFIX)):
            column = self.secondary[partition]
            values = dict(zip(keys, snapshot.column(column).to_pylist(), strict=True))
            expected = {r.key for r in secondary_index_records(partition, {}, values)}
            assert set(mdt_partition(table, partition)) == expected, partition

    def schedule(self, threshold_ms: int, mode: LinkMode = LinkMode.SYMLINK, exact: bool = False) -> str:
        result = schedule_compaction(
            self.engine, self.table, ScheduleRequest(threshold_ms=threshold_ms, mode=mode, exact=exact)
        )
        assert result.instant is not None, result.reason
        assert [v.ok for v in validate(self.table, result.instant)] == [True]
        return result.instant


@pytest.fixture(params=["v9_txns_simple_nometa", "v9_txns_nonpart_nometa", *META_TABLES])
def java_table(request: pytest.FixtureRequest, fixture_table: Callable[[Path], Path], tmp_path: Path) -> JavaTable:
    archive = next(a for a in table_zips() if a.stem == request.param and "/mor/" in str(a))
    path = Path(shutil.copytree(fixture_table(archive), tmp_path / "t", symlinks=True))
    return JavaTable(path, request.getfixturevalue("engine"), META_TABLES.get(request.param, EVENT_TIME))


def test_every_table_service_on_a_java_written_version_9_table(java_table: JavaTable) -> None:
    t = java_table
    times = t.event_times()
    low, high = times[-1] + 1, times[-1] + 3_600_000
    t.update(2, times[0] - 60_000)  # late data: below every event time the table holds
    t.change_keys()  # a new key, a deleted one, a changed secondary value
    t.check()
    t.update(3, high - 1)  # fresh data: after the first T, before the second

    # an event-time compaction (the fresh write's files kept as links), then an exact one (copies) at a later T
    first = t.schedule(low)
    assert t.table.compaction_plan(first).operations[0].symlink_operations
    run_compaction(t.table, first)
    t.check(threshold_ms=low)
    t.update(1, high + 1)  # after the second T: the exact compaction keeps it out of RO
    second = t.schedule(high, LinkMode.COPY, exact=True)
    run_compaction(t.table, second)
    t.check(threshold_ms=high)

    # a plan taken back before it ran: nothing changes, and it is scheduled and run again
    third = t.schedule(high + 2)
    report = unschedule_compaction(t.table, third, dry_run=False)
    assert all(a.done for a in report.actions) and t.table.timeline.instant(third) is None
    t.check(threshold_ms=high)
    third = t.schedule(high + 2)
    run_compaction(t.table, third)
    t.check(threshold_ms=high + 2)

    # the newest completed compaction rolled back: the table reads as before it, and the freshness goes back
    rolled = rollback_compaction(t.table, third, completed=True, dry_run=False)
    assert all(a.done for a in rolled.actions) and t.table.timeline.instant(third) is None
    t.check(threshold_ms=high)

    # clean by commits, then by file versions: every read is kept, links keep their targets
    deleted = 0
    for policy in (
        CleanPolicy(KEEP_LATEST_COMMITS, commits_retained=2),
        CleanPolicy(KEEP_LATEST_FILE_VERSIONS, file_versions_retained=1),
    ):
        outcome = run_clean(t.engine, t.table, policy, dry_run=False)
        if outcome.instant is None or outcome.plan is None:
            assert outcome.note == "nothing to clean", outcome.note
            continue
        assert all(r.done and r.error is None for r in outcome.reports)
        deleted += outcome.deleted
        retain = outcome.plan.earliest_commit_to_retain
        if policy.name == KEEP_LATEST_COMMITS and retain is not None:  # reads as of it or later are promised
            t.cleaned_before = max(t.cleaned_before or "", retain.time)
        else:  # file versions: no read as of an older instant is promised any more
            t.cleaned_before = max(i.requested_time for i in t.table.timeline.completed())
        t.check(threshold_ms=high)
    assert deleted and not [p for p in t.path.rglob("*") if p.is_symlink() and not p.exists()]

    # archival plans on it as Java would (dry run: the fixtures' timelines are shorter than Java's limits)
    assert archive_timeline(t.table).archived == []
    if t.table.config.metadata_partitions:  # the MDT compacted by hudi-meta, every partition: it reads the same
        with table_lock(t.table.storage, t.table.meta_path, t.table.config.props, "test"):
            compacted = compact_if_necessary(t.table, max_delta_commits=1)
        assert compacted is not None
        mdt = HudiTable.open(str(t.path / ".hoodie" / "metadata"))
        done = mdt.timeline.instant(compacted.instant)
        assert done is not None and done.is_completed
        written = mdt.timeline.commit_metadata(done).partition_to_write_stats
        assert set(written) == set(t.table.config.metadata_partitions), written
        t.check(threshold_ms=high)
