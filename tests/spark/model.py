"""A model of what a table holds after a stream of batches: the reference the Spark tests compare with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from hudi_meta.timeline.instant import instant_epoch_ms

COLUMNS = ["event_id", "ts", "region", "amount", "payload"]


@dataclass
class Model:
    """Per key: the current record and the commit that wrote it (event-time ordering, deletes win)."""

    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    written_by: dict[str, str] = field(default_factory=dict)
    history: list[tuple[str, dict[str, dict[str, Any]], dict[str, str]]] = field(default_factory=list)
    writes: list[tuple[str, list[dict[str, Any]] | None, list[str]]] = field(
        default_factory=list
    )  # (instant, rows, deleted)

    def upsert(self, instant: str, batch: pa.Table) -> None:
        self.writes.append((instant, batch.select(COLUMNS).to_pylist(), []))
        latest: dict[str, dict[str, Any]] = {}
        for row in batch.select(COLUMNS).to_pylist():
            old = latest.get(row["event_id"])
            if old is None or row["ts"] >= old["ts"]:
                latest[row["event_id"]] = row
        for key, row in latest.items():
            old = self.records.get(key)
            if old is None or row["ts"] >= old["ts"]:
                self.records[key] = row
                self.written_by[key] = instant
        self._snapshot(instant)

    def delete(self, instant: str, keys: list[str]) -> None:
        self.writes.append((instant, None, list(keys)))
        for key in keys:
            self.records.pop(key, None)
            self.written_by.pop(key, None)
        self._snapshot(instant)

    def _snapshot(self, instant: str) -> None:
        self.history.append((instant, dict(self.records), dict(self.written_by)))

    def rows(self) -> list[dict[str, Any]]:
        return sorted(self.records.values(), key=lambda r: r["event_id"])

    def as_of_event_time(self, threshold_ms: int) -> list[dict[str, Any]]:
        """The table as of event time T (docs/event-time.md section 4, exact mode): per key, the winner among the
        versions with ts <= T; a delete (natural order) counts at its instant time."""
        state: dict[str, dict[str, Any]] = {}
        for instant, rows, deleted in self.writes:
            if rows is None:
                if instant_epoch_ms(instant) <= threshold_ms:
                    for key in deleted:
                        state.pop(key, None)
                continue
            for row in rows:
                old = state.get(row["event_id"])
                if row["ts"] <= threshold_ms and (old is None or row["ts"] >= old["ts"]):
                    state[row["event_id"]] = row
        return sorted(state.values(), key=lambda r: r["event_id"])

    def as_of(self, instant: str) -> list[dict[str, Any]]:
        state = [records for t, records, _ in self.history if t <= instant][-1]
        return sorted(state.values(), key=lambda r: r["event_id"])

    def incremental(self, begin: str, end: str) -> list[dict[str, Any]]:
        _, records, written_by = [h for h in self.history if h[0] <= end][-1]
        return sorted((r for k, r in records.items() if begin < written_by[k] <= end), key=lambda r: r["event_id"])


def rows_of(table: pa.Table) -> list[dict[str, Any]]:
    return sorted(table.select(COLUMNS).to_pylist(), key=lambda r: r["event_id"])
