"""Every page of the UI on the shared store, with expected values worked out independently of the store: event
times from how the tables were written (`at(seconds)`), links from the symlinks on disk, what a clean removed
from its metadata file on the timeline, instants from the timeline's files."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from hudi_meta.web import create_app
from markupsafe import escape
from prometheus_client.parser import text_string_to_metric_families

from hudi_meta.format.table_service_metadata import CleanMetadata
from hudi_meta.table.times import format_time_ms
from tests.compaction.core import at
from tests.web.conftest import EVIL_NAME, UiStore, timeline_dir


def page(client: FlaskClient, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.data[:400])
    return response.get_data(as_text=True).replace("<wbr>", "")  # names wrap at <wbr>: read them whole


def symlinks(path: str) -> dict[str, str]:
    """relative path of every symlink under a table -> the file name it points at (the file system's word)."""
    out = {}
    for root, _, names in os.walk(path):
        for name in names:
            full = os.path.join(root, name)
            if os.path.islink(full):
                out[os.path.relpath(full, path)] = os.path.basename(os.readlink(full))
    return out


def test_tables_page_lists_sorts_and_searches(client: FlaskClient, ui_store: UiStore) -> None:
    text = page(client, "/")
    for name in ("core", "v6_empty", "v8_trips_8i3u1d", "v9_txns_mor_simple_meta"):
        assert f">{name}</a>" in text
    assert str(escape(EVIL_NAME)) in text
    # core published T = 300 s, evil T = 10 s: by threshold, descending, core comes first
    ordered = page(client, "/?sort=threshold_ms&order=desc")
    assert ordered.index(">core</a>") < ordered.index(str(escape(EVIL_NAME)))
    ascending = page(client, "/?sort=threshold_ms")
    assert ascending.index(">core</a>") > ascending.index(str(escape(EVIL_NAME)))
    found = page(client, "/?q=COR")
    assert ">core</a>" in found and "v6_empty" not in found
    assert "No table matches" in page(client, "/?q=nothing-like-it")


def test_an_empty_store_says_how_to_register_a_table(tmp_path: Path) -> None:
    from hudi_meta.index.migrate import upgrade

    url = f"sqlite:///{tmp_path / 'empty.db'}"
    upgrade(url)
    app = create_app({"STORE_URL": url})
    try:
        assert "No table is registered yet" in page(app.test_client(), "/")
    finally:
        app.extensions["hudi_meta.engine"].dispose()


def test_table_page_shows_freshness_chart_and_timeline(client: FlaskClient, ui_store: UiStore) -> None:
    core = ui_store.ids["core"]
    text = page(client, f"/tables/{core}")
    # T of the last compaction is 300 s; the late write at 50 s holds the watermark down
    assert f'id="threshold">{format_time_ms(at(300))}<' in text
    assert f'id="watermark">{format_time_ms(at(50))}<' in text
    assert 'id="event-time-chart"' in text and 'data-mark="threshold"' in text and 'data-mark="watermark"' in text
    timeline = timeline_dir(ui_store.paths["core"])
    completed = {p.name[:17] for p in timeline.iterdir() if re.match(r"\d{17}[._]", p.name)}
    shown = set(re.findall(r"<td class=\"mono instant\">(?:<a [^>]*>)?(\d{17})", text))
    assert shown == completed
    commits = page(client, f"/tables/{core}?action=commit")
    assert set(re.findall(r"<td class=\"mono instant\"><a [^>]*>(\d{17})</a>", commits)) == set(ui_store.compactions)
    assert "No instant matches the filter" in page(client, f"/tables/{core}?action=clean&state=requested")
    paged = page(client, f"/tables/{core}?page_size=5&page=2")
    assert f"{len(completed)} in all · page 2 of {-(-len(completed) // 5)}" in paged
    assert 'rel="next"' in paged and 'rel="prev"' in paged


def test_file_groups_page_shows_each_link_with_its_target(client: FlaskClient, ui_store: UiStore) -> None:
    core = ui_store.ids["core"]
    text = page(client, f"/tables/{core}/file-groups")
    links = symlinks(ui_store.paths["core"])
    assert links
    for rel, target in links.items():
        name = os.path.basename(rel)
        row = text[text.index(f">{name}</a>") :]
        assert f'<span class="mono link-target">{target}</span>' in row[: row.index("</tr>")]
    only_us = page(client, f"/tables/{core}/file-groups?partition=region%3Dus")
    assert "region=us" in only_us and "region=eu /" not in only_us
    page(client, f"/tables/{core}/file-groups?partition=region%3Dnowhere", 404)


def test_lineage_page_draws_links_and_what_the_clean_removed(client: FlaskClient, ui_store: UiStore) -> None:
    core = ui_store.ids["core"]
    links = {os.path.basename(rel): target for rel, target in symlinks(ui_store.paths["core"]).items()}
    eu_link = next(name for name in links if name.startswith("."))
    file_id = eu_link[1:].split("_")[0]
    partition = next(rel.split("/")[0] for rel in symlinks(ui_store.paths["core"]) if rel.endswith(eu_link))
    text = page(client, f"/tables/{core}/lineage?partition={partition}&file_id={file_id}")
    nodes = dict(re.findall(r'<g class="node [^"]*" data-name="([^"]+)" data-note="([^"]*)"', text))
    group_links = {n: t for n, t in links.items() if n.startswith(f".{file_id}_")}
    for name, target in group_links.items():
        assert nodes[name] == "link created"  # on disk now
        assert target in nodes
    (clean_file,) = timeline_dir(ui_store.paths["core"]).glob(f"{ui_store.clean}_*.clean")  # version 9: <t>_<c>.clean
    clean = CleanMetadata.from_bytes(clean_file.read_bytes())
    deleted = {f for pm in clean.partition_metadata.values() for f in pm.success_delete_files if file_id in f}
    assert deleted
    for name in deleted:
        assert nodes[name] in (f"deleted by clean {ui_store.clean}", f"removed by clean {ui_store.clean}")
    assert text.count('class="edge"') >= len(group_links)
    # one log file: the physical file it shows and every link to it
    focused = page(client, f"/tables/{core}/lineage?partition={partition}&file={eu_link}")
    focused_nodes = set(re.findall(r'data-name="([^"]+)"', focused))
    assert {eu_link, group_links[eu_link]} <= focused_nodes
    page(client, f"/tables/{core}/lineage?partition={partition}&file=.{file_id}_20200101000000000.log.9_0-0-0", 404)
    page(client, f"/tables/{core}/lineage?partition={partition}&file_id=nope", 404)
    page(client, f"/tables/{core}/lineage?partition={partition}", 400)


def test_plans_and_plan_pages(client: FlaskClient, ui_store: UiStore) -> None:
    core, evil = ui_store.ids["core"], ui_store.ids["evil"]
    text = page(client, f"/tables/{core}/plans")
    for instant, seconds in zip(ui_store.compactions, (10, 150, 300), strict=True):
        row = text[text.index(f">{instant}</a>") :]
        row = row[: row.index("</tr>")]
        assert format_time_ms(at(seconds)) in row and "completed" in row and "symlink" in row
    # c1 linked the newest log file of both regions, c2 and c3 one of eu's (see compact_three_times)
    for instant, links in zip(ui_store.compactions, (2, 1, 1), strict=True):
        plan = page(client, f"/tables/{core}/plans/{instant}")
        assert plan.count("link-item") == links
        assert f'id="plan-threshold">{format_time_ms(at((10, 150, 300)[ui_store.compactions.index(instant)]))}<' in plan
    pending = page(client, f"/tables/{evil}/plans")
    assert ui_store.pending in pending and "requested" in pending and "copy" in pending
    assert "planned" in page(client, f"/tables/{evil}/plans/{ui_store.pending}")
    page(client, f"/tables/{core}/plans/20200101000000000", 404)
    page(client, f"/tables/{core}/plans/not-an-instant", 404)


def test_late_data_page(client: FlaskClient, ui_store: UiStore) -> None:
    text = page(client, f"/tables/{ui_store.ids['core']}/late")
    assert ui_store.late_instant in text and format_time_ms(at(50)) in text
    # one of the block's two records is below T: the page says 1 record, in 1 block
    assert '<strong id="late-records">1</strong>' in text and '<span id="late-blocks">1</span>' in text
    overview = page(client, f"/tables/{ui_store.ids['core']}")
    assert ">1 records</a> in 1 blocks" in overview
    assert "No late data" in page(client, f"/tables/{ui_store.ids['evil']}/late")


@pytest.mark.parametrize("key", ["v6_empty", "v8_trips", "v9_txns"])
def test_java_tables_render_every_page(client: FlaskClient, ui_store: UiStore, key: str) -> None:
    table_id = ui_store.ids[key]
    for url in ("", "/plans", "/file-groups", "/late"):
        page(client, f"/tables/{table_id}{url}")
    text = page(client, f"/tables/{table_id}?page_size=500")
    timeline = timeline_dir(ui_store.paths[key])
    instants = {p.name[:17] for p in timeline.iterdir() if re.match(r"\d{17}", p.name)}
    assert set(re.findall(r"<td class=\"mono instant\">(?:<a [^>]*>)?(\d{17})", text)) == instants
    if not instants:
        assert "No instant" in text and 'id="no-chart"' in text


def test_metrics_for_every_table(client: FlaskClient, ui_store: UiStore) -> None:
    response = client.get("/metrics")
    assert response.status_code == 200 and response.mimetype == "text/plain"
    samples = {
        (s.name, s.labels["table"]): s.value
        for family in text_string_to_metric_families(response.get_data(as_text=True))
        for s in family.samples
    }
    assert samples[("hudi_meta_threshold_seconds", "core")] == at(300) / 1000
    assert samples[("hudi_meta_watermark_seconds", "core")] == at(50) / 1000
    assert samples[("hudi_meta_late_records", "core")] == 1
    assert samples[("hudi_meta_last_clean_success", "core")] == 1
    assert ("hudi_meta_pending_plan_age_seconds", EVIL_NAME) in samples
    assert ("hudi_meta_pending_plan_age_seconds", "core") not in samples
    assert samples[("hudi_meta_leftover_log_files", "v6_empty")] == 0


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/tables/999999", 404),
        ("/tables/abc", 404),
        ("/tables/1?page=0", 400),
        ("/tables/1?page=abc", 400),
        ("/tables/1?page_size=100000", 400),
        ("/tables/1?action=bogus", 400),
        ("/?sort=bogus", 400),
        ("/nowhere", 404),
    ],
)
def test_bad_requests_are_one_clear_page(client: FlaskClient, url: str, status: int) -> None:
    text = page(client, url, status)
    assert 'id="error-message"' in text and "Traceback" not in text


def test_static_files_and_the_favicon_are_shipped(client: FlaskClient) -> None:
    css = client.get("/static/style.css")
    assert css.status_code == 200 and css.mimetype == "text/css"
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.mimetype == "image/svg+xml" and b"<svg" in icon.data
    css.close()
    icon.close()
