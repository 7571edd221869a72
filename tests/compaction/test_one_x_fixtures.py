"""Every table service on the Java-written version 9 tables with the metadata table off (issue 27): the MOR
fixtures `v9_txns_simple_nometa` (partitioned by region, a clustering and a Java compaction on its timeline) and
`v9_txns_nonpart_nometa` (not partitioned). Event time: `txn_ts` (epoch ms, the tables' ordering field).

The rules checked after every step come from the design, not from the code: no step changes what a snapshot or
a time-travel read returns (each compared with the reads before any step; hudi-meta's writer adds late and fresh
data first, so that the compactions have log files on both sides of T); hudi-rs reads snapshot and
read-optimized exactly as hudi-meta does; `check` finds nothing; after an event-time compaction the freshness the
index computes keeps the promise (every key whose current version has an event time below the watermark has that
version in the read-optimized view), and its threshold is the compaction's T.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hudi import HudiReadOptions
from hudi import HudiTable as RsTable
from sqlalchemy import Engine

from hudi_meta.check.files import check_files
from hudi_meta.clean.plan import KEEP_LATEST_COMMITS, KEEP_LATEST_FILE_VERSIONS, CleanPolicy
from hudi_meta.clean.run import run_clean
from hudi_meta.compaction.admin import validate
from hudi_meta.compaction.rollback import rollback_compaction
from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.errors import CleanedDataError
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.format.links import LinkMode
from hudi_meta.index.freshness_inputs import indexed_freshness
from hudi_meta.index.registry import register_table
from hudi_meta.table.archival import archive_timeline
from hudi_meta.table.table import HudiTable, Query
from hudi_meta.table.writer import WriteClient
from tests.conftest import table_zips

EVENT_TIME = "txn_ts"
META = ("_hoodie_commit_seqno", "_hoodie_file_name")  # say where a record sits: a compaction moves it
Rows = list[tuple[Any, ...]]


def rows(table: pa.Table) -> Rows:
    cols = sorted(c for c in table.column_names if c not in META and c != "_hoodie_operation")
    return sorted(tuple(repr(r[c]) for c in cols) for r in table.select(cols).to_pylist())


def rs_rows(path: Path, query: str) -> Rows:
    options = {"hoodie.read.use.read_optimized.mode": "true"} if query == "ro" else {}
    batches = list(RsTable(str(path)).read(HudiReadOptions(hudi_options=options)))
    return rows(pa.Table.from_batches(batches)) if batches else []


class JavaTable:
    """A copy of the fixture, the reads before any step, and the checks after each."""

    def __init__(self, path: Path, engine: Engine) -> None:
        self.path = path
        self.engine = engine
        register_table(engine, self.table, EVENT_TIME)
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
        w = WriteClient(table)
        w.begin()
        for r in current.to_pylist()[:count]:
            file_id = (
                BaseFileName.parse(r["_hoodie_file_name"]).file_id
                if ".parquet" in r["_hoodie_file_name"]
                else (LogFileName.parse(r["_hoodie_file_name"]).file_id)
            )
            row = {c: r[c] for c in data_columns} | {EVENT_TIME: event_time_ms}
            data = pa.Table.from_pylist([row], schema=current.select(data_columns).schema)
            w.append_log(r["_hoodie_partition_path"], file_id, data)
        w.commit()
        self.reads_before()
        return w.instant

    @property
    def table(self) -> HudiTable:
        return HudiTable.open(str(self.path))

    def event_times(self) -> list[int]:
        return sorted(int(t) for t in self.table.read("snapshot").column(EVENT_TIME).to_pylist())

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
        f = indexed_freshness(self.engine, table, 0)
        if threshold_ms is not None:
            assert f.threshold_ms == threshold_ms
        if f.watermark_ms is not None:
            in_ro = {r["_hoodie_record_key"]: r for r in ro.to_pylist()}
            for r in table.read("snapshot").to_pylist():
                if r[EVENT_TIME] < f.watermark_ms:
                    got = in_ro.get(r["_hoodie_record_key"])
                    assert got is not None and got[EVENT_TIME] == r[EVENT_TIME], (r["_hoodie_record_key"], f)

    def schedule(self, threshold_ms: int, mode: LinkMode = LinkMode.SYMLINK, exact: bool = False) -> str:
        result = schedule_compaction(
            self.engine, self.table, ScheduleRequest(threshold_ms=threshold_ms, mode=mode, exact=exact)
        )
        assert result.instant is not None, result.reason
        assert [v.ok for v in validate(self.table, result.instant)] == [True]
        return result.instant


@pytest.fixture(params=["v9_txns_simple_nometa", "v9_txns_nonpart_nometa"])
def java_table(request: pytest.FixtureRequest, fixture_table: Callable[[Path], Path], tmp_path: Path) -> JavaTable:
    archive = next(a for a in table_zips() if a.stem == request.param and "/mor/" in str(a))
    path = Path(shutil.copytree(fixture_table(archive), tmp_path / "t", symlinks=True))
    return JavaTable(path, request.getfixturevalue("engine"))


def test_every_table_service_on_a_java_written_version_9_table(java_table: JavaTable) -> None:
    t = java_table
    times = t.event_times()
    low, high = times[-1] + 1, times[-1] + 3_600_000
    t.update(2, times[0] - 60_000)  # late data: below every event time the table holds
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
