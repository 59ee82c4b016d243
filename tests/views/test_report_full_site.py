"""The whole site from a demo-like run set: real Inspect logs, real compare and reliability results.

Built with the real commands (`leaderboard`, `compare`, `reliability`, then `report` over all of
them and the logs and records behind them), then opened in chromium from the index page.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import open_page, outside_event_loop
from click.testing import CliRunner
from report_scenario import Scenario

from plumbline.cli.demo import example_path
from plumbline.cli.main import main

if TYPE_CHECKING:
    from playwright.sync_api import Browser


def run(*args: str) -> str:
    result = outside_event_loop(CliRunner().invoke, main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return str(result.output)


@pytest.fixture(scope="module")
def site(scenario: Scenario, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("full-site")
    runs, trials = example_path("agent_runs.jsonl"), example_path("trials.jsonl")
    arms = ["--treatment", "with_skelly", "--control", "without_skelly"]
    run("compare", str(runs), *arms, "--resamples", "500", "--json", str(root / "compare.json"))
    run("reliability", str(trials), "--json", str(root / "reliability.json"))
    output = run(
        "report", str(scenario.leaderboard), str(scenario.logs), str(root / "compare.json"),
        str(runs), str(root / "reliability.json"), str(trials), "-o", str(root / "site"),
    )  # fmt: skip
    assert f"Open {(root / 'site' / 'index.html').resolve().as_uri()}" in output
    return root / "site"


def test_site_has_all_three_reports_and_their_data(site: Path) -> None:
    for kind in ("leaderboard", "compare", "reliability"):
        assert (site / kind / "index.html").is_file()
        assert json.loads((site / "data" / f"{kind}.json").read_text())


def test_every_page_reached_from_the_index_loads_clean(
    browser: Browser, site: Path, screenshots: Path
) -> None:
    visit = open_page(browser, site / "index.html")
    page = visit.page
    cards = page.locator("#reports .report")
    assert sorted(cards.evaluate_all("(all) => all.map(c => c.dataset.kind)")) == [
        "compare",
        "leaderboard",
        "reliability",
    ]
    visit.screenshot(screenshots, "index")
    assert visit.problems == []
    visit.close()
    for kind in ("leaderboard", "compare", "reliability"):
        visit = open_page(browser, site / "index.html")
        visit.page.locator(f"#reports .report[data-kind='{kind}'] h3 a").click()
        visit.page.wait_for_load_state("load")
        assert visit.page.url == (site / kind / "index.html").resolve().as_uri()
        assert visit.page.locator("h1").count() >= 1
        visit.screenshot(screenshots, kind)
        # Back to the index through the navigation bar.
        visit.page.locator("header.site a", has_text="All reports").click()
        visit.page.wait_for_load_state("load")
        assert visit.page.url == (site / "index.html").resolve().as_uri()
        assert visit.problems == [], kind
        assert visit.dialogs == [], kind
        visit.close()
    for path in sorted(site.rglob("*.html")):
        visit = open_page(browser, path)
        assert visit.problems == [], path
        visit.close()
