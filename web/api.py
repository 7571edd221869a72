"""The JSON API under `/api/v1/`: the data of every page, the same values the pages show (web/data.py).
A table is named by its id or by its name (`/api/v1/tables/core`): a name two tables share is a 409 naming
their ids, an unknown one a 404. Times are epoch milliseconds (`*_ms`) or ISO-8601 UTC; errors are
`{"error": {"status", "message"}}` with the status code. Long lists are pages: `{"items", "total", "page",
"page_size", "pages"}`. `/api/v1/` lists the endpoints (an OpenAPI document); `/api` shows it as a page."""

from __future__ import annotations

import dataclasses
import datetime as dt
import inspect
import re
from typing import Any

from flask import Blueprint, abort, current_app, jsonify, render_template
from flask.json.provider import DefaultJSONProvider

from hudi_meta.index import browse
from hudi_meta.service.records import recent_steps
from hudi_meta.table.times import now_ms

from . import store
from .common import choice_arg, page_arg, partition_arg, plan_or_404, table_by_ref, table_state, zone_of
from .data import freshness_data, late_data, lineage_data, listing_data, steps_data
from .freshness import Point, read_history
from .lineage import lineage_request
from .tables import all_summaries, summary

bp = Blueprint("api", __name__, url_prefix="/api/v1")
index_bp = Blueprint("api_index", __name__)


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


@bp.get("/")
def endpoints() -> Any:
    """This list of the API's endpoints (an OpenAPI 3.1 document)."""
    return jsonify(openapi())


@bp.get("/tables")
def tables() -> Any:
    """Every registered table with its freshness (and its status against its data latency)."""
    return jsonify({"items": all_summaries()})


@bp.get("/tables/<table_ref>")
def table(table_ref: str) -> Any:
    """One table: its freshness, pending plans, leftovers, late data and last runs."""
    return jsonify(summary(table_by_ref(table_ref)))


@bp.get("/tables/<table_ref>/freshness")
def freshness(table_ref: str) -> Any:
    """What the read-optimized view holds: threshold, watermark, lag, leftovers, late data, histogram."""
    return jsonify(freshness_data(table_state(table_by_ref(table_ref))))


@bp.get("/tables/<table_ref>/history")
def history(table_ref: str) -> Any:
    """Threshold, watermark and lag over time, with the compactions, cleans and syncs between."""
    t = table_by_ref(table_ref)
    f = table_state(t).freshness
    now = Point(now_ms(), f.threshold_ms, f.watermark_ms, f.lag_ms)
    return jsonify(read_history(store.connection(), t.id, zone_of(t), now))


@bp.get("/tables/<table_ref>/timeline")
def timeline(table_ref: str) -> Any:
    """A page of the timeline, newest first (`action`, `state` filter it)."""
    t = table_by_ref(table_ref)
    conn = store.connection()
    actions, states = browse.timeline_filters(conn, t.id)
    listing = browse.timeline(conn, t.id, page_arg(), choice_arg("action", actions), choice_arg("state", states))
    return jsonify(listing_data(listing))


@bp.get("/tables/<table_ref>/plans")
def plans(table_ref: str) -> Any:
    """A page of the compaction plans."""
    t = table_by_ref(table_ref)
    return jsonify(listing_data(browse.plans(store.connection(), t.id, page_arg(), zone_of(t))))


@bp.get("/tables/<table_ref>/plans/<instant>")
def plan(table_ref: str, instant: str) -> Any:
    """One compaction plan and a page of its operations."""
    found, operations = plan_or_404(table_by_ref(table_ref), instant)
    return jsonify({"plan": found, "operations": listing_data(operations)})


@bp.get("/tables/<table_ref>/partitions")
def partitions(table_ref: str) -> Any:
    """The partitions the index knows."""
    return jsonify({"items": browse.partitions(store.connection(), table_by_ref(table_ref).id)})


@bp.get("/tables/<table_ref>/file-groups")
def file_groups(table_ref: str) -> Any:
    """A page of file groups with their slices (`partition` filters them)."""
    t = table_by_ref(table_ref)
    partition = partition_arg(t)
    return jsonify(listing_data(browse.file_groups(store.connection(), t.id, page_arg(), partition)))


@bp.get("/tables/<table_ref>/lineage")
def lineage(table_ref: str) -> Any:
    """A file group's lineage rows (`partition` and `file_id`, or `partition` and `file`)."""
    rows, _ = lineage_request(table_by_ref(table_ref).id)
    return jsonify(lineage_data(rows))


@bp.get("/tables/<table_ref>/steps")
def steps(table_ref: str) -> Any:
    """The service's newest step records on the table."""
    t = table_by_ref(table_ref)
    return jsonify({"items": steps_data(recent_steps(store.connection(), t.id, page_arg().size))})


@bp.get("/tables/<table_ref>/late")
def late(table_ref: str) -> Any:
    """The blocks holding late data (records below T committed after the compaction that published T)."""
    return jsonify({"items": late_data(table_state(table_by_ref(table_ref)))})


@bp.route("/<path:_>", methods=["GET", "POST", "PUT", "DELETE", "PATCH"])
def unknown(_: str) -> Any:
    abort(404, "no such API endpoint")


@dataclasses.dataclass(frozen=True)
class Endpoint:
    method: str
    path: str  # OpenAPI style: /api/v1/tables/{table}
    summary: str


def api_endpoints() -> list[Endpoint]:
    """Every endpoint under /api/v1/, from the app's URL map and each view's docstring."""
    out = []
    for rule in current_app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1/") or "<path:" in rule.rule:
            continue
        view = current_app.view_functions[rule.endpoint]
        path = re.sub(
            r"<(?:[a-z]+:)?(\w+)>", lambda m: "{" + ("table" if m[1] == "table_ref" else m[1]) + "}", rule.rule
        )
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            out.append(Endpoint(method, path, (inspect.getdoc(view) or "").split("\n\n")[0].replace("\n", " ")))
    return sorted(out, key=lambda e: (e.path, e.method))


def openapi() -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for e in api_endpoints():
        params = [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in re.findall(r"{(\w+)}", e.path)
        ]
        paths.setdefault(e.path, {})[e.method.lower()] = {"summary": e.summary, "parameters": params}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "hudi-meta",
            "description": "{table} is a table's id or its name. Actions need the UI token as a bearer token.",
        },
        "paths": paths,
    }


@index_bp.get("/api")
def api_page() -> Any:
    """The API's endpoints as a page, with links for the first table."""
    first = next(iter(browse.tables(store.connection())), None)
    return render_template("api.html", endpoints=api_endpoints(), example=first)
