"""The rules of a log file's block summary stated plainly over the stored rows, sharing no code with
`hudi_meta.index.log_file_summary` (the design's planning rules: a log file waits while one of its blocks is
uncommitted or of an instant not before the compaction; its min event time is over committed blocks; a
committed block of unknown time makes its time unknown). Only data and delete blocks carry any of it."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import Engine, select

from hudi_meta.index.models import log_block_table, log_file_table

CARRIERS = {"avro_data", "parquet_data", "cdc_data", "delete"}
Summary = tuple[int | None, str | None, bool, bool]


def expected_summary(blocks: list[Any]) -> Summary:
    """(min committed event time, newest instant, any uncommitted, any committed of unknown time)."""
    carriers = [b for b in blocks if b.block_type in CARRIERS]
    committed = [b for b in carriers if b.status == "committed"]
    times = [b.min_event_time for b in committed if b.min_event_time is not None]
    instants = [b.instant for b in carriers if b.instant is not None]
    return (
        min(times) if times else None,
        max(instants) if instants else None,
        any(b.status == "uncommitted" for b in carriers),
        any(b.min_event_time_source in (None, "unavailable") for b in committed),
    )


def summary_drift(engine: Engine, table_id: int) -> dict[str, tuple[Summary, Summary]]:
    """Log files whose stored summary differs from their blocks: name -> (stored, expected)."""
    f, b = log_file_table, log_block_table
    with engine.connect() as conn:
        blocks: dict[int, list[Any]] = defaultdict(list)
        for row in conn.execute(select(b).where(b.c.table_id == table_id)):
            blocks[row.log_file_id].append(row)
        drift = {}
        for row in conn.execute(select(f).where(f.c.table_id == table_id)):
            stored = (
                row.min_event_time,
                row.last_block_instant,
                bool(row.has_uncommitted),
                bool(row.has_unknown_event_time),
            )
            expected = expected_summary(blocks[row.id])
            if stored != expected:
                drift[f"{row.partition_path}/{row.name}"] = (stored, expected)
    return drift
