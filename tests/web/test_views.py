"""What the pages show of charts, plans, lineage and values (issue 29): the event-time chart's empty state,
ticks and labels inside the drawing; plan operations as bytes, records and event times; the lineage of a
compaction; readable values in one time format. Expected values come from the files on disk and from how the
tables were written."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from flask.testing import FlaskClient
from hudi_meta.web.charts import histogram_chart
from hudi_meta.web.readable import details

from hudi_meta.freshness import Histogram
from hudi_meta.index.db import make_engine
from hudi_meta.service.records import StepOutcome, StepStatus, end_step, start_step
from hudi_meta.table.table import HudiTable
from hudi_meta.table.times import format_time_ms
from tests.compaction.core import at
from tests.web.conftest import FreshStore, UiStore
from tests.web.test_pages import page

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_event_time_chart_has_an_empty_state_ticks_and_labels_inside() -> None:
    empty = Histogram(start_ms=0, width_ms=60_000, records=[0], unknown_records=0)
    assert histogram_chart(empty, {}) is None  # the page then shows its empty state
    hist = Histogram(start_ms=at(0), width_ms=60_000, records=[3, 0, 1, 0, 0, 0, 0, 0, 0, 2], unknown_records=0)
    chart = histogram_chart(hist, {"threshold": at(590), "watermark": at(5)})
    assert chart is not None and chart.x_ticks and len(chart.y_ticks) >= 2
    for m in chart.marks:  # a label right of the middle runs leftwards, so none is cut by the edge ("tl")
        assert (m.anchor == "end") == (m.x > chart.width / 2) and m.label_y > 0
    assert all(chart.left <= t.at <= chart.right for t in chart.x_ticks)


def test_chart_pages_show_the_empty_state_and_a_full_width_chart(client: FlaskClient, ui_store: UiStore) -> None:
    assert 'id="no-chart"' in page(client, f"/tables/{ui_store.ids['v6_empty']}")
    text = page(client, f"/tables/{ui_store.ids['core']}")
    svg = text[text.index('<svg id="event-time-chart"') :].split(">", 1)[0]
    assert 'class="chart"' in svg and "viewBox" in svg and " width=" not in svg  # scales to the page's width
    assert 'class="tick x"' in text and 'class="tick y"' in text


def test_plan_operations_read_as_bytes_records_and_event_times(
    fresh_client: FlaskClient, fresh_store: FreshStore
) -> None:
    instant = fresh_store.compactions["on_time"]
    text = page(fresh_client, f"/tables/{fresh_store.ids['on_time']}/plans/{instant}")
    items = [n.replace("<wbr>", "") for n in re.findall(r'<li class="mono name">(.*?)</li>', text)]
    names = [n for n in items if ".log." in n]
    assert names, "the compacted log files fold under the operation"
    on_disk = {p.name: p for p in Path(fresh_store.paths["on_time"]).rglob("*.log.*")}
    expected_bytes = sum(on_disk[n].stat().st_size for n in names)
    # the on-time table: writes 2 and 3 (b, c, d) went to log files; T = now - 1 h merges b and c (not d)
    merged = [ts for key, ts in fresh_store.written["on_time"][1:] if ts <= fresh_store.thresholds["on_time"]]
    row = text[text.index('<tr class="operation">') :]
    assert f'class="num op-records">{len(merged)}<' in row
    assert format_time_ms(min(merged)) in row and format_time_ms(max(merged)) in row
    size = f"{expected_bytes / 1024:.1f} KiB" if expected_bytes >= 1024 else f"{expected_bytes} B"
    assert f'class="num op-bytes">{size}<' in row


def test_no_css_breaks_a_name_mid_word(client: FlaskClient, ui_store: UiStore) -> None:
    with client.get("/static/style.css") as response:
        css = response.get_data(as_text=True)
    assert "break-all" not in css and "overflow-wrap: anywhere" not in css
    text = client.get(f"/tables/{ui_store.ids['core']}/plans/{ui_store.compactions[0]}").get_data(as_text=True)
    assert re.search(r"log\.<wbr>1_<wbr>1-<wbr>0-<wbr>1", text)  # names wrap only after their separators


def test_lineage_draws_each_compaction_with_t_on_its_base_file(client: FlaskClient, ui_store: UiStore) -> None:
    core = ui_store.paths["core"]
    base_files = {p.name for p in Path(core, "region=eu").glob("*.parquet")}
    file_id = next(iter(base_files)).split("_")[0]
    text = page(client, f"/tables/{ui_store.ids['core']}/lineage?partition=region%3Deu&file_id={file_id}")
    graph = text[text.index('id="lineage-graph"') : text.index("</svg>")]
    for instant, seconds in zip(ui_store.compactions, (10, 150, 300), strict=True):
        node = re.search(rf'data-name="{file_id}_[^"]*_{instant}\.parquet"[^>]*data-threshold="([^"]+)"', graph)
        assert node is not None and node[1] == format_time_ms(at(seconds)), instant
        assert len(re.findall(rf'class="edge compaction"[^>]*data-compaction="{instant}"', graph)) >= 2
    # the log file written after the last compaction holds g at 500 s: its node says so
    assert "01-01T00:08:20Z" in graph


def test_steps_and_timeline_show_readable_values(writable_store: UiStore) -> None:
    engine = make_engine(writable_store.url)
    step = start_step(engine, writable_store.ids["core"], "worker-1", "schedule", StepStatus.PLANNING)
    end_step(
        engine,
        step,
        StepOutcome.SKIPPED,
        {"reason": "nothing to compact", "threshold_ms": 1795626184983, "instant": None},
    )
    engine.dispose()
    from hudi_meta.web import create_app

    app = create_app({"STORE_URL": writable_store.url, "TESTING": True})
    text = page(app.test_client(), f"/tables/{writable_store.ids['core']}")
    app.extensions["hudi_meta.engine"].dispose()
    steps = text[text.index('id="steps"') : text.index("</table>", text.index('id="steps"'))]
    assert "threshold</span> 2026-11-25T" in steps and "nothing to compact" in steps
    assert "None" not in steps and "1795626184983" not in steps and "threshold_ms" not in steps
    timeline = text[text.index('id="timeline"') :]
    assert "threshold</span> " + format_time_ms(at(300)) in timeline and "threshold=" not in timeline
    cells = re.findall(r'<td class="time">([^<]*)</td>', text)
    assert cells and all(ISO.match(c) for c in cells)  # one time format: ISO-8601 UTC


def test_details_leave_out_nothing_but_absent_values() -> None:
    got = dict(details({"instant": None, "threshold_ms": at(10), "duration_ms": 252_000, "exact": False, "files": []}))
    assert got == {"threshold": format_time_ms(at(10)), "duration": "4m 12s", "exact": "no"}
    assert json.dumps(got)  # plain strings


def test_the_lag_reads_as_a_duration(fresh_client: FlaskClient, fresh_store: FreshStore) -> None:
    text = page(fresh_client, f"/tables/{fresh_store.ids['on_time']}")
    lag = re.search(r'id="lag">([^<]*)<', text)
    assert lag is not None and re.fullmatch(r"1h 0\dm", lag[1])
    assert os.sep  # (no platform assumption)


def test_a_plan_whose_log_files_were_cleaned_shows_the_planned_bytes(client: FlaskClient, ui_store: UiStore) -> None:
    """The clean after core's third compaction removed the first one's log files from the table and the index:
    its plan page shows the bytes the plan file itself records for them (Hudi's TOTAL_LOG_FILES_SIZE), never —."""
    first = ui_store.compactions[0]
    text = page(client, f"/tables/{ui_store.ids['core']}/plans/{first}")
    plan = HudiTable.open(ui_store.paths["core"]).compaction_plan(first)
    for op in plan.operations:
        size = int(op.metrics["TOTAL_LOG_FILES_SIZE"])
        assert all(not Path(ui_store.paths["core"], op.partition_path, n).exists() for n in op.delta_file_paths)
        shown = f"{size / 1024:.1f} KiB" if size >= 1024 else f"{size} B"
        assert f'class="num op-bytes">{shown}<div class="muted">as planned (files cleaned since)</div>' in text
