"""Completed compactions as the index holds them, with the threshold and exact flag their commits published:
what freshness (`hudi_meta.freshness`) and the indexer's late-record counts (`late_records`) start from.
Archived compactions keep no commit summary: their threshold is unknown and they publish none."""

from __future__ import annotations

import json

from sqlalchemy import Connection, Engine, select

from hudi_meta.freshness import CompletedCompaction
from hudi_meta.index.models import instant_table
from hudi_meta.index.sql import connected
from hudi_meta.timeline.instant import State

DATA_BLOCK_TYPES = ("avro_data", "parquet_data", "hfile_data")  # the blocks whose records RO may lack
DELETE_BLOCK_TYPE = "delete"


def completed_compactions(bind: Engine | Connection, table_id: int) -> list[CompletedCompaction]:
    """Every completed compaction on the index, oldest first, with its commit's threshold and exact flag."""
    instants = instant_table
    query = (
        select(instants.c.requested_time, instants.c.summary)
        .where(instants.c.table_id == table_id, instants.c.is_compaction, instants.c.state == State.COMPLETED)
        .order_by(instants.c.requested_time)
    )
    out = []
    with connected(bind) as conn:
        for time, summary_json in conn.execute(query):
            summary = json.loads(summary_json or "{}")
            threshold = summary.get("threshold")
            threshold_ms = int(threshold) if threshold is not None and str(threshold).lstrip("-").isdigit() else None
            out.append(CompletedCompaction(time, threshold_ms, bool(summary.get("exact", False))))
    return out
