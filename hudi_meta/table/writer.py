"""Writing table version 6 MOR/COW tables through the core API: create a table, write base files and
log blocks, and commit them as one instant. Engines (Spark) call the same pieces per task.

Crash safety: data files are written before the completed instant; until that atomic create, readers
skip every block and base file of the instant, and `rollback` removes them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import posixpath
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_meta.format.avro_arrow import arrow_to_avro_record
from hudi_meta.format.block_content import DeleteRecord
from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.format.file_names import UNKNOWN_WRITE_TOKEN, BaseFileName, LogFileName
from hudi_meta.format.log_writer import (
    EncodedBlock,
    append_blocks,
    avro_data_block,
    delete_block,
    parquet_data_block,
)
from hudi_meta.format.properties import format_properties, with_checksum
from hudi_meta.storage import storage_for
from hudi_meta.table.config import COW, EVENT_TIME_FIELD, MIN_EVENT_TIME_HEADER, MOR
from hudi_meta.table.event_time import min_max_epoch_ms
from hudi_meta.table.instant import Action, Instant
from hudi_meta.table.table import META_DIR, PROPERTIES, HudiTable
from hudi_meta.table.timeline import TimelineWriter, new_instant_time

META_COLUMNS = (
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
)
PARTITION_METADATA = ".hoodie_partition_metadata"
DEFAULT_LOG_MAX_SIZE = 1024 * 1024 * 1024


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
) -> HudiTable:
    """Create an empty table version 6 (timeline layout 1) at `uri`."""
    if table_type not in (MOR, COW):
        raise ValueError(f"table type must be {MOR} or {COW}")
    storage, base_path = storage_for(uri)
    props = {
        "hoodie.table.name": name,
        "hoodie.database.name": database,
        "hoodie.table.type": table_type,
        "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1",
        "hoodie.archivelog.folder": "archived",
        "hoodie.table.recordkey.fields": ",".join(record_key_fields),
        "hoodie.table.partition.fields": ",".join(partition_fields),
        "hoodie.table.base.file.format": "PARQUET",
        "hoodie.populate.meta.fields": "true",
        "hoodie.datasource.write.hive_style_partitioning": str(hive_style_partitioning).lower(),
        "hoodie.datasource.write.partitionpath.urlencode": "false",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen."
        + (
            "ComplexKeyGenerator"
            if len(record_key_fields) > 1 or len(partition_fields) > 1
            else "SimpleKeyGenerator"
            if partition_fields
            else "NonpartitionedKeyGenerator"
        ),
        "hoodie.compaction.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
    }
    if ordering_field:
        props["hoodie.table.precombine.field"] = ordering_field
    if event_time_field:
        props[EVENT_TIME_FIELD] = event_time_field
    if min_event_time_header:
        props[MIN_EVENT_TIME_HEADER] = "true"
    meta = posixpath.join(base_path, META_DIR)
    storage.makedirs(posixpath.join(meta, ".aux"))
    storage.makedirs(posixpath.join(meta, ".temp"))
    storage.create_atomic(posixpath.join(meta, PROPERTIES), format_properties(with_checksum(props)).encode())
    return HudiTable.open(uri)


def new_file_id() -> str:
    return f"{uuid.uuid4()}-0"


def with_meta_columns(
    data: pa.Table, instant: str, partition: str, file_name: str, keys: Sequence[str]
) -> pa.Table:
    """Prepend Hudi's meta columns to `data` (replacing any already there)."""
    data = data.drop_columns([c for c in META_COLUMNS if c in data.column_names])
    n = data.num_rows
    meta = {
        "_hoodie_commit_time": pa.array([instant] * n, pa.string()),
        "_hoodie_commit_seqno": pa.array([f"{instant}_0_{i}" for i in range(n)], pa.string()),
        "_hoodie_record_key": pa.array(list(keys), pa.string()),
        "_hoodie_partition_path": pa.array([partition] * n, pa.string()),
        "_hoodie_file_name": pa.array([file_name] * n, pa.string()),
    }
    columns = list(meta.values()) + list(data.columns)
    return pa.Table.from_arrays(columns, names=list(meta) + data.column_names)


@dataclass
class WriteClient:
    """One write (deltacommit or commit) of a v6 table: request, write files, then commit once."""

    table: HudiTable
    action: str = Action.DELTA_COMMIT
    instant: str = ""
    log_max_size: int = DEFAULT_LOG_MAX_SIZE
    stats: list[WriteStat] = field(default_factory=list)
    schema: pa.Schema | None = None

    def __post_init__(self) -> None:
        if self.table.config.version != 6:
            raise ValueError("hudi-meta writes table version 6 only")
        self.timeline = TimelineWriter(self.table.storage, self.table.timeline_path)
        if not self.instant:
            self.instant = new_instant_time(i.requested_time for i in self.table.timeline.instants)

    # ---- lifecycle ----------------------------------------------------------------------------------

    def begin(self) -> str:
        self.timeline.request(self.action, self.instant)
        self.timeline.start(self.action, self.instant)
        return self.instant

    def commit(self, operation_type: str = "UPSERT") -> Instant:
        metadata = CommitMetadata(
            partition_to_write_stats={},
            compacted=False,
            extra_metadata={"schema": self._avro_schema(meta=False)} if self.schema is not None else {},
            operation_type=operation_type,
        )
        for s in self.stats:
            metadata.partition_to_write_stats.setdefault(s.partition_path, []).append(s)
        completed = self.timeline.complete(self.action, self.instant, metadata.to_json())
        self.table.reload()
        return completed

    # ---- files --------------------------------------------------------------------------------------

    def _avro_schema(self, meta: bool = True) -> str:
        assert self.schema is not None
        schema = self.schema if meta else pa.schema([f for f in self.schema if f.name not in META_COLUMNS])
        name = self.table.config.name
        return json.dumps(arrow_to_avro_record(schema, f"{name}_record", f"hoodie.{name}"))

    def _partition_dir(self, partition: str) -> str:
        path = posixpath.join(self.table.base_path, partition) if partition else self.table.base_path
        marker = posixpath.join(path, PARTITION_METADATA)
        if not self.table.storage.exists(marker):
            depth = len(partition.split("/")) if partition else 0
            now = dt.datetime.now(dt.UTC).isoformat()
            text = f"#partition metadata\n#{now}\ncommitTime={self.instant}\npartitionDepth={depth}\n"
            with contextlib.suppress(FileExistsError):  # another task created it first
                self.table.storage.create_atomic(marker, text.encode())
        return path

    def _keys(self, data: pa.Table) -> list[str]:
        fields = self.table.config.record_key_fields
        if len(fields) == 1 and not self.table.config.is_complex_key:
            return [str(v) for v in data.column(fields[0]).to_pylist()]
        cols = [data.column(f).to_pylist() for f in fields]
        return [
            ",".join(f"{f}:{v}" for f, v in zip(fields, vals, strict=True))
            for vals in zip(*cols, strict=True)
        ]

    def _event_times(self, data: pa.Table) -> tuple[int | None, int | None]:
        field_name = self.table.config.event_time_field
        if field_name is None or field_name not in data.column_names:
            return None, None
        return min_max_epoch_ms(data.column(field_name))

    def write_base_file(self, partition: str, data: pa.Table, file_id: str | None = None) -> WriteStat:
        """Write a new base file `{fileId}_{token}_{instant}.parquet` holding `data`."""
        file_id = file_id or new_file_id()
        name = BaseFileName(file_id, UNKNOWN_WRITE_TOKEN, self.instant).name
        table = with_meta_columns(data, self.instant, partition, name, self._keys(data))
        self.schema = self.schema or table.schema
        sink = pa.BufferOutputStream()
        pq.write_table(table.cast(self.schema), sink)
        payload = sink.getvalue().to_pybytes()
        self.table.storage.create_atomic(posixpath.join(self._partition_dir(partition), name), payload)
        lo, hi = self._event_times(data)
        stat = WriteStat(
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
        self.stats.append(stat)
        return stat

    def log_file_for(self, partition: str, file_id: str, base_instant: str) -> LogFileName:
        """The log file to append to: the slice's latest version, rolled over when it is full."""
        storage = self.table.storage
        directory = posixpath.join(self.table.base_path, partition) if partition else self.table.base_path
        latest: LogFileName | None = None
        size = 0
        for info in storage.list_dir(directory):
            parsed = LogFileName.try_parse(info.name)
            if (
                parsed
                and parsed.file_id == file_id
                and parsed.instant == base_instant
                and (latest is None or parsed.sort_key() > latest.sort_key())
            ):
                latest, size = parsed, info.size
        if latest is None:
            return LogFileName(file_id, base_instant, 1, UNKNOWN_WRITE_TOKEN)
        if size >= self.log_max_size:
            return latest.with_version(latest.version + 1, UNKNOWN_WRITE_TOKEN)
        return latest

    def append_log(
        self,
        partition: str,
        file_id: str,
        base_instant: str,
        data: pa.Table | None = None,
        deletes: Sequence[DeleteRecord] = (),
        block_format: str = "avro",
    ) -> WriteStat:
        """Append one data block (and/or one delete block) to the file group's current log file."""
        log = self.log_file_for(partition, file_id, base_instant)
        path = posixpath.join(self._partition_dir(partition), log.name)
        blocks: list[EncodedBlock] = []
        header_time = self.table.config.min_event_time_header
        lo = hi = None
        if data is not None and data.num_rows:
            table = with_meta_columns(data, self.instant, partition, log.name, self._keys(data))
            self.schema = self.schema or table.schema
            table = table.cast(self.schema)
            lo, hi = self._event_times(data)
            schema_json = self._avro_schema()
            mark = lo if header_time else None
            if block_format == "parquet":
                blocks.append(parquet_data_block(table, schema_json, self.instant, mark))
            else:
                blocks.append(avro_data_block(table.to_pylist(), schema_json, self.instant, mark))
        if deletes:
            blocks.append(delete_block(deletes, self.instant))
        offsets = append_blocks(self.table.storage, path, blocks)
        written = sum(len(b.data) for b in blocks)
        base = self._base_file_name(partition, file_id, base_instant)
        stat = WriteStat(
            file_id=file_id,
            path=f"{partition}/{log.name}" if partition else log.name,
            prev_commit=base_instant,
            num_writes=data.num_rows if data is not None else 0,
            num_update_writes=data.num_rows if data is not None else 0,
            num_deletes=len(deletes),
            total_write_bytes=written,
            partition_path=partition,
            file_size_in_bytes=offsets[0] + written if offsets else 0,
            min_event_time=lo,
            max_event_time=hi,
            log_version=log.version,
            log_offset=offsets[0] if offsets else 0,
            base_file=base or "",
            log_files=[log.name],
        )
        self.stats.append(stat)
        return stat

    def _base_file_name(self, partition: str, file_id: str, base_instant: str) -> str | None:
        directory = posixpath.join(self.table.base_path, partition) if partition else self.table.base_path
        for info in self.table.storage.list_dir(directory):
            parsed = BaseFileName.try_parse(info.name)
            if parsed and parsed.file_id == file_id and parsed.instant == base_instant:
                return info.name
        return None
