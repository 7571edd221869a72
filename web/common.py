"""What every blueprint shares: the table a URL names (404 when the store has none), page and filter
arguments checked once, template filters for times and sizes, and errors as HTML pages or, under `/api/`,
as JSON with the status code."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from flask import Flask, abort, current_app, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from hudi_meta.index import browse
from hudi_meta.index.browse import Page, TableRow
from hudi_meta.table.config import timeline_zone
from hudi_meta.times import format_time_ms

from . import store
from .state import StateCache, TableState

INSTANT_RE = re.compile(r"^\d{14,17}$")
MAX_TEXT = 1024  # the longest partition path or file name the store holds


def now_ms() -> int:
    return int(dt.datetime.now(dt.UTC).timestamp() * 1000)


def table_or_404(table_id: int) -> TableRow:
    found = browse.table(store.connection(), table_id)
    if found is None:
        abort(404, f"no registered table with id {table_id}")
    return found


def table_state(table: TableRow) -> TableState:
    cache: StateCache = current_app.extensions["hudi_meta.states"]
    return cache.get(store.connection(), table, now_ms())


def zone_of(table: TableRow) -> dt.tzinfo:
    return timeline_zone(table.timeline_timezone)


def page_arg() -> Page:
    """`?page=N&page_size=M` (page_size defaults to the app's PAGE_SIZE)."""
    number = _int_arg("page", 1)
    size = _int_arg("page_size", int(current_app.config["PAGE_SIZE"]))
    try:
        return Page(number, size)
    except ValueError as e:
        abort(400, str(e))


def _int_arg(name: str, default: int) -> int:
    text = request.args.get(name)
    if text is None or text == "":
        return default
    if not text.isdigit() or len(text) > 9:
        abort(400, f"{name} must be a whole number, got {text[:40]!r}")
    return int(text)


def text_arg(name: str, required: bool = False) -> str | None:
    """A free-text argument (partition, file name): bounded in length, never used as a path."""
    value = request.args.get(name)
    if value is None:
        if required:
            abort(400, f"{name} is required")
        return None
    if len(value) > MAX_TEXT or "\x00" in value:
        abort(400, f"{name} is not a value the store can hold")
    return value


def choice_arg(name: str, choices: list[str]) -> str | None:
    value = request.args.get(name) or None
    if value is not None and value not in choices:
        abort(400, f"{name} must be one of: {', '.join(choices) or '(none)'}")
    return value


def plan_or_404(table: TableRow, instant: str) -> tuple[browse.PlanRow, browse.Listing]:
    """A compaction plan of the table and the requested page of its operations."""
    found = browse.plan(store.connection(), table.id, instant_or_404(instant), page_arg(), zone_of(table))
    if found is None:
        abort(404, f"the table has no compaction plan {instant}")
    return found


def partition_arg(table: TableRow) -> str | None:
    """`?partition=P`, which must be one of the table's (404 otherwise); None: every partition."""
    partition = text_arg("partition")
    if partition is not None and partition not in {
        p.partition for p in browse.partitions(store.connection(), table.id)
    }:
        abort(404, "the table has no such partition")
    return partition


def instant_or_404(instant: str) -> str:
    if not INSTANT_RE.match(instant):
        abort(404, f"not an instant time: {instant[:40]!r}")
    return instant


def _time(ms: int | None) -> str:
    return format_time_ms(ms) if ms is not None else "—"


def _when(value: dt.datetime | None) -> str:
    return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if value is not None else "—"


def _lag(ms: int | None) -> str:
    if ms is None:
        return "—"
    seconds = ms / 1000
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if abs(seconds) >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def _size(n: int | None) -> str:
    if n is None:
        return "—"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def _instant(value: str | None) -> str:
    """An instant time as `yyyy-MM-dd HH:mm:ss.SSS` (its own zone)."""
    if not value or not INSTANT_RE.match(value):
        return value or "—"
    v = value.ljust(17, "0")
    return f"{v[0:4]}-{v[4:6]}-{v[6:8]} {v[8:10]}:{v[10:12]}:{v[12:14]}.{v[14:17]}"


def register_template_helpers(app: Flask) -> None:
    app.add_template_filter(_time, "event_time")
    app.add_template_filter(_when, "when")
    app.add_template_filter(_lag, "lag")
    app.add_template_filter(_size, "size")
    app.add_template_filter(_instant, "instant")


def wants_json() -> bool:
    return request.path.startswith("/api/")


def register_errors(app: Flask) -> None:
    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException) -> Any:
        code = e.code or 500
        message = e.description or e.name
        if wants_json():
            response = jsonify({"error": {"status": code, "message": message}})
            response.status_code = code
            return response
        return render_template("error.html", code=code, name=e.name, message=message), code
