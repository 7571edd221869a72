"""The JSON API under /api/v1/: every endpoint on every kind of table, values checked against sources other than
the UI's own queries (the CLI's freshness and show commands, the files and symlinks on disk), pages that add up
to the whole list, and errors as JSON with their status code."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from hudi_meta.table.times import format_time_ms
from tests.cli.helpers import cli
from tests.compaction.core import at
from tests.web.conftest import UiStore


def get(client: FlaskClient, url: str, status: int = 200) -> Any:
    response = client.get(url)
    assert response.status_code == status, (url, response.data[:300])
    assert response.mimetype == "application/json"
    return response.get_json()


def all_pages(client: FlaskClient, url: str, size: int) -> list[Any]:
    items: list[Any] = []
    first = get(client, f"{url}{'&' if '?' in url else '?'}page_size={size}")
    for number in range(1, first["pages"] + 1):
        got = get(client, f"{url}{'&' if '?' in url else '?'}page_size={size}&page={number}")
        assert got["total"] == first["total"]
        items.extend(got["items"])
    assert len(items) == first["total"]
    return items


ENDPOINTS = ("", "/freshness", "/timeline", "/plans", "/partitions", "/file-groups", "/late")


@pytest.mark.parametrize("key", ["core", "evil", "v6_empty", "v8_trips", "v9_txns"])
def test_every_endpoint_answers_json_for_every_table(client: FlaskClient, ui_store: UiStore, key: str) -> None:
    table_id = ui_store.ids[key]
    for endpoint in ENDPOINTS:
        get(client, f"/api/v1/tables/{table_id}{endpoint}")
    listed = {t["id"]: t for t in get(client, "/api/v1/tables")["items"]}
    assert listed[table_id] == get(client, f"/api/v1/tables/{table_id}") | {"lag_ms": listed[table_id]["lag_ms"]}


def test_freshness_is_what_the_freshness_command_prints(client: FlaskClient, writable_store: UiStore) -> None:
    """The UI serves the store as indexed; `hudi-meta freshness` indexes the files first and prints the same."""
    from hudi_meta.web import create_app

    app = create_app({"STORE_URL": writable_store.url})
    try:
        for key in ("core", "evil", "v8_trips"):
            done = cli("--db", writable_store.url, "freshness", writable_store.paths[key], "--json")
            assert done.returncode == 0, done.stderr
            expected = json.loads(done.stdout)
            got = get(app.test_client(), f"/api/v1/tables/{writable_store.ids[key]}/freshness")
            histogram = got.pop("histogram")
            for moving in ("lag_ms",):
                expected.pop(moving), got.pop(moving)
            assert got == expected, key
            assert sum(histogram["records"]) + histogram["unknown_records"] >= got["late_records"]
    finally:
        app.extensions["hudi_meta.engine"].dispose()


def test_core_freshness_from_how_the_table_was_written(client: FlaskClient, ui_store: UiStore) -> None:
    f = get(client, f"/api/v1/tables/{ui_store.ids['core']}/freshness")
    assert (f["threshold_ms"], f["watermark_ms"], f["compaction_instant"]) == (at(300), at(50), ui_store.compactions[2])
    late_figures = (f["late_blocks"], f["late_records"], f["late_records_at_most"], f["latest_late_instant"])
    assert late_figures == (1, 1, 1, ui_store.late_instant)  # the block's record at 400 s is not late
    late = get(client, f"/api/v1/tables/{ui_store.ids['core']}/late")["items"]
    got = [(b["instant"], b["min_event_time_ms"], b["late_records"], b["records"]) for b in late]
    assert got == [(ui_store.late_instant, at(50), 1, 2)]


@pytest.mark.parametrize("key", ["core", "v9_txns"])
def test_timeline_pages_add_up_to_the_timeline_files(client: FlaskClient, ui_store: UiStore, key: str) -> None:
    items = all_pages(client, f"/api/v1/tables/{ui_store.ids[key]}/timeline", size=3)
    done = cli("show", "timeline", ui_store.paths[key], "--from-files", "--json")
    assert done.returncode == 0, done.stderr
    from_files = {(r["requested_time"], r["action"], r["state"]) for r in json.loads(done.stdout)}
    assert {(r["requested_time"], r["action"], r["state"]) for r in items} == from_files
    assert [r["requested_time"] for r in items] == sorted((r["requested_time"] for r in items), reverse=True)
    only = get(client, f"/api/v1/tables/{ui_store.ids[key]}/timeline?action=deltacommit&page_size=500")["items"]
    assert {r["requested_time"] for r in only} == {t for t, action, _ in from_files if action == "deltacommit"}


@pytest.mark.parametrize("key", ["core", "evil", "v8_trips", "v9_txns"])
def test_file_groups_hold_the_files_on_disk(client: FlaskClient, ui_store: UiStore, key: str) -> None:
    groups = all_pages(client, f"/api/v1/tables/{ui_store.ids[key]}/file-groups", size=1)
    indexed = {(g["partition"], f["name"]) for g in groups for s in g["slices"] for f in s["log_files"]}
    base = Path(ui_store.paths[key])
    on_disk = {
        (os.path.relpath(root, base) if root != str(base) else "", name)
        for root, _, names in os.walk(base)
        if ".hoodie" not in Path(root).relative_to(base).parts
        for name in names
        if re.match(r"^\.[^.].*\.log\.\d+", name)
    }
    assert indexed == on_disk
    links = {name: target for (_, name), target in _symlinks(base).items()}
    for g in groups:
        for s in g["slices"]:
            for f in s["log_files"]:
                if f["name"] in links:
                    assert f["is_link"] and f["target"] == links[f["name"]]
    partitions = get(client, f"/api/v1/tables/{ui_store.ids[key]}/partitions")["items"]
    assert sum(p["file_groups"] for p in partitions) == len(groups)


def _symlinks(base: Path) -> dict[tuple[str, str], str]:
    out = {}
    for root, _, names in os.walk(base):
        for name in names:
            full = os.path.join(root, name)
            if os.path.islink(full):
                out[(os.path.relpath(root, base), name)] = os.path.basename(os.readlink(full))
    return out


def test_plans_and_lineage(client: FlaskClient, ui_store: UiStore) -> None:
    core = ui_store.ids["core"]
    plans = get(client, f"/api/v1/tables/{core}/plans")["items"]
    assert [(p["instant"], p["threshold_ms"], p["state"]) for p in reversed(plans)] == [
        (c, at(s), "completed") for c, s in zip(ui_store.compactions, (10, 150, 300), strict=True)
    ]
    one = get(client, f"/api/v1/tables/{core}/plans/{ui_store.compactions[0]}")
    assert one["plan"]["links"] == 2 and one["operations"]["total"] == 2
    assert {op["partition"] for op in one["operations"]["items"]} == {"region=eu", "region=us"}
    (partition, name), target = next(iter(_symlinks(Path(ui_store.paths["core"])).items()))
    rows = get(client, f"/api/v1/tables/{core}/lineage?partition={partition}&file={name}")
    assert {x["link"]: x["target"] for x in rows["links"]}[name] == target
    assert rows["cleaned"] and set(rows["cleaned"].values()) == {ui_store.clean}


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/api/v1/tables/999999", 404),
        ("/api/v1/tables/1/plans/20200101000000000", 404),
        ("/api/v1/tables/1/plans/x", 404),
        ("/api/v1/tables/1/timeline?page=-1", 400),
        ("/api/v1/tables/1/timeline?state=gone", 400),
        ("/api/v1/tables/1/file-groups?partition=nowhere", 404),
        ("/api/v1/tables/1/lineage", 400),
        ("/api/v1/nothing", 404),
    ],
)
def test_errors_are_json_with_their_status(client: FlaskClient, url: str, status: int) -> None:
    body = get(client, url, status)
    assert body["error"]["status"] == status and body["error"]["message"]


def test_times_are_epoch_ms_and_iso(client: FlaskClient, ui_store: UiStore) -> None:
    row = get(client, f"/api/v1/tables/{ui_store.ids['core']}")
    assert row["threshold_ms"] == at(300) and format_time_ms(at(300)).endswith("Z")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z", row["last_indexed_at"])
