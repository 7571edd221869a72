"""Small v6 MOR tables written with the core writer, one file group per region, for fast compaction tests.

Rows are (id, ts, region, amount); `ts` is both the ordering field and the event-time field, so expected
results can be worked out by hand from the merge rules Java Hudi applies.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from sqlalchemy import Engine

from hudi_meta.compaction.run import run_compaction
from hudi_meta.compaction.schedule import ScheduleRequest, schedule_compaction
from hudi_meta.compaction.strategies import Strategy
from hudi_meta.format.block_content import DeleteRecord
from hudi_meta.format.commit_metadata import CommitMetadata
from hudi_meta.format.file_names import log_file_name
from hudi_meta.format.links import LinkMode
from hudi_meta.metadata.sync import write_client
from hudi_meta.table.table import HudiTable
from hudi_meta.write.markers import delete_markers
from hudi_meta.write.write_targets import FileGroupTarget
from hudi_meta.write.writer import WriteClient, append_to_file_group, create_table
from tests.hudi_rs import rs_read_table

COLUMNS = ["id", "ts", "region", "amount"]
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
OVERWRITE_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
EVENT_TIME_PAYLOAD = "org.apache.hudi.common.model.EventTimeAvroPayload"


T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z: event times are T0 + seconds


def at(seconds: int) -> int:
    return T0 + seconds * 1000


def rows(*records: tuple[str, int, float]) -> pa.Table:
    """Records (id, event time as seconds after T0, amount) of region `eu`."""
    return pa.table(
        {
            "id": [r[0] for r in records],
            "ts": pa.array([at(r[1]) for r in records], pa.int64()),
            "region": ["eu"] * len(records),
            "amount": [r[2] for r in records],
        }
    )


def create_core_table(
    path: str,
    name: str = "core",
    payload: str = DEFAULT_PAYLOAD,
    options: dict[str, object] | None = None,
    props: dict[str, str] | None = None,
    version: int = 6,
) -> HudiTable:
    """A v6 MOR table of rows (id, ts, region, amount): key `id`, `ts` the ordering and event-time field,
    partitioned by `region`, instant times in UTC, at a path or URI (with fsspec storage `options`), with
    `props` added to its hoodie.properties."""
    return create_table(
        path,
        name,
        ["id"],
        "ts",
        ["region"],
        event_time_field="ts",
        extra_props={
            "hoodie.compaction.payload.class": payload,
            "hoodie.table.timeline.timezone": "UTC",
            **(props or {}),
        },
        options=options,
        version=version,
    )


class CoreTable:
    """One file group (region=eu) written commit by commit through `WriteClient`."""

    partition = "region=eu"

    def __init__(
        self,
        path: Path,
        payload: str = DEFAULT_PAYLOAD,
        name: str = "core",
        props: dict[str, str] | None = None,
        version: int = 6,
    ) -> None:
        self.path = str(path)
        create_core_table(self.path, name, payload, props=props, version=version)
        self.file_id: str | None = None

    @property
    def table(self) -> HudiTable:
        return HudiTable.open(self.path)

    def begin(self) -> WriteClient:
        w = write_client(self.table)  # keeps a metadata table, when the table has one, in step
        w.begin()
        return w

    def write(
        self, data: pa.Table | None = None, deletes: Sequence[str | tuple[str, int]] = (), commit: bool = True
    ) -> WriteClient:
        """Insert into a new file group (first write), else append one log file; commit unless told not to.
        A delete is a key (natural order) or (key, event time in seconds after T0) as its ordering value."""
        w = self.begin()
        if self.file_id is None:
            assert data is not None
            self.file_id = w.write_base_file(self.partition, data).file_id
        else:
            records = [
                DeleteRecord(d, self.partition) if isinstance(d, str) else DeleteRecord(d[0], self.partition, at(d[1]))
                for d in deletes
            ]
            w.append_log(self.partition, self.file_id, data, records)
        if commit:
            w.commit()
        return w

    def read(self, query: str = "snapshot") -> dict[str, tuple[int, float]]:
        """id -> (event time in seconds after T0, amount)."""
        return by_id(self.table.read(query))

    def compact(self, engine: Engine, threshold: int | None = None, **kw: Any) -> str:
        strategy = Strategy.EVENT_TIME if threshold is not None else Strategy.UNBOUNDED
        request = ScheduleRequest(threshold_ms=threshold, strategy=strategy, **kw)
        result = schedule_compaction(engine, self.table, request)
        assert result.instant is not None, result.reason
        run_compaction(self.table, result.instant)
        return result.instant


def by_id(table: pa.Table) -> dict[str, tuple[int, float]]:
    if not table.num_columns:
        return {}
    return {r["id"]: ((r["ts"] - T0) // 1000, r["amount"]) for r in table.select(COLUMNS).to_pylist()}


def hudi_rs_read(path: str, query: str) -> dict[str, tuple[int, float]]:
    return by_id(rs_read_table(path, query))


def region_rows(region: str, *records: tuple[str, int, float]) -> pa.Table:
    return pa.table(
        {
            "id": [r[0] for r in records],
            "ts": pa.array([at(r[1]) for r in records], pa.int64()),
            "region": [region] * len(records),
            "amount": [r[2] for r in records],
        }
    )


class TwoRegions(CoreTable):
    """CoreTable with a second file group (region=us) written through the same client."""

    def write_us(self, records: tuple[tuple[str, int, float], ...], file_id: str | None) -> str:
        w = self.begin()
        data = region_rows("us", *records)
        if file_id is None:
            file_id = w.write_base_file("region=us", data).file_id
        else:
            w.append_log("region=us", file_id, data, [])
        w.commit()
        return file_id


def compact_three_times(t: TwoRegions, engine: Engine, mode: str = "symlink") -> tuple[str, str, str]:
    """Region eu compacted three times (each compaction links the newest leftover log file); region us
    compacted once, its late log file linked by its newest slice for good (later compactions leave it).
    Ends with one more write into eu's newest slice."""
    t.write(region_rows("eu", ("a", 1, 1.0), ("b", 2, 2.0)))
    us = t.write_us((("u", 1, 1.0), ("v", 2, 2.0)), None)
    t.write(region_rows("eu", ("a", 3, 1.5)))
    t.write(region_rows("eu", ("c", 100, 3.0)))
    t.write_us((("u", 3, 1.5),), us)
    t.write_us((("w", 1000, 9.0),), us)  # late: stays linked
    c1 = t.compact(engine, at(10), mode=LinkMode(mode))
    t.write(region_rows("eu", ("b", 20, 2.5)))
    t.write(region_rows("eu", ("d", 200, 4.0)))
    c2 = t.compact(engine, at(150), mode=LinkMode(mode))
    t.write(region_rows("eu", ("e", 160, 5.0)))
    t.write(region_rows("eu", ("f", 400, 6.0)))
    c3 = t.compact(engine, at(300), mode=LinkMode(mode))
    t.write(region_rows("eu", ("g", 500, 7.0)))
    return c1, c2, c3


def foreign_commit(w: WriteClient) -> None:
    """Complete a write as a writer without conflict checks does (Java or Flink without a lock provider): its
    commit metadata (write stats, the table's schema as Java records it), then its markers go."""
    schema = w.table.arrow_schema()
    assert schema is not None, "a foreign write goes into a table that has a base file"
    metadata = CommitMetadata(operation_type="UPSERT", extra_metadata={"schema": w.context.avro_schema(schema, False)})
    for stat in w.stats:
        metadata.partition_to_write_stats.setdefault(stat.partition_path, []).append(stat)
    layout = w.table.config.timeline_layout
    if w.metadata_writer is not None:  # a writer with the metadata table on writes it first, as Java's do
        w.metadata_writer(w.instant, metadata)
    w.table.timeline_writer().complete(w.action, w.instant, metadata.to_bytes(layout))
    delete_markers(w.table.storage, w.table.meta_path, w.instant)
    w.close()


def foreign_append(
    table: HudiTable, partition: str, file_id: str, slice_instant: str, version: int, data: pa.Table
) -> str:
    """One write by such a writer: log file `.F_<slice_instant>.log.<version>_1-0-1` (token 1-0-1, as Java names a
    file it rolls over to) holding `data`, committed; the instant."""
    w = WriteClient(table)
    w.begin()
    target = FileGroupTarget(
        partition, file_id, slice_instant, None, log_file_name(file_id, slice_instant, version, "1-0-1"), 0
    )
    w.stats.append(append_to_file_group(w.context, target, data))
    foreign_commit(w)
    return w.instant


def archive_oldest(path: str, count: int) -> list[str]:
    """Do what Java's archiver leaves behind: the oldest completed instants' files leave the active timeline."""
    meta = Path(path, ".hoodie")
    times = sorted({p.name.split(".")[0] for p in meta.iterdir() if p.is_file() and p.name[:1].isdigit()})[:count]
    move_to_archived(path, times)
    return times


def move_to_archived(path: str, times: Sequence[str]) -> None:
    """Move the files of the version-6 instants `times` from `.hoodie/` to `.hoodie/archived/` (Java 0.x's archiver
    leaves the active timeline so; the archived log it writes is not written here)."""
    meta = Path(path, ".hoodie")
    (meta / "archived").mkdir(exist_ok=True)
    for p in list(meta.iterdir()):
        if p.is_file() and p.name.split(".")[0].split("_")[0] in times:
            shutil.move(str(p), meta / "archived" / p.name)
