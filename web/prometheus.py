"""`/metrics`: every registered table's metrics (docs/catalog-and-freshness.md section 2) in the Prometheus text format,
from the store (the same values `hudi-meta metrics TABLE` prints for one table after indexing it)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from flask import Blueprint, Response
from prometheus_client import CONTENT_TYPE_LATEST

from hudi_meta.index import browse
from hudi_meta.metrics import render, table_metric_values
from hudi_meta.table.times import now_ms

from . import store
from .common import table_state, zone_of

bp = Blueprint("metrics", __name__)


@bp.get("/metrics")
def metrics() -> Any:
    conn = store.connection()
    tables = browse.tables(conn)
    names = Counter(t.name for t in tables)
    now = now_ms()
    values = {}
    for t in tables:
        label = t.name if t.name and names[t.name] == 1 else t.base_path  # two tables of one name: their paths
        values[label] = table_metric_values(conn, t.id, table_state(t).freshness, zone_of(t), now)
    return Response(render(values), mimetype=CONTENT_TYPE_LATEST)
