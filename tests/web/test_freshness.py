"""Freshness at a glance (issue 29): the status rule (docs/service-and-ui.md section 3), the coloured tables and
table pages, the ranked cards, and the history. Expected values come from how the tables were written
(`build_fresh_store`: event times relative to now, one table per status) and from the rule as the design
states it, not from the code that applies it."""

from __future__ import annotations

import re
from pathlib import Path

from flask.testing import FlaskClient
from hudi_meta.web import create_app
from hudi_meta.web.freshness import Compaction, Point, Status, Write, history_points, judge

from hudi_meta.format.config_keys import DATA_LATENCY
from hudi_meta.index.db import make_engine
from hudi_meta.index.indexer import Indexer
from hudi_meta.index.migrate import upgrade
from hudi_meta.index.registry import table_id_of
from hudi_meta.table.times import now_ms
from tests.compaction.core import CoreTable
from tests.web.conftest import HOUR_MS, FreshStore, UiStore, now_rows
from tests.web.test_pages import page

D = 30 * 60_000  # a data latency
NOW = 1_800_000_000_000


def test_the_rule_on_time_late_stalled() -> None:
    # on time: the lag is at most twice the data latency, whenever the last compaction ran
    assert judge(2 * D, D, None, NOW).status is Status.ON_TIME
    assert judge(D, D, NOW - 10 * D, NOW).status is Status.ON_TIME
    # beyond 2 D: late while a compaction completed within the last 2 D, stalled when none did
    assert judge(2 * D + 1, D, NOW - 2 * D, NOW).status is Status.LATE
    assert judge(5 * D, D, NOW - 2 * D - 1, NOW).status is Status.STALLED
    assert judge(5 * D, D, None, NOW).status is Status.STALLED
    # no watermark or no data latency: unknown
    assert judge(None, D, NOW, NOW).status is Status.UNKNOWN
    assert judge(5 * D, None, NOW, NOW).status is Status.UNKNOWN


def test_tables_page_colours_lag_and_watermark(fresh_client: FlaskClient, fresh_store: FreshStore) -> None:
    text = page(fresh_client, "/")
    expected = {"on_time": "on-time", "late": "late", "stalled": "stalled"}
    for key, css in expected.items():
        row = text[text.index(f">{key}</a>") :]
        row = row[: row.index("</tr>")]
        assert f'class="time watermark fresh-{css}"' in row, key
        assert f"lag fresh-{css}" in row and f'<div class="status-label">{css.replace("-", " ")}</div>' in row, key


def test_table_page_ranks_watermark_and_lag_first(fresh_client: FlaskClient, fresh_store: FreshStore) -> None:
    for key, css in {"on_time": "on-time", "late": "late", "stalled": "stalled"}.items():
        text = page(fresh_client, f"/tables/{fresh_store.ids[key]}")
        cards = re.findall(r'<div class="card([^"]*)"[^>]*><div class="label">([^<]*)<', text)
        assert [label for _, label in cards[:2]] == ["Watermark: RO holds all data before", "Lag (now − watermark)"]
        assert all(f"essential fresh-{css}" in cls for cls, _ in cards[:2]), key
        assert len(cards) == 10 and not any("essential" in cls for cls, _ in cards[2:])


def test_the_data_latency_is_the_one_the_plan_was_scheduled_with(
    fresh_client: FlaskClient, fresh_store: FreshStore
) -> None:
    got = fresh_client.get(f"/api/v1/tables/{fresh_store.ids['on_time']}").get_json()["freshness"]
    # scheduled at T = now - 1 h: D is 1 h, up to the few ms between taking "now" and the instant time
    assert HOUR_MS <= got["data_latency_ms"] < HOUR_MS + 5_000
    assert got["on_time_limit_ms"] == 2 * got["data_latency_ms"] and got["status"] == "on time"


def test_history_points_follow_compactions_and_late_writes() -> None:
    c1, c2 = Compaction(1_000, "c1", 500), Compaction(5_000, "c2", 4_000)
    writes = [Write(2_000, "w1", 900), Write(3_000, "w2", 300), Write(6_000, "w3", 3_000)]
    now = Point(7_000, 4_000, 3_000, 4_000)
    points = history_points([c1, c2], writes, now)
    # c1 publishes T = 500 (watermark = T); w1 (900) is after T and changes nothing; w2 (300) is late: the
    # watermark drops to 300 until c2 publishes 4000; w3 (3000) is late for c2
    assert [(p.at_ms, p.threshold_ms, p.watermark_ms, p.lag_ms) for p in points] == [
        (1_000, 500, 500, 500),
        (3_000, 500, 300, 2_700),
        (5_000, 4_000, 4_000, 1_000),
        (6_000, 4_000, 3_000, 3_000),
        (7_000, 4_000, 3_000, 4_000),
    ]


def test_history_chart_marks_compactions_cleans_and_syncs(
    fresh_client: FlaskClient, fresh_store: FreshStore, client: FlaskClient, ui_store: UiStore
) -> None:
    text = page(fresh_client, f"/tables/{fresh_store.ids['late']}")
    chart = text[text.index('id="history-chart"') : text.index("</svg>", text.index('id="history-chart"'))]
    assert chart.count('data-kind="compaction"') == 1
    assert chart.count('data-kind="sync"') == fresh_store.syncs and "marker sync failed" in chart
    assert 'class="line threshold"' in chart and 'class="line watermark"' in chart and 'class="line lag"' in chart
    assert "on time up to 2h 00m" in chart
    history = fresh_client.get("/api/v1/tables/late/history").get_json()
    # the compaction publishes T (watermark = T), the record 5 h old written after it holds the watermark down
    late_event_time = fresh_store.written["late"][-1][1]
    assert [p["watermark_ms"] for p in history["points"][:2]] == [fresh_store.thresholds["late"], late_event_time]
    core = page(client, f"/tables/{ui_store.ids['core']}")
    core_chart = core[core.index('id="history-chart"') :]
    assert core_chart.count('data-kind="compaction"') == 3 and core_chart.count('data-kind="clean"') == 1
    assert 'id="no-history"' in page(client, f"/tables/{ui_store.ids['v6_empty']}")


def test_the_tables_own_data_latency_comes_first(tmp_path: Path) -> None:
    """A table that sets hoodie.compaction.event.time.data.latency is judged against it, whatever T a plan was
    given by hand: D = 10 min, compacted at T = now - 1 h (a plan would say D = 1 h): lag ~1 h > 2 D, right
    after a compaction, so late (against the plan's 1 h it would read on time)."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    upgrade(url)
    engine = make_engine(url)
    t = CoreTable(tmp_path / "t", name="own", version=9, props={DATA_LATENCY.name: str(10 * 60_000)})
    t.write(now_rows(("a", now_ms() - 3 * HOUR_MS)))
    t.write(now_rows(("b", now_ms() - 2 * HOUR_MS)))
    t.compact(engine, now_ms() - HOUR_MS)
    Indexer(engine, t.table).run()
    table_id = table_id_of(engine, t.table.base_path)
    engine.dispose()
    app = create_app({"STORE_URL": url, "TESTING": True})
    try:
        got = app.test_client().get(f"/api/v1/tables/{table_id}").get_json()["freshness"]
    finally:
        app.extensions["hudi_meta.engine"].dispose()
    assert got["data_latency_ms"] == 10 * 60_000 and got["status"] == "late", got
