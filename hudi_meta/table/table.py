"""A Hudi table opened from its base path: config, timeline, file-system view and queries.

The table plans file slices; `file_group_reader.read_file_slice` turns each slice into Arrow. Engines
(Spark) split work by slice the same way.

An incremental read keeps the records whose `_hoodie_commit_time` lies in (begin, end]; on timeline layout 2
(versions 8 and 9) the commits are chosen by completion time in (begin, end], as hudi-rs and Java's 1.x
incremental queries choose them (docs/hudi-1x.md section 2). A table written with
`hoodie.populate.meta.fields=false` has no commit time in its records (Java leaves the column null), so such a
read is refused, as Java's incremental relations refuse it ("Incremental queries are not supported when meta
fields are disabled": hudi-spark-datasource/hudi-spark-common/src/main/scala/org/apache/hudi/
IncrementalRelationV1.scala for COW, MergeOnReadIncrementalRelationV1.scala for MOR, and their V2 forms). The files
each commit wrote (its commit metadata) are no exact substitute: a base file that an update (COW, or MOR small-file
handling) or a compaction rewrote holds records of older commits too, and would count them as new. Time travel
needs no commit times (file names and log block headers carry the instants), so it reads such tables.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import posixpath
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_meta.errors import (
    CorruptFileError,
    NotAHudiTableError,
    ParameterError,
    TableNotFoundError,
    UnsupportedTableError,
)
from hudi_meta.file_group.cleaned import check_not_cleaned
from hudi_meta.file_group.fs_view import (
    BaseFile,
    FileGroup,
    LogFile,
    ViewInputs,
    build_file_groups,
    latest_base_for_ro,
    latest_slice_for_snapshot,
    visible_groups,
)
from hudi_meta.file_group.merge.rules import MergeSpec
from hudi_meta.file_group.reader import ReadStats, read_file_slice
from hudi_meta.format import archived_log
from hudi_meta.format import config_keys as keys
from hudi_meta.format.file_names import BaseFileName, LogFileName
from hudi_meta.format.lsm_timeline import archived_times
from hudi_meta.format.properties import parse_properties
from hudi_meta.format.table_service_metadata import CompactionPlan
from hudi_meta.spelling import Spelled
from hudi_meta.storage import Storage, storage_for
from hudi_meta.table.config import TableConfig
from hudi_meta.table.times import parse_instant
from hudi_meta.timeline.instant import WRITE_ACTIONS, Action
from hudi_meta.timeline.timeline import Timeline, TimelineWriter, new_instant_time

META_DIR = ".hoodie"
AUX_DIR = ".aux"  # .hoodie/.aux: Hudi's folder for auxiliary files (no reader lists it)
PROPERTIES = "hoodie.properties"
COMMIT_TIME_COLUMN = "_hoodie_commit_time"


class QueryKind(Spelled):
    """What a read sees (Hudi's `hoodie.datasource.query.type`, whose spellings are read too)."""

    SNAPSHOT = "snapshot"
    RO = "ro"
    INCREMENTAL = "incremental"
    TIME_TRAVEL = "time-travel"

    @classmethod
    def aliases(cls) -> dict[str, str]:
        return {"read_optimized": "ro"}  # `time_travel` folds to `time-travel` by itself


# the arguments each query kind takes, and the one it needs (snapshot and ro take none)
QUERY_ARGUMENTS: dict[QueryKind, tuple[tuple[str, ...], str]] = {
    QueryKind.INCREMENTAL: (("begin", "end"), "begin"),
    QueryKind.TIME_TRAVEL: (("as_of",), "as_of"),
}


def check_query(kind: QueryKind | str, begin: str | None, end: str | None, as_of: str | None) -> QueryKind:
    """The query kind a caller names (any `QueryKind` spelling, `read_optimized` too), refused in one line
    naming the parameters when they do not go with it: an incremental query reads (`begin`, `end`], a
    time-travel query the table `as_of` an instant, the others neither."""
    query = QueryKind.parse(kind, "query")
    takes, needs = QUERY_ARGUMENTS.get(query, ((), ""))
    given = {"begin": begin, "end": end, "as_of": as_of}
    article = "an" if query == QueryKind.INCREMENTAL else "a"
    if needs and given[needs] is None:
        raise ParameterError(f"{article} {query} query needs {{{needs}}} (a time or an instant)", needs)
    if any(value and name not in takes for name, value in given.items()):
        others = _listed([n for n in given if n not in takes], "or")
        what = f"{_listed(list(takes), 'and')}, not {others}" if takes else f"no {others}"
        raise ParameterError(f"{article} {query} query takes {what}", *given)
    return query


def _listed(names: list[str], last: str) -> str:
    """`{a}, {b} or {c}`: placeholders for `ParameterError`."""
    marked = [f"{{{n}}}" for n in names]
    return marked[0] if len(marked) == 1 else f"{', '.join(marked[:-1])} {last} {marked[-1]}"


@dataclass(frozen=True)
class Query:
    """A read: snapshot, read-optimized (ro), incremental over (begin, end], or time travel as of an instant."""

    kind: QueryKind | str = QueryKind.SNAPSHOT  # any `QueryKind` spelling; a `QueryKind` once made
    begin: str | None = None
    end: str | None = None
    as_of: str | None = None
    # timeline layout 2: the writes (active or archived) whose completion time lies in (begin, end], and the first
    # instant whose completion time the table knows (set by `HudiTable.resolve`); an incremental read of a 1.x table
    # selects commits by completion time
    completed_in_range: frozenset[str] | None = None
    first_active: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", check_query(self.kind, self.begin, self.end, self.as_of))

    @classmethod
    def of(cls, query: Query | QueryKind | str) -> Query:
        return query if isinstance(query, Query) else cls(query)

    def resolve(self, timeline_zone: dt.tzinfo) -> Query:
        """The same query with its times as instant times of the table (see `times.parse_instant`)."""

        def instant(text: str | None) -> str | None:
            return None if text is None else parse_instant(text, timeline_zone)

        resolved = Query(self.kind, instant(self.begin), instant(self.end), instant(self.as_of))
        if resolved.begin and resolved.end and resolved.end < resolved.begin:
            raise ParameterError(f"{{end}} {self.end} is before {{begin}} {self.begin}", "end", "begin")
        return resolved

    @property
    def as_of_instant(self) -> str | None:
        """The instant the table is read as of (None: the latest)."""
        return self.end if self.kind == QueryKind.INCREMENTAL else self.as_of

    def filter(self, records: pa.Table) -> pa.Table:
        """Keep, for incremental queries, the records whose commit time lies in (begin, end]."""
        if self.kind != QueryKind.INCREMENTAL or COMMIT_TIME_COLUMN not in records.column_names:
            return records
        times = records.column(COMMIT_TIME_COLUMN)
        keep = pc.greater(times, self.begin)
        if self.end is not None:
            keep = pc.and_(keep, pc.less_equal(times, self.end))
        if self.completed_in_range is not None:
            # 1.x: a commit counts by its completion time; one older than every instant the table knows (neither
            # active nor in the history) by its requested time
            chosen = pc.is_in(times, pa.array(sorted(self.completed_in_range), pa.string()))
            archived = pc.less(times, self.first_active) if self.first_active else pa.scalar(False)
            keep = pc.or_(chosen, pc.and_(archived, keep))
        return records.filter(keep)


@dataclass(frozen=True)
class SliceRead:
    """One unit of read work: a file group's base file and log files (relative paths)."""

    partition: str
    file_id: str
    base_file: str | None
    log_files: tuple[str, ...]


Listing = tuple[list[BaseFile], list[LogFile]]  # a table's data files: base files, log files
ListingSource = Callable[["HudiTable"], Listing]


class HudiTable:
    """One Hudi table (COW or MOR; versions 6, 8 and 9 are read, 6 is written) as of when it was opened: the
    engine-neutral entry point for reading it, for the writers and table services that change it, and for the
    indexer.

    The timeline, the listing and the view are loaded once and cached; what other writers (or this process,
    through another `HudiTable`) commit afterwards is seen only after `reload()` or a new `open`. Queries see
    committed instants only, and never the links and exact logs a pending compaction has already made: until
    its commit they repeat records of the slice before.
    """

    def __init__(
        self, storage: Storage, base_path: str, config: TableConfig, listing_source: ListingSource | None = None
    ) -> None:
        self.storage = storage
        self.base_path = base_path
        self.config = config
        self.listing_source = listing_source  # None: list the storage (see `through`)

    def through(self, listing_source: ListingSource) -> HudiTable:
        """This table with its data files listed by `listing_source` instead of the storage (the index lists
        through the metadata table this way: `metadata_table.listing_through_metadata`)."""
        return HudiTable(self.storage, self.base_path, self.config, listing_source)

    @property
    def uri(self) -> str:
        """The table's full URI (a local path, or `s3://bucket/path`): how the store names it, and what tasks and
        readers rebuild its storage from (with `storage.options`)."""
        return self.storage.uri(self.base_path)

    @classmethod
    def open(cls, uri: str, options: Mapping[str, object] | None = None) -> HudiTable:
        """The table at `uri` (a local path or an fsspec URL, with fsspec storage `options` such as an endpoint).
        Opening reads only `hoodie.properties`, and a missing path, a folder that is no Hudi table or a damaged
        properties file is a typed error that says which; the timeline is loaded on first use."""
        storage, base_path = storage_for(uri, options)
        if not storage.exists(base_path):
            raise TableNotFoundError(f"no such table path: {uri}")
        props_path = posixpath.join(base_path, META_DIR, PROPERTIES)
        if not storage.exists(props_path):
            raise NotAHudiTableError(f"not a Hudi table (no {META_DIR}/{PROPERTIES}): {uri}")
        try:
            props = parse_properties(storage.read_bytes(props_path).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, OSError) as e:
            raise CorruptFileError(f"unreadable {props_path}: {e}") from e
        return cls(storage, base_path, TableConfig.load(props, storage.uri(props_path)))

    # ---- paths and timeline -------------------------------------------------------------------------

    @property
    def meta_path(self) -> str:
        return posixpath.join(self.base_path, META_DIR)

    @property
    def timeline_path(self) -> str:
        d = self.config.timeline_dir
        return posixpath.join(self.meta_path, d) if d else self.meta_path

    @cached_property
    def timeline(self) -> Timeline:
        """The timeline as of its first use (cached until `reload`)."""
        return Timeline.load(self.storage, self.timeline_path, self.config.timeline_layout)

    def new_instant_time(self) -> str:
        """A new instant time for this table: in its timeline's zone, after every requested and completion time on
        its timeline (a compaction planned now is after every write that completed before it)."""
        times = [t for i in self.timeline.instants for t in (i.requested_time, i.completion_time) if t]
        return new_instant_time(times, zone=self.config.timeline_timezone)

    def timeline_writer(self) -> TimelineWriter:
        """What writes this table's instant files, in its layout and zone."""
        config = self.config
        return TimelineWriter(self.storage, self.timeline_path, config.timeline_layout, config.timeline_timezone)

    @property
    def history_path(self) -> str:
        """The LSM history of a layout-2 table's archived instants (`hoodie.timeline.history.path`)."""
        return posixpath.join(self.timeline_path, keys.TIMELINE_HISTORY_PATH.or_default(self.config.props))

    @property
    def archive_path(self) -> str:
        """The 0.x archived timeline of a layout-1 table (`hoodie.archivelog.folder` under `.hoodie/`)."""
        return archived_log.folder_path(self.meta_path, self.config.props)

    @cached_property
    def archived(self) -> dict[str, tuple[str, str | None]]:
        """Requested time -> (completion time, action) of the instants archival moved off the active timeline: into
        the LSM history (layout 2), or the 0.x archived log (layout 1, where an instant completes at its requested
        time); empty before the first archival. Read on first use (cached until `reload`). A history or archive
        that cannot be read whole raises CorruptFileError: on layout 2 an archived delta commit taken for pending,
        or given its requested time, puts its log file in the wrong slice (apache/hudi#14365)."""
        if self.config.timeline_layout < 2:
            return archived_log.archived_instants(self.storage, self.archive_path)
        return archived_times(self.storage, self.history_path)

    def reload(self) -> None:
        """Forget the cached timeline, listing and view, so the next call sees what was committed since."""
        self.__dict__.pop("timeline", None)
        self.__dict__.pop("archived", None)
        self.__dict__.pop("_listing", None)
        self.__dict__.pop("_view_inputs", None)
        self.__dict__.pop("_groups", None)

    def compaction_plan(self, instant_time: str) -> CompactionPlan:
        """The plan of compaction `instant_time`, as its `.compaction.requested` holds it (links included)."""
        return CompactionPlan.from_bytes(self.timeline.requested_bytes(instant_time, Action.COMPACTION))

    # ---- listing and view ---------------------------------------------------------------------------

    def partition_folders(self, path: str | None = None, rel: str = "") -> Iterator[tuple[str, str]]:
        """(path relative to the base path, full path) of the base path and every folder under it that is not
        hidden (`.hoodie` and the like), depth first: where a table's data files may be."""
        path = self.base_path if path is None else path
        yield rel, path
        for info in self.storage.list_dir(path):
            if info.is_dir and not info.name.startswith("."):
                yield from self.partition_folders(info.path, f"{rel}/{info.name}" if rel else info.name)

    @cached_property
    def _listing(self) -> Listing:
        if self.listing_source is not None:
            return self.listing_source(self)
        listing: Listing = ([], [])
        for rel, path in self.partition_folders():
            for info in self.storage.list_dir(path):
                if not info.is_dir:
                    target = posixpath.relpath(info.link_target, self.base_path) if info.link_target else None
                    self.add_data_file(listing, rel, info.name, info.size, target)
        return listing

    def add_data_file(self, listing: Listing, partition: str, name: str, size: int, link_target: str | None) -> None:
        """Add file `name` of `partition` to `listing` when it is one of this table's base or log files."""
        log = LogFileName.try_parse(name)
        if log is not None and log.extension == "log" and not log.cdc:
            listing[1].append(LogFile(partition, name, size, log, link_target))
            return
        base = BaseFileName.try_parse(name)
        if base is not None and base.extension == "." + self.config.base_file_format.lower():
            listing[0].append(BaseFile(partition, name, size, base))

    def view_inputs(self) -> ViewInputs:
        """The timeline facts the view needs (cached until `reload`)."""
        return self._view_inputs

    @cached_property
    def _view_inputs(self) -> ViewInputs:
        tl = self.timeline
        pending: dict[tuple[str, str], str] = {}
        planned: dict[tuple[str, str], str] = {}  # (partition, link name) -> its target's name
        for instant in tl.pending_compactions():
            plan = self.compaction_plan(instant.requested_time)
            for op in plan.operations:
                partition = op.partition_path or ""
                pending[(partition, op.file_id)] = instant.requested_time
                # the carry log is not among them: its blocks are of the pending instant, which readers skip anyway,
                # and a writer that did not know the plan may have taken its name (its records must be read)
                planned.update(((partition, s.symlink), s.target) for s in op.symlink_operations)
        # archived completion times first: an archival killed before its deletes leaves an instant in both places,
        # and the active copy counts. Layout 1 slices by requested time and takes every instant before the first
        # active one for committed: its archive adds nothing there (and an old Java archive this package cannot
        # decode would stop reads that do not need it)
        archived = self.archived if self.config.timeline_layout >= 2 else {}
        completed = {t: done for t, (done, _) in archived.items()}
        completed.update({i.requested_time: (i.completion_time or i.requested_time) for i in tl.completed()})
        return ViewInputs(
            table_version=self.config.version,
            completed=completed,
            first_active_instant=tl.first_instant_time,
            pending_compactions=pending,
            replaced=frozenset(tl.replaced_file_ids()),
            pending_links=self._made_links(planned) if planned else frozenset(),
        )

    def _made_links(self, planned: dict[tuple[str, str], str]) -> frozenset[tuple[str, str]]:
        """The planned link names that hold the plan's links: a symlink, or a copy with its target's bytes (made
        atomically, never partial). A writer that did not know the plan (Java, without a shared lock) may have
        taken a link's name for its own log file before the links were made: that file is read like any other."""
        listed = {(f.partition, f.name): f for f in self._listing[1]}
        made = set()
        for (partition, link), target in planned.items():
            found, physical = listed.get((partition, link)), listed.get((partition, target))
            if found is None or found.link_target is not None:
                made.add((partition, link))  # not there (nothing to hide), or a symlink (writers never make one)
            elif physical is not None and found.size == physical.size:
                directory = posixpath.join(self.base_path, partition) if partition else self.base_path
                if self.storage.read_bytes(posixpath.join(directory, link)) == self.storage.read_bytes(
                    posixpath.join(directory, target)
                ):
                    made.add((partition, link))
        return frozenset(made)

    @cached_property
    def _groups(self) -> dict[tuple[str, str], FileGroup]:
        """Every file group on disk by (partition, file id), built once from the cached listing and view (callers
        only read them)."""
        bases, logs = self._listing
        return build_file_groups(bases, logs, self.view_inputs())

    def file_groups(self) -> list[FileGroup]:
        """The live file groups (not replaced by a completed replacecommit), sorted by (partition, file id); their
        slices include uncommitted files, which queries and planners filter with `view_inputs`."""
        return visible_groups(self._groups, self.view_inputs())

    def all_file_groups(self) -> list[FileGroup]:
        """Every file group on disk, replaced ones included (for `show slices`)."""
        return [self._groups[k] for k in sorted(self._groups)]

    def file_group(self, partition: str, file_id: str) -> FileGroup | None:
        """One file group on disk (replaced or not), None when it has no file."""
        return self._groups.get((partition, file_id))

    def resolve(self, query: Query | str) -> Query:
        """`query` with its times as this table's instant times; refused if the table cannot answer it exactly (an
        incremental read without meta fields, see the module docstring)."""
        resolved = Query.of(query).resolve(self.config.timeline_timezone)
        if resolved.kind == QueryKind.INCREMENTAL and not self.config.populate_meta_fields:
            raise UnsupportedTableError(
                f"{self.uri}: an incremental read needs each record's {COMMIT_TIME_COLUMN}, which this table does not "
                f"write ({keys.POPULATE_META_FIELDS.name}=false); read a snapshot, or travel in time, instead"
            )
        if resolved.kind == QueryKind.INCREMENTAL and self.config.timeline_layout >= 2:
            begin, end = resolved.begin or "", resolved.end
            writes = {t: done for t, (done, action) in self.archived.items() if action in WRITE_ACTIONS}
            writes.update(
                (i.requested_time, i.completion_time or i.requested_time) for i in self.timeline.completed_writes()
            )
            chosen = frozenset(t for t, done in writes.items() if done > begin and (end is None or done <= end))
            first_known = min(self.archived, default=None) or self.timeline.first_instant_time
            resolved = dataclasses.replace(resolved, completed_in_range=chosen, first_active=first_known)
        return resolved

    def plan_reads(self, query: Query | str) -> list[SliceRead]:
        """The file slices a query reads, one per file group."""
        query = self.resolve(query)
        self.config.check_readable()
        inputs = self.view_inputs()
        as_of = query.as_of_instant
        if as_of is not None:  # a clean may have deleted what the read needs: say so instead of missing records
            check_not_cleaned(self.timeline, self.all_file_groups(), inputs, query.kind, as_of)
        reads = []
        for fg in self.file_groups():
            if query.kind == QueryKind.RO or not self.config.is_mor:
                base = latest_base_for_ro(fg, inputs, as_of)
                if base is not None:
                    reads.append(SliceRead(fg.partition, fg.file_id, base.path, ()))
                continue
            found = latest_slice_for_snapshot(fg, inputs, as_of)
            if found is not None:
                b, logs = found
                reads.append(SliceRead(fg.partition, fg.file_id, b.path if b else None, tuple(f.path for f in logs)))
        return reads

    def arrow_schema(self) -> pa.Schema | None:
        """The schema of the table's records (meta columns included): its newest committed base file's."""
        inputs = self.view_inputs()
        newest: BaseFile | None = None
        for fg in self.file_groups():
            base = latest_base_for_ro(fg, inputs)
            if base is not None and (newest is None or base.parsed.instant > newest.parsed.instant):
                newest = base
        if newest is None:
            return None
        with self.storage.open_arrow(posixpath.join(self.base_path, newest.path)) as f:
            return pq.read_schema(f)

    # ---- reading ------------------------------------------------------------------------------------

    @property
    def merge_spec(self) -> MergeSpec:
        return self.config.merge_spec()

    def read_slice(
        self, read: SliceRead, query: Query | QueryKind | str = QueryKind.SNAPSHOT, stats: ReadStats | None = None
    ) -> pa.Table:
        """One slice merged as the query sees it (time-travel and incremental bounds applied)."""
        query = self.resolve(query)
        inputs = self.view_inputs()
        as_of = query.as_of_instant

        def visible(instant: str) -> bool:
            return inputs.is_committed(instant) and (as_of is None or instant <= as_of)

        merged = read_file_slice(
            self.storage, self.base_path, read.base_file, read.log_files, self.merge_spec, visible, stats
        )
        return query.filter(merged)

    def read(self, query: Query | QueryKind | str = QueryKind.SNAPSHOT, columns: list[str] | None = None) -> pa.Table:
        """All records of a query as one Arrow table."""
        query = self.resolve(query)
        reads = self.plan_reads(query)
        # slices read side by side: Parquet and columnar Avro decoding run outside the GIL
        with ThreadPoolExecutor(max_workers=max(1, min(len(reads), os.cpu_count() or 1))) as pool:
            tables = [t for t in pool.map(lambda r: self.read_slice(r, query), reads) if t.num_columns]
        if not tables:
            return pa.table({})
        result = pa.concat_tables(tables, promote_options="permissive")
        if columns:
            missing = [c for c in columns if c not in result.column_names]
            if missing:
                raise UnsupportedTableError(f"unknown column(s): {', '.join(missing)}")
            result = result.select(columns)
        return result

    def iter_read(
        self, query: Query | QueryKind | str = QueryKind.SNAPSHOT, columns: list[str] | None = None
    ) -> Iterator[pa.Table]:
        """The records of a query one merged slice at a time, so a reader can stream them (and hold one slice).

        A column neither the newest base file nor the first slice has is refused before anything is returned;
        a slice written before a column existed gets it as nulls, as `read` does when it concatenates."""
        query = self.resolve(query)
        reads = self.plan_reads(query)
        checked = False
        for read in reads:
            table = self.read_slice(read, query)
            if not table.num_columns:
                continue
            if columns:
                if not checked:
                    schema = self.arrow_schema()
                    known = set(table.column_names) | set(schema.names if schema is not None else ())
                    if missing := [c for c in columns if c not in known]:
                        raise UnsupportedTableError(f"unknown column(s): {', '.join(missing)}")
                    checked = True
                table = pa.table(
                    [table.column(c) if c in table.column_names else pa.nulls(table.num_rows) for c in columns],
                    names=columns,
                )
            yield table
