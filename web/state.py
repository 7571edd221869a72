"""A table's freshness, event-time histogram and late blocks, computed from the store and cached until the
table is indexed again.

All three come from every committed block not yet in a base file, which at 200,000 blocks takes longer than a
page may. They change only when the indexer changes the store, and every index run ends by stamping the table's
`last_indexed_at`: that stamp is the cache key, so any process that indexes invalidates the UI's copy. The
lag is worked out again on each request, since it moves with the clock.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

from sqlalchemy import Connection

from hudi_meta.freshness import (
    Freshness,
    Histogram,
    LateBlock,
    event_time_histogram,
    freshness,
    last_event_time_compaction,
    late_data,
)
from hudi_meta.index.browse import TableRow
from hudi_meta.index.freshness_inputs import base_file_instants, completed_compactions, pending_blocks


@dataclass(frozen=True)
class TableState:
    freshness: Freshness
    histogram: Histogram
    late: list[LateBlock]


def compute_state(conn: Connection, table_id: int, now_ms: int) -> TableState:
    compactions = completed_compactions(conn, table_id)
    blocks = pending_blocks(conn, table_id)
    fresh = freshness(compactions, blocks, now_ms, base_file_instants(conn, table_id))
    hist = event_time_histogram(blocks, marks=(fresh.threshold_ms, fresh.watermark_ms))
    late = late_data(last_event_time_compaction(compactions), blocks).blocks
    return TableState(fresh, hist, late)


class StateCache:
    """table id -> (the `last_indexed_at` it was computed at, the state); safe across request threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[int, tuple[object, TableState]] = {}

    def get(self, conn: Connection, table: TableRow, now_ms: int) -> TableState:
        key = table.last_indexed_at
        with self._lock:
            entry = self._entries.get(table.id)
        if entry is None or entry[0] != key:
            entry = (key, compute_state(conn, table.id, now_ms))
            with self._lock:
                self._entries[table.id] = entry
        state = entry[1]
        f = state.freshness
        lag = now_ms - f.watermark_ms if f.watermark_ms is not None else None
        return replace(state, freshness=replace(f, lag_ms=lag))
