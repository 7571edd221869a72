"""The web UI (docs/service-and-ui.md section 2), importable as `hudi_meta.web`: `create_app(config)` builds the Flask
app.

One blueprint per area: `tables` (overview, table page with freshness, history, event-time chart and timeline,
file groups, late data), `plans`, `lineage`, `api` (the same data as JSON under `/api/v1/`, and its index page),
`metrics` (Prometheus text), `auth` (token login) and `actions` (schedule, run a compaction, clean dry run, sync).
Every page reads the metadata store through one connection per request; no page opens a table's files. Without a
configured token the UI is read-only.

Config keys (`create_app({...})`; `hudi-meta serve` fills them from its options and the environment):

| key | meaning |
|---|---|
| `STORE_URL` | the metadata store (a SQLAlchemy URL or a SQLite path; default: `hudi-meta`'s default store) |
| `UI_TOKEN` | the token actions need (`HUDI_META_UI_TOKEN`); unset: read-only |
| `SECRET_KEY` | signs the session cookie (default: random per process, so logins end with the process) |
| `CATALOG` | `{"mode": "hms"|"hiveserver2", "uri": ..., "database": ...}` for "sync now"; unset: no sync |
| `PAGE_SIZE` | rows per page of long lists (default 50) |
| `STORAGE_OPTIONS` | table URI -> fsspec storage options for the actions (credentials; never shown) |
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from flask import Flask

from hudi_meta.index.db import resolve_db_url

from . import actions, api, auth, lineage, plans, prometheus, store, tables
from .common import register_errors, register_template_helpers
from .state import StateCache

DEFAULTS: dict[str, Any] = {
    "UI_TOKEN": None,
    "CATALOG": None,
    "PAGE_SIZE": 50,
    "SESSION_COOKIE_SAMESITE": "Lax",
    "SESSION_COOKIE_HTTPONLY": True,
    "JSON_SORT_KEYS": False,
}


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """The UI app over the store named by `config["STORE_URL"]` (which must be at the current schema)."""
    app = Flask(__name__)
    app.config.from_mapping(DEFAULTS)
    app.config.from_mapping(config or {})
    app.config["STORE_URL"] = resolve_db_url(app.config.get("STORE_URL"))
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secrets.token_hex(32)
    app.json = api.JsonProvider(app)
    store.init_app(app)
    app.extensions["hudi_meta.states"] = StateCache()
    register_template_helpers(app)
    register_errors(app)
    for bp in (tables.bp, plans.bp, lineage.bp, api.bp, api.index_bp, prometheus.bp, auth.bp, actions.bp):
        app.register_blueprint(bp)
    return app
