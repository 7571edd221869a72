"""Issue 25 item 7: action fields in JSON's own types. A script (bearer token) sends the threshold as epoch
milliseconds or an ISO-8601 string, the data latency as a duration string or milliseconds, `retained` and `hours`
as numbers, `exact` as a boolean (they answered 500 `'int' object has no attribute 'strip'`); the browser's form
posts strings and keeps working. A wrong type or value is 400 `{"error": {"status": 400, "message"}}`, one line
naming the field, with nothing written to the tables or the store."""

from __future__ import annotations

import html
import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hudi_meta.web.common import Body
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.test import TestResponse

from hudi_meta.errors import BadValueError
from hudi_meta.table.times import MAX_DURATION_MS, MAX_TIME_MS
from tests.cli.helpers import store_dump
from tests.compaction.core import at
from tests.web.conftest import TOKEN, UiStore
from tests.web.test_security import data_files, sign_in, timeline_files

BEARER = {"Authorization": f"Bearer {TOKEN}"}
HOUR_MS = 3_600_000


@pytest.fixture
def ui(token_app: Flask) -> FlaskClient:
    """A client of the UI with a token configured: scripts send it as a bearer token, browsers sign in."""
    return token_app.test_client()


def post(client: FlaskClient, table_id: int, action: str, body: Any) -> TestResponse:
    return client.post(f"/api/v1/tables/{table_id}/actions/{action}", json=body, headers=BEARER)


def everything(store: UiStore) -> tuple[object, ...]:
    """The tables' files and every row of the store: what a refused action must leave as it was."""
    return timeline_files(store), data_files(store), store_dump(store.url.removeprefix("sqlite:///"))


@pytest.fixture
def unchanged(writable_store: UiStore) -> Iterator[None]:
    before = everything(writable_store)
    yield
    assert everything(writable_store) == before


def test_schedule_takes_a_number_threshold_and_a_boolean_exact(ui: FlaskClient, writable_store: UiStore) -> None:
    core = writable_store.ids["core"]
    response = post(ui, core, "schedule", {"threshold": at(450), "exact": True, "mode": "symlink"})
    assert response.status_code == 200, response.data
    result = response.get_json()
    assert result["instant"] and result["threshold_ms"] == at(450)
    plan = ui.get(f"/api/v1/tables/{core}/plans").get_json()["items"][0]
    assert plan["instant"] == result["instant"] and plan["exact"] is True


def test_a_number_threshold_in_seconds_follows_the_one_rule(ui: FlaskClient, writable_store: UiStore) -> None:
    """A JSON number reads as the same text on the command line reads: 10 digits are epoch seconds."""
    core = writable_store.ids["core"]
    response = post(ui, core, "schedule", {"threshold": at(450) // 1000, "exact": False})
    assert response.status_code == 200, response.data
    assert response.get_json()["threshold_ms"] == at(450)


def test_schedule_takes_the_data_latency_in_milliseconds(ui: FlaskClient, writable_store: UiStore) -> None:
    core = writable_store.ids["core"]
    before = time.time_ns() // 1_000_000
    response = post(ui, core, "schedule", {"data_latency": HOUR_MS})
    after = time.time_ns() // 1_000_000
    assert response.status_code == 200, response.data
    result = response.get_json()
    assert result["instant"] and before - HOUR_MS <= result["threshold_ms"] <= after - HOUR_MS


@pytest.mark.parametrize(
    "body",
    [
        {"policy": "KEEP_LATEST_FILE_VERSIONS", "retained": 1},
        {"policy": "keep-latest-commits", "retained": 0},
        {"policy": "KEEP_LATEST_BY_HOURS", "hours": 24},
        {"retained": "2"},  # a string of digits, as scripts sent before numbers worked
    ],
)
def test_clean_takes_numbers(ui: FlaskClient, writable_store: UiStore, body: dict[str, Any]) -> None:
    before = data_files(writable_store)
    response = post(ui, writable_store.ids["core"], "clean", body)
    assert response.status_code == 200, response.data
    assert response.get_json()["message"].startswith("clean plan (dry run, nothing deleted)")
    assert data_files(writable_store) == before


BAD: list[tuple[str, Any, str]] = [
    # schedule: threshold (epoch ms number or ISO-8601 string)
    ("schedule", {"threshold": True}, "threshold: expected an ISO-8601 string or epoch milliseconds, got true"),
    ("schedule", {"threshold": 1.7672256e12}, "threshold: expected an ISO-8601 string or epoch milliseconds"),
    ("schedule", {"threshold": [at(450)]}, "threshold: expected an ISO-8601 string or epoch milliseconds, got a list"),
    ("schedule", {"threshold": {"ms": 1}}, "threshold: expected an ISO-8601 string or epoch milliseconds, got an obj"),
    ("schedule", {"threshold": -5}, "threshold: -5 is 1969-12-31T23:59:55.000Z, before 1970"),
    ("schedule", {"threshold": 10**20}, "threshold: 100000000000000000000 is after 9999-12-31"),
    ("schedule", {"threshold": "１２３"}, "threshold: not a time: '１２３'"),
    ("schedule", {"threshold": "yesterday"}, "threshold: not a time"),
    ("schedule", {"threshold": at(10**9)}, "threshold "),  # after now
    # schedule: data_latency (duration string or milliseconds)
    ("schedule", {"data_latency": True}, "data_latency: expected a duration"),
    ("schedule", {"data_latency": 2.5}, "data_latency: expected a duration"),
    ("schedule", {"data_latency": -1}, "data_latency: -1 ms is negative"),
    ("schedule", {"data_latency": 10**15}, "data_latency: 1000000000000000 ms is more than 36500d"),
    ("schedule", {"data_latency": "9999999999999999d"}, "data_latency: '9999999999999999d' is more than 36500d"),
    ("schedule", {"data_latency": "soon"}, "data_latency: not a duration"),
    ("schedule", {"threshold": at(450), "data_latency": HOUR_MS}, "not both"),
    # schedule: exact (boolean), mode (string)
    ("schedule", {"threshold": at(450), "exact": "yes"}, "exact: expected true or false, got 'yes'"),
    ("schedule", {"threshold": at(450), "exact": 1}, "exact: expected true or false, got 1"),
    ("schedule", {"threshold": at(450), "exact": [True]}, "exact: expected true or false, got a list"),
    ("schedule", {"threshold": at(450), "mode": 1}, "mode: expected a string, got 1"),
    ("schedule", {"threshold": at(450), "mode": "hardlink"}, "mode: expected one of symlink, copy"),
    ("schedule", {"treshold": at(450)}, "unknown field 'treshold' (this action takes threshold, data_latency"),
    # clean: retained, hours (whole numbers), policy (string)
    ("clean", {"retained": 2.5}, "retained: expected a whole number from 0 to 2147483647, got 2.5"),
    ("clean", {"retained": True}, "retained: expected a whole number from 0 to 2147483647, got true"),
    ("clean", {"retained": [2]}, "retained: expected a whole number from 0 to 2147483647, got a list"),
    ("clean", {"retained": -1}, "retained: expected a whole number from 0 to 2147483647, got -1"),
    ("clean", {"retained": 2**31}, "retained: expected a whole number from 0 to 2147483647, got 2147483648"),
    ("clean", {"retained": "１"}, "retained: expected a whole number from 0 to 2147483647, got '１'"),
    ("clean", {"policy": "KEEP_LATEST_BY_HOURS", "hours": 24.0}, "hours: expected a whole number from 0 to 876000"),
    ("clean", {"policy": "KEEP_LATEST_BY_HOURS", "hours": 10**12}, "hours: expected a whole number from 0 to 876000"),
    ("clean", {"policy": "KEEP_LATEST_BY_HOURS", "hours": False}, "hours: expected a whole number"),
    ("clean", {"hours": "x"}, "hours: expected a whole number"),
    ("clean", {"policy": 3}, "policy: expected a string, got 3"),
    ("clean", {"policy": "KEEP_EVERYTHING"}, "policy: expected one of keep-latest-commits"),
    # the body itself
    ("clean", [1], "the body must be a JSON object, got a list"),
    ("clean", "retained", "the body must be a JSON object, got the string 'retained'"),
    ("sync", {"now": True}, "unknown field 'now' (this action takes no fields)"),
]


@pytest.mark.parametrize(("action", "body", "message"), BAD, ids=[f"{a} {b}" for a, b, _ in BAD])
@pytest.mark.usefixtures("unchanged")
def test_a_wrong_type_or_value_is_400_naming_the_field(
    ui: FlaskClient, writable_store: UiStore, action: str, body: Any, message: str
) -> None:
    response = post(ui, writable_store.ids["core"], action, body)
    assert response.status_code == 400, response.data
    error = response.get_json()["error"]
    assert error["status"] == 400 and message in error["message"], error
    assert "\n" not in error["message"]


@pytest.mark.usefixtures("unchanged")
def test_a_body_that_is_not_json_is_400(ui: FlaskClient, writable_store: UiStore) -> None:
    url = f"/api/v1/tables/{writable_store.ids['core']}/actions/clean"
    response = ui.post(url, data="{retained: 2", content_type="application/json", headers=BEARER)
    assert response.status_code == 400
    assert response.get_json()["error"] == {"status": 400, "message": "the body is not valid JSON"}


def test_the_browser_form_posts_strings(ui: FlaskClient, writable_store: UiStore) -> None:
    csrf = sign_in(ui)
    core = writable_store.ids["core"]
    form = {"threshold": str(at(450)), "data_latency": "", "mode": "symlink", "exact": "on", "csrf_token": csrf}
    response = ui.post(f"/tables/{core}/actions/schedule", data=form)
    assert response.status_code == 303
    assert "scheduled compaction" in ui.get(response.headers["Location"]).get_data(as_text=True)
    plan = ui.get(f"/api/v1/tables/{core}/plans").get_json()["items"][0]
    assert plan["state"] == "requested" and plan["exact"] is True
    clean = {"policy": "", "retained": "1", "csrf_token": csrf}
    assert ui.post(f"/tables/{core}/actions/clean", data=clean).status_code == 200


@pytest.mark.parametrize(
    ("action", "form", "message"),
    [
        ("schedule", {"threshold": str(at(450)), "exact": "yes"}, "exact: expected true or false, got 'yes'"),
        ("schedule", {"threshold": "１２３"}, "threshold: not a time: '１２３'"),
        ("clean", {"retained": "2.5"}, "retained: expected a whole number from 0 to 2147483647, got '2.5'"),
        ("clean", {"hours": "-1", "policy": "KEEP_LATEST_BY_HOURS"}, "hours: expected a whole number from 0"),
    ],
)
@pytest.mark.usefixtures("unchanged")
def test_a_bad_form_value_is_said_on_the_page(
    ui: FlaskClient, writable_store: UiStore, action: str, form: dict[str, str], message: str
) -> None:
    csrf = sign_in(ui)
    core = writable_store.ids["core"]
    response = ui.post(f"/tables/{core}/actions/{action}", data={**form, "csrf_token": csrf})
    assert response.status_code == 303
    page = html.unescape(ui.get(response.headers["Location"]).get_data(as_text=True))
    assert f"{action}: {message}" in page


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=5,
)


@given(JSON_VALUES)
def test_every_field_reader_answers_a_value_in_range_or_one_line_naming_the_field(value: object) -> None:
    body = Body({"f": value})
    checks: list[tuple[Any, Any]] = [
        (body.time_ms, lambda v: v is None or 0 <= v <= MAX_TIME_MS),
        (body.duration_ms, lambda v: v is None or 0 <= v <= MAX_DURATION_MS),
        (lambda name: body.whole(name, 0, 2**31 - 1), lambda v: v is None or 0 <= v <= 2**31 - 1),
        (body.flag, lambda v: isinstance(v, bool)),
        (body.text, lambda v: v is None or isinstance(v, str)),
    ]
    for read, in_range in checks:
        try:
            got = read("f")
        except BadValueError as e:
            assert str(e).startswith("f: ") and "\n" not in str(e), str(e)
        else:
            assert in_range(got), (value, got)
