"""The leaderboard site in chromium: loads clean, sorts, drills down, filters, escapes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import open_page
from report_scenario import HOSTILE, HOSTILE_MODEL, Scenario

from plumbline.app.site import load_site_inputs, write_site

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


@pytest.fixture(scope="module")
def site(scenario: Scenario, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("leaderboard-site")
    write_site(load_site_inputs([scenario.leaderboard, scenario.logs]), root)
    return root


def models_in_order(page: Page) -> list[str]:
    return [t.strip() for t in page.locator("#leaderboard tbody td.model").all_inner_texts()]


def visible_rows(page: Page) -> int:
    return page.locator("#samples tbody tr:not(.hidden)").count()


def test_every_page_loads_without_problems(browser: Browser, site: Path, screenshots: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) == 4
    for path in pages:
        visit = open_page(browser, path)
        assert visit.problems == [], path
        assert visit.dialogs == [], path
        shot = visit.screenshot(screenshots, path.relative_to(site).as_posix())
        assert shot.stat().st_size > 10_000
        visit.close()


def test_leaderboard_sorts_by_a_clicked_column(browser: Browser, site: Path) -> None:
    visit = open_page(browser, site / "leaderboard" / "index.html")
    page = visit.page
    assert models_in_order(page) == ["scripted/oracle", HOSTILE_MODEL]  # by overall
    header = page.locator("#leaderboard th[data-category='practice_exam']")
    header.click()  # ascending: the hostile model's 33.3% before the oracle's 100%
    assert models_in_order(page) == [HOSTILE_MODEL, "scripted/oracle"]
    assert header.get_attribute("aria-sort") == "ascending"
    cdk = page.locator("#leaderboard th[data-category='cdk_synth']")
    cdk.click()
    cdk.click()  # descending; the oracle's missing CDK score still sorts last
    assert models_in_order(page) == [HOSTILE_MODEL, "scripted/oracle"]
    assert page.locator("#leaderboard tr[data-model='scripted/oracle'] .badge.missing").count() == 1
    assert visit.problems == []
    visit.close()


def test_drill_down_opens_a_models_samples_and_filters_them(
    browser: Browser, site: Path, screenshots: Path
) -> None:
    visit = open_page(browser, site / "leaderboard" / "index.html")
    page = visit.page
    page.get_by_role("link", name=HOSTILE_MODEL).click()
    page.wait_for_load_state("load")
    assert page.locator("h1.model-name").inner_text() == HOSTILE_MODEL
    assert visible_rows(page) == 8
    page.select_option("#filter-category", "cdk_synth")
    assert visible_rows(page) == 2
    page.select_option("#filter-outcome", "extraction_failed")
    assert visible_rows(page) == 2
    page.select_option("#filter-category", "")
    page.select_option("#filter-outcome", "error")
    assert visible_rows(page) == 1
    row = page.locator("#samples tbody tr:not(.hidden)")
    assert "mock provider failure" in row.inner_text()
    assert page.locator("[data-count-for='#samples']").inner_text() == "1"
    visit.screenshot(screenshots, "model-filtered")
    assert visit.problems == []
    visit.close()


def test_injection_in_model_name_and_response_renders_as_text(browser: Browser, site: Path) -> None:
    for path in sorted((site / "leaderboard").rglob("*.html")):
        visit = open_page(browser, path)
        page = visit.page
        page.locator("details").evaluate_all("(all) => all.forEach(d => d.open = true)")
        assert page.locator("main img").count() == 0, path
        assert page.locator("main script").count() == 0, path
        assert visit.dialogs == [], path
        if "oracle" not in path.name:
            assert HOSTILE in page.locator("main").inner_text(), path
        assert visit.problems == [], path
        visit.close()
    model_page = next((site / "leaderboard" / "models").glob("mockllm-*.html"))
    visit = open_page(browser, model_page)
    visit.page.locator("#samples details").evaluate_all("(all) => all.forEach(d => d.open = true)")
    responses = visit.page.locator("pre.response").all_inner_texts()
    assert any(HOSTILE in text for text in responses)
    visit.close()
