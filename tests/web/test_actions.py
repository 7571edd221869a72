"""Actions as a signed-in user and as a script would run them: schedule an event-time compaction (the plan lands
on the table's timeline), plan a clean (a dry run: nothing is deleted), sync into a real Hive metastore (the
properties are read back from it); bad values are one line with status 400 and write nothing."""

from __future__ import annotations

import os
import re
from pathlib import Path

from flask import Flask
from hudi_meta.web import create_app

from hudi_meta.format.table_service_metadata import CompactionPlan
from hudi_meta.sync.catalog import open_catalog
from hudi_meta.table.times import format_time_ms
from tests.compaction.core import at
from tests.web.conftest import TOKEN, UiStore, timeline_dir
from tests.web.test_security import data_files, sign_in, timeline_files

BEARER = {"Authorization": f"Bearer {TOKEN}"}


def test_schedule_as_a_script_writes_the_plan(token_app: Flask, writable_store: UiStore) -> None:
    core = writable_store.ids["core"]
    client = token_app.test_client()
    # core's newest slice holds log files at 400 s and 50 s (late) after T3 = 300 s: T = 450 s compacts them
    response = client.post(f"/api/v1/tables/{core}/actions/schedule", json={"threshold": str(at(450))}, headers=BEARER)
    assert response.status_code == 200, response.data
    result = response.get_json()
    instant = result["instant"]
    assert instant and result["threshold_ms"] == at(450) and result["operations"] >= 1
    requested = timeline_dir(writable_store.paths["core"]) / f"{instant}.compaction.requested"
    plan = CompactionPlan.from_bytes(requested.read_bytes())
    assert len(plan.operations) == result["operations"]
    listed = client.get(f"/api/v1/tables/{core}/plans").get_json()["items"]
    assert listed[0]["instant"] == instant and listed[0]["state"] == "requested"
    # the trigger refuses a second plan while one is pending: nothing new is written
    before = timeline_files(writable_store)
    again = client.post(f"/api/v1/tables/{core}/actions/schedule", json={"threshold": str(at(460))}, headers=BEARER)
    assert again.status_code == 200 and again.get_json()["instant"] is None
    assert timeline_files(writable_store) == before


def test_schedule_in_the_browser_with_csrf(token_app: Flask, writable_store: UiStore) -> None:
    client = token_app.test_client()
    csrf = sign_in(client)
    evil = writable_store.ids["evil"]
    page = client.get(f"/tables/{evil}").get_data(as_text=True)
    assert "Schedule an event-time compaction" in page
    # evil already has a pending plan: the trigger says no, and the page says why
    response = client.post(
        f"/tables/{evil}/actions/schedule", data={"threshold": "2026-01-01T00:10:00Z", "csrf_token": csrf}
    )
    assert response.status_code == 303
    shown = client.get(response.headers["Location"]).get_data(as_text=True)
    assert "nothing scheduled" in shown


def test_bad_values_are_one_line_and_write_nothing(token_app: Flask, writable_store: UiStore) -> None:
    client = token_app.test_client()
    core = writable_store.ids["core"]
    before = (timeline_files(writable_store), data_files(writable_store))
    for form in ({"threshold": "yesterday"}, {"threshold": "1", "mode": "hardlink"}, {"data_latency": "soon"}):
        response = client.post(f"/api/v1/tables/{core}/actions/schedule", json=form, headers=BEARER)
        assert response.status_code == 400, form
        message = response.get_json()["error"]["message"]
        assert message and "\n" not in message
    for form in ({"policy": "KEEP_EVERYTHING"}, {"retained": "-1"}, {"hours": "x"}):
        response = client.post(f"/api/v1/tables/{core}/actions/clean", json=form, headers=BEARER)
        assert response.status_code == 400, form
    assert client.post(f"/api/v1/tables/{core}/actions/explode", headers=BEARER).status_code == 404
    assert client.post("/api/v1/tables/999/actions/clean", headers=BEARER).status_code == 404
    no_catalog = client.post(f"/api/v1/tables/{core}/actions/sync", headers=BEARER)
    assert no_catalog.status_code == 400 and "no catalog" in no_catalog.get_json()["error"]["message"]
    assert (timeline_files(writable_store), data_files(writable_store)) == before


def test_clean_dry_run_lists_files_and_deletes_nothing(token_app: Flask, writable_store: UiStore) -> None:
    client = token_app.test_client()
    csrf = sign_in(client)
    core = writable_store.ids["core"]
    before = data_files(writable_store)
    response = client.post(
        f"/tables/{core}/actions/clean",
        data={"policy": "KEEP_LATEST_FILE_VERSIONS", "retained": "1", "csrf_token": csrf},
    )
    assert response.status_code == 200
    text = response.get_data(as_text=True).replace("<wbr>", "")  # names wrap at <wbr>: read them whole
    assert "clean plan (dry run, nothing deleted)" in text
    listed = re.findall(r'<td class="mono">([^<]+)</td>', text)
    assert listed and all(os.path.exists(Path(writable_store.paths["core"], p)) for p in listed)
    assert data_files(writable_store) == before


def test_sync_now_publishes_into_a_real_metastore(writable_store: UiStore, metastore_uri: str) -> None:
    app = create_app(
        {
            "STORE_URL": writable_store.url,
            "UI_TOKEN": TOKEN,
            "CATALOG": {"mode": "hms", "uri": metastore_uri, "database": "web_ui"},
        }
    )
    try:
        client = app.test_client()
        core = writable_store.ids["core"]
        response = client.post(f"/api/v1/tables/{core}/actions/sync", headers=BEARER)
        assert response.status_code == 200, response.data
        catalog = open_catalog("hms", metastore_uri)
        try:
            ro = catalog.get_table("web_ui", "core_ro")
        finally:
            catalog.close()
        assert ro is not None
        assert ro.properties["hoodie.ro.event.time.threshold"] == format_time_ms(at(300))
        assert ro.properties["hoodie.ro.event.time.watermark.ms"] == str(at(50))
        row = client.get(f"/api/v1/tables/{core}").get_json()
        assert row["last_sync_outcome"] == "ok" and row["last_sync_at"]
        again = client.post(f"/api/v1/tables/{core}/actions/sync", headers=BEARER).get_json()
        assert again["message"] == "catalog up to date"
    finally:
        app.extensions["hudi_meta.engine"].dispose()
