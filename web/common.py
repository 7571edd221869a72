"""What every blueprint shares: the table a URL names (404 when the store has none), page and filter
arguments checked once, an action's body fields read in their own types, template filters for times and sizes,
and errors as HTML pages or, under `/api/`, as JSON with the status code."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from flask import Flask, abort, current_app, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from hudi_meta.errors import BadValueError
from hudi_meta.index import browse
from hudi_meta.index.browse import MAX_PAGE_SIZE, Page, TableRow
from hudi_meta.table.config import timeline_zone
from hudi_meta.table.times import duration_ms, format_time_ms, now_ms, parse_duration_ms, parse_time_ms, time_ms
from hudi_meta.timeline.instant import instant_epoch_ms
from hudi_meta.values import parse_flag, parse_whole, shown, whole_in_range

from . import readable, store
from .auth import CSRF_KEY
from .state import StateCache, TableState

INSTANT_RE = re.compile(r"^[0-9]{14,17}$")
MAX_TEXT = 1024  # the longest partition path or file name the store holds
MAX_PAGE = 999_999_999
T = TypeVar("T")


def table_or_404(table_id: int) -> TableRow:
    found = browse.table(store.connection(), table_id)
    if found is None:
        abort(404, f"no registered table with id {table_id}")
    return found


def table_by_ref(ref: str | int) -> TableRow:
    """The table an API path names: all digits are an id, anything else a name (404 unknown, 409 shared)."""
    if isinstance(ref, int) or (ref.isascii() and ref.isdigit()):
        return table_or_404(int(ref))
    named = [t for t in browse.tables(store.connection()) if t.name == ref]
    if not named:
        abort(404, f"no registered table is named {ref[:200]!r} (name a table by its name or its id)")
    if len(named) > 1:
        ids = ", ".join(f"{t.id} ({t.base_path})" for t in named)
        abort(409, f"{len(named)} tables are named {ref[:200]!r}: name one by its id: {ids}")
    return named[0]


def table_state(table: TableRow) -> TableState:
    cache: StateCache = current_app.extensions["hudi_meta.states"]
    return cache.get(store.connection(), table, now_ms())


def zone_of(table: TableRow) -> dt.tzinfo:
    return timeline_zone(table.timeline_timezone)


def page_arg() -> Page:
    """`?page=N&page_size=M` (page_size defaults to the app's PAGE_SIZE)."""
    number = _int_arg("page", 1, MAX_PAGE)
    size = _int_arg("page_size", int(current_app.config["PAGE_SIZE"]), MAX_PAGE_SIZE)
    try:
        return Page(number, size)
    except ValueError as e:
        abort(400, str(e))


def _int_arg(name: str, default: int, high: int) -> int:
    text = request.args.get(name)
    if text is None or text == "":
        return default
    try:
        return parse_whole(text, 1, high)
    except BadValueError as e:
        abort(400, f"{name}: {e}")


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


class Body:
    """An action's fields, each read in its own type: a JSON object's numbers and booleans as they are (and
    strings as a form posts them), a form's strings; absent, null and empty mean not given. A bad value is one
    `BadValueError` line naming the field."""

    def __init__(self, values: Mapping[str, object]) -> None:
        self.values = values

    def _read(
        self, name: str, what: str, kind: type | None, typed: Callable[[Any], T], text: Callable[[str], T]
    ) -> T | None:
        """The field through `text` (a string) or `typed` (a JSON value of type `kind`); None: not given."""
        value = self.values.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        try:
            if isinstance(value, str):
                return text(value)
            if kind is not None and isinstance(value, kind) and (kind is bool or not isinstance(value, bool)):
                return typed(value)
        except BadValueError as e:
            raise BadValueError(f"{name}: {e}") from None
        raise BadValueError(f"{name}: expected {what}, got {_json_kind(value)}")

    def time_ms(self, name: str) -> int | None:
        """Epoch ms: an ISO-8601 string, or a number read by the rule every time follows (`times.time_ms`)."""
        return self._read(name, "an ISO-8601 string or epoch milliseconds", int, time_ms, parse_time_ms)

    def duration_ms(self, name: str) -> int | None:
        """A duration: a string such as `30m`, or a number of milliseconds."""
        return self._read(name, 'a duration such as "30m" or milliseconds', int, duration_ms, parse_duration_ms)

    def whole(self, name: str, low: int, high: int) -> int | None:
        """A whole number from `low` to `high`: a JSON number without a fraction, or its digits."""
        return self._read(
            name,
            f"a whole number from {low} to {high}",
            int,
            lambda n: whole_in_range(n, low, high),
            lambda text: parse_whole(text, low, high),
        )

    def flag(self, name: str) -> bool:
        """A yes/no: a JSON boolean, or a form's checkbox (`on`) and its spellings (`values.parse_flag`)."""
        return self._read(name, "true or false", bool, bool, parse_flag) or False

    def text(self, name: str) -> str | None:
        """A string, as given."""
        return self._read(name, "a string", None, str, str)


def _json_kind(value: object) -> str:
    """A value as JSON spells it, for messages: `true`, `2.5`, a list, an object."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return f"the string {shown(value)}"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def action_body(fields: tuple[str, ...]) -> Body:
    """The request's fields: a JSON object (Content-Type application/json) or a form post (its CSRF token aside);
    a body that is not an object and a field the action does not take are refused."""
    if request.is_json:
        data = request.get_json(silent=True)
        if data is None and request.get_data():
            raise BadValueError("the body is not valid JSON")
        if data is not None and not isinstance(data, dict):
            raise BadValueError(f"the body must be a JSON object, got {_json_kind(data)}")
        values: Mapping[str, object] = data or {}
    else:
        values = {k: v for k, v in request.form.items() if k != CSRF_KEY}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        takes = ", ".join(fields) or "no fields"
        raise BadValueError(f"unknown field {shown(unknown[0])} (this action takes {takes})")
    return Body(values)


def _instant(value: str | None, timeline_timezone: str = "UTC") -> str:
    """When an instant time was taken, in the UI's one format (ISO-8601 UTC): instant times are written in the
    table's timeline zone (`hoodie.table.timeline.timezone`), so the zone is the table's."""
    if not value or not INSTANT_RE.match(value):
        return value or "—"
    return format_time_ms(instant_epoch_ms(value, timeline_zone(timeline_timezone)))


def register_template_helpers(app: Flask) -> None:
    app.add_template_filter(readable.event_time, "event_time")
    app.add_template_filter(readable.when, "when")
    app.add_template_filter(readable.lag, "lag")
    app.add_template_filter(readable.size, "size")
    app.add_template_filter(readable.details, "details")
    app.add_template_filter(readable.seconds, "seconds")
    app.add_template_filter(readable.breakable, "wbr")
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
