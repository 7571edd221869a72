"""`Table` (opened with `open_table`): a Hudi table with the metadata store that indexes it, and every operation
the front ends offer on it (index, freshness, compaction, clean, check, sync, reads, and the admin, archive,
metrics and show operations of the other `hudi_meta.api` modules)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from sqlalchemy.exc import SQLAlchemyError

from hudi_meta.api import admin
from hudi_meta.api.admin import AdminReport, ArchiveOutcome, IndexRefresh
from hudi_meta.api.show import rows_from_files, rows_from_index
from hudi_meta.api.store import TableMetrics, store_exists
from hudi_meta.api.values import Duration, Moment, as_duration_ms, as_time_ms
from hudi_meta.check.index_drift import CheckReport, check_table
from hudi_meta.clean.run import CleanOutcome, check_cleanable, run_clean
from hudi_meta.compaction.admin import Validation
from hudi_meta.compaction.run import MapTasks, run_compaction, runnable_instant
from hudi_meta.compaction.schedule import ScheduleRequest, ScheduleResult, schedule_compaction
from hudi_meta.compaction.strategies import Strategy
from hudi_meta.compaction.triggers import Trigger
from hudi_meta.errors import HudiMetaError, NotFreshError, ParameterError, first_line
from hudi_meta.format.links import LinkMode
from hudi_meta.freshness import Freshness, view_for_complete_before
from hudi_meta.index.commit_summary import commit_summary
from hudi_meta.index.event_time_source import check_event_time_field
from hudi_meta.index.freshness_inputs import indexed_freshness
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.registry import register_table, table_id_of
from hudi_meta.index.run_stats import IndexRunStats
from hudi_meta.index.store import open_store, store_label
from hudi_meta.metrics import table_metric_values
from hudi_meta.progress import Report, silent
from hudi_meta.sync.hive_schema import Layout, TableStrategy
from hudi_meta.sync.hive_sync import SyncReport
from hudi_meta.sync.recorded import SyncTarget, sync_recorded
from hudi_meta.table.metadata_table import listing_through_metadata
from hudi_meta.table.table import HudiTable, Query, QueryKind
from hudi_meta.table.times import now_ms
from hudi_meta.write.clean_plan import CleanPolicy, Policy

if TYPE_CHECKING:
    from sqlalchemy import Engine


@dataclass(frozen=True)
class Registration:
    """A table registered in the store: its id there, its name and base path."""

    table_id: int
    name: str
    base_path: str


@dataclass(frozen=True)
class CompactionSummary:
    """What a completed compaction did, from its plan and its commit's write stats."""

    instant: str
    operations: int  # file groups compacted
    records_written: int
    bytes_written: int
    log_files_compacted: int
    links: int  # log files after T kept in the new slices as links or copies
    duration_ms: int

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def compaction_summary(table: HudiTable, instant: str, took_ms: int) -> CompactionSummary:
    """The summary of the completed compaction `instant` of `table` (opened after it completed)."""
    done = table.timeline.instant(instant)
    assert done is not None and done.is_completed
    stats = [s for group in table.timeline.commit_metadata(done).partition_to_write_stats.values() for s in group]
    plan = table.compaction_plan(instant)
    return CompactionSummary(
        instant=instant,
        operations=len(plan.operations),
        records_written=sum(s.num_writes for s in stats),
        bytes_written=sum(s.total_write_bytes for s in stats),
        log_files_compacted=sum(s.total_log_files_compacted for s in stats),
        links=sum(len(op.symlink_operations) for op in plan.operations),
        duration_ms=took_ms,
    )


class Table:
    """A Hudi table and the metadata store that indexes it. Open it with `open_table`; close it (or use `with`)
    to release the store's connections. Not shared between threads."""

    def __init__(self, uri: str, store: str | Engine | None = None, storage_options: Mapping[str, Any] | None = None):
        self.uri = uri
        self.storage_options = dict(storage_options or {})
        self._store = store
        self._engine: Engine | None = store if store is not None and not isinstance(store, str) else None
        self._owns_engine = False
        self._open()  # fails at once on a path that is no Hudi table

    def _open(self) -> HudiTable:
        return HudiTable.open(self.uri, self.storage_options or None)

    @property
    def hudi(self) -> HudiTable:
        """The table's format layer (timeline, file slices, readers), opened now: its timeline is the current one
        (a `HudiTable` kept across writes would not see them)."""
        return self._open()

    @property
    def engine(self) -> Engine:
        """The store's engine, opened on first use (a new SQLite store gets its schema; see `open_store`)."""
        if self._engine is None:
            self._engine = open_store(self._store if isinstance(self._store, str) else None)
            self._owns_engine = True
        return self._engine

    def close(self) -> None:
        if self._owns_engine and self._engine is not None:
            self._engine.dispose()
            self._engine = None

    def __enter__(self) -> Table:
        return self

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def index(
        self,
        event_time_field: str | None = None,
        through_metadata: bool = False,
        progress: Report = silent,
        batch_files: int = 200,
    ) -> IndexRunStats:
        """Index what is new in the table (instants, log blocks and their event times, plans, links).
        `through_metadata` lists the files through Hudi's metadata table instead of storage (object stores).
        An `event_time_field` that is no column of the table is refused, naming the closest, before the store opens."""
        table = self._open()
        if through_metadata:
            table = table.through(listing_through_metadata)
            table.file_groups()  # refused in one line (no MDT, links, a pending clean or rollback) before the store
        if event_time_field:
            check_event_time_field(table, event_time_field)  # no column of the table: refused before the store opens
        return Indexer(self.engine, table, batch_files=batch_files, progress=progress).run(event_time_field)

    def freshness(self, now: Moment | None = None) -> Freshness:
        """What the read-optimized view guarantees now (threshold, watermark, lag, late data), indexing first."""
        return indexed_freshness(self.engine, self._open(), None if now is None else as_time_ms(now, "now"))

    def schedule_compaction(
        self,
        threshold: Moment | None = None,
        data_latency: Duration | None = None,
        mode: LinkMode | str = LinkMode.SYMLINK,
        exact: bool = False,
        strategy: Strategy | str = Strategy.EVENT_TIME,
        trigger: Trigger | str = Trigger.EVENT_TIME,
        log_file_size_threshold: int | None = None,
        max_delta_commits: int | None = None,
        max_delta_seconds: int | None = None,
    ) -> ScheduleResult:
        """Plan an event-time compaction at T = `threshold` (or now - `data_latency`; neither: the table's
        `hoodie.compaction.event.time.data.latency`) and write it; `result.instant` is None when the trigger or
        the index found nothing to do (`result.reason` says why)."""
        request = ScheduleRequest(
            threshold_ms=None if threshold is None else as_time_ms(threshold, "threshold"),
            data_latency_ms=None if data_latency is None else as_duration_ms(data_latency, "data latency"),
            mode=mode if isinstance(mode, LinkMode) else LinkMode.parse(mode, "mode"),
            exact=exact,
            strategy=strategy if isinstance(strategy, Strategy) else Strategy.parse(strategy, "strategy"),
            trigger=trigger if isinstance(trigger, Trigger) else Trigger.parse(trigger, "trigger"),
            log_file_size_threshold=log_file_size_threshold,
            max_delta_commits=max_delta_commits,
            max_delta_seconds=max_delta_seconds,
        )
        return self.schedule(request)

    def schedule(self, request: ScheduleRequest) -> ScheduleResult:
        """`schedule_compaction` for a request already built (the CLI's and the service's)."""
        request.validate(now_ms())  # the options together, before the store is opened
        return schedule_compaction(self.engine, self._open(), request)

    def runnable(self, instant: str | None = None) -> str:
        """The compaction `run_compaction(instant)` would run (None: the oldest pending one), or a one-line
        refusal naming why none can run."""
        return runnable_instant(self._open(), instant)

    def run_compaction(
        self,
        instant: str | None = None,
        spark: Any = None,
        map_tasks: MapTasks | None = None,
        on_phase: Callable[[str], None] | None = None,
        progress: Report = silent,
        spark_master: str | None = None,
    ) -> CompactionSummary:
        """Execute the pending compaction `instant` (None: the oldest pending one), on `spark` (a SparkSession;
        or one started on `spark_master` once the compaction is known to be runnable) or else in this process
        (`map_tasks` runs the operations; default: one after another), commit it and index the result. A run
        killed at any point is finished by running it again."""
        table = self._open()
        instant = runnable_instant(table, instant)  # refused in one line before Spark starts
        if spark is None and spark_master is not None:
            from hudi_meta.spark.session import spark_session  # the `spark` extra: imported only when used

            spark = spark_session(spark_master)
        started = time.monotonic()
        if spark is not None:
            from hudi_meta.spark.compaction import run  # the `spark` extra: imported only when used

            run(spark, table, instant, on_phase)
        elif map_tasks is not None:
            run_compaction(table, instant, map_tasks, on_phase)
        else:
            run_compaction(table, instant, on_phase=on_phase)
        took_ms = int((time.monotonic() - started) * 1000)
        after = self._open()
        Indexer(self.engine, after, progress=progress).run()
        return compaction_summary(after, instant, took_ms)

    def clean(
        self,
        policy: Policy | str | None = None,
        retained: int | None = None,
        hours: int | None = None,
        dry_run: bool = True,
        progress: Report = silent,
    ) -> CleanOutcome:
        """Plan (`dry_run`, the default) or execute a clean by `policy` (default: the table's `hoodie.clean.*`,
        else keep the latest 10 commits) that never deletes a file a live link shows."""
        table = self._open()
        name = policy.value if isinstance(policy, Policy) else policy
        clean_policy = CleanPolicy.from_properties(table.config.props, name, retained, hours)  # refused naming them
        check_cleanable(table)
        return run_clean(self.engine, table, clean_policy, dry_run=dry_run, progress=progress)

    def check(self, index: bool = True) -> CheckReport:
        """Every finding of the table's files, links, plans and freshness, and (`index`) of the index against
        them. The store is opened as every command opens it (`engine`: a new SQLite store gets its schema), so
        a store new to this table says "not registered" instead of failing."""
        table = self._open()  # a path that is not a table is refused before a store is created
        engine = self.engine if index else None
        report = check_table(table, engine, store_label(str(engine.url)) if engine is not None else None)
        if not index:
            report.notes = ["index drift not checked: not asked for"]
        return report

    def sync(
        self,
        mode: str,
        uri: str,
        database: str | None = None,
        name: str | None = None,
        timeout_s: float = 30.0,
        as_datasource: bool = True,
        dry_run: bool = False,
        skip_ro_suffix: bool | None = None,
        sync_strategy: TableStrategy | str | None = None,
    ) -> SyncReport:
        """Publish the read-optimized freshness into a Hive metastore (`mode` "hms": Thrift at `uri`;
        "hiveserver2": SQL) as the RO and RT tables' properties; `dry_run` says what would change. The tables are
        the registrations found under HiveSyncTool's names; `skip_ro_suffix` and `sync_strategy` (RO, RT, ALL: its
        `hoodie.datasource.hive_sync.skip_ro_suffix` and `.table.strategy`) name the tables to register instead."""
        layout = None
        if skip_ro_suffix is not None or sync_strategy is not None:
            strategy = TableStrategy.parse(sync_strategy or "all", "sync strategy")
            layout = Layout(bool(skip_ro_suffix), strategy)
        target = SyncTarget(mode, uri, database, name, timeout_s, as_datasource=as_datasource, layout=layout)
        target.validate()  # before anything is read
        return sync_recorded(self.engine, self._open(), target, dry_run)

    def register(self, event_time_field: str | None = None) -> Registration:
        """Register the table in the store (again: its settings updated), with the record field holding the event
        time (None: the table's own setting); a field that is no column of the table is refused, naming the
        closest, before the store opens."""
        table = self._open()
        if event_time_field:
            check_event_time_field(table, event_time_field)
        table_id = register_table(self.engine, table, event_time_field)
        return Registration(table_id, table.config.name, table.base_path)

    def refresh_index(self) -> IndexRefresh:
        """Bring the store up to date after a change to the table, if the table is registered there. A SQLite store
        that does not exist is left alone; a store that fails is named in `failure` (the table's change stands
        either way, and the next `index` catches up)."""
        if self._engine is None and not store_exists(self._store if isinstance(self._store, str) else None):
            return IndexRefresh()
        try:
            table = self._open()
            if table_id_of(self.engine, table.uri) is not None:
                return IndexRefresh(Indexer(self.engine, table).run())
        except (HudiMetaError, SQLAlchemyError) as e:
            return IndexRefresh(failure=first_line(e))
        return IndexRefresh()

    def _refreshed(self, report: AdminReport, changed: bool) -> AdminReport:
        if changed:
            report.index = self.refresh_index()
        return report

    def rollback(
        self, instant: str, completed_compaction: bool = False, force: bool = False, dry_run: bool = True
    ) -> AdminReport:
        """Roll back (`dry_run`, the default: say what would be done) the compaction `instant` (a completed one
        only with `completed_compaction`: the published freshness moves back) or the failed write `instant` (one
        whose heartbeat is still live only with `force`); the store is brought up to date afterwards."""
        report = admin.rollback(self._open(), instant, completed_compaction, force, dry_run)
        return self._refreshed(report, not dry_run)

    def unschedule(self, instant: str, dry_run: bool = True) -> AdminReport:
        """Take back the pending compaction plan `instant` (`dry_run`, the default: say what would be done)."""
        return self._refreshed(admin.unschedule(self._open(), instant, dry_run), not dry_run)

    def validate(self, instant: str | None = None) -> list[Validation]:
        """Whether the pending compactions (or the compaction or slice `instant`) can still run, and the log files
        a compaction left misplaced."""
        return admin.validate(self._open(), instant)

    def repair(self, instant: str, dry_run: bool = True) -> AdminReport:
        """Fix what `validate` finds in the compaction (or slice) `instant` (`dry_run`, the default: say what
        would be done); what repair cannot fix stays in the report as failed actions."""
        report = admin.repair_compaction(self._open(), instant, dry_run)
        return self._refreshed(report, not dry_run and report.steps > 0)

    def archive(
        self, min_commits: int | None = None, max_commits: int | None = None, dry_run: bool = True
    ) -> ArchiveOutcome:
        """Plan (`dry_run`, the default) or run the archival of old instants (into the LSM history on table
        versions 8 and 9, the archived log on version 6) keeping `min_commits` and running above `max_commits`
        completed commits (default: the table's `hoodie.keep.min.commits` and `hoodie.keep.max.commits`). After
        an archival that archived or finished instants the store marks them."""
        report = admin.archive(self._open(), min_commits, max_commits, dry_run)
        if dry_run or report.error is not None or not (report.archived or report.finished):
            return ArchiveOutcome(report)
        return ArchiveOutcome(report, self.refresh_index())

    def metrics(self, now: Moment | None = None) -> TableMetrics:
        """The table's metrics (docs/catalog-and-freshness.md section 2), indexing first."""
        at = now_ms() if now is None else as_time_ms(now, "now")
        table = self._open()
        fresh = indexed_freshness(self.engine, table, at)
        table_id = table_id_of(self.engine, table.uri)
        assert table_id is not None  # indexed just now
        values = table_metric_values(self.engine, table_id, fresh, table.config.timeline_timezone, at)
        return TableMetrics(table.config.name or table.base_path, values)

    def show(self, what: str, from_files: bool = False) -> list[dict[str, Any]]:
        """The table's `what` (timeline, slices, blocks, plans or links) as rows, from the index (refused when
        the table is not indexed, or upgraded since), or `from_files` (timeline, slices, blocks) from its files."""
        table = self._open()
        return rows_from_files(table, what) if from_files else rows_from_index(self.engine, table, what)

    def commit_summary(self, instant: str) -> dict[str, Any]:
        """What the write `instant` committed (records written and deleted, files, partitions); {} when it is not
        on the timeline."""
        table = self._open()
        done = table.timeline.instant(instant)
        return commit_summary(table, done) if done is not None else {}

    def shortfall(self, complete_before: Moment) -> str | None:
        """Why the read-optimized view does not hold all data before `complete_before`, or None if it does."""
        return view_for_complete_before(self.freshness(), as_time_ms(complete_before, "complete before"))

    def scan(
        self,
        query: str = "snapshot",
        columns: list[str] | None = None,
        begin: str | None = None,
        end: str | None = None,
        as_of: str | None = None,
    ) -> Iterator[pa.Table]:
        """The records of a query (snapshot, ro, incremental over (`begin`, `end`], time-travel `as_of`) one
        merged file slice at a time, so that a caller holds one slice."""
        return self._open().iter_read(_query(query, begin, end, as_of), columns)

    def read(
        self,
        query: str = "snapshot",
        columns: list[str] | None = None,
        complete_before: Moment | None = None,
        strict: bool = False,
        begin: str | None = None,
        end: str | None = None,
        as_of: str | None = None,
    ) -> pa.Table:
        """All records of a query as one Arrow table. With `complete_before` T (query "ro" only), the
        read-optimized view is read only if it holds all data before T; otherwise the snapshot view is read, or
        with `strict` a `NotFreshError` is raised."""
        if strict and complete_before is None:
            raise ParameterError("{strict} goes with {complete_before}", "strict", "complete_before")
        if complete_before is not None:
            if QueryKind.parse(query, "query") != QueryKind.RO:
                raise ParameterError("{complete_before} goes with the ro query", "complete_before")
            short = self.shortfall(complete_before)
            if short is not None:
                if strict:
                    raise NotFreshError(short)
                query = QueryKind.SNAPSHOT
        return self._open().read(_query(query, begin, end, as_of), columns)


def _query(kind: str, begin: str | None, end: str | None, as_of: str | None) -> Query:
    """The query a caller names: a `QueryKind` in any of its spellings (`read_optimized` too), with the arguments
    it takes (`table.check_query`: refused naming the parameters)."""
    return Query(kind, begin=begin, end=end, as_of=as_of)


def open_table(uri: str, store: str | Engine | None = None, storage_options: Mapping[str, Any] | None = None) -> Table:
    """The table at `uri` (a path or fsspec URL, with fsspec `storage_options`) with the metadata store `store`
    (a SQLAlchemy URL, an Engine, or None: $HUDI_META_DB, else `./hudi-meta.db`)."""
    return Table(uri, store, storage_options)
