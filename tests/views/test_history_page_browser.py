"""The history page in a real browser (Debian chromium through Playwright): a contents list
grouped by suite (or kind), model and metric whose links reach their series; dates on the x
axis; every band inside its frame; a series that was not checked says so; nothing fails to
load."""

from __future__ import annotations

import itertools
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from browser import open_page, outside_event_loop
from click.testing import CliRunner
from tests.support.store_results import compare_report, read, reliability_report

from plumbline.cli.main import main
from plumbline.results.stored import read_result
from plumbline.store.store import Store

if TYPE_CHECKING:
    from playwright.sync_api import Browser

#: Nights with a run (the gaps between them: 1, 1, 5 and 1 days).
NIGHTS = (0, 1, 2, 7, 8)


def _site(root: Path) -> Path:
    store = str(root / "history.db")
    start = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)
    reports = [read(compare_report(root, seed=seed)) for seed in range(2)]
    with Store.open(store) as opened:
        for index, night in enumerate(NIGHTS):
            opened.add(
                read_result(reports[index % 2]),
                created_at=start + timedelta(days=night),
                inputs=[{"path": f"night-{night}", "sha256": uuid.uuid4().hex * 2}],
                labels={"night": str(night)},
            )
        # one reliability report: its series have a single run, too few to check
        opened.add(read_result(read(reliability_report(root))), created_at=start)
    result = CliRunner().invoke(main, ["history", "--store", store, "--html", str(root / "site")])
    assert result.exit_code == 0, result.output
    return root / "site" / "history" / "index.html"


def test_the_history_page_reads_by_date_and_by_series(
    browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    page_path = outside_event_loop(_site, tmp_path)
    visit = open_page(browser, page_path)
    page = visit.page
    contents = page.locator("#contents")
    groups = contents.locator("strong").all_inner_texts()
    assert groups == ["compare results", "reliability results"]
    links = contents.locator("a")
    assert links.count() == page.locator("section.series").count() >= 2
    first = links.first.get_attribute("href")
    assert first is not None and page.locator(first).is_visible()
    # dates on the x axis: the first and last nights, with the five-day gap as space
    dates = page.locator("svg.chart text.date").all_text_contents()
    assert "2026-03-01" in dates and "2026-03-09" in dates
    series = page.locator("section.series").first
    xs = [float(c.get_attribute("cx") or "nan") for c in series.locator("circle").all()]
    assert len(xs) == len(NIGHTS)
    steps = [b - a for a, b in itertools.pairwise(xs)]
    assert steps[2] > 4 * steps[0]  # 5 days look five times as long as 1
    # every band and whisker inside its frame: nothing drawn on or past the frame's edge
    for chart in page.locator("svg.chart").all():
        height = float(chart.get_attribute("height") or "260")
        for polygon in chart.locator("polygon.band").all():
            ys = [
                float(y) for y in re.findall(r",([-\d.]+)", polygon.get_attribute("points") or "")
            ]
            assert ys and min(ys) > 12 and max(ys) < height - 44
    # a series of deltas without intervals is marked, never silently skipped
    reliability = page.locator("section.series", has_text="reliability results").first
    assert "not checked: not enough runs to check yet" in reliability.inner_text()
    compare = page.locator("section.series", has_text="compare results").first
    assert "not checked" not in compare.inner_text()
    visit.screenshot(screenshots, "history")
    assert visit.problems == []
    visit.close()
