"""Synthetic v6 MOR tables with many small log blocks, for benchmarks, crash tests and demos.

Each file group gets a base file at the first instant, then every deltacommit appends `blocks_per_commit`
Avro blocks to the group's log file. Event times rise with the commit number; `late_every` makes
every n-th block carry records from an hour earlier.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass

import pyarrow as pa

from hudi_meta.format.avro_arrow import table_record_schema
from hudi_meta.format.commit_metadata import CommitMetadata, WriteStat
from hudi_meta.format.file_names import UNKNOWN_WRITE_TOKEN, LogFileName
from hudi_meta.format.log_writer import append_blocks, avro_data_block
from hudi_meta.table.table import HudiTable
from hudi_meta.timeline.instant import Action
from hudi_meta.timeline.timeline import new_instant_time
from hudi_meta.write.writer import META_COLUMNS, WriteClient, create_table, with_meta_columns

HOUR_MS = 3_600_000


@dataclass(frozen=True)
class SyntheticSpec:
    partitions: int = 2
    file_groups_per_partition: int = 5
    commits: int = 3
    blocks_per_commit: int = 2
    records_per_block: int = 5
    start_ms: int = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    commit_interval_ms: int = 60_000
    late_every: int = 0
    min_event_time_header: bool = False

    @property
    def total_blocks(self) -> int:
        return self.partitions * self.file_groups_per_partition * self.commits * self.blocks_per_commit


def _records(prefix: str, start: int, count: int, event_ms: int, part: str) -> pa.Table:
    return pa.table(
        {
            "id": [f"{prefix}-{start + i}" for i in range(count)],
            "ts": pa.array([event_ms + i for i in range(count)], pa.int64()),
            "value": [float(start + i) for i in range(count)],
            "part": [part] * count,
        }
    )


def write_synthetic_table(path: str, spec: SyntheticSpec) -> HudiTable:
    """Write the table described by `spec` at `path` and return it opened."""
    table = create_table(
        path,
        "synthetic",
        ["id"],
        "ts",
        ["part"],
        event_time_field="ts",
        min_event_time_header=spec.min_event_time_header,
    )
    client = WriteClient(table, action=Action.DELTA_COMMIT)
    client.begin()
    groups: list[tuple[str, str]] = []
    for p in range(spec.partitions):
        partition = f"part={p}"
        for g in range(spec.file_groups_per_partition):
            data = _records(f"p{p}g{g}", 0, 1, spec.start_ms, str(p))
            groups.append((partition, client.write_base_file(partition, data).file_id))
    base_instant = client.instant
    client.commit("INSERT")
    schema = client.schema
    assert schema is not None
    data_schema = pa.schema([f for f in schema if f.name not in META_COLUMNS])
    schema_json = json.dumps(table_record_schema(data_schema, "synthetic"))
    timeline = table.timeline_writer()
    instants = [base_instant]
    for c in range(spec.commits):
        instant = new_instant_time(instants)
        instants.append(instant)
        timeline.request(Action.DELTA_COMMIT, instant)
        timeline.start(Action.DELTA_COMMIT, instant)
        metadata = CommitMetadata(operation_type="UPSERT", extra_metadata={"schema": schema_json})
        block_no = 0
        for partition, file_id in groups:
            log = LogFileName(file_id, base_instant, 1, UNKNOWN_WRITE_TOKEN)
            blocks = []
            lo = hi = None
            for b in range(spec.blocks_per_commit):
                block_no += 1
                event = spec.start_ms + c * spec.commit_interval_ms
                if spec.late_every and block_no % spec.late_every == 0:
                    event -= HOUR_MS
                first = c * 1000 + b * spec.records_per_block
                data = _records(file_id, first, spec.records_per_block, event, partition.split("=")[1])
                rows = with_meta_columns(data, instant, partition, log.name, data.column("id").to_pylist())
                header_time = event if spec.min_event_time_header else None
                blocks.append(
                    avro_data_block(
                        rows.select([*META_COLUMNS, *data_schema.names]).to_pylist(),
                        _with_meta_schema(schema_json),
                        instant,
                        header_time,
                    )
                )
                lo = event if lo is None else min(lo, event)
                hi = max(hi or 0, event + spec.records_per_block - 1)
            path_in_table = posixpath.join(partition, log.name)
            offsets = append_blocks(table.storage, posixpath.join(table.base_path, path_in_table), blocks)
            written = sum(len(b.data) for b in blocks)
            metadata.partition_to_write_stats.setdefault(partition, []).append(
                WriteStat(
                    file_id=file_id,
                    path=path_in_table,
                    prev_commit=base_instant,
                    num_writes=spec.blocks_per_commit * spec.records_per_block,
                    num_update_writes=spec.blocks_per_commit * spec.records_per_block,
                    total_write_bytes=written,
                    partition_path=partition,
                    file_size_in_bytes=offsets[0] + written,
                    min_event_time=lo,
                    max_event_time=hi,
                    log_version=1,
                    log_offset=offsets[0],
                    base_file="",
                    log_files=[log.name],
                )
            )
        timeline.complete(Action.DELTA_COMMIT, instant, metadata.to_json())
    return HudiTable.open(path)


def _with_meta_schema(schema_json: str) -> str:
    schema = json.loads(schema_json)
    meta = [{"name": c, "type": ["null", "string"], "default": None} for c in META_COLUMNS]
    schema["fields"] = meta + schema["fields"]
    return json.dumps(schema)
