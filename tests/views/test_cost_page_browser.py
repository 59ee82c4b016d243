"""The leaderboard page's score-against-cost plot in chromium: both intervals, the front, the
cost table, and no page problems."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import open_page, outside_event_loop
from tests.support.cost_logs import make_cost_logs

from plumbline.app.site import load_site_inputs, write_site
from plumbline.core.prices import load_prices
from plumbline.leaderboard import build_leaderboard

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cost-site")
    logs, suite, prices = outside_event_loop(make_cost_logs, root)
    board = build_leaderboard(logs, suite, prices=load_prices(prices))
    document = root / "leaderboard.json"
    document.write_text(json.dumps(board.to_dict()), encoding="utf-8")
    out = root / "site"
    write_site(load_site_inputs([document]), out)
    return out


def test_cost_plot_shows_both_intervals_and_the_front(
    browser: Browser, site: Path, screenshots: Path
) -> None:
    visit = open_page(browser, site / "leaderboard" / "index.html")
    page = visit.page
    chart = page.locator("#cost ~ svg.chart").first
    assert chart.is_visible()
    points = page.locator("svg .cost-point")
    assert sorted(points.evaluate_all("els => els.map(e => e.dataset.model)")) == [
        "mockllm/cheap",
        "mockllm/dear",
    ]
    assert page.locator("svg .cost-point .cost-interval").count() == 2
    assert page.locator("svg .cost-point .score-interval").count() == 2
    # cheapest and best-scoring: both on the front, drawn as one dashed staircase
    assert page.locator("svg .cost-point.front").count() == 2
    front = page.locator("svg path.pareto-front")
    assert front.count() == 1 and front.bounding_box() is not None
    box = chart.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 200
    title = (
        page.locator("svg .cost-point[data-model='mockllm/dear'] circle title").text_content() or ""
    )
    assert "probability on the front" in title and "per sample" in title
    rows = page.locator("#cost-table tbody tr")
    assert rows.count() == 3
    free = page.locator("#cost-table tr[data-model='mockllm/free']")
    assert "no price" in free.inner_text()
    assert "mockllm/free" in (free.locator(".badge.missing").get_attribute("title") or "")
    shot = visit.screenshot(screenshots, "cost")
    assert shot.stat().st_size > 10_000
    assert visit.problems == []
    assert visit.dialogs == []
    visit.close()
