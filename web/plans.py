"""Compaction plans: a table's plans (strategy, threshold, mode, state, operations, links, durations) and a
page per plan with its operations (file group, base file, log files compacted, links made)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, render_template

from hudi_meta.index import browse

from . import store
from .common import page_arg, plan_or_404, table_or_404, zone_of

bp = Blueprint("plans", __name__)


@bp.get("/tables/<int:table_id>/plans")
def plans(table_id: int) -> Any:
    t = table_or_404(table_id)
    listing = browse.plans(store.connection(), table_id, page_arg(), zone_of(t))
    return render_template("plans.html", table=t, listing=listing)


@bp.get("/tables/<int:table_id>/plans/<instant>")
def plan(table_id: int, instant: str) -> Any:
    t = table_or_404(table_id)
    summary, operations = plan_or_404(t, instant)
    return render_template("plan.html", table=t, plan=summary, operations=operations)
