"""Security of the UI: path-like parameters never open a file outside a registered table (nor list any
directory: pages read the store), SQL injection strings change nothing and break nothing, HTML in table and
partition names is shown escaped, and actions without the token or the CSRF token are refused and change
nothing."""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from markupsafe import escape
from sqlalchemy import Engine, func, select

from hudi_meta.index.models import metadata
from tests.web.conftest import EVIL_NAME, EVIL_PARTITION, TOKEN, UiStore

# ---------------------------------------------------------------- what a request touches

_SEEN: list[tuple[str, str]] | None = None
_SEEN_THREAD: int | None = None  # the test's thread, where the test client serves the request


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _SEEN is None or threading.get_ident() != _SEEN_THREAD:
        return  # not recording, or another thread (a writer's heartbeat left over by another test)
    if event in ("open", "os.listdir", "os.scandir", "os.remove", "os.unlink", "os.rename"):
        path = args[0] if args else None
        if isinstance(path, (str, bytes, os.PathLike)):
            _SEEN.append((event, os.fsdecode(path)))


sys.addaudithook(_audit)  # hooks cannot be removed: it records only inside `touched`


@contextmanager
def touched() -> Iterator[list[tuple[str, str]]]:
    """What this thread opens, lists, removes or renames meanwhile (the test client serves in this thread)."""
    global _SEEN, _SEEN_THREAD
    _SEEN, _SEEN_THREAD = [], threading.get_ident()
    try:
        yield _SEEN
    finally:
        _SEEN, _SEEN_THREAD = None, None


TRAVERSALS = [
    "../../../../etc/passwd",
    "/etc/passwd",
    "..%2F..%2F..%2Fetc%2Fpasswd",
    "....//....//etc/passwd",
    "region=eu/../../../../etc",
    "%00",
    "file:///etc/passwd",
    "\\..\\..\\windows\\win.ini",
]


def path_urls(table_id: int, value: str) -> list[str]:
    from urllib.parse import quote

    v = quote(value, safe="")
    return [
        f"/tables/{table_id}/file-groups?partition={v}",
        f"/tables/{table_id}/lineage?partition={v}&file_id={v}",
        f"/tables/{table_id}/lineage?partition=region%3Deu&file={v}",
        f"/tables/{table_id}/plans/{v}",
        f"/api/v1/tables/{table_id}/file-groups?partition={v}",
        f"/api/v1/tables/{table_id}/lineage?partition={v}&file={v}",
        f"/static/{v}",
        f"/tables/{table_id}?q={v}",
    ]


def allowed_roots(ui_store: UiStore) -> list[str]:
    import hudi_meta

    return [
        os.path.dirname(os.path.dirname(hudi_meta.__file__)),  # the checkout: package code, templates, static
        sys.prefix,
        sys.base_prefix,
        str(ui_store.root),
        *ui_store.paths.values(),
    ]


@pytest.mark.parametrize("value", TRAVERSALS)
def test_path_traversal_opens_nothing_outside_the_tables(client: FlaskClient, ui_store: UiStore, value: str) -> None:
    roots = [os.path.realpath(r) for r in allowed_roots(ui_store)]
    for url in path_urls(ui_store.ids["core"], value):
        with touched() as seen:
            response = client.get(url, follow_redirects=True)  # werkzeug merges `//` with a redirect
        assert response.status_code in (200, 400, 404), url
        assert b"root:x:0:0" not in response.data
        for event, path in seen:
            assert event == "open", (url, event, path)  # no directory listing, nothing removed or renamed
            real = os.path.realpath(path)
            assert any(real == r or real.startswith(r + os.sep) for r in roots), (url, path)


def test_reading_pages_lists_no_directory(client: FlaskClient, ui_store: UiStore) -> None:
    core = ui_store.ids["core"]
    urls = ["/", "/metrics", f"/tables/{core}", f"/tables/{core}/file-groups", f"/tables/{core}/plans"]
    urls += [f"/tables/{core}/late", f"/api/v1/tables/{core}/file-groups"]
    client.get("/")  # warm the caches: templates compile once
    with touched() as control:
        Path(__file__).read_bytes()
        os.listdir(Path(__file__).parent)
    assert [e for e, _ in control] == ["open", "os.listdir"]  # the hook sees what it must catch
    for url in urls:
        with touched() as seen:
            assert client.get(url).status_code == 200
        assert not [e for e in seen if e[0] != "open"], url
        table_files = [p for _, p in seen if any(p.startswith(t) for t in ui_store.paths.values())]
        assert not table_files, (url, table_files)  # pages are served from the store alone


INJECTIONS = [
    "' OR '1'='1",
    "1; DROP TABLE hudi_table; --",
    '" OR 1=1 --',
    "') UNION SELECT base_path FROM hudi_table --",
    "%' OR name LIKE '%",
    "1 OR 1=1",
]


def row_counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return {t.name: conn.execute(select(func.count()).select_from(t)).scalar_one() for t in metadata.sorted_tables}


@pytest.mark.parametrize("value", INJECTIONS)
def test_sql_injection_in_every_parameter(
    client: FlaskClient, ui_store: UiStore, ui_engine: Engine, value: str
) -> None:
    from urllib.parse import quote

    before = row_counts(ui_engine)
    core = ui_store.ids["core"]
    v = quote(value, safe="")
    urls = path_urls(core, value) + [
        f"/?q={v}",
        f"/?sort={v}",
        f"/?sort=name&order={v}",
        f"/tables/{core}?action={v}",
        f"/tables/{core}?state={v}",
        f"/tables/{core}?page={v}",
        f"/tables/{core}?page_size={v}",
        f"/tables/{v}",
        f"/api/v1/tables/{core}/timeline?action={v}&state={v}",
        f"/api/v1/tables/{v}/plans",
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code in (200, 400, 404), url
        assert b"Traceback" not in response.data
        if response.status_code == 200 and "q=" in url:
            assert b">core</a>" not in response.data or value.lower() in "core"
    assert row_counts(ui_engine) == before
    assert client.get("/").status_code == 200


def test_html_in_names_is_escaped_everywhere(client: FlaskClient, ui_store: UiStore) -> None:
    evil = ui_store.ids["evil"]
    for url in ("/", f"/tables/{evil}", f"/tables/{evil}/file-groups", f"/tables/{evil}/plans", f"/tables/{evil}/late"):
        text = client.get(url).get_data(as_text=True)
        assert "<script>alert" not in text and "<img src=x" not in text, url
        assert str(escape(EVIL_NAME)) in text, url
    groups = client.get(f"/tables/{evil}/file-groups").get_data(as_text=True)
    assert str(escape(EVIL_PARTITION)) in groups
    file_id = re.search(r'data-file-id="([^"]+)"', groups)
    assert file_id is not None
    from urllib.parse import quote

    lineage = client.get(f"/tables/{evil}/lineage?partition={quote(EVIL_PARTITION)}&file_id={file_id[1]}")
    assert lineage.status_code == 200
    text = lineage.get_data(as_text=True)
    assert "<img src=x" not in text and str(escape(EVIL_PARTITION)) in text
    api = client.get(f"/api/v1/tables/{evil}").get_json()
    assert api["name"] == EVIL_NAME  # JSON carries the name as it is; the browser never renders it as HTML


# ---------------------------------------------------------------- actions


def timeline_files(store: UiStore) -> dict[str, list[str]]:
    return {key: sorted(os.listdir(Path(store.paths[key], ".hoodie"))) for key in ("core", "evil")}


def data_files(store: UiStore) -> list[str]:
    return sorted(
        str(p) for key in ("core", "evil") for p in Path(store.paths[key]).rglob("*") if ".hoodie" not in p.parts
    )


def csrf_of(client: FlaskClient) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/login").get_data(as_text=True))
    assert found is not None
    return found[1]


def sign_in(client: FlaskClient) -> str:
    csrf = csrf_of(client)
    response = client.post("/login", data={"token": TOKEN, "csrf_token": csrf})
    assert response.status_code == 302
    found = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/").get_data(as_text=True))
    assert found is not None
    return found[1]


ACTION_FORMS = {
    "schedule": {"threshold": "1767225900000"},
    "clean": {},
    "sync": {},
}


@pytest.mark.parametrize("action", sorted(ACTION_FORMS))
def test_actions_are_refused_without_token_or_csrf_and_change_nothing(
    token_app: Flask, writable_store: UiStore, action: str
) -> None:
    from hudi_meta.index.db import make_engine

    engine = make_engine(writable_store.url)
    before = (timeline_files(writable_store), data_files(writable_store), row_counts(engine))
    evil = writable_store.ids["evil"]
    core = writable_store.ids["core"]
    form = ACTION_FORMS[action]
    for table_id in (core, evil):
        url = f"/tables/{table_id}/actions/{action}"
        api = f"/api/v1/tables/{table_id}/actions/{action}"
        anonymous = token_app.test_client()
        assert anonymous.post(url, data=form).status_code == 401
        assert anonymous.post(api, json=form).status_code == 401
        assert anonymous.post(api, json=form, headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert anonymous.post(api, json=form, headers={"Authorization": "Basic " + TOKEN}).status_code == 401
        signed = token_app.test_client()
        csrf = sign_in(signed)
        assert signed.post(url, data=form).status_code == 403  # no CSRF token
        assert signed.post(url, data={**form, "csrf_token": "forged"}).status_code == 403
        other = token_app.test_client()
        assert other.post(url, data={**form, "csrf_token": csrf}).status_code == 401  # another browser's token
    # a wrong token at sign-in is refused and signs nobody in
    stranger = token_app.test_client()
    assert stranger.post("/login", data={"token": "guess", "csrf_token": csrf_of(stranger)}).status_code == 401
    assert stranger.post(f"/tables/{core}/actions/{action}", data=form).status_code == 401
    assert (timeline_files(writable_store), data_files(writable_store), row_counts(engine)) == before
    engine.dispose()


def test_a_read_only_ui_refuses_actions_and_sign_in(client: FlaskClient, ui_store: UiStore) -> None:
    core = ui_store.ids["core"]
    assert client.post(f"/tables/{core}/actions/schedule", data={"threshold": "1"}).status_code == 403
    assert client.post(f"/api/v1/tables/{core}/actions/clean", headers={"Authorization": "Bearer x"}).status_code == 403
    assert client.get("/login").status_code == 403
    assert "read-only" in client.get("/").get_data(as_text=True)


def test_sign_out_needs_csrf_and_ends_the_session(token_app: Flask, writable_store: UiStore) -> None:
    client = token_app.test_client()
    csrf = sign_in(client)
    core = writable_store.ids["core"]
    assert client.post("/logout").status_code == 403  # a cross-site form cannot sign a user out either
    assert client.post("/logout", data={"csrf_token": csrf}).status_code == 302
    assert client.post(f"/tables/{core}/actions/clean", data={"csrf_token": csrf}).status_code == 401
    assert "sign in for actions" in client.get("/").get_data(as_text=True)
