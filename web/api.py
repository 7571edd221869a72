"""The JSON API under `/api/v1/`: the data of every page, the same values the pages show (web/data.py).
Times are epoch milliseconds (`*_ms`) or ISO-8601 UTC; errors are `{"error": {"status", "message"}}` with the
status code. Long lists are pages: `{"items", "total", "page", "page_size", "pages"}`."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from flask import Blueprint, abort, jsonify
from flask.json.provider import DefaultJSONProvider

from hudi_meta.index import browse
from hudi_meta.service.records import recent_steps

from . import store
from .common import choice_arg, page_arg, partition_arg, plan_or_404, table_or_404, table_state, zone_of
from .data import freshness_data, late_data, lineage_data, listing_data, steps_data, table_summary
from .lineage import lineage_request
from .tables import all_summaries

bp = Blueprint("api", __name__, url_prefix="/api/v1")


class JsonProvider(DefaultJSONProvider):
    """Dataclasses as objects, datetimes as ISO-8601 (Flask's default is an HTTP date)."""

    sort_keys = False

    @staticmethod
    def default(o: Any) -> Any:
        if isinstance(o, dt.datetime):
            return o.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            return dataclasses.asdict(o)
        return DefaultJSONProvider.default(o)


@bp.get("/tables")
def tables() -> Any:
    return jsonify({"items": all_summaries()})


@bp.get("/tables/<int:table_id>")
def table(table_id: int) -> Any:
    t = table_or_404(table_id)
    return jsonify(table_summary(t, table_state(t)))


@bp.get("/tables/<int:table_id>/freshness")
def freshness(table_id: int) -> Any:
    return jsonify(freshness_data(table_state(table_or_404(table_id))))


@bp.get("/tables/<int:table_id>/timeline")
def timeline(table_id: int) -> Any:
    table_or_404(table_id)
    conn = store.connection()
    actions, states = browse.timeline_filters(conn, table_id)
    listing = browse.timeline(conn, table_id, page_arg(), choice_arg("action", actions), choice_arg("state", states))
    return jsonify(listing_data(listing))


@bp.get("/tables/<int:table_id>/plans")
def plans(table_id: int) -> Any:
    t = table_or_404(table_id)
    return jsonify(listing_data(browse.plans(store.connection(), table_id, page_arg(), zone_of(t))))


@bp.get("/tables/<int:table_id>/plans/<instant>")
def plan(table_id: int, instant: str) -> Any:
    summary, operations = plan_or_404(table_or_404(table_id), instant)
    return jsonify({"plan": summary, "operations": listing_data(operations)})


@bp.get("/tables/<int:table_id>/partitions")
def partitions(table_id: int) -> Any:
    table_or_404(table_id)
    return jsonify({"items": browse.partitions(store.connection(), table_id)})


@bp.get("/tables/<int:table_id>/file-groups")
def file_groups(table_id: int) -> Any:
    partition = partition_arg(table_or_404(table_id))
    return jsonify(listing_data(browse.file_groups(store.connection(), table_id, page_arg(), partition)))


@bp.get("/tables/<int:table_id>/lineage")
def lineage(table_id: int) -> Any:
    table_or_404(table_id)
    rows, _ = lineage_request(table_id)
    return jsonify(lineage_data(rows))


@bp.get("/tables/<int:table_id>/steps")
def steps(table_id: int) -> Any:
    table_or_404(table_id)
    limit = page_arg().size
    return jsonify({"items": steps_data(recent_steps(store.connection(), table_id, limit))})


@bp.get("/tables/<int:table_id>/late")
def late(table_id: int) -> Any:
    return jsonify({"items": late_data(table_state(table_or_404(table_id)))})


@bp.route("/<path:_>", methods=["GET", "POST", "PUT", "DELETE", "PATCH"])
def unknown(_: str) -> Any:
    abort(404, "no such API endpoint")
