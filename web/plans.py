"""Compaction plans: a table's plans (strategy, threshold, mode, state, operations, links, durations) and a
page per plan whose operations read as what they do: the bytes, records and event-time range each merges
into its new base file and keeps as links (the file names fold away under each operation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Blueprint, render_template

from hudi_meta.index import browse
from hudi_meta.index.browse import OperationRow

from . import store
from .common import page_arg, plan_or_404, table_or_404, zone_of
from .file_stats import Totals, base_files, log_file_stats, totals

bp = Blueprint("plans", __name__)


@dataclass(frozen=True)
class OperationView:
    op: OperationRow
    compacted: Totals  # the log files it merges
    kept: Totals  # the files it keeps as links (their physical files' data)
    base_in: int | None  # bytes of the slice's base file it merges
    base_out: int | None  # bytes of the base file it wrote (None: not written yet, or not known)


def operation_views(table_id: int, instant: str, ops: list[OperationRow]) -> list[OperationView]:
    conn = store.connection()
    names = {(op.partition, n) for op in ops for n in op.files_to_compact}
    names |= {(op.partition, x.target) for op in ops for x in op.links}
    stats = log_file_stats(conn, table_id, names)
    sizes = base_files(conn, table_id, {(op.partition, op.file_id) for op in ops})
    out = []
    for op in ops:
        mine = {n: s for (p, n), s in stats.items() if p == op.partition}
        out.append(
            OperationView(
                op,
                totals(op.files_to_compact, mine),
                totals([x.target for x in op.links], mine),
                sizes.get((op.partition, op.file_id, op.base_instant or "")),
                sizes.get((op.partition, op.file_id, instant)),
            )
        )
    return out


@bp.get("/tables/<int:table_id>/plans")
def plans(table_id: int) -> Any:
    t = table_or_404(table_id)
    listing = browse.plans(store.connection(), table_id, page_arg(), zone_of(t))
    return render_template("plans.html", table=t, listing=listing)


@bp.get("/tables/<int:table_id>/plans/<instant>")
def plan(table_id: int, instant: str) -> Any:
    t = table_or_404(table_id)
    summary, operations = plan_or_404(t, instant)
    views = operation_views(table_id, summary.instant, list(operations.items))
    return render_template("plan.html", table=t, plan=summary, operations=operations, views=views)
