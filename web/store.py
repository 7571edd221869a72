"""The metadata store for the UI: one engine per app, one connection per request (closed on teardown), the
flaskr pattern. Reads of one request share the connection's transaction."""

from __future__ import annotations

from flask import Flask, current_app, g
from sqlalchemy import Connection, Engine

from hudi_meta.index.store import open_store

ENGINE_KEY = "hudi_meta.engine"


def init_app(app: Flask) -> None:
    """Open the store (refused in one line when it is missing or at another schema) and close each request's
    connection when the request ends."""
    app.extensions[ENGINE_KEY] = open_store(app.config["STORE_URL"])
    app.teardown_appcontext(close_connection)


def engine() -> Engine:
    found: Engine = current_app.extensions[ENGINE_KEY]
    return found


def connection() -> Connection:
    """This request's connection to the store."""
    if "store_conn" not in g:
        g.store_conn = engine().connect()
    conn: Connection = g.store_conn
    return conn


def close_connection(_: BaseException | None = None) -> None:
    conn = g.pop("store_conn", None)
    if conn is not None:
        conn.close()
