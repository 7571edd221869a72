"""Run a compaction from the UI and the API (issue 29), under the token rules of the other actions; tables named
by name in the JSON API; the API's index. What a run wrote is checked against the files on disk and the
timeline, not against what the action says of itself."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
from flask import Flask
from flask.testing import FlaskClient
from hudi_meta.web import create_app

from hudi_meta.index.db import make_engine
from tests.web.conftest import TOKEN, UiStore, timeline_dir
from tests.web.test_pages import page
from tests.web.test_security import sign_in

BEARER = {"Authorization": f"Bearer {TOKEN}"}


def test_run_compaction_as_a_script_runs_the_pending_plan(token_app: Flask, writable_store: UiStore) -> None:
    client = token_app.test_client()
    evil = writable_store.ids["evil"]
    assert client.post(f"/api/v1/tables/{evil}/actions/run", json={}).status_code == 401  # no token
    response = client.post(f"/api/v1/tables/{evil}/actions/run", json={}, headers=BEARER)
    assert response.status_code == 200, response.data
    result = response.get_json()
    assert result["instant"] == writable_store.pending  # the oldest (the only) pending plan
    # the timeline has its commit, and each base file it says it wrote is on disk with the records it says
    assert any(
        p.name.startswith(writable_store.pending) and p.name.endswith(".commit")
        for p in timeline_dir(writable_store.paths["evil"]).iterdir()
    )
    assert result["files"]
    for f in result["files"]:
        on_disk = Path(writable_store.paths["evil"], f["path"])
        assert pq.read_metadata(on_disk).num_rows == f["records"] and on_disk.stat().st_size == f["bytes"]
    assert result["records_written"] == sum(f["records"] for f in result["files"])
    again = client.post(f"/api/v1/tables/{evil}/actions/run", json={}, headers=BEARER)
    assert again.status_code == 400 and "pending" in again.get_json()["error"]["message"]


def test_run_compaction_from_the_page_shows_what_it_wrote(token_app: Flask, writable_store: UiStore) -> None:
    client = token_app.test_client()
    evil = writable_store.ids["evil"]
    csrf = sign_in(client)
    assert "Run compaction" in page(client, f"/tables/{evil}")
    bad = client.post(f"/tables/{evil}/actions/run", data={"csrf_token": csrf, "instant": "soon"})
    assert bad.status_code == 303  # refused in one line on the table's page
    assert "instant: not an instant time" in page(client, f"/tables/{evil}")
    response = client.post(f"/tables/{evil}/actions/run", data={"csrf_token": csrf, "instant": writable_store.pending})
    text = response.get_data(as_text=True)
    assert response.status_code == 200 and f"completed compaction {writable_store.pending}" in text
    assert 'id="run-files"' in text


def test_tables_by_name_in_the_api(client: FlaskClient, ui_store: UiStore) -> None:
    by_id = client.get(f"/api/v1/tables/{ui_store.ids['core']}").get_json()
    assert client.get("/api/v1/tables/core").get_json()["id"] == by_id["id"] == ui_store.ids["core"]
    plans = client.get("/api/v1/tables/core/plans").get_json()
    assert {p["instant"] for p in plans["items"]} == set(ui_store.compactions)
    missing = client.get("/api/v1/tables/no-such-table/freshness")
    assert missing.status_code == 404 and "no registered table is named" in missing.get_json()["error"]["message"]


def test_a_name_two_tables_share_is_a_409_naming_their_ids(writable_store: UiStore) -> None:
    engine = make_engine(writable_store.url)
    with engine.begin() as conn:  # a second table of the same name, elsewhere
        conn.exec_driver_sql(
            "INSERT INTO hudi_table (base_path, name, table_type, table_version, timeline_layout, record_key_fields,"
            " options, registered_at) SELECT base_path || '-copy', name, table_type, table_version, timeline_layout,"
            " record_key_fields, options, registered_at FROM hudi_table WHERE name = 'core'"
        )
    engine.dispose()
    app = create_app({"STORE_URL": writable_store.url, "TESTING": True})
    response = app.test_client().get("/api/v1/tables/core")
    app.extensions["hudi_meta.engine"].dispose()
    assert response.status_code == 409
    message = response.get_json()["error"]["message"]
    assert str(writable_store.ids["core"]) in message and "-copy" in message


def test_the_api_index_lists_every_endpoint(client: FlaskClient) -> None:
    text = page(client, "/api")
    for path in ("/api/v1/tables", "/api/v1/tables/{table}/history", "/api/v1/tables/{table}/actions/{name}"):
        assert f">{path}<" in text or f">{path}</a>" in text, path
    assert 'href="/api"' in page(client, "/")  # the nav link leads to the page, not to raw JSON
    doc = client.get("/api/v1/").get_json()
    assert doc["openapi"].startswith("3.") and "post" in doc["paths"]["/api/v1/tables/{table}/actions/{name}"]
    assert all(op["summary"] for ops in doc["paths"].values() for op in ops.values())
