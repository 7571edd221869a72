"""The data of each page as plain dicts and dataclasses, shared by the HTML pages and the JSON API so the two
always say the same (the API is these values, serialised)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from hudi_meta.index import browse
from hudi_meta.index.browse import LineageRows, TableRow
from hudi_meta.service.records import StepRecord

from .freshness import Verdict
from .state import TableState

SORT_KEYS = (
    "name",
    "table_version",
    "threshold_ms",
    "watermark_ms",
    "lag_ms",
    "exact",
    "pending_plans",
    "leftover_bytes",
    "late_records",
    "last_indexed_at",
    "last_sync_at",
    "service_status",
)


def table_summary(table: TableRow, state: TableState, verdict: Verdict) -> dict[str, Any]:
    """One row of the tables page: the table, its freshness and how it keeps up (`verdict`), pending plans,
    leftovers, late data, last runs."""
    f = state.freshness
    return {
        "id": table.id,
        "name": table.name,
        "base_path": table.base_path,
        "table_type": table.table_type,
        "table_version": table.table_version,
        "event_time_field": table.event_time_field,
        "threshold_ms": f.threshold_ms,
        "watermark_ms": f.watermark_ms,
        "lag_ms": f.lag_ms,
        "freshness": verdict.to_dict(),
        "exact": f.exact,
        "compaction_instant": f.compaction_instant,
        "pending_plans": table.pending_plans,
        "leftover_files": f.leftover_files,
        "leftover_bytes": f.leftover_bytes,
        "leftover_slices": f.leftover_slices,
        "unknown_event_time_blocks": f.unknown_event_time_blocks,
        "late_blocks": f.late_blocks,
        "late_records": f.late_records,
        "late_records_at_most": f.late_records_at_most,
        "last_indexed_at": table.last_indexed_at,
        "last_sync_at": table.last_sync_at,
        "last_sync_outcome": table.last_sync_outcome,
        "service_status": table.service_status,
        "service_step": table.service_step,
        "service_error": table.service_error,
    }


def sorted_summaries(
    rows: list[dict[str, Any]], sort: str, descending: bool, query: str | None
) -> list[dict[str, Any]]:
    """Filter by a case-insensitive part of the name or base path, then sort (unknown values last)."""
    if query:
        q = query.lower()
        rows = [r for r in rows if q in r["name"].lower() or q in r["base_path"].lower()]
    known = [r for r in rows if r[sort] is not None]
    unknown = [r for r in rows if r[sort] is None]
    known.sort(key=lambda r: (r[sort], r["name"], r["id"]), reverse=descending)
    return known + unknown


def freshness_data(state: TableState) -> dict[str, Any]:
    h = state.histogram
    return {
        **state.freshness.to_dict(),
        "histogram": {
            "start_ms": h.start_ms if h.records else None,
            "bin_ms": h.width_ms if h.records else None,
            "records": h.records,
            "unknown_records": h.unknown_records,
        },
    }


def late_data(state: TableState) -> list[dict[str, Any]]:
    """The late blocks: `late_records` are a block's records below T (None: not counted, at most `records`)."""
    return [
        {
            "log_file": x.block.log_file,
            "slice": x.block.slice_key,
            "instant": x.block.instant,
            "min_event_time_ms": x.block.min_event_time,
            "late_records": x.late_records,
            "records": x.block.records,
            "bytes": x.block.size,
        }
        for x in state.late
    ]


def listing_data(listing: browse.Listing) -> dict[str, Any]:
    return {
        "items": [asdict(x) for x in listing.items],
        "total": listing.total,
        "page": listing.page.number,
        "page_size": listing.page.size,
        "pages": listing.pages,
    }


def steps_data(steps: list[StepRecord]) -> list[dict[str, Any]]:
    return [{**asdict(s), "duration_s": s.duration_s} for s in steps]


def lineage_data(rows: LineageRows) -> dict[str, Any]:
    return asdict(rows)
