"""A realistic event stream: batches arriving roughly in event-time order, a share of late records with
a lateness distribution, updates of earlier keys and deletes. Feeds the quickstart, tests and benchmarks.

Columns: `event_id` (record key), `ts` (event time, epoch ms; also the ordering field), `region`
(partition), `amount`, `payload`. Deterministic for a given seed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_meta.metadata.init import create_metadata_table
from hudi_meta.table.table import HudiTable
from hudi_meta.write.writer import create_table

SCHEMA = pa.schema(
    [
        ("event_id", pa.string()),
        ("ts", pa.int64()),
        ("region", pa.string()),
        ("amount", pa.float64()),
        ("payload", pa.string()),
    ]
)


@dataclass(frozen=True)
class StreamSpec:
    batches: int = 10
    rows_per_batch: int = 1_000
    start_ms: int = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    batch_interval_ms: int = 60_000  # event time advances this much per batch
    late_share: float = 0.1  # share of records that arrive late
    mean_lateness_ms: int = 600_000  # exponential lateness of late records
    update_share: float = 0.2  # share of records that update an earlier key
    delete_share: float = 0.02  # share of each batch's size deleted (earlier keys)
    regions: tuple[str, ...] = ("eu", "us", "apac")
    seed: int = 0


@dataclass
class Batch:
    number: int
    upserts: pa.Table
    deletes: pa.Table  # event_id and region of deleted keys
    watermark_ms: int  # the batch's "now" in event time: on-time records are below it


@dataclass
class _State:
    rng: random.Random
    keys: list[tuple[str, str]] = field(default_factory=list)  # (event_id, region) written so far
    next_id: int = 0


def _event_time(spec: StreamSpec, state: _State, now_ms: int) -> int:
    on_time = now_ms - int(state.rng.random() * spec.batch_interval_ms)
    if state.rng.random() < spec.late_share:
        return on_time - int(state.rng.expovariate(1.0 / max(spec.mean_lateness_ms, 1)))
    return on_time


def generate(spec: StreamSpec) -> Iterator[Batch]:
    """Yield `spec.batches` batches; batch n's on-time events lie in the n-th batch interval."""
    state = _State(random.Random(spec.seed))
    for n in range(spec.batches):
        now = spec.start_ms + (n + 1) * spec.batch_interval_ms
        rows: dict[str, list[object]] = {name: [] for name in SCHEMA.names}
        seen: set[str] = set()
        for _ in range(spec.rows_per_batch):
            if state.keys and state.rng.random() < spec.update_share:
                key, region = state.rng.choice(state.keys)
                if key in seen:
                    continue
            else:
                key, region = f"e{state.next_id:09d}", state.rng.choice(spec.regions)
                state.next_id += 1
                state.keys.append((key, region))
            seen.add(key)
            rows["event_id"].append(key)
            rows["ts"].append(_event_time(spec, state, now))
            rows["region"].append(region)
            rows["amount"].append(round(state.rng.uniform(1, 500), 2))
            rows["payload"].append(json.dumps({"n": n, "v": state.rng.randint(0, 9)}))
        deletes = [k for k in state.keys if k[0] not in seen]
        state.rng.shuffle(deletes)
        deleted = deletes[: int(spec.rows_per_batch * spec.delete_share)]
        gone = {k for k, _ in deleted}
        state.keys = [k for k in state.keys if k[0] not in gone]
        yield Batch(
            number=n,
            upserts=pa.table(rows, schema=SCHEMA),
            deletes=pa.table(
                {"event_id": [k for k, _ in deleted], "region": [r for _, r in deleted]},
                schema=pa.schema([("event_id", pa.string()), ("region", pa.string())]),
            ),
            watermark_ms=now,
        )


def create_events_table(
    path: str,
    buckets: int = 2,
    min_event_time_header: bool = False,
    options: Mapping[str, object] | None = None,
    version: int = 6,
    metadata_table: bool = False,
    extra_props: dict[str, str] | None = None,
) -> HudiTable:
    """A MOR table (bucket index, table `version`) for this stream: key `event_id`, ordering and event time `ts`,
    partitioned by `region`, at a path or URI (with fsspec storage `options`), with Hudi's metadata table when
    `metadata_table` and `extra_props` in hoodie.properties. Every write into it starts a new log file of each
    slice it touches."""
    table = create_table(
        path,
        "events",
        ["event_id"],
        "ts",
        ["region"],
        event_time_field="ts",
        buckets=buckets,
        min_event_time_header=min_event_time_header,
        extra_props=extra_props,
        options=options,
        version=version,
    )
    if metadata_table:
        create_metadata_table(table)
        table = HudiTable.open(table.uri, table.storage.options)
    return table


def write_batches(spec: StreamSpec, output: Path, fmt: str = "jsonl") -> list[Path]:
    """Write each batch as `batch-NNNN.<fmt>` (and `batch-NNNN-deletes.<fmt>` when it deletes)."""
    if fmt not in ("jsonl", "parquet"):
        raise ValueError(f"unknown format {fmt!r}: jsonl or parquet")
    output.mkdir(parents=True, exist_ok=True)
    written = []
    for batch in generate(spec):
        for suffix, table in (("", batch.upserts), ("-deletes", batch.deletes)):
            if table.num_rows == 0:
                continue
            path = output / f"batch-{batch.number:04d}{suffix}.{fmt}"
            if fmt == "parquet":
                pq.write_table(table, path)
            else:
                path.write_text("".join(json.dumps(r) + "\n" for r in table.to_pylist()))
            written.append(path)
    return written
