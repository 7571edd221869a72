"""Tables: the overview of every registered table (its freshness coloured against its data latency), a table's
page (freshness, history, event-time chart, service steps, timeline), its file groups with their slices, and its
late data."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, current_app, render_template, request, send_from_directory

from hudi_meta.index import browse
from hudi_meta.index.browse import TableRow
from hudi_meta.service.records import recent_steps
from hudi_meta.table.times import now_ms

from . import store
from .charts import histogram_chart, history_chart
from .common import choice_arg, page_arg, partition_arg, table_or_404, table_state, text_arg, zone_of
from .data import SORT_KEYS, late_data, sorted_summaries, steps_data, table_summary
from .freshness import Point, Verdict, read_history, table_verdict
from .state import TableState

bp = Blueprint("tables", __name__)


def verdict_of(table: TableRow, state: TableState) -> Verdict:
    connection, lag_ms = store.connection(), state.freshness.lag_ms
    return table_verdict(connection, table.id, zone_of(table), lag_ms, now_ms(), table.data_latency_ms)


def summary(table: TableRow) -> dict[str, Any]:
    """The table's row of the tables page (and of the API): its freshness judged against its data latency."""
    state = table_state(table)
    return table_summary(table, state, verdict_of(table, state))


def all_summaries() -> list[dict[str, Any]]:
    return [summary(t) for t in browse.tables(store.connection())]


@bp.get("/")
def index() -> Any:
    sort = choice_arg("sort", list(SORT_KEYS)) or "name"
    descending = request.args.get("order") == "desc"
    query = text_arg("q")
    rows = sorted_summaries(all_summaries(), sort, descending, query)
    return render_template("tables.html", rows=rows, sort=sort, descending=descending, query=query or "")


@bp.get("/favicon.ico")
def favicon() -> Any:
    """Browsers ask for it on every page that names none (the JSON and metrics pages)."""
    return send_from_directory(current_app.static_folder or "", "favicon.svg", mimetype="image/svg+xml")


@bp.get("/tables/<int:table_id>")
def table(table_id: int) -> Any:
    t = table_or_404(table_id)
    state = table_state(t)
    conn = store.connection()
    actions, states = browse.timeline_filters(conn, table_id)
    action = choice_arg("action", actions)
    instant_state = choice_arg("state", states)
    timeline = browse.timeline(conn, table_id, page_arg(), action, instant_state)
    f = state.freshness
    chart = histogram_chart(state.histogram, {"threshold": f.threshold_ms, "watermark": f.watermark_ms})
    verdict = verdict_of(t, state)
    now = Point(now_ms(), f.threshold_ms, f.watermark_ms, f.lag_ms)
    history = read_history(conn, table_id, zone_of(t), now)
    return render_template(
        "table.html",
        steps=steps_data(recent_steps(conn, table_id, 15)),
        table=t,
        summary=table_summary(t, state, verdict),
        verdict=verdict,
        history=history_chart(history, verdict.limit_ms),
        chart=chart,
        histogram=state.histogram,
        timeline=timeline,
        actions=actions,
        states=states,
        action=action,
        state=instant_state,
    )


@bp.get("/tables/<int:table_id>/file-groups")
def file_groups(table_id: int) -> Any:
    t = table_or_404(table_id)
    conn = store.connection()
    partition = partition_arg(t)
    listing = browse.file_groups(conn, table_id, page_arg(), partition)
    parts = browse.partitions(conn, table_id)
    return render_template("file_groups.html", table=t, partitions=parts, partition=partition, listing=listing)


@bp.get("/tables/<int:table_id>/late")
def late(table_id: int) -> Any:
    t = table_or_404(table_id)
    state = table_state(t)
    return render_template("late.html", table=t, freshness=state.freshness, blocks=late_data(state))
