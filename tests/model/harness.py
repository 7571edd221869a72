"""The table under test and its checks: writes routed to bucket file groups with the core writer, compactions
scheduled from a SQLite store, and every read compared with `model.TableModel`.

Used by the randomized state machine (`test_model.py`) and by the plain regression tests, so a shrunk
sequence replays as ordinary calls.
"""

from __future__ import annotations

import datetime as dt
import os
import posixpath
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
from sqlalchemy import Engine

from hudi_meta.check.files import PLAN_ORDER_BROKEN, PLAN_SLICE_CHANGED, UNCOMMITTED_LINK, check_files
from hudi_meta.clean.run import check_cleanable, run_clean
from hudi_meta.compaction.rollback import rollback_compaction
from hudi_meta.compaction.run import run_compaction, set_crash_hook
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.unschedule import unschedule_compaction
from hudi_meta.errors import CleanedDataError, HudiMetaError, PlanTakenBackError, WriteConflictError
from hudi_meta.file_group.fs_view import latest_slice_for_snapshot
from hudi_meta.format.block_content import DeleteRecord
from hudi_meta.format.file_names import UNKNOWN_WRITE_TOKEN, LogFileName, log_file_name
from hudi_meta.format.links import CARRY_LOG_VERSION, EXACT_RESULT_KEY, THRESHOLD_KEY, THRESHOLD_PARAM, LinkMode
from hudi_meta.format.log_block import BlockType
from hudi_meta.format.log_reader import read_blocks
from hudi_meta.format.table_service_metadata import CompactionPlan
from hudi_meta.freshness import freshness
from hudi_meta.index.db import make_engine
from hudi_meta.index.fingerprint import index_fingerprint
from hudi_meta.index.freshness_inputs import base_file_instants, completed_compactions, pending_blocks
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.instants import archived_not_marked, stored_instants
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.registry import table_id_of
from hudi_meta.metadata.compaction import compact_if_necessary
from hudi_meta.metadata.crash import set_crash_hook as set_mdt_crash_hook
from hudi_meta.metadata.init import create_metadata_table
from hudi_meta.metadata.integrity import MetadataTableDamagedError, metadata_damage
from hudi_meta.metadata.rollback import open_mdt
from hudi_meta.metadata.sync import rollback_hook, write_client
from hudi_meta.sync.hive_schema import Layout, sync_definitions
from hudi_meta.sync.hive_sync import sync_table, table_schema
from hudi_meta.sync.properties import COMPACTION_INSTANT, THRESHOLD_MS, WATERMARK_MS
from hudi_meta.table.bucket_index import bucket_id, new_bucket_file_id
from hudi_meta.table.metadata_table import read_files_partition
from hudi_meta.table.table import HudiTable, Query
from hudi_meta.timeline.archival_plan import ArchivalSettings
from hudi_meta.timeline.instant import WRITE_ACTIONS, Action
from hudi_meta.write.archival import archive_timeline
from hudi_meta.write.clean_plan import (
    KEEP_LATEST_BY_HOURS,
    KEEP_LATEST_COMMITS,
    KEEP_LATEST_FILE_VERSIONS,
    CleanPolicy,
    Policy,
)
from hudi_meta.write.failed_writes import rollback_failed_write, rollback_failed_writes
from hudi_meta.write.lock import table_lock
from hudi_meta.write.markers import APPEND, create_marker
from hudi_meta.write.write_targets import FileGroupTarget
from hudi_meta.write.writer import COMMIT_TIME_MERGE_STRATEGY as COMMIT_TIME
from hudi_meta.write.writer import EVENT_TIME_MERGE_STRATEGY as EVENT_TIME
from hudi_meta.write.writer import WriteClient, append_to_file_group, create_table
from tests.compaction.core import foreign_commit, move_to_archived
from tests.crashes import Crash, crash_at
from tests.hudi_rs import rs_read_table
from tests.index.summary_model import summary_drift
from tests.metadata.helpers import digest, expected_listing, file_digests
from tests.model.model import (
    COMMIT_TIME_ORDERING,
    DEFAULT_PAYLOAD,
    EVENT_TIME_ORDERING,
    OVERWRITE_PAYLOAD,
    FileGroupModel,
    TableModel,
    Version,
    at,
    instant_ms,
    rows,
)
from tests.sync.memory_catalog import MemoryCatalog

PARTITIONS = ("part=p0", "part=p1")
BUCKETS = 2
KEYS = tuple(f"k{i:02d}" for i in range(24))
# long enough that a loaded machine never lets a live writer's heartbeat expire (dead writes are rolled back with force)
HEARTBEAT_PROPS = {"hoodie.client.heartbeat.interval_in_ms": "5000", "hoodie.client.heartbeat.tolerable.misses": "4"}
Row = tuple[str, str, str, int | None, float | None]


def partition_of(key: str) -> str:
    return PARTITIONS[int(key[1:]) % len(PARTITIONS)]


def bucket_of(key: str) -> int:
    return bucket_id(key, BUCKETS, ("id",))


@dataclass(frozen=True)
class Op:
    """One record of a write: an upsert (seconds after T0, amount) or a delete (ordering seconds or None)."""

    key: str
    seconds: int | None
    amount: float | None  # None: delete


_TEMPLATE: dict[str, str] = {}


def store_template() -> str:
    """A migrated SQLite store file, made once per process and copied per table (Alembic takes ~1 s)."""
    if "path" not in _TEMPLATE:
        directory = tempfile.mkdtemp(prefix="hudi-meta-model-store-")
        path = os.path.join(directory, "template.db")
        upgrade(f"sqlite:///{path}")
        _TEMPLATE["path"] = path
    return _TEMPLATE["path"]


def new_engine(directory: str, name: str) -> Engine:
    path = os.path.join(directory, name)
    shutil.copy(store_template(), path)
    return make_engine(f"sqlite:///{path}")


def read_rows(table: pa.Table) -> set[Row]:
    if not table.num_columns:
        return set()
    cols = ["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_commit_time", "ts", "amount"]
    return {
        (r["_hoodie_record_key"], r["_hoodie_partition_path"], r["_hoodie_commit_time"], r["ts"], r["amount"])
        for r in table.select(cols).to_pylist()
    }


def hudi_rs_rows(path: str, query: str) -> set[Row]:
    read = rs_read_table(path, query)  # through the metadata table when the table has one
    return read_rows(read) if read.num_columns else set()


@dataclass
class PendingPlan:
    instant: str
    requested_threshold: int
    mode: str
    exact: bool
    plan: CompactionPlan
    crashed: bool = False
    foreign: bool = False  # a writer that does not know the plan wrote into its slices (the run takes it back)


# The metadata table's own services every few commits (docs/metadata-table.md 6.5, 6.6), so sequences reach its
# compaction, clean and archival: compaction after 3 deltacommits, clean retaining 3 commits, archival down to 5
# (the data table's keep.min.commits 4, plus one) once more than 7, bounded by the data table's timeline.
FOREIGN_WRITE_TOKEN = "0-77-777"  # a write token of another writer's (Java's are <partition>-<stage>-<attempt>)
MDT_SERVICE_PROPS = {
    "hoodie.metadata.compact.max.delta.commits": "3",
    "hoodie.metadata.cleaner.commits.retained": "3",
    "hoodie.clean.commits.retained": "2",
    "hoodie.keep.min.commits": "4",
    "hoodie.keep.max.commits": "6",
}


@dataclass
class ModelTable:
    """A MOR table (version 6, 8 or 9) with 2 partitions x 2 buckets, written by the core writer, and its model."""

    root: str
    payload: str = DEFAULT_PAYLOAD
    model: TableModel = field(init=False)
    open_writers: dict[str, WriteClient] = field(default_factory=dict)  # live writers, not yet committed
    failed: list[str] = field(default_factory=list)  # abandoned writes, not yet rolled back
    pending: PendingPlan | None = None
    stale: tuple[WriteClient, list[Op], str] | None = None  # a writer that planned its files, not yet begun
    last_event_time_compaction: tuple[str, int, bool] | None = None  # (instant, T, exact)
    event_time_compactions: list[tuple[str, int, bool]] = field(default_factory=list)  # completed, oldest first
    # reads as of an earlier instant may be refused as cleaned, reads as of it or later must work: the newest
    # instant at a file-versions clean, the earliest commit to retain of a commits or hours clean
    reads_may_be_cleaned_before: str | None = None
    cleans: list[str] = field(default_factory=list)  # completed clean instants
    link_bytes: dict[str, bytes] = field(default_factory=dict)  # link or target path -> bytes when linked
    links: dict[str, str] = field(default_factory=dict)  # link path -> target path
    log: list[str] = field(default_factory=list)  # what happened, for failure messages
    archived: bool = False  # whether any instant left the active timeline
    runner: Callable[[HudiTable, str], object] = run_compaction  # executes a plan (locally, or on Spark)
    # False: hoodie.properties names no event-time field; the index is given it (`index --event-time-field ts`)
    field_in_properties: bool = True
    version: int = 6  # the Hudi table version (6: timeline layout 1; 8 and 9: Hudi 1.x, layout 2)
    metadata_table: bool = False  # the table has Hudi's metadata table (files partition), kept by every step

    def __post_init__(self) -> None:
        self.model = TableModel(self._merge_rule())
        self.path = os.path.join(self.root, "t")
        create_table(
            self.path,
            "model",
            ["id"],
            "ts",
            ["part"],
            event_time_field="ts" if self.field_in_properties else None,
            buckets=BUCKETS,
            extra_props={
                "hoodie.compaction.payload.class": self.payload,
                **HEARTBEAT_PROPS,
                **self._merge_props(),
                **(MDT_SERVICE_PROPS if self.metadata_table else {}),
            },
            version=self.version,
        )
        if self.metadata_table:
            create_metadata_table(self.table)
        self.engine = new_engine(self.root, "store.db")
        if not self.field_in_properties:
            Indexer(self.engine, self.table).run("ts")
        self.file_ids: dict[tuple[str, int], str] = {}
        self.catalog = MemoryCatalog()

    def _merge_rule(self) -> str:
        """What the model merges by: the payload class on version 6, the merge mode it stands for on 8 and 9."""
        if self.version < 8:
            return self.payload
        return COMMIT_TIME_ORDERING if self.payload == OVERWRITE_PAYLOAD else EVENT_TIME_ORDERING

    def _merge_props(self) -> dict[str, str]:
        """On versions 8 and 9 the merge mode the payload stands for (Java's 1.x upgrade maps them the same way)."""
        if self.version < 8:
            return {}
        if self.payload == OVERWRITE_PAYLOAD:
            return {"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING", "hoodie.record.merge.strategy.id": COMMIT_TIME}
        return {"hoodie.record.merge.mode": "EVENT_TIME_ORDERING", "hoodie.record.merge.strategy.id": EVENT_TIME}

    def close(self) -> None:
        for w in self.open_writers.values():
            w.close()
        if self.stale is not None:
            self.stale[0].close()
        self.engine.dispose()

    @property
    def table(self) -> HudiTable:
        return HudiTable.open(self.path)

    # ---- writes ---------------------------------------------------------------------------------------

    def bootstrap(self, ops: Sequence[Op]) -> str:
        """The first write: a base file for every (partition, bucket)."""
        w = write_client(self.table)
        with w:
            w.begin()
            for (partition, bucket), group in sorted(self._route(ops).items()):
                file_id = new_bucket_file_id(bucket)
                self.file_ids[(partition, bucket)] = file_id
                upserts = [o for o in group if o.amount is not None]
                w.write_base_file(partition, self._data(upserts, partition))
                w.stats[-1] = w.stats[-1]  # keep
                versions = [self._version(o, partition, w.instant) for o in upserts]
                fid = w.stats[-1].file_id
                self.file_ids[(partition, bucket)] = fid
                self.model.create_group(partition, fid, w.instant, versions)
            w.commit()
        self.model.commit(w.instant)
        self.log.append(f"bootstrap {w.instant} {list(ops)}")
        return w.instant

    def _route(self, ops: Iterable[Op]) -> dict[tuple[str, int], list[Op]]:
        out: dict[tuple[str, int], list[Op]] = {}
        for o in ops:
            out.setdefault((partition_of(o.key), bucket_of(o.key)), []).append(o)
        return out

    def _data(self, upserts: Sequence[Op], partition: str) -> pa.Table:
        return pa.table(
            {
                "id": pa.array([o.key for o in upserts], pa.string()),
                "ts": pa.array([at(o.seconds or 0) for o in upserts], pa.int64()),
                "part": pa.array([partition.split("=")[1]] * len(upserts), pa.string()),
                "amount": pa.array([o.amount for o in upserts], pa.float64()),
            }
        )

    @staticmethod
    def _version(o: Op, partition: str, instant: str) -> Version:
        ordering = at(o.seconds) if o.seconds is not None else None
        return Version(o.key, partition, instant, ordering, o.amount)

    def begin(self) -> WriteClient:
        w = write_client(self.table)
        w.begin()
        return w

    def append(self, w: WriteClient, ops: Sequence[Op], block_format: str) -> None:
        """One log file per file group the write touches (a data block and/or a delete block)."""
        for (partition, bucket), group in sorted(self._route(ops).items()):
            file_id = self.file_ids[(partition, bucket)]
            upserts = [o for o in group if o.amount is not None]
            deletes = [
                DeleteRecord(o.key, partition, at(o.seconds) if o.seconds is not None else None)
                for o in group
                if o.amount is None
            ]
            stat = w.append_log(
                partition, file_id, self._data(upserts, partition) if upserts else None, deletes, block_format
            )
            versions = [self._version(o, partition, w.instant) for o in upserts] + [
                self._version(o, partition, w.instant) for o in group if o.amount is None
            ]
            self.model.append(partition, file_id, w.instant, posixpath.basename(stat.path), versions)

    def write(self, ops: Sequence[Op], block_format: str = "avro") -> str:
        with self.begin() as w:
            self.append(w, ops, block_format)
            w.commit()
        self.model.commit(w.instant)
        self.log.append(f"write {w.instant} {block_format} {list(ops)}")
        return w.instant

    def open_writer(self, ops: Sequence[Op], block_format: str = "avro") -> str:
        """A second writer: begins and writes now, commits in a later step."""
        w = self.begin()
        self.append(w, ops, block_format)
        self.open_writers[w.instant] = w
        self.log.append(f"open writer {w.instant} {block_format} {list(ops)}")
        return w.instant

    def commit_open_writer(self, instant: str) -> None:
        w = self.open_writers.pop(instant)
        with w:
            w.commit()
        self.model.commit(instant)
        self.log.append(f"commit open writer {instant}")

    def failed_write(self, ops: Sequence[Op], block_format: str = "avro", unwritten_file: bool = False) -> str:
        """A write that dies before its commit (its heartbeat is left to expire); with `unwritten_file` it dies
        right after marking one more log file, before that file's first byte."""
        with self.begin() as w:
            self.append(w, ops, block_format)
            if unwritten_file:
                (partition, _), file_id = min(self.file_ids.items())
                name = log_file_name(file_id, w.instant, 99, "0-0-0")
                create_marker(self.table.storage, self.table.meta_path, w.instant, partition, name, APPEND)
        self.failed.append(w.instant)
        self.log.append(f"failed write {w.instant} {block_format} unwritten_file={unwritten_file} {list(ops)}")
        return w.instant

    def open_stale_writer(self, ops: Sequence[Op], block_format: str = "avro") -> None:
        """A writer that opens the table and plans its files now, then begins, writes and commits in a later step
        (issue 25, defect 3): a plan written in between took its slices, and its commit rolls it back."""
        w = write_client(self.table)
        w.targets()
        self.stale = (w, list(ops), block_format)
        self.log.append(f"stale writer planned {block_format} {list(ops)}")

    def stale_writer_commits(self) -> None:
        assert self.stale is not None
        w, ops, block_format = self.stale
        self.stale = None
        with w:
            w.begin()
            self.append(w, ops, block_format)
            try:
                w.commit()
            except WriteConflictError as conflict:
                self.model.roll_back(w.instant)  # rolled back by the writer itself: none of it is in the table
                self.log.append(f"stale writer {w.instant}: {conflict}")
                return
        self.model.commit(w.instant)
        self.log.append(f"stale writer {w.instant}: committed")

    def foreign_write(self, ops: Sequence[Op], into_compacted_slice: bool) -> None:
        """A write by a writer that does not know the pending plan (Java or Flink without a shared lock), into the
        file groups the plan compacts. Version 6: a log file in the slice the plan compacts, or one in the plan's
        slice named as Java names the first file there (version 1, token 1-0-1: the carry log's name), before the
        links; the run must take the plan back. Versions 8 and 9 (non-blocking concurrency control): its files are
        named by its own delta commit and, completing after the plan, join the plan's slice (docs/hudi-1x.md
        section 4); requested 1 ms before the plan (`into_compacted_slice`) they sort before the links and the run
        must take the plan back, requested after it they sort after them and the run keeps them."""
        assert self.pending is not None
        one_x = self.version >= 8
        planned = {(op.partition_path, op.file_id): op.base_instant_time for op in self.pending.plan.operations}
        if one_x and into_compacted_slice:
            requested = _just_before(self.pending.instant)
            if requested in {i.requested_time for i in self.table.timeline.instants}:
                self.log.append(f"foreign write before {self.pending.instant}: no free instant time, not tried")
                return
            w = write_client(self.table, instant=requested)
            w.begin()
        else:
            w = self.begin()
        for (partition, bucket), group in sorted(self._route(ops).items()):
            file_id = self.file_ids[(partition, bucket)]
            upserts = [o for o in group if o.amount is not None]
            if (partition, file_id) not in planned or not upserts:
                continue
            data = self._data(upserts, partition)
            if one_x:
                stat = w.append_log(partition, file_id, data)
            else:
                target = self._foreign_target_v6(
                    partition, file_id, planned[(partition, file_id)], into_compacted_slice
                )
                stat = append_to_file_group(w.context, target, data)
                w.stats.append(stat)
            versions = [self._version(o, partition, w.instant) for o in upserts]
            self.model.append(partition, file_id, w.instant, posixpath.basename(stat.path), versions)
            self._place_in_log_order(self.model.groups[(partition, file_id)])
        foreign_commit(w)
        self.model.commit(w.instant)
        if into_compacted_slice or not one_x:
            self.pending.foreign = self.pending.foreign or bool(w.stats)
        if one_x:
            where = "requested before the plan" if into_compacted_slice else "requested after the plan"
        else:
            where = "into the compacted slice" if into_compacted_slice else "into the plan's slice"
        self.log.append(f"foreign write {w.instant} {where}: {[s.path for s in w.stats]}")

    def _foreign_target_v6(
        self, partition: str, file_id: str, base: str, into_compacted_slice: bool
    ) -> FileGroupTarget:
        """Version 6: the next log file of the compacted slice, or the first one of the plan's slice."""
        assert self.pending is not None
        if not into_compacted_slice:
            instant = self.pending.instant
            return FileGroupTarget(partition, file_id, instant, None, log_file_name(file_id, instant, 1, "1-0-1"), 0)
        listed = [LogFileName.try_parse(n) for n in os.listdir(os.path.join(self.path, partition))]
        version = max((p.version for p in listed if p and p.file_id == file_id and p.instant == base), default=0)
        return FileGroupTarget(partition, file_id, base, None, log_file_name(file_id, base, version + 1, "1-0-1"), 0)

    @staticmethod
    def _place_in_log_order(fg: FileGroupModel) -> None:
        """Move the newest entry to where its file's name puts it among the open slices' log files: readers, Java's
        and ours, merge by log order (instant in the name, then version), not by commit order, and a writer that
        did not know the plan named its file after files written before it."""
        entry = fg.logs.pop()
        key = LogFileName.parse(entry.name).sort_key()
        later = (
            j for j in range(fg.cuts[-1].upto, len(fg.logs)) if LogFileName.parse(fg.logs[j].name).sort_key() > key
        )
        fg.logs.insert(next(later, len(fg.logs)), entry)

    def roll_back_failed(self) -> None:
        """An operator rolls back the dead writes (force: their writer is known gone); live writers stay."""
        hook = rollback_hook(self.table)
        rollback_failed_writes(self.table, metadata_writer=hook)  # live writers' heartbeats are fresh: left alone
        for instant in self.failed:
            if self.table.timeline.instant(instant) is not None and not self.table.timeline.is_completed(instant):
                rollback_failed_write(self.table, instant, force=True, dry_run=False, metadata_writer=hook)
            self.model.roll_back(instant)
        self.log.append(f"roll back {self.failed}")
        self.failed = []

    # ---- compaction -----------------------------------------------------------------------------------

    def schedule(self, threshold_s: int, mode: str, exact: bool) -> str | None:
        request = ScheduleRequest(threshold_ms=at(threshold_s), mode=LinkMode(mode), exact=exact)
        try:
            result = schedule_compaction(self.engine, self.table, request)
        except HudiMetaError as e:
            self.log.append(f"schedule T={threshold_s} {mode} exact={exact}: refused: {e}")
            return None
        self.log.append(f"schedule T={threshold_s} {mode} exact={exact}: {result.instant} {result.reason}")
        if result.instant is None:
            return None
        assert result.plan is not None
        self.pending = PendingPlan(result.instant, at(threshold_s), mode, exact, result.plan)
        self.check_plan(self.pending)
        return result.instant

    def run(self, kill_at: str | None = None, nth: int = 0) -> None:
        """Run (or resume) the pending compaction, killed at the `nth` (from 0) visit of `kill_at` when given."""
        assert self.pending is not None
        before = read_rows(self.table.read("snapshot"))
        # "mdt:<step>": a step of the metadata table's writer (its deltacommit of the compaction, "after-complete":
        # done, with the data commit not)
        hook, step = (
            (set_mdt_crash_hook, kill_at[4:]) if kill_at and kill_at.startswith("mdt:") else (set_crash_hook, kill_at)
        )
        try:
            with crash_at(hook, step, after=nth + 1) if step else nullcontext():
                self.runner(self.table, self.pending.instant)
        except Crash:
            self.pending.crashed = True
            self.log.append(f"run {self.pending.instant}: killed at {kill_at} #{nth}")
            self.remember_links()
            return
        except PlanTakenBackError as taken_back:
            self._taken_back(taken_back, before)
            return
        except HudiMetaError as refused:  # a plan foreign writes broke waits until no write is pending
            assert self.pending.foreign and (self.open_writers or self.failed), f"run refused: {refused}"
            self.log.append(f"run {self.pending.instant}: refused while a write is pending: {refused}")
            return
        self._completed(before)

    def _taken_back(self, taken_back: PlanTakenBackError, before: set[Row]) -> None:
        """The run took the plan back: only after a writer that did not know it wrote into its slices; nothing is
        lost, and the files it moved are known by their new names."""
        assert self.pending is not None and self.pending.foreign, f"a plan taken back for nothing: {taken_back}"
        self.log.append(f"run {self.pending.instant}: {taken_back}")
        assert read_rows(self.table.read("snapshot")) == before, "taking the plan back changed the snapshot"
        self._moved(taken_back.report.actions)
        self._forget_links(self.pending.instant)
        self.pending = None

    def check_nothing_left_at(self, threshold_s: int, mode: str, exact: bool) -> None:
        """Right after a compaction at T with nothing written since, a schedule at the same T plans nothing
        (issue 25, defect 2): the compaction left nothing at or before T to merge."""
        request = ScheduleRequest(threshold_ms=at(threshold_s), mode=LinkMode(mode), exact=exact)
        result = schedule_compaction(self.engine, self.table, request)
        self.log.append(f"schedule again T={threshold_s} exact={exact}: {result.instant} {result.reason}")
        assert result.instant is None and result.reason == "nothing to compact", (result.instant, result.reason)

    def run_while_writing(self, at_step: str, write: Callable[[], object]) -> None:
        """Run the pending compaction with a writer committing (`write`) when the run first reaches `at_step`
        (on the local runner every step is reached in this process; on Spark, steps inside tasks are not)."""
        assert self.pending is not None
        before = [read_rows(self.table.read("snapshot"))]

        def hook(step: str) -> None:
            if step == at_step and len(before) == 1:
                self.log.append(f"run {self.pending.instant if self.pending else ''}: a write at {at_step}")
                write()
                before.append(read_rows(self.table.read("snapshot")))

        set_crash_hook(hook)
        try:
            self.runner(self.table, self.pending.instant)
        except PlanTakenBackError as taken_back:
            self._taken_back(taken_back, before[-1])
            return
        except HudiMetaError as refused:  # a plan foreign writes broke waits until no write is pending
            assert self.pending.foreign and (self.open_writers or self.failed), f"run refused: {refused}"
            self.log.append(f"run {self.pending.instant}: refused while a write is pending: {refused}")
            return
        finally:
            set_crash_hook(None)
        self._completed(before[-1])

    def _completed(self, before: set[Row]) -> None:
        """The run committed: it changed no record, and the model compacts as the plan says."""
        assert self.pending is not None
        self.log.append(f"run {self.pending.instant}: completed")
        after = read_rows(self.table.read("snapshot"))
        assert after == before, "the compaction changed the snapshot: " + _rows_diff(after, before)
        self.remember_links()
        self.apply_compaction(self.pending)
        self.pending = None

    def unschedule(self) -> None:
        """`compaction unschedule` of the pending plan (issue 10): everything it did is taken back, log files
        appended into its slice go back into the previous slice under new names; the model does not change."""
        assert self.pending is not None
        instant = self.pending.instant
        try:
            report = unschedule_compaction(self.table, instant, dry_run=False)
        except HudiMetaError as refused:
            self.log.append(f"unschedule {instant}: refused: {refused}")
            return
        self.log.append(f"unschedule {instant}: {len(report.actions)} file actions")
        self._moved(report.actions)
        self._forget_links(instant)
        self.pending = None

    def _forget_links(self, instant: str) -> None:
        for link in [link for link in self.links if f"_{instant}.log." in posixpath.basename(link)]:
            del self.links[link]
            self.link_bytes.pop(link, None)

    def apply_compaction(self, p: PendingPlan) -> None:
        recorded = _recorded_threshold(p.plan)
        for op in p.plan.operations:
            fg = self.model.groups[(op.partition_path, op.file_id)]
            entries = self.model.slice_logs(fg)
            compacted = set(op.delta_file_paths)
            count = max((i + 1 for i, e in enumerate(entries) if any(e.known_as(n) for n in compacted)), default=0)
            for s in op.symlink_operations:  # the leftover log files live on under their link names
                for e in entries:
                    if e.known_as(s.target):
                        e.aliases.add(s.symlink)
            self.model.compact(fg, p.instant, count, recorded, p.exact)
        cuts = [c for fg in self.model.groups.values() for c in fg.cuts if c.instant == p.instant]
        tl = self.table.timeline
        extra = tl.commit_metadata(next(i for i in tl.completed() if i.requested_time == p.instant)).extra_metadata
        inexact = {k for c in cuts for k in c.inexact}
        if p.exact:  # the commit says whether RO is exactly the table as of T (design 5)
            assert extra.get(EXACT_RESULT_KEY) == str(not inexact).lower(), (extra.get(EXACT_RESULT_KEY), inexact)
            self.check_exact(extra.get(EXACT_RESULT_KEY) == "true", int(extra[THRESHOLD_KEY]))
        if recorded is not None:  # the published threshold is what the base files hold
            recorded = min([recorded, *(t for c in cuts for t in c.caps)])
            assert extra.get(THRESHOLD_KEY) == str(recorded), (extra.get(THRESHOLD_KEY), recorded)
        self.model.completed.append(p.instant)
        if recorded is not None:
            # RO is the table as of T only where the commit says so: a requested exact compaction with a key it
            # could not make exact publishes exact=false, and then promises what a plain one does
            self.last_event_time_compaction = (p.instant, recorded, p.exact and not inexact)
            self.event_time_compactions.append(self.last_event_time_compaction)

    # ---- clean and rollback of a completed compaction (issue 10) -------------------------------------------

    def clean(self, policy: Policy, retained: int) -> None:
        """`hudi-meta clean --execute`: nothing any read needs now goes (snapshot, RO, incremental and time travel
        as of the retained instants read as before), no live link's target goes; reads as of earlier instants
        either read right or are refused as cleaned (`CleanedDataError`), never silently wrong."""
        now_ms = None
        if policy == KEEP_LATEST_COMMITS:
            clean_policy = CleanPolicy(policy, commits_retained=retained)
        elif policy == KEEP_LATEST_BY_HOURS:  # "now" one hour after the retained-th newest commit: E is that commit
            clean_policy = CleanPolicy(policy, hours_retained=1)
            commits = [i.requested_time for i in self.table.timeline.completed() if i.action in WRITE_ACTIONS]
            now_ms = instant_ms(commits[-min(retained, len(commits))]) + 3_600_000 if commits else None
        else:
            clean_policy = CleanPolicy(policy, file_versions_retained=retained)
        try:
            outcome = run_clean(self.engine, self.table, clean_policy, dry_run=False, now_ms=now_ms)
        except HudiMetaError as refused:
            self.log.append(f"clean {policy} {retained}: refused: {refused}")
            return
        deleted = sum(1 for r in outcome.reports if r.done and r.operation != "keep")
        self.log.append(f"clean {policy} {retained}: {outcome.instant} {deleted} deleted {outcome.note}")
        if outcome.instant is None:
            return
        self.cleans.append(outcome.instant)
        assert outcome.plan is not None
        self._forget_cleaned_links({r.path for r in outcome.reports if r.done})
        newest = max(i.requested_time for i in self.table.timeline.completed())
        if policy != KEEP_LATEST_FILE_VERSIONS and outcome.plan.earliest_commit_to_retain is not None:
            bound = outcome.plan.earliest_commit_to_retain.time  # reads as of it or later are promised
        else:  # file versions: no read as of an older instant is promised any more
            bound = newest
        self.reads_may_be_cleaned_before = max(self.reads_may_be_cleaned_before or bound, bound)

    def _forget_cleaned_links(self, deleted: set[str]) -> None:
        """Links of slices a clean took go from the links to check (never one of a file group's latest slice);
        a link whose recorded target (an older link) went is checked against its physical file from now on."""
        latest = {fg.file_id: fg.cuts[-1].instant for fg in self.model.groups.values()}
        for link in list(self.links):
            rel = os.path.relpath(link, self.path)
            if rel in deleted:
                name = LogFileName.parse(posixpath.basename(link))
                assert name.instant < latest[name.file_id], f"clean deleted {rel} of the latest slice"
                del self.links[link]
                self.link_bytes.pop(link, None)
            elif os.path.relpath(self.links[link], self.path) in deleted:
                physical = os.path.realpath(link)
                assert os.path.exists(physical), f"clean deleted what live link {rel} reads"
                self.links[link] = physical if os.path.islink(link) else link
                self.link_bytes.setdefault(self.links[link], Path(self.links[link]).read_bytes())

    def compaction_instants(self) -> list[str]:
        """Completed compactions the model knows, oldest first."""
        return sorted({c.instant for fg in self.model.groups.values() for c in fg.cuts[1:]})

    def rollback_completed(self) -> None:
        """`hudi-meta rollback --completed-compaction` of the newest compaction. Rule (design 7, and Java's "roll
        back later commits first"): it goes, and the table reads as before, unless a write appended to one of its
        slices after it was scheduled (then it is refused with nothing changed); it may also be refused when a
        clean since deleted files of the slices it compacted, or when the metadata table compacted its deltacommit
        (Java refuses that too: a restore is needed)."""
        instant = self.compaction_instants()[-1]
        if self.table.timeline.instant(instant) is None:
            self.log.append(f"rollback completed {instant}: archived, not tried")
            return
        touched = [fg for fg in self.model.groups.values() if fg.cuts[-1].instant == instant]
        appended = [
            e.name
            for fg in touched
            for e in fg.logs
            if e.instant > instant  # a write rolled back at its commit (a conflict) left no file behind
            and any(os.path.lexists(os.path.join(self.path, fg.partition, n)) for n in {e.name, *e.aliases})
        ]
        before = read_rows(self.table.read("snapshot"))
        try:
            report = rollback_compaction(self.table, instant, completed=True, dry_run=False)
        except HudiMetaError as refused:
            self.log.append(f"rollback completed {instant}: refused: {refused}")
            cleaned_since = any(c > instant for c in self.cleans)
            folded = self.metadata_table and "older than the metadata table's compaction" in str(refused)
            if folded:
                mdt = HudiTable.open(os.path.join(self.path, ".hoodie", "metadata"))
                assert any(i.action == Action.COMMIT and i.requested_time > instant for i in mdt.timeline.completed())
            assert appended or folded or (cleaned_since and "cleaned" in str(refused)), (
                f"rollback of completed compaction {instant} refused although nothing was written into its slices: "
                f"{refused}"
            )
            assert read_rows(self.table.read("snapshot")) == before, "a refused rollback changed the snapshot"
            return
        assert not appended, f"compaction {instant} was rolled back although writes appended to it: {appended}"
        self.log.append(f"rollback completed {instant}: {report.instant}, {len(report.actions)} file actions")
        self._moved(report.actions)
        for fg in touched:
            fg.cuts.pop()
        self.model.completed.remove(instant)
        for link in [link for link in self.links if f"_{instant}.log." in posixpath.basename(link)]:
            del self.links[link]
            self.link_bytes.pop(link, None)
        self.event_time_compactions = [c for c in self.event_time_compactions if c[0] != instant]
        self.last_event_time_compaction = self.event_time_compactions[-1] if self.event_time_compactions else None
        assert read_rows(self.table.read("snapshot")) == before, "the rollback changed the snapshot"

    def _moved(self, actions: Iterable[Any]) -> None:
        """Log files moved back into an older slice are known by their new names too."""
        for action in actions:
            if action.target is not None:
                old, new = posixpath.basename(action.path), posixpath.basename(action.target)
                for fg in self.model.groups.values():
                    for e in fg.logs:
                        if e.known_as(old):
                            e.aliases.add(new)

    # ---- archival and index -----------------------------------------------------------------------------

    def archive_as_java(self, count: int) -> list[str]:
        """Version 6: what Java's 0.x archiver can leave that ours does not (it keeps no compaction): the oldest
        completed instants (before any pending one, keeping the newest two) leave `.hoodie/`."""
        tl = self.table.timeline
        pending = [i.requested_time for i in tl.pending()]
        first_pending = min(pending) if pending else None
        done = [i.requested_time for i in tl.completed() if first_pending is None or i.requested_time < first_pending]
        times = sorted(done[: max(0, min(count, len(tl.completed()) - 2))])
        move_to_archived(self.path, times)
        self.archived = self.archived or bool(times)
        self.log.append(f"archive as Java {times}")
        return times

    def archive(self, count: int) -> list[str]:
        """hudi-meta's archiver (the 0.x archived log on version 6, the LSM history on 8 and 9), limits set so that
        up to `count` commits go (its own rules may keep more)."""
        table = self.table
        commits = [i for i in table.timeline.completed() if i.action in WRITE_ACTIONS]
        low = len(commits) - count
        if count < 2 or low < 1:
            return []
        report = archive_timeline(table, dry_run=False, settings=ArchivalSettings(low, len(commits) - 1))
        times = sorted(i.instant for i in report.archived)
        self.archived = self.archived or bool(times)
        self.log.append(f"archive {times}")
        self.index_after_archive(times)
        return times

    # ---- another writer's metadata table (issue 36) ----------------------------------------------------

    def leave_failed_mdt_compaction(self) -> str | None:
        """Another writer (Java) killed inside its MDT compaction: requested, inflight, base files written under
        its own write token, never completed. The next write of ours rolls it back and runs it again
        (docs/metadata-table.md 6.7); until then readers read around it. The instant, None when the MDT had
        nothing to compact (or may not compact now)."""
        table = self.table
        try:
            with (
                table_lock(table.storage, table.meta_path, table.config.props, "model: foreign MDT compaction"),
                crash_at(set_mdt_crash_hook, "compaction-after-base-file"),
            ):
                compact_if_necessary(table, max_delta_commits=1)  # due whenever a deltacommit followed the last
        except Crash:
            pending = open_mdt(table).timeline.pending_compactions()[0].requested_time
            for p in Path(self.path, ".hoodie", "metadata").rglob(f"*_{UNKNOWN_WRITE_TOKEN}_{pending}.hfile"):
                p.rename(p.with_name(p.name.replace(f"_{UNKNOWN_WRITE_TOKEN}_", f"_{FOREIGN_WRITE_TOKEN}_")))
            self.log.append(f"foreign MDT compaction {pending} left inflight")
            return pending
        self.log.append("foreign MDT compaction: nothing to leave half-done (it completed or was not due)")
        return None

    def try_writes_on_damaged_mdt(self, pick: Callable[[int], int]) -> None:
        """Bytes flipped inside a file the MDT's latest slices hold (a base HFile or a log file's HFile block):
        every write is refused before anything is written (the table byte for byte as it was), then the file is
        restored, as an operator repairing the MDT would, and the sequence goes on."""
        mdt = open_mdt(self.table)
        inputs = mdt.view_inputs()
        spots: list[tuple[Path, int]] = []  # (file, offset of the first data block's bytes)
        for fg in mdt.file_groups():
            picked = latest_slice_for_snapshot(fg, inputs)
            if picked is None:
                continue
            base, logs = picked
            if base is not None:
                spots.append((Path(mdt.base_path, base.path), 0))
            for lf in logs:
                path = Path(mdt.base_path, lf.path)
                spots += [
                    (path, b.content_offset)
                    for b in read_blocks(mdt.storage, str(path))
                    if b.block_type == BlockType.HFILE_DATA and inputs.is_committed(b.instant_time or "")
                ]
        if not spots:
            return
        path, offset = spots[pick(len(spots))]
        good = path.read_bytes()
        damaged = bytearray(good)
        for i in range(offset + 40, min(offset + 48, len(good))):  # inside the first HFile data block
            damaged[i] ^= 0xFF
        before = file_digests(self.path)
        path.write_bytes(bytes(damaged))
        self.log.append(f"damaged {path.relative_to(self.path)} at {offset + 40}")
        try:
            request = ScheduleRequest(threshold_ms=at(100))
            for attempt in (
                lambda: write_client(self.table),
                lambda: rollback_hook(self.table),
                lambda: schedule_compaction(self.engine, self.table, request),
                lambda: check_cleanable(self.table),
            ):
                try:
                    attempt()
                except MetadataTableDamagedError:
                    continue
                raise AssertionError(f"a write was not refused on a damaged metadata table ({path})")
            assert file_digests(self.path) == {**before, str(path.relative_to(self.path)): digest(bytes(damaged))}
        finally:
            path.write_bytes(good)

    def index_after_archive(self, times: list[str]) -> None:
        """What `archive --execute` does next (docs/archival.md section 6): before it, `check` names every archived
        instant the store holds as active as archived (never gone); the index run marks each of them, says so, and
        keeps each, completed and archived."""
        table_id = table_id_of(self.engine, self.table.uri)
        if table_id is None:
            return
        with self.engine.connect() as conn:
            stored = stored_instants(conn, table_id)
            unmarked = {t for t in times if t in stored and not stored[t].archived}
            assert set(archived_not_marked(conn, self.table, table_id)) == unmarked, self.log
        stats = Indexer(self.engine, self.table).run()
        assert stats.instants_archived == len(unmarked), (stats, self.log)  # removals: failed writes rolled back
        with self.engine.connect() as conn:
            after = stored_instants(conn, table_id)
        assert all(after[t].archived and after[t].state == "completed" for t in times if t in stored), self.log
        self.log.append("index")

    def index(self) -> None:
        Indexer(self.engine, self.table).run()
        self.log.append("index")

    def check_index(self) -> None:
        """The incrementally maintained store equals a store indexed from scratch."""
        indexer = Indexer(self.engine, self.table)
        indexer.run()
        fresh_engine = new_engine(self.root, "fresh.db")
        try:
            fresh = Indexer(fresh_engine, self.table)
            fresh.run(None if self.field_in_properties else "ts")  # what `index --event-time-field ts` registered
            assert indexer.table_id is not None and fresh.table_id is not None
            kept = index_fingerprint(self.engine, indexer.table_id)
            fresh_print = index_fingerprint(fresh_engine, fresh.table_id)
            assert kept == fresh_print, "the index drifted from a fresh index of the files: " + _diff(kept, fresh_print)
            for engine, table_id in ((self.engine, indexer.table_id), (fresh_engine, fresh.table_id)):
                drift = summary_drift(engine, table_id)
                assert not drift, f"log file summaries differ from their blocks: {drift}"
        finally:
            fresh_engine.dispose()
            os.remove(os.path.join(self.root, "fresh.db"))
        self.check_freshness(indexer.table_id)

    def check_freshness(self, table_id: int) -> None:
        """Freshness from the index (issue 11) keeps the promise against the model (`check_promise`, `check_exact`)."""
        bases = base_file_instants(self.engine, table_id)
        f = freshness(completed_compactions(self.engine, table_id), pending_blocks(self.engine, table_id), 0, bases)
        self.check_promise(f.compaction_instant, f.threshold_ms, f.watermark_ms)
        if f.threshold_ms is not None:
            self.check_exact(f.exact, f.threshold_ms)

    def check_exact(self, exact: bool, threshold_ms: int) -> None:
        """An exact flag (a commit's or freshness's) is true only while the model's RO holds no record after T
        (issue 36, item 6). Not the converse: a key the merge rules keep from being exact, or a later base file
        (counted whatever it holds), makes the flag false with nothing after T in RO."""
        after = sorted(k for k, v in self.model.read_optimized().items() if v.event_time > threshold_ms)
        if exact:
            assert not after, f"exact at {threshold_ms} while RO holds records after it: {after}"

    def check_promise(self, instant: str | None, threshold_ms: int | None, watermark_ms: int | None) -> None:
        """A freshness (computed or published) keeps the promise: every key whose current version has an event
        time below the watermark has that version in RO; the threshold is the one the newest event-time
        compaction on the active timeline published (none for an archived one)."""
        last = self.last_event_time_compaction
        if last is None or self.table.timeline.instant(last[0]) is None:
            assert threshold_ms is None or self.archived, f"freshness from nowhere: {instant} {threshold_ms}"
        else:
            assert (instant, threshold_ms) == (last[0], last[1]), (instant, threshold_ms, last)
        if watermark_ms is None:
            return
        assert threshold_ms is not None and watermark_ms <= threshold_ms
        ro = self.model.read_optimized()
        for key, version in self.model.snapshot().items():
            if version.event_time < watermark_ms:
                assert ro.get(key) == version, (
                    f"{key} {version.row} is below the watermark {watermark_ms} but RO has "
                    f"{ro[key].row if key in ro else None}"
                )

    def sync(self, layout: Layout | None = None) -> None:
        """`hudi-meta sync` into a catalog: what it publishes keeps the promise, the tables have every partition
        of the table, and a second sync changes nothing. `layout`: before the first sync, HiveSyncTool registered
        the table in that layout (the sync must publish there and register nothing beside it)."""
        indexer = Indexer(self.engine, self.table)
        indexer.run()
        assert indexer.table_id is not None
        table_id = indexer.table_id
        f = freshness(completed_compactions(self.engine, table_id), pending_blocks(self.engine, table_id), 0)
        if not self.catalog.tables and layout is not None and self.table.timeline.completed_writes():
            self.catalog.create_database("db")
            schema = table_schema(self.table)
            fields = self.table.config.partition_fields
            for t in sync_definitions(schema, fields, [], self.table.base_path, "db", "events", True, layout)[0]:
                self.catalog.create_table(t)
            self.log.append(f"registered by HiveSyncTool as {sorted(n for _, n in self.catalog.tables)}")
        registered = set(self.catalog.tables)
        report = sync_table(self.catalog, self.table, f, "db", "events")
        self.log.append(f"sync: {[(a.operation, a.target) for a in report.actions]}")
        assert not registered or set(self.catalog.tables) == registered  # nothing beside HiveSyncTool's tables
        partitions = {tuple(p.split("=", 1)[1] for p in fg.partition.split("/")) for fg in self.table.file_groups()}
        for _, name in self.catalog.tables:
            props = self.catalog.tables[("db", name)].properties
            threshold, watermark = (int(props[k]) if k in props else None for k in (THRESHOLD_MS, WATERMARK_MS))
            self.check_promise(props.get(COMPACTION_INSTANT), threshold, watermark)
            assert self.catalog.partition_values("db", name) >= partitions
        assert sync_table(self.catalog, self.table, f, "db", "events").actions == []

    # ---- checks -----------------------------------------------------------------------------------------

    def check_plan(self, p: PendingPlan) -> None:
        """A plan keeps merge order (a prefix of each slice's logs) and compacts every log file whose min event
        time is at or before its recorded threshold; it never records more than was asked (design 5)."""
        recorded = _recorded_threshold(p.plan)
        assert recorded is not None and recorded <= p.requested_threshold, (recorded, p.requested_threshold)
        for op in p.plan.operations:
            fg = self.model.groups[(op.partition_path, op.file_id)]
            entries = [e for e in self.model.slice_logs(fg) if e.instant < p.instant]
            prev = fg.cuts[-1]
            # the previous compaction's carry log comes first in the slice (before the links)
            exact_log = {
                n  # (without carried records there is no carry log, and a writer may take version 1 later)
                for n in op.delta_file_paths
                if prev.exact_log and f"_{prev.instant}.log.{CARRY_LOG_VERSION}_" in n
            }
            compacted = set(op.delta_file_paths) - exact_log
            names = [e.name for e in entries]
            unknown = [n for n in compacted if not any(e.known_as(n) for e in entries)]
            assert not unknown, f"{p.instant} compacts log files no committed write of this slice wrote: {unknown}"
            k = max((i + 1 for i, e in enumerate(entries) if any(e.known_as(n) for n in compacted)), default=0)
            assert all(any(e.known_as(n) for n in compacted) for e in entries[:k] if not e.rolled_back), (
                f"not a prefix: {names} vs {sorted(compacted)}"
            )
            for e in entries[k:]:
                live = not e.rolled_back and self.model.committed.get(e.instant, False)
                t = e.min_event_time
                assert not (live and t is not None and t <= recorded), (
                    f"{e.name} (min event time {t}) is at or before T={recorded} but was left out of {p.instant}"
                )

    def remember_links(self) -> None:
        """Record the bytes of every link made so far (and of its target), to check none is written to."""
        assert self.pending is not None
        for op in self.pending.plan.operations:
            for s in op.symlink_operations:
                link = os.path.join(self.path, op.partition_path, s.symlink)
                target = os.path.join(self.path, op.partition_path, s.target)
                if os.path.lexists(link) and link not in self.links:
                    self.links[link] = target
                    self.link_bytes.setdefault(target, Path(target).read_bytes())
                    self.link_bytes[link] = Path(link).read_bytes()

    def check_links(self) -> None:
        for link, target in self.links.items():
            assert os.path.exists(link), f"dangling link {link}"
            if os.path.islink(link):
                assert os.path.realpath(link) == os.path.realpath(target), (link, os.readlink(link), target)
            assert Path(link).read_bytes() == self.link_bytes[link], f"{link} was written to"
            assert Path(target).read_bytes() == self.link_bytes[target], f"link target {target} was written to"

    def check_table(self) -> None:
        """`hudi-meta check` finds nothing, but the links of a compaction killed before its commit (issue 10)."""
        expected = {UNCOMMITTED_LINK} if self.pending is not None and self.pending.crashed else set()
        if self.pending is not None and self.pending.foreign:  # what check must report until the run takes it back
            expected |= {PLAN_SLICE_CHANGED, PLAN_ORDER_BROKEN}
        findings = [f for f in check_files(self.table) if f.kind not in expected]
        assert not findings, "check found: " + "; ".join(str(f) for f in findings[:5])
        if self.metadata_table:  # the metadata table lists exactly the committed files on storage
            table = self.table
            damage = metadata_damage(table)  # and readers read it: one base file per instant, every file readable
            assert not damage, "metadata table: " + "; ".join(str(d) for d in damage[:3])
            listing = read_files_partition(table)
            got = {p: dict(f) for p, f in listing.files.items() if f}
            want = expected_listing(table)
            if any(i.action == Action.ROLLBACK for i in table.timeline.pending()):
                got, want = _without_renamed_logs(table, got, want)
            assert got == want, f"metadata table listing: {_diff(got, want)}"

    def check_reads(self, pick: Callable[[int], int]) -> None:
        table = self.table
        expected = rows(self.model.snapshot())
        got = read_rows(table.read("snapshot"))
        assert got == expected, "snapshot differs from the model: " + _rows_diff(got, expected)
        ro = read_rows(table.read("ro"))
        want = rows(self.model.read_optimized())
        assert ro == want, "RO differs from the model: " + _rows_diff(ro, want)
        self.check_ro_bound(ro)
        active = [i.requested_time for i in table.timeline.completed()]
        if active:
            as_of = active[pick(len(active))]
            got_tt = self.read_as_of(Query("time-travel", as_of=as_of), as_of)
            want = rows(self.model.snapshot(as_of))
            if got_tt is not None:
                assert got_tt == want, f"time travel as of {as_of} differs from the model: " + _rows_diff(got_tt, want)
            begin, end = sorted((active[pick(len(active))], active[pick(len(active))]))
            got_inc = self.read_as_of(Query("incremental", begin=begin, end=end), end)
            chosen = None
            if self.version >= 8:  # 1.x: commits chosen by completion time (docs/hudi-1x.md section 2)
                done = {t: c for t, (c, _) in table.archived.items()}  # archived ones too (the LSM history)
                done |= {i.requested_time: i.completion_time or i.requested_time for i in table.timeline.completed()}
                chosen = {t for t, c in done.items() if begin < c <= end}
            want = rows(self.model.incremental(begin, end, chosen))
            if got_inc is not None:
                assert got_inc == want, f"incremental ({begin}, {end}] differs: " + _rows_diff(got_inc, want)
        # hudi-rs does not count instants archived away as committed (Java does: `containsOrBeforeTimelineStarts`)
        if self.pending is None and not self.open_writers and not self.failed and not self.archived:
            # hudi-rs merges a delete that carries an ordering value by ordering alone (a later data record, or
            # the base record, does not win as in Java 0.x): those keys are left out of this comparison
            # the same for OverwriteWithLatestAvroPayload: hudi-rs lets the later log record win, Java's preCombine
            # keeps the larger ordering value among log records (keys updated out of order are left out)
            skip = self.model.keys_with_ordered_deletes()
            if self.payload == OVERWRITE_PAYLOAD:
                skip |= self.model.keys_out_of_order()
            rs = {r for r in hudi_rs_rows(self.path, "snapshot") if r[0] not in skip}
            want = {r for r in expected if r[0] not in skip}
            assert rs == want, "hudi-rs snapshot differs from the model: " + _rows_diff(rs, want)
            rs = hudi_rs_rows(self.path, "ro")
            assert rs == ro, "hudi-rs RO differs from ours: " + _rows_diff(rs, ro)

    def read_as_of(self, query: Query, as_of: str) -> set[Row] | None:
        """The rows of a read as of an instant; None when it was refused because a clean deleted what it needs,
        which is allowed only before the instants the cleans retained."""
        try:
            return read_rows(self.table.read(query))
        except CleanedDataError as refused:
            bound = self.reads_may_be_cleaned_before
            assert bound is not None and as_of < bound, f"{query} refused, but the cleans retained it: {refused}"
            return None

    def check_ro_bound(self, ro: set[Row]) -> None:
        """After an event-time compaction with threshold T, every key with a version at or before T among the
        inputs it merged is in RO (or, outside exact mode, gone by a delete it merged after that version)."""
        if self.last_event_time_compaction is None:
            return
        instant, threshold, exact = self.last_event_time_compaction
        present = {r[0] for r in ro}
        inexact = {k for fg in self.model.groups.values() for c in fg.cuts if c.instant == instant for k in c.inexact}
        for key, (v, deleted_after) in _inputs_at_or_before(self.model, instant, threshold).items():
            if key not in present:
                assert deleted_after and (not exact or key in inexact), (
                    f"{key} ({v.row}) is missing from RO (T={threshold})"
                )


def _rows_diff(got: set[Row], want: set[Row]) -> str:
    return f"unexpected {sorted(got - want)}, missing {sorted(want - got)}"


def _without_renamed_logs(
    table: HudiTable, listed: dict[str, dict[str, int]], stored: dict[str, dict[str, int]]
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """A rollback killed between its moves and its MDT deltacommit (a version-6 compaction taken back renames log
    files) leaves the MDT behind storage until it runs again (docs/metadata-table.md 7.2.1): the listings may differ
    only by log files renamed within their file group, the old names gone from storage. The rollback, finished,
    records the renames: the next check with no rollback pending asks for equality again."""
    listed, stored = {p: dict(f) for p, f in listed.items()}, {p: dict(f) for p, f in stored.items()}
    for partition in set(listed) | set(stored):
        old, new = listed.get(partition, {}), stored.get(partition, {})
        gone = {n for n in set(old) - set(new) if LogFileName.try_parse(n)}
        came = {n for n in set(new) - set(old) if LogFileName.try_parse(n)}
        assert not any(os.path.exists(os.path.join(table.base_path, partition, n)) for n in gone), gone
        ids = sorted(LogFileName.parse(n).file_id for n in gone)
        assert ids == sorted(LogFileName.parse(n).file_id for n in came), f"not renames: {gone} -> {came}"
        for n in gone:
            del old[n]
        for n in came:
            del new[n]
    return {p: f for p, f in listed.items() if f}, {p: f for p, f in stored.items() if f}


def _diff(kept: Any, fresh: Any) -> str:
    if isinstance(kept, dict) and isinstance(fresh, dict):
        kept, fresh = sorted(kept.items()), sorted(fresh.items())
    if not (isinstance(kept, list) and isinstance(fresh, list)):
        return f"{kept!r} != {fresh!r}"
    out = []
    for (name, a), (_, b) in zip(kept, fresh, strict=True):
        if a != b:
            out.append(f"{name}: only kept {sorted(set(a) - set(b))[:4]}, only fresh {sorted(set(b) - set(a))[:4]}")
    return "; ".join(out)


def _recorded_threshold(plan: CompactionPlan) -> int | None:
    params = plan.strategy.strategy_params if plan.strategy else {}
    return int(params[THRESHOLD_PARAM]) if THRESHOLD_PARAM in params else None


def _inputs_at_or_before(model: TableModel, instant: str, threshold: int) -> dict[str, tuple[Version, bool]]:
    """Per key of the slices compaction `instant` merged: its last version at or before T among the merged
    inputs when that is data (a lower bound, no merge rules), and whether a delete was merged after it (1.x
    event-time ordering: a delete with a larger ordering value wins wherever it is in log order)."""
    out: dict[str, tuple[Version, bool]] = {}
    for fg in model.groups.values():
        cuts = [i for i, c in enumerate(fg.cuts) if c.instant == instant]
        if not cuts or cuts[0] == 0:
            continue
        prev, cut = fg.cuts[cuts[0] - 1], fg.cuts[cuts[0]]
        inputs = list(prev.base_a.values()) + list(prev.exact_log)
        inputs += [
            v
            for e in fg.logs[prev.upto : cut.upto]
            if not e.rolled_back and model.committed.get(e.instant, False)
            for v in e.versions
        ]
        last: dict[str, Version] = {}
        deleted_after: dict[str, bool] = {}
        # 1.x event-time ordering: per key the largest ordering value of a delete merged at or before T (the key's
        # winner there is that delete, wherever it is in log order), and after T (deleted after its version)
        beaten: dict[tuple[str, bool], int] = {}
        for v in inputs:
            if v.is_delete and v.ordering is not None and model.payload == EVENT_TIME_ORDERING:
                side = (v.key, v.event_time <= threshold)
                beaten[side] = max(beaten.get(side, v.ordering), v.ordering)
            if v.event_time <= threshold:
                last[v.key] = v
                deleted_after[v.key] = False
            elif v.is_delete and v.key in last:
                deleted_after[v.key] = True
        for k, v in list(last.items()):
            if v.is_delete or v.ordering is None:
                continue
            if beaten.get((k, True), v.ordering) > v.ordering:
                del last[k]  # deleted at or before T
            elif beaten.get((k, False), v.ordering) > v.ordering:
                deleted_after[k] = True
        out.update({k: (v, deleted_after[k]) for k, v in last.items() if not v.is_delete})
    return out


def _just_before(instant: str) -> str:
    """The instant time 1 ms before `instant` (yyyyMMddHHmmssSSS)."""
    t = dt.datetime.strptime(instant[:14], "%Y%m%d%H%M%S") + dt.timedelta(milliseconds=int(instant[14:17]) - 1)
    return t.strftime("%Y%m%d%H%M%S") + f"{t.microsecond // 1000:03d}"
