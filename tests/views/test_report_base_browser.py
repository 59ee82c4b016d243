"""The base template's shared behaviours in a real chromium: sorting, filtering, no errors."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
from browser import open_page

from plumbline.views.html import environment

if TYPE_CHECKING:
    from playwright.sync_api import Browser

PROBE = """{% extends "base.html.j2" %}{% block content %}
<h1>{{ title }}</h1>
<select id="kind" data-filter="kind" data-target="#rows"><option value="">all</option>
<option value="a">a</option><option value="b">b</option></select>
<span data-count-for="#rows">{{ rows|length }}</span>
<table id="rows" class="data sortable"><thead><tr>
<th>name</th><th data-sort-type="number">score</th></tr></thead><tbody>
{% for row in rows %}<tr data-kind="{{ row.kind }}"><td>{{ row.name }}</td>
<td data-sort="{{ row.sort }}">{{ row.text }}</td></tr>{% endfor %}
</tbody></table>{% endblock %}"""

ROWS = [
    {"name": "beta", "kind": "a", "sort": "0.5", "text": "50%"},
    {"name": "alpha", "kind": "b", "sort": "", "text": "missing"},
    {"name": "gamma", "kind": "a", "sort": "0.125", "text": "12.5%"},
    {"name": "<script>alert(1)</script>", "kind": "b", "sort": "0.9", "text": "90%"},
]


def write_probe(directory: Path) -> Path:
    env = environment()
    loader = jinja2.ChoiceLoader(
        [jinja2.DictLoader({"probe.html.j2": PROBE}), env.loader]  # type: ignore[list-item]
    )
    html = (
        env.overlay(loader=loader)
        .get_template("probe.html.j2")
        .render(root="", title="probe", path="index.html", rows=ROWS)
    )
    path = directory / "index.html"
    path.write_text(html, encoding="utf-8")
    return path


def column(visit_page: object, index: int) -> list[str]:
    cells = visit_page.locator(f"#rows tbody tr:not(.hidden) td:nth-child({index})")  # type: ignore[attr-defined]
    return [text.strip() for text in cells.all_inner_texts()]


def test_sorting_filtering_and_escaping(
    browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    visit = open_page(browser, write_probe(tmp_path))
    page = visit.page
    header = page.locator("#rows th", has_text="score")
    header.click()
    # Numeric sort by data-sort; the missing value sorts last in either direction.
    assert column(page, 2) == ["12.5%", "50%", "90%", "missing"]
    assert header.get_attribute("aria-sort") == "ascending"
    header.click()
    assert column(page, 2) == ["90%", "50%", "12.5%", "missing"]
    assert header.get_attribute("aria-sort") == "descending"
    page.locator("#rows th", has_text="name").click()
    assert column(page, 1)[0] == "<script>alert(1)</script>"
    assert header.get_attribute("aria-sort") is None

    page.select_option("#kind", "a")
    assert sorted(column(page, 1)) == ["beta", "gamma"]
    assert page.locator("[data-count-for='#rows']").inner_text() == "2"
    page.select_option("#kind", "")
    assert len(column(page, 1)) == 4

    assert page.locator("#rows script").count() == 0
    assert visit.dialogs == []
    assert visit.problems == []
    assert visit.screenshot(screenshots, "probe").stat().st_size > 0
    visit.close()
