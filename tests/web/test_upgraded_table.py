"""The UI over a table a Java writer upgraded from version 6 to 8 after it was indexed (tests/table/upgrade.py).

Pages are served from the store alone (tests/web/test_security.py), so until the table is indexed again they show
the index as it was, as they show any index that lags its table. Every action indexes the table again first: a
schedule from the UI re-indexes the upgraded table and plans from the files on disk, and from then on the pages
show the version-8 timeline."""

from __future__ import annotations

from pathlib import Path

from hudi_meta.web import create_app

from hudi_meta.format.table_service_metadata import CompactionPlan
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.registry import table_id_of
from hudi_meta.table.table import HudiTable
from tests.compaction.core import TwoRegions, at, compact_three_times, region_rows
from tests.table.upgrade import upgrade_6_to_8
from tests.web.conftest import TOKEN, timeline_dir


def test_an_action_on_an_upgraded_table_indexes_it_again_first(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    t = TwoRegions(tmp_path / "t")
    compact_three_times(t, engine)
    Indexer(engine, t.table).run()
    table_id = table_id_of(engine, t.table.uri)
    upgrade_6_to_8(t.path)
    t.write(region_rows("eu", ("z", 900, 9.0)))  # a version-8 write: its log file is named by its delta commit
    app = create_app({"STORE_URL": url, "TESTING": True, "UI_TOKEN": TOKEN})
    client = app.test_client()
    assert client.get(f"/api/v1/tables/{table_id}").get_json()["table_version"] == 6  # the store, as indexed

    response = client.post(
        f"/api/v1/tables/{table_id}/actions/schedule",
        json={"threshold": str(at(1000))},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert response.status_code == 200, response.data
    instant = response.get_json()["instant"]
    plan = CompactionPlan.from_bytes((timeline_dir(t.path) / f"{instant}.compaction.requested").read_bytes())
    on_disk = {p.name for p in Path(t.path).rglob(".*.log.*")}
    assert plan.operations and all(name in on_disk for op in plan.operations for name in op.delta_file_paths)
    assert client.get(f"/api/v1/tables/{table_id}").get_json()["table_version"] == 8
    timeline = client.get(f"/api/v1/tables/{table_id}/timeline?page_size=100").get_json()["items"]
    assert all(r["completion_time"] for r in timeline if r["state"] == "completed")
    assert HudiTable.open(t.path).config.version == 8  # hudi-meta never changes a table's version
    app.extensions["hudi_meta.engine"].dispose()
    engine.dispose()
