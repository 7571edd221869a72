"""The UI over a table a Java writer upgraded from version 6 to 8 after it was indexed (tests/table/upgrade.py):
nothing of the stale index is shown (the overview says why in one line, the table's pages and API answer 409 with
that line, `/metrics` leaves it out) until the table is indexed again; then it shows what is on disk."""

from __future__ import annotations

from pathlib import Path

from hudi_meta.web import create_app

from hudi_meta.index.db import make_engine
from hudi_meta.index.freshness_inputs import indexed_freshness
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.registry import table_id_of
from hudi_meta.table.table import HudiTable
from tests.compaction.core import TwoRegions, at, compact_three_times
from tests.table.upgrade import upgrade_6_to_8


def test_the_ui_shows_nothing_stale(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    t = TwoRegions(tmp_path / "t")
    compact_three_times(t, engine)
    Indexer(engine, t.table).run()
    table_id = table_id_of(engine, t.table.uri)
    upgrade_6_to_8(t.path)
    base = HudiTable.open(t.path).base_path
    line = f"table {base} was upgraded from version 6 to 8 since it was indexed: run `hudi-meta index {base}`"
    app = create_app({"STORE_URL": url, "TESTING": True})
    client = app.test_client()

    (row,) = client.get("/api/v1/tables").get_json()["items"]
    assert row["stale"] == line
    assert row["threshold_ms"] is row["watermark_ms"] is row["pending_plans"] is row["late_records"] is None
    for endpoint in ("", "/freshness", "/timeline", "/plans", "/file-groups", "/late"):
        response = client.get(f"/api/v1/tables/{table_id}{endpoint}")
        assert response.status_code == 409, endpoint
        assert response.get_json() == {"error": {"status": 409, "message": line}}
    assert client.get(f"/tables/{table_id}").status_code == 409
    assert line in client.get("/").get_data(as_text=True)
    assert 'table="core"' not in client.get("/metrics").get_data(as_text=True)

    fresh = indexed_freshness(engine, HudiTable.open(t.path), at(10_000))  # indexes it again
    row = client.get(f"/api/v1/tables/{table_id}").get_json()
    assert row["stale"] is None and row["threshold_ms"] == fresh.threshold_ms is not None
    timeline = client.get(f"/api/v1/tables/{table_id}/timeline?page_size=100").get_json()["items"]
    assert all(r["completion_time"] for r in timeline if r["state"] == "completed")
    assert 'table="core"' in client.get("/metrics").get_data(as_text=True)
    app.extensions["hudi_meta.engine"].dispose()
    engine.dispose()
