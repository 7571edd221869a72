"""Writing MOR/COW tables of versions 6, 8 and 9 through the core API: create a table, write base files and
log blocks, and commit them as one instant. Engines (Spark) call the same pieces per task.

Crash safety: data files are written before the completed instant; until that atomic create, readers
skip every block and base file of the instant, and `rollback` removes them.

Instant times: `WriteClient.begin` takes its instant time (after every time on the timeline) and creates the
requested file under the table lock, where the compaction scheduler checks for pending writes and takes its own;
so a compaction is never planned newer than a write that is not on the timeline yet (docs/concurrency.md 2.1).

Concurrent writers (Java's LAZY failed-writes cleaning): a write keeps a heartbeat (`heartbeat.py`) from
before its requested file until its commit, and other writers roll back only instants whose heartbeat
expired. Every write creates its own files exclusively: base files are named by (file id, instant), log
files are new files created with `create_atomic`, taking the next free version when another writer holds
the planned one; a retried task of the same instant replaces only its own earlier attempt's file.
Commit refuses (one-line error) when its own heartbeat went stale, or when its requested or inflight file
is gone (rolled back). Remaining window: the checks and the atomic create of the completed file are two
steps; a writer that stalls between them for longer than the heartbeat expiry window
(interval * tolerable misses) can still be rolled back by another writer and then publish a completed file
whose data the rollback removed. Java has the same window; it is as wide as one stall longer than the
expiry window, so keep that window well above the longest pause (GC, suspended process) a writer may see.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import itertools
import json
import logging
import posixpath
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_meta.crash_points import CrashPoints
from hudi_meta.errors import HeartbeatExpiredError, HudiMetaError, UnsupportedTableError, WriteConflictError
from hudi_meta.file_group.record_keys import drop_soft_deleted, record_key_array
from hudi_meta.format import config_keys as keys
from hudi_meta.format.avro_arrow import table_record_schema
from hudi_meta.format.block_content import DeleteRecord
from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.format.file_names import UNKNOWN_WRITE_TOKEN, BaseFileName, LogFileName
from hudi_meta.format.links import reserved_log_files
from hudi_meta.format.log_reader import written_only_by
from hudi_meta.format.log_writer import (
    EncodedBlock,
    append_blocks,
    arrow_avro_data_block,
    delete_block,
    parquet_data_block,
)
from hudi_meta.format.parquet_file import encode_parquet
from hudi_meta.format.properties import format_properties, parse_properties, with_checksum
from hudi_meta.format.table_service_metadata import RollbackMetadata
from hudi_meta.storage import storage_for
from hudi_meta.storage.base import Storage
from hudi_meta.table import bucket_index
from hudi_meta.table.config import COW, MOR, TableConfig
from hudi_meta.table.event_time import min_max_epoch_ms
from hudi_meta.table.schema import latest_commit_schema
from hudi_meta.table.table import AUX_DIR, META_DIR, PROPERTIES, HudiTable
from hudi_meta.timeline.instant import Action, Instant, State
from hudi_meta.write.conflicts import write_conflicts
from hudi_meta.write.failed_writes import rollback_failed_write
from hudi_meta.write.heartbeat import Heartbeat, HeartbeatConfig
from hudi_meta.write.lock import table_lock
from hudi_meta.write.markers import APPEND, CREATE, create_marker, delete_marker, delete_markers
from hudi_meta.write.write_targets import FileGroupTarget, target_for

META_COLUMNS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
PARTITION_METADATA = ".hoodie_partition_metadata"
log = logging.getLogger(__name__)
CRASH_AT_ENV = "HUDI_META_WRITE_CRASH_AT"  # failure injection for tests: kill -9 a write at a named step of begin
CRASH_POINTS = ("instant-chosen", "after-requested")
_crash = CrashPoints(CRASH_AT_ENV, CRASH_POINTS)
set_crash_hook = _crash.set_hook
crash_point = _crash.reach


WRITE_VERSIONS = (6, 8, 9)  # the table versions hudi-meta creates and writes
CURRENT_VERSION = 9  # what the current Hudi release (1.1) writes: the version `ingest --create` and the demo use
EVENT_TIME_MERGE_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"  # Java's HoodieRecordMerger ids
COMMIT_TIME_MERGE_STRATEGY = "ce9acb64-bde0-424c-9b91-f6ebba25356d"


def create_table(
    uri: str,
    name: str,
    record_key_fields: Sequence[str],
    ordering_field: str | None,
    partition_fields: Sequence[str] = (),
    table_type: str = MOR,
    event_time_field: str | None = None,
    min_event_time_header: bool = False,
    database: str = "default",
    hive_style_partitioning: bool = True,
    buckets: int | None = None,
    extra_props: dict[str, str] | None = None,
    options: Mapping[str, object] | None = None,
    version: int = 6,
) -> HudiTable:
    """Create an empty table of `version` (6: timeline layout 1; 8 or 9: layout 2, docs/hudi-1x.md section 7) at
    `uri` (fsspec storage `options` for its store). Without an ordering field, the latest write wins."""
    if table_type not in (MOR, COW):
        raise ValueError(f"table type must be {MOR} or {COW}")
    if version not in WRITE_VERSIONS:
        raise ValueError(f"table version must be one of {', '.join(map(str, WRITE_VERSIONS))}")
    if buckets is not None:
        bucket_index.check_buckets(buckets)
    storage, base_path = storage_for(uri, options)
    complex_key = len(record_key_fields) > 1 or len(partition_fields) > 1
    props = {
        keys.TABLE_NAME.name: name,
        keys.DATABASE_NAME.name: database,
        keys.TABLE_TYPE.name: table_type,
        keys.TABLE_VERSION.name: str(version),
        keys.ARCHIVELOG_FOLDER.name: "archived",
        keys.RECORD_KEY_FIELDS.name: ",".join(record_key_fields),
        keys.PARTITION_FIELDS.name: ",".join(partition_fields),
        keys.BASE_FILE_FORMAT.name: "PARQUET",
        keys.POPULATE_META_FIELDS.name: "true",
        keys.HIVE_STYLE_PARTITIONING.name: str(hive_style_partitioning).lower(),
        keys.PARTITION_PATH_URLENCODE.name: "false",
        keys.KEY_GENERATOR_CLASS.name: "org.apache.hudi.keygen."
        + (
            "ComplexKeyGenerator"
            if complex_key
            else "SimpleKeyGenerator"
            if partition_fields
            else "NonpartitionedKeyGenerator"
        ),
        keys.TIMELINE_TIMEZONE.name: "UTC",  # our instant times are UTC (Java's default is LOCAL)
    }
    if version == 6:
        props[keys.TIMELINE_LAYOUT.name] = "1"
        props[keys.PAYLOAD_CLASS.name] = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
        if ordering_field:
            props[keys.PRECOMBINE_FIELD.name] = ordering_field
    else:
        props.update(_one_x_props(version, ordering_field, complex_key, bool(partition_fields)))
    if event_time_field:
        props[keys.EVENT_TIME_FIELD.name] = event_time_field
    if buckets is not None:
        props[keys.INDEX_TYPE.name] = "BUCKET"
        props[keys.NUM_BUCKETS.name] = str(buckets)
        props[keys.BUCKET_HASH_FIELD.name] = ",".join(record_key_fields)
    if min_event_time_header:
        props[keys.MIN_EVENT_TIME_HEADER.name] = "true"
    props.update(extra_props or {})
    meta = posixpath.join(base_path, META_DIR)
    storage.makedirs(posixpath.join(meta, AUX_DIR))
    storage.makedirs(posixpath.join(meta, ".temp"))
    if version >= 8:
        storage.makedirs(posixpath.join(meta, "timeline", "history"))
    storage.create_atomic(posixpath.join(meta, PROPERTIES), format_properties(with_checksum(props)).encode())
    return HudiTable.open(uri, options)


def _one_x_props(version: int, ordering_field: str | None, complex_key: bool, partitioned: bool) -> dict[str, str]:
    """The keys a table of version 8 or 9 adds (as Java's HoodieTableConfig writes them for a new table): timeline
    layout 2 and its folders, the merge mode and its strategy id, the ordering field under the version's key, and
    the key generator type; version 8 still names the payload class. The metadata table stays off (no
    `hoodie.table.metadata.partitions`)."""
    props = {
        keys.TABLE_INITIAL_VERSION.name: str(version),
        keys.TIMELINE_LAYOUT.name: "2",
        keys.TIMELINE_PATH.name: "timeline",
        keys.TIMELINE_HISTORY_PATH.name: "history",
        keys.KEY_GENERATOR_TYPE.name: "COMPLEX" if complex_key else "SIMPLE" if partitioned else "NON_PARTITION",
        keys.MERGE_MODE.name: "EVENT_TIME_ORDERING" if ordering_field else "COMMIT_TIME_ORDERING",
        keys.MERGE_STRATEGY_ID.name: EVENT_TIME_MERGE_STRATEGY if ordering_field else COMMIT_TIME_MERGE_STRATEGY,
    }
    if version == 8:
        payload = "DefaultHoodieRecordPayload" if ordering_field else "OverwriteWithLatestAvroPayload"
        props[keys.PAYLOAD_CLASS.name] = f"org.apache.hudi.common.model.{payload}"
        if ordering_field:
            props[keys.PRECOMBINE_FIELD.name] = ordering_field
    elif ordering_field:
        props[keys.ORDERING_FIELDS.name] = ordering_field
    return props


def check_write_version(config: TableConfig) -> None:
    """Refuse a table whose version hudi-meta does not write (it never upgrades or downgrades a table)."""
    if config.version not in WRITE_VERSIONS:
        raise UnsupportedTableError(f"hudi-meta writes table versions 6, 8 and 9 (this is {config.version})")


def new_file_id() -> str:
    return f"{uuid.uuid4()}-0"


def with_meta_columns(
    data: pa.Table, instant: str, partition: str, file_name: str, keys: Sequence[str] | pa.Array
) -> pa.Table:
    """Prepend Hudi's meta columns to `data` (replacing any already there)."""
    data = data.drop_columns([c for c in META_COLUMNS if c in data.column_names])
    n = data.num_rows
    positions = pa.array(np.arange(n, dtype=np.int64)).cast(pa.string())
    meta = {
        "_hoodie_commit_time": pa.repeat(instant, n),
        "_hoodie_commit_seqno": pc.binary_join_element_wise(f"{instant}_0_", positions, ""),
        "_hoodie_record_key": keys if isinstance(keys, pa.Array) else pa.array(list(keys), pa.string()),
        "_hoodie_partition_path": pa.repeat(partition, n),
        "_hoodie_file_name": pa.repeat(file_name, n),
    }
    columns = list(meta.values()) + list(data.columns)
    return pa.Table.from_arrays(columns, names=list(meta) + data.column_names)


def partition_path_array(config: TableConfig, data: pa.Table) -> pa.Array:
    """`config.partition_path` of every row of `data`; each field's distinct values are spelt once."""
    if not config.partition_fields:
        return pa.repeat("", data.num_rows)
    levels = []
    for name in config.partition_fields:
        column = data.column(name).combine_chunks()
        if pa.types.is_dictionary(column.type):
            column = column.dictionary_decode()
        encoded = pc.dictionary_encode(column, null_encoding="encode")
        spelt = [config.partition_part(name, value) for value in encoded.dictionary.to_pylist()]
        levels.append(pa.array(spelt, pa.string()).take(encoded.indices))
    return levels[0] if len(levels) == 1 else pc.binary_join_element_wise(*levels, "/")


@dataclass(frozen=True)
class WriteContext:
    """What a task needs to write into a table: picklable, so engines ship it to executors."""

    base_path: str  # inside the storage
    meta_path: str
    props: dict[str, str]
    instant: str
    base_uri: str = ""  # the table's full URI (scheme included): what a task rebuilds the storage from
    storage_options: dict[str, object] = field(default_factory=dict)

    @property
    def config(self) -> TableConfig:
        return TableConfig(self.props)

    def storage(self) -> Storage:
        return storage_for(self.base_uri or self.base_path, self.storage_options)[0]

    def partition_dir(self, partition: str) -> str:
        return posixpath.join(self.base_path, partition) if partition else self.base_path

    def record_key_array(self, data: pa.Table) -> pa.Array:
        return record_key_array(data, self.config.merge_spec(), use_meta_column=False)

    def event_times(self, data: pa.Table) -> tuple[int | None, int | None]:
        field_name = self.config.event_time_field
        if field_name is None or field_name not in data.column_names or data.num_rows == 0:
            return None, None
        return min_max_epoch_ms(data.column(field_name))

    @property
    def log_marker(self) -> str:
        """The marker of a log file this write creates: APPEND on version 6, CREATE on 8 and 9 (a 1.x log file is
        its write's own, so rolling the write back deletes it; docs/hudi-1x.md section 3)."""
        return CREATE if self.config.version >= 8 else APPEND

    def avro_schema(self, schema: pa.Schema, meta: bool = True) -> str:
        if not meta:
            schema = pa.schema([f for f in schema if f.name not in META_COLUMNS])
        return json.dumps(table_record_schema(schema, self.config.name))


def _ensure_partition(ctx: WriteContext, storage: Storage, partition: str) -> str:
    path = ctx.partition_dir(partition)
    marker = posixpath.join(path, PARTITION_METADATA)
    if not storage.exists(marker):
        depth = len(partition.split("/")) if partition else 0
        now = dt.datetime.now(dt.UTC).isoformat()
        text = f"#partition metadata\n#{now}\ncommitTime={ctx.instant}\npartitionDepth={depth}\n"
        with contextlib.suppress(FileExistsError):  # another task created it first
            storage.create_atomic(marker, text.encode())
    return path


def write_new_file_group(
    ctx: WriteContext,
    partition: str,
    data: pa.Table,
    file_id: str | None = None,
    schema: pa.Schema | None = None,
) -> WriteStat:
    """Create a file group: a base file `{fileId}_{token}_{instant}.parquet` holding `data` (less the records
    flagged `_hoodie_is_deleted`, which a base file never holds)."""
    data = drop_soft_deleted(data)
    storage = ctx.storage()
    file_id = file_id or new_file_id()
    name = BaseFileName(file_id, UNKNOWN_WRITE_TOKEN, ctx.instant).name
    table = with_meta_columns(data, ctx.instant, partition, name, ctx.record_key_array(data))
    if schema is not None:
        table = table.cast(schema)
    payload = encode_parquet(table)
    directory = _ensure_partition(ctx, storage, partition)
    create_marker(storage, ctx.meta_path, ctx.instant, partition, name, CREATE)
    try:
        storage.create_atomic(posixpath.join(directory, name), payload)
    except FileExistsError:
        # The name holds this instant: only an earlier attempt of this very task (a Spark retry or a
        # speculative copy) wrote it. Replace it, so the file group keeps exactly one base file.
        storage.replace_atomic(posixpath.join(directory, name), payload)
    lo, hi = ctx.event_times(data)
    return WriteStat(
        file_id=file_id,
        path=f"{partition}/{name}" if partition else name,
        prev_commit="null",
        num_writes=data.num_rows,
        num_inserts=data.num_rows,
        total_write_bytes=len(payload),
        partition_path=partition,
        file_size_in_bytes=len(payload),
        min_event_time=lo,
        max_event_time=hi,
    )


def append_to_file_group(
    ctx: WriteContext,
    target: FileGroupTarget,
    data: pa.Table | None = None,
    deletes: Sequence[DeleteRecord] = (),
    block_format: str = "avro",
    schema: pa.Schema | None = None,
) -> WriteStat:
    """Write one data block (and/or one delete block) into the file group's target log file.

    A new target (`log_size == 0`) is created exclusively: if another writer took the name, the next free
    version of the same slice is used; if an earlier attempt of this instant's task wrote it (every block
    carries this instant), it is replaced. The write stat names the file actually written.
    """
    storage = ctx.storage()
    partition = target.partition
    directory = _ensure_partition(ctx, storage, partition)
    lo, hi = ctx.event_times(data) if data is not None and data.num_rows else (None, None)

    def encode(file_name: str) -> list[EncodedBlock]:
        blocks: list[EncodedBlock] = []
        if data is not None and data.num_rows:
            rows = with_meta_columns(data, ctx.instant, partition, file_name, ctx.record_key_array(data))
            if schema is not None:
                rows = rows.cast(schema)
            schema_json = ctx.avro_schema(rows.schema)
            mark = lo if ctx.config.min_event_time_header else None
            if block_format == "parquet":
                blocks.append(parquet_data_block(rows, schema_json, ctx.instant, mark))
            else:
                blocks.append(arrow_avro_data_block(rows, schema_json, ctx.instant, mark))
        if deletes:
            blocks.append(delete_block(deletes, ctx.instant))
        return blocks

    if target.log_size > 0:  # a file this write already created (several appends of one write client)
        log_file = target.log_file
        blocks = encode(log_file)
        create_marker(storage, ctx.meta_path, ctx.instant, partition, log_file, ctx.log_marker)
        offsets = append_blocks(storage, posixpath.join(directory, log_file), blocks)
    else:
        log_file, blocks = _create_log_file(ctx, storage, directory, target, encode)
        offsets = list(itertools.accumulate((len(b.data) for b in blocks[:-1]), initial=0))
    written = sum(len(b.data) for b in blocks)
    n = data.num_rows if data is not None else 0
    log = LogFileName.parse(log_file)
    return WriteStat(
        file_id=target.file_id,
        path=f"{partition}/{log_file}" if partition else log_file,
        prev_commit=target.base_instant,
        num_writes=n,
        num_update_writes=n,
        num_deletes=len(deletes),
        total_write_bytes=written,
        partition_path=partition,
        file_size_in_bytes=offsets[0] + written if offsets else 0,
        min_event_time=lo,
        max_event_time=hi,
        log_version=log.version,
        log_offset=offsets[0] if offsets else 0,
        base_file=target.base_file or "",
        log_files=[log_file],
    )


MAX_LOG_VERSION_PROBES = 1000


def _create_log_file(
    ctx: WriteContext,
    storage: Storage,
    directory: str,
    target: FileGroupTarget,
    encode: Callable[[str], list[EncodedBlock]],
) -> tuple[str, list[EncodedBlock]]:
    """Create the target log file exclusively, or the next free version; return the name used and its blocks."""
    planned = LogFileName.parse(target.log_file)
    for version in range(planned.version, planned.version + MAX_LOG_VERSION_PROBES):
        name = planned.with_version(version).name
        blocks = encode(name)
        payload = b"".join(b.data for b in blocks)
        path = posixpath.join(directory, name)
        create_marker(storage, ctx.meta_path, ctx.instant, target.partition, name, ctx.log_marker)
        try:
            storage.create_atomic(path, payload)
            return name, blocks
        except FileExistsError:
            pass
        if written_only_by(storage, path, ctx.instant):
            storage.replace_atomic(path, payload)  # an earlier attempt of this task: replace, never duplicate
            return name, blocks
        # another writer's file: our marker must not make a rollback of ours touch it
        delete_marker(storage, ctx.meta_path, ctx.instant, target.partition, name, ctx.log_marker)
    raise HudiMetaError(f"no free log file version for {target.file_id} after {target.log_file}")


@dataclass
class WriteClient:
    """One write (deltacommit or commit) of a table of version 6, 8 or 9: request, write files, then commit once.

    Use it as a context manager (or call `close`): the heartbeat thread started by `begin` then stops even
    when the write fails; a failed write's heartbeat file is left to expire, so another writer rolls it back.
    """

    table: HudiTable
    action: Action = Action.DELTA_COMMIT
    instant: str = ""
    stats: list[WriteStat] = field(default_factory=list)
    schema: pa.Schema | None = None
    heartbeat_config: HeartbeatConfig | None = None  # default: the table's properties, else Java's defaults
    # writes the metadata table's deltacommit of this write from its commit metadata (hudi_meta.metadata.writer),
    # called under the table lock right before the write completes (Java's order); a table with a metadata table is
    # written only with one
    metadata_writer: Callable[[str, CommitMetadata], None] | None = None
    # its counterpart for when this write is rolled back after a conflict (see rollback_failed_write)
    metadata_rollback: Callable[[str, RollbackMetadata], None] | None = None

    def __post_init__(self) -> None:
        check_write_version(self.table.config)
        if self.metadata_writer is None:
            self.table.config.refuse_without_metadata_writer(self.table.base_path, "write")
        self.timeline = self.table.timeline_writer()
        self._chosen_instant = not self.instant
        if not self.instant:
            self.instant = self.table.new_instant_time()
        if self.heartbeat_config is None:
            self.heartbeat_config = HeartbeatConfig.from_props(dict(self.table.config.props))
        self.heartbeat: Heartbeat | None = None

    @property
    def context(self) -> WriteContext:
        t = self.table
        return WriteContext(t.base_path, t.meta_path, dict(t.config.props), self.instant, t.uri, t.storage.options)

    # ---- lifecycle ----------------------------------------------------------------------------------

    def __enter__(self) -> WriteClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop the heartbeat; an uncommitted write keeps its heartbeat file, which then expires."""
        if self.heartbeat is not None:
            self.heartbeat.stop(delete=False)

    def begin(self) -> str:
        """Take the instant time, start the heartbeat, then request and start the instant, all under the table lock
        (docs/concurrency.md section 2.1): a scheduler, which plans under the same lock, then either
        sees this write pending or plans after it, never with a compaction instant newer than a write not yet on
        the timeline. The heartbeat starts before the requested file (Java's order: a live writer's instant never
        exists without a heartbeat)."""
        assert self.heartbeat_config is not None
        t = self.table
        with table_lock(t.storage, t.meta_path, t.config.props, "start a write"):
            if self._chosen_instant:
                self._take_instant_time()
            crash_point("instant-chosen")
            self.heartbeat = Heartbeat(t.storage, t.meta_path, self.instant, self.heartbeat_config)
            self.heartbeat.start()
            try:
                self.timeline.request(self.action, self.instant)
                crash_point("after-requested")
                self.timeline.start(self.action, self.instant)
            except BaseException:
                self.heartbeat.stop(delete=not t.storage.exists(self._pending_path(State.REQUESTED)))
                raise
        return self.instant

    def _take_instant_time(self) -> None:
        """Under the table lock: keep the time chosen when the client was made only while it is still after every
        requested and completion time on the timeline (as Java's startCommit takes a new one under the lock), else
        take a new one; an instant older than an archived one would read as committed, before a compaction as
        compacted."""
        self.table.reload()
        latest = max(
            (x for i in self.table.timeline.instants for x in (i.requested_time, i.completion_time) if x), default=""
        )
        if latest >= self.instant:
            self.instant = self.table.new_instant_time()
            self._rename_planned_logs()

    def _rename_planned_logs(self) -> None:
        """Versions 8 and 9 name a log file by its write's instant: targets planned before the instant changed
        take the new one (their slices stay as planned, so a conflict with a plan made since is still found)."""
        if not hasattr(self, "_targets") or self.table.config.version < 8:
            return
        for key, target in self._targets.items():
            planned = LogFileName.parse(target.log_file)
            renamed = LogFileName(planned.file_id, self.instant, planned.version, planned.write_token).name
            self._targets[key] = dataclasses.replace(target, log_file=renamed)

    def _pending_path(self, state: State) -> str:
        return posixpath.join(
            self.table.timeline_path,
            Instant(self.instant, self.action, state).file_name(self.table.config.timeline_layout),
        )

    def commit(self, operation_type: str = "UPSERT", extra_metadata: dict[str, str] | None = None) -> Instant:
        """Publish the write: one atomic create of the completed instant file, refused when this write may
        have been rolled back (its heartbeat went stale, or its requested or inflight file is gone)."""
        extra = dict(extra_metadata or {})
        if self.schema is not None:
            extra.setdefault("schema", self.context.avro_schema(self.schema, meta=False))
        elif (latest := _latest_commit_schema(self.table)) is not None:
            # a write of deletes only still records the table's schema, as Java's writers always do: readers
            # that take the latest schema from the commit would otherwise open the file a write stat names
            extra.setdefault("schema", latest)
        metadata = CommitMetadata(extra_metadata=extra, operation_type=operation_type)
        for s in self.stats:
            metadata.partition_to_write_stats.setdefault(s.partition_path, []).append(s)
        t = self.table
        content = metadata.to_bytes(t.config.timeline_layout)
        with table_lock(t.storage, t.meta_path, t.config.props, f"commit {self.instant}"):
            t.reload()
            conflicts = write_conflicts(t, self.stats)
            if not conflicts:
                self._check_still_live()
                self._update_metadata_table(metadata)
                completed = self.timeline.complete(self.action, self.instant, content)
        if conflicts:
            self._roll_back_own_write()
            raise WriteConflictError(
                f"write {self.instant} was rolled back: {conflicts[0].describe()} after this write planned its "
                "files (nothing of it is in the table); write it again"
            )
        if self.heartbeat is not None:
            self.heartbeat.stop(delete=True)
        delete_markers(self.table.storage, self.table.meta_path, self.instant)
        self.table.reload()
        return completed

    def _update_metadata_table(self, metadata: CommitMetadata) -> None:
        """Write the metadata table's deltacommit of this write, or refuse when the metadata table was created
        after this client was (hoodie.properties read again: the commit would leave it behind)."""
        if self.metadata_writer is not None:
            self.metadata_writer(self.instant, metadata)
            return
        props = self.table.storage.read_bytes(posixpath.join(self.table.meta_path, PROPERTIES)).decode("utf-8")
        if TableConfig(parse_properties(props)).metadata_partitions:
            self.close()
            raise HudiMetaError(
                f"refusing to commit {self.instant}: the table's metadata table was enabled after this write began "
                "(roll the write back and write it again)"
            )

    def _check_still_live(self) -> None:
        """Refuse to commit a write that may have been rolled back: its heartbeat went stale, or its requested
        or inflight file is gone."""
        if self.heartbeat is not None:
            try:
                self.heartbeat.check()
            except HeartbeatExpiredError as e:
                self.close()
                raise HudiMetaError(f"refusing to commit {self.instant}: {e}") from None
        missing = [
            posixpath.basename(p)
            for p in (self._pending_path(State.REQUESTED), self._pending_path(State.INFLIGHT))
            if not self.table.storage.exists(p)
        ]
        if missing:
            self.close()
            raise HudiMetaError(
                f"refusing to commit {self.instant}: {', '.join(missing)} is gone (the write was rolled back)"
            )

    def _roll_back_own_write(self) -> None:
        """Take this write back after a conflict: its log files first (it created each of them, and they hold
        only its blocks: deleting them leaves the slice a compaction took as the plan knows it), then Hudi's
        rollback of the instant (its base files, markers, a rollback instant)."""
        storage = self.table.storage
        for stat in self.stats:
            for name in stat.log_files or ():
                path = posixpath.join(self.context.partition_dir(stat.partition_path), name)
                if written_only_by(storage, path, self.instant):
                    storage.delete(path)
        self.close()
        self.table.reload()
        rollback_failed_write(
            self.table, self.instant, force=True, dry_run=False, metadata_writer=self.metadata_rollback
        )
        log.warning("write %s rolled back after a conflict with a compaction", self.instant)

    # ---- files --------------------------------------------------------------------------------------

    def targets(self) -> dict[tuple[str, str], FileGroupTarget]:
        """Append targets of every visible file group (one listing per write)."""
        if not hasattr(self, "_targets"):
            # the view as of now, not as of when the table was opened: a plan written since then has taken its
            # slices, and writes go into the plan's slice (a stale view would conflict at commit)
            self.table.reload()
            inputs = self.table.view_inputs()
            links = planned_links(self.table)
            named_by = self.instant if self.table.config.version >= 8 else None
            self._targets = {
                (fg.partition, fg.file_id): target_for(
                    fg, inputs, links.get((fg.partition, fg.file_id), frozenset()), named_by
                )
                for fg in self.table.file_groups()
            }
        return self._targets

    def write_base_file(self, partition: str, data: pa.Table, file_id: str | None = None) -> WriteStat:
        if file_id is not None and any(s.file_id == file_id and not s.log_files for s in self.stats):
            raise ValueError(f"file group {file_id} already has a base file in {self.instant}")
        stat = write_new_file_group(self.context, partition, data, file_id)
        self.schema = self.schema or _table_schema(self.table, stat)
        self.stats.append(stat)
        return stat

    def append_log(
        self,
        partition: str,
        file_id: str,
        data: pa.Table | None = None,
        deletes: Sequence[DeleteRecord] = (),
        block_format: str = "avro",
    ) -> WriteStat:
        target = self.targets()[(partition, file_id)]
        stat = append_to_file_group(self.context, target, data, deletes, block_format, self.schema)
        # the next append of this write goes to the same (now existing, ours) file
        self._targets[(partition, file_id)] = dataclasses.replace(
            target, log_file=posixpath.basename(stat.path), log_size=stat.file_size_in_bytes
        )
        if data is not None and self.schema is None:
            self.schema = with_meta_columns(
                data, self.instant, partition, target.log_file, self.context.record_key_array(data)
            ).schema
        self.stats.append(stat)
        return stat


def _latest_commit_schema(table: HudiTable) -> str | None:
    """The schema the newest completed write that recorded one recorded (Avro JSON), on the timeline as it is
    now (instants may have been archived since this write began)."""
    table.reload()
    found = latest_commit_schema(table)
    return found[1] if found is not None else None


def _table_schema(table: HudiTable, stat: WriteStat) -> pa.Schema:
    with table.storage.open_arrow(posixpath.join(table.base_path, stat.path)) as f:
        return pq.read_schema(f)


def planned_links(table: HudiTable) -> dict[tuple[str, str], frozenset[str]]:
    """Log file names reserved by pending compactions (links, exact log), per file group."""
    out: dict[tuple[str, str], frozenset[str]] = {}
    for instant in table.timeline.pending_compactions():
        plan = table.compaction_plan(instant.requested_time)
        for op in plan.operations:
            out[(op.partition_path or "", op.file_id)] = reserved_log_files(plan, op, instant.requested_time)
    return out
