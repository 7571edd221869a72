"""The UI in a real browser: Playwright drives the system Chromium against the app served by waitress (as
`hudi-meta serve` serves it). Every page is opened, checked for what a person would see (the freshness colours,
the history chart, the compaction lineage), and saved as a screenshot in one folder: `$HUDI_META_SCREENSHOTS`
when set, else `screenshots/` under pytest's base temp dir (printed); any console error or failed request fails
the test."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hudi_meta.table.times import format_time_ms
from tests.compaction.core import at
from tests.web.conftest import TOKEN, FreshStore, UiStore

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def live_app(ui_store: UiStore) -> Iterator[str]:
    """`hudi-meta serve` on a free port, as a user starts it, with actions enabled; its base URL."""
    url, process = start_server(ui_store.url, {"HUDI_META_UI_TOKEN": TOKEN})
    yield url
    stop_server(process)


def stop_server(process: subprocess.Popen[str]) -> str:
    """Stop it (SIGTERM) and return what it wrote on stderr."""
    process.terminate()
    _, err = process.communicate(timeout=30)
    return err


def start_server(store_url: str, env: dict[str, str], *args: str) -> tuple[str, subprocess.Popen[str]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "hudi_meta.cli.main", "--db", store_url, "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    found = re.search(r"(http://\S+?)/ ", line)
    if found is None:
        process.kill()
        raise AssertionError(f"serve did not start: {line!r} {process.stderr.read() if process.stderr else ''}")
    return found[1], process


@pytest.fixture(scope="module")
def fresh_app(fresh_store: FreshStore) -> Iterator[str]:
    url, process = start_server(fresh_store.url, {})
    yield url
    stop_server(process)


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where every page's screenshot goes (said on stdout: `pytest -s` shows it)."""
    given = os.environ.get("HUDI_META_SCREENSHOTS")
    folder = Path(given) if given else tmp_path_factory.getbasetemp() / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots of every page: {folder}")
    return folder


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not shutil.which(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: apt-get install chromium (.ci/setup installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


class Visit:
    """A page that records console errors and failed requests, and saves screenshots."""

    def __init__(self, browser: Any, shots: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1300, "height": 900})
        self.problems: list[str] = []
        self.shots = shots
        self.page.on("console", lambda m: self.problems.append(f"console: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("requestfailed", self._failed)
        self.page.on("response", lambda r: self.problems.append(f"{r.status}: {r.url}") if r.status >= 400 else None)

    def _failed(self, request: Any) -> None:
        # A click that navigates cancels what the old page still loads (its favicon, say): the browser
        # reports net::ERR_ABORTED, which is no fault of the app. Refused or broken requests still count.
        if "ERR_ABORTED" not in (request.failure or ""):
            self.problems.append(f"failed: {request.url} ({request.failure})")

    def open(self, url: str, shot: str) -> Any:
        response = self.page.goto(url)
        assert response is not None and response.status == 200, url
        self.page.screenshot(path=str(self.shots / f"{shot}.png"), full_page=True)
        return self.page

    def close(self) -> None:
        self.page.close()
        assert not self.problems, self.problems


def test_each_page_of_a_compacted_table(live_app: str, browser: Any, ui_store: UiStore, shots: Path) -> None:
    base = live_app
    core = ui_store.ids["core"]
    visit = Visit(browser, shots)
    page = visit.open(f"{base}/", "tables")
    assert page.locator("#tables tbody tr").count() == len(ui_store.ids)
    page.fill("input[name=q]", "core")
    page.click("form[role=search] button")
    assert page.locator("#tables tbody tr").count() == 1

    page = visit.open(f"{base}/tables/{core}", "table")
    assert page.locator("#threshold").inner_text() == format_time_ms(at(300))
    assert page.locator("#watermark").inner_text() == format_time_ms(at(50))
    chart = page.locator("#event-time-chart")
    assert chart.is_visible() and chart.locator("rect.bar").count() > 0
    assert chart.locator("[data-mark=threshold] line").count() == 1
    assert chart.locator("[data-mark=watermark] line").count() == 1
    page.select_option("select[name=action]", "commit")
    page.click("text=Filter")
    assert page.locator("#timeline tbody tr").count() == 3

    page = visit.open(f"{base}/tables/{core}/plans", "plans")
    assert page.locator("#plans tbody tr").count() == 3
    for i, instant in enumerate(ui_store.compactions):
        page = visit.open(f"{base}/tables/{core}/plans/{instant}", f"plan-{i + 1}")
        assert page.locator("#plan-threshold").inner_text() == format_time_ms(at((10, 150, 300)[i]))

    links = {}
    for root, _, names in os.walk(ui_store.paths["core"]):
        for name in names:
            if os.path.islink(os.path.join(root, name)):
                links[name] = os.path.basename(os.readlink(os.path.join(root, name)))
    page = visit.open(f"{base}/tables/{core}/file-groups", "file-groups")
    targets = set(page.locator(".link-target").all_inner_texts())
    assert set(links.values()) <= targets

    eu = next(name for name in links if page.locator(f"section:has-text('{name}') h2").count())
    file_id = eu[1:].split("_")[0]
    page.locator(f"section[data-file-id='{file_id}'] h2 a", has_text="lineage").click()
    page.wait_for_load_state()
    page.screenshot(path=str(shots / "lineage.png"), full_page=True)
    graph = page.locator("#lineage-graph")
    # each compaction drawn from the files it merged to the base file it wrote, with its T on that node
    drawn_compactions = 0
    for instant, seconds in zip(ui_store.compactions, (10, 150, 300), strict=True):
        wrote = graph.locator(f"g.node[data-name$='_{instant}.parquet']")
        if wrote.count():  # this compaction wrote a base file of this group
            drawn_compactions += 1
            assert wrote.get_attribute("data-threshold") == format_time_ms(at(seconds))
            assert graph.locator(f"path.edge.compaction[data-compaction='{instant}']").count() >= 2
    assert drawn_compactions >= 1
    assert graph.is_visible()
    drawn = set(graph.locator("g.node").evaluate_all("nodes => nodes.map(n => n.dataset.name)"))
    group_links = {n for n in links if n.startswith(f".{file_id}_")}
    assert group_links | {links[n] for n in group_links} <= drawn
    assert graph.locator("path.edge").count() >= len(group_links)
    assert page.locator("g.node[data-note^='deleted by clean']").count() > 0

    page = visit.open(f"{base}/tables/{core}/late", "late")
    assert ui_store.late_instant in page.locator("#late").inner_text()
    visit.open(f"{base}/metrics", "metrics")
    page = visit.open(f"{base}/api", "api-index")
    assert page.locator("#endpoints tbody tr").count() > 10
    visit.open(f"{base}/api/v1/tables/core", "api-table-by-name")
    for key in ("evil", "v6_empty", "v8_trips", "v9_txns"):
        page = visit.open(f"{base}/tables/{ui_store.ids[key]}", f"table-{key}")
    assert page.locator("#event-time-chart, #no-chart").count() == 1
    page = visit.open(f"{base}/tables/{ui_store.ids['evil']}/plans/{ui_store.pending}", "plan-pending")
    assert page.locator("#operations tr.operation").count() >= 1
    visit.close()


COLOURS = {"on_time": "rgb(227, 243, 233)", "late": "rgb(255, 244, 224)", "stalled": "rgb(251, 234, 234)"}


def test_freshness_colours_and_history_in_the_browser(
    fresh_app: str, browser: Any, fresh_store: FreshStore, shots: Path
) -> None:
    visit = Visit(browser, shots)
    page = visit.open(f"{fresh_app}/", "tables-freshness")
    for key, colour in COLOURS.items():
        row = page.locator("#tables tbody tr", has=page.locator(f"a:text-is('{key}')"))
        for cell in ("td.lag", "td.watermark"):
            assert row.locator(cell).evaluate("e => getComputedStyle(e).backgroundColor") == colour, (key, cell)
        assert row.locator(".status-label").inner_text().lower() == key.replace("_", " ")
    for key, colour in COLOURS.items():
        page = visit.open(f"{fresh_app}/tables/{fresh_store.ids[key]}", f"table-{key}")
        cards = page.locator("#freshness .card")
        assert cards.nth(0).get_attribute("id") == "watermark-card" and cards.nth(1).get_attribute("id") == "lag-card"
        assert cards.nth(1).evaluate("e => getComputedStyle(e).backgroundColor") == colour
        history = page.locator("#history-chart")
        assert history.is_visible() and history.bounding_box()["width"] > 1000  # the page's width
        assert history.locator("[data-kind=compaction]").count() == 1
        assert history.locator("polyline.watermark").get_attribute("points")
    assert page.locator("#event-time-chart text.mark-label").count() == 2
    for label in page.locator("#event-time-chart text").all():  # every label inside the drawing: none cut off
        box, svg = label.bounding_box(), page.locator("#event-time-chart").bounding_box()
        assert svg["x"] <= box["x"] and box["x"] + box["width"] <= svg["x"] + svg["width"] + 0.5
    page = visit.open(f"{fresh_app}/tables/{fresh_store.ids['late']}", "table-late-history")
    assert page.locator("#history-chart [data-kind=sync]").count() == fresh_store.syncs
    instant = fresh_store.compactions["on_time"]
    page = visit.open(f"{fresh_app}/tables/{fresh_store.ids['on_time']}/plans/{instant}", "plan-with-stats")
    assert page.locator("td.op-records").inner_text() != "—"
    visit.close()


def test_sign_in_and_plan_a_clean_in_the_browser(live_app: str, browser: Any, ui_store: UiStore, shots: Path) -> None:
    base = live_app
    visit = Visit(browser, shots)
    page = visit.open(f"{base}/login", "login")
    page.fill("input[name=token]", TOKEN)
    page.click("button[type=submit]")
    assert "Signed in" in page.content()
    page = visit.open(f"{base}/tables/{ui_store.ids['core']}", "table-signed-in")
    before = sorted(p.name for p in Path(ui_store.paths["core"]).rglob("*"))
    page.click("text=Plan a clean (dry run)")
    page.wait_for_load_state()
    page.screenshot(path=str(shots / "clean-plan.png"), full_page=True)
    assert "dry run" in page.locator("#clean-summary").inner_text()
    assert sorted(p.name for p in Path(ui_store.paths["core"]).rglob("*")) == before
    visit.close()
