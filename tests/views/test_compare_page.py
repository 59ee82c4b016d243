"""The A/B page: view model (no browser), rendering, and the page in a real chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from browser import open_page
from pages_support import IMG, SCRIPT, compare_document, example_path, write_run_records
from tests.support.rendered_numbers import page_text, unexplained_numbers

from plumbline.app.site import read_site_input, write_site
from plumbline.compare.result import MIXED, CompareReport, prefer
from plumbline.views.compare_page import (
    CompareView,
    compare_view,
    decision_badge,
    render_compare_pages,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser

RUNS = example_path("agent_runs.jsonl")
ARMS = ["-t", "with_skelly", "-c", "without_skelly"]


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return compare_document([RUNS], treatments=["with_skelly"], control="without_skelly")


def view_of(document: dict[str, Any]) -> CompareView:
    return compare_view(CompareReport.model_validate(document))


def test_decision_first_with_the_seed_strings(document: dict[str, Any]) -> None:
    view = view_of(document)
    first = view.comparisons[0]
    assert first.decision == document["decision"]
    assert first.decision in (MIXED, prefer("with_skelly"), prefer("without_skelly"))
    assert first.badge == decision_badge(first.decision, "with_skelly", "without_skelly")
    html = render_compare_pages(read_site_input("compare", "ab", document), "ab")[0].html
    # The decision comes before the gates, the deltas and the per-task table.
    positions = [
        html.index(marker)
        for marker in (first.decision, "The three gates", "Paired deltas", "Per task")
    ]
    assert positions == sorted(positions)


def test_decision_badges() -> None:
    assert decision_badge(prefer("t"), "t", "c") == "ok"
    assert decision_badge(prefer("c"), "t", "c") == "bad"
    assert decision_badge(MIXED, "t", "c") == "warn"


def test_gates_carry_both_values_and_the_criterion(document: dict[str, Any]) -> None:
    gates = view_of(document).comparisons[0].gates
    assert [g.name for g in gates] == [
        "success_rate",
        "median_duration_seconds",
        "median_non_cache_tokens",
    ]
    success = gates[0]
    summaries = document["arm_summaries"]
    assert success.treatment == f"{summaries['with_skelly']['success_rate'] * 100:.1f}%"
    assert success.control == f"{summaries['without_skelly']['success_rate'] * 100:.1f}%"
    assert success.criterion == document["gates"][0]["criterion"]
    verdicts = {g.verdict for g in gates}
    assert verdicts <= {"treatment", "control", "tie", "neither"}
    # The A/B schema's rule has no interval on a gate.
    assert all(g.interval == "" for g in gates)


def test_ci_rule_shows_gate_intervals(tmp_path: Path) -> None:
    runs = write_run_records(tmp_path / "runs.jsonl", ["new", "old"], ["a", "b", "c"], 5)
    document = compare_document([runs], treatments=["new"], control="old", rule="ci")
    gates = view_of(document).comparisons[0].gates
    assert all(re.fullmatch(r"\[.+, .+\]", g.interval) for g in gates), [g.interval for g in gates]


def test_forest_plot_per_delta_with_a_zero_line(document: dict[str, Any]) -> None:
    view = view_of(document)
    names = [f.name for f in view.forest]
    assert names == [
        "pass_delta",
        "cost_delta_usd",
        "duration_delta_seconds",
        "token_delta",
        "non_cache_token_delta",
    ]
    for plot in view.forest:
        assert 'class="reference"' in plot.chart
        assert plot.chart.count('class="whisker"') == 1
    deltas = {d.name: d for d in view.comparisons[0].deltas}
    ci = document["paired"]["duration_delta_seconds"]["ci"]
    assert deltas["duration_delta_seconds"].low == pytest.approx(ci["low"])
    assert deltas["duration_delta_seconds"].high == pytest.approx(ci["high"])


def test_several_treatments_share_each_forest_plot(tmp_path: Path) -> None:
    runs = write_run_records(tmp_path / "runs.jsonl", ["a1", "a2", "base"], ["t1", "t2"], 5)
    document = compare_document([runs], treatments=["a1", "a2"], control="base")
    view = view_of(document)
    assert [c.treatment for c in view.comparisons] == ["a1", "a2"]
    assert all(plot.chart.count('class="whisker"') == 2 for plot in view.forest)
    assert view.arm_header == ["a1", "a2", "base"]


def test_per_task_rows_sort_by_raw_values(document: dict[str, Any]) -> None:
    comparison = view_of(document).comparisons[0]
    assert comparison.task_ids == [row["task_id"] for row in document["per_task"]]
    headers = [h for h, _ in comparison.task_header]
    column = headers.index("mean pass delta")
    for row, entry in zip(comparison.tasks, document["per_task"], strict=True):
        cell = row[column]
        assert float(cell.sort) == pytest.approx(entry["mean_pass_delta"])
        assert cell.text.endswith(" pts")  # a difference of rates: percentage points


def test_distributions_and_runs_come_from_the_report(document: dict[str, Any]) -> None:
    """The page draws and lists the report's own per-run values: no run records needed."""
    view = view_of(document)
    # As in the analysis: infrastructure failures are left out of each arm.
    for arm, summary in document["arm_summaries"].items():
        assert document["distributions"][arm]["duration_seconds"]["n"] == summary["runs"]
    assert "One point per run" in view.distribution_source
    assert [d.title for d in view.distributions][:2] == [
        "Duration per run",
        "Non-cache tokens per run (input + output)",
    ]
    assert all(d.chart is not None for d in view.distributions)
    assert view.runs_total == sum(s["runs"] for s in document["arm_summaries"].values())
    assert len(view.runs) == view.runs_listed == view.runs_total


def test_escaping_in_the_rendered_html(tmp_path: Path) -> None:
    runs = write_run_records(tmp_path / "runs.jsonl", [IMG, "control"], [SCRIPT, "plain"], 5)
    document = compare_document([runs], treatments=[IMG], control="control")
    page = render_compare_pages(read_site_input("compare", SCRIPT, document, (runs,)), "ab")[0]
    assert SCRIPT not in page.html
    assert "<img" not in page.html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.html
    assert page.path == "ab/index.html"


def run_site(tmp_path: Path, document: dict[str, Any], sources: tuple[Path, ...]) -> Path:
    result = write_site([read_site_input("compare", "ab", document, sources)], tmp_path / "site")
    return result.root / "ab" / "index.html"


def test_page_in_chromium_sorts_the_per_task_table(
    browser: Browser, document: dict[str, Any], tmp_path: Path, screenshots: Path
) -> None:
    visit = open_page(browser, run_site(tmp_path, document, (RUNS,)))
    page = visit.page
    assert visit.problems == []
    assert page.locator(".decision").first.inner_text() == document["decision"]
    table = page.locator("#per-task-1")
    header = table.locator("th", has_text="mean pass delta")
    header.click()
    index = [h.strip() for h in table.locator("th").all_inner_texts()].index(
        header.inner_text().strip()
    )
    keys = [
        float(k)
        for k in table.locator(f"tbody tr td:nth-child({index + 1})").evaluate_all(
            "cells => cells.map(c => c.getAttribute('data-sort'))"
        )
    ]
    assert keys == sorted(keys)
    assert header.get_attribute("aria-sort") == "ascending"
    header.click()
    keys = [
        float(k)
        for k in table.locator(f"tbody tr td:nth-child({index + 1})").evaluate_all(
            "cells => cells.map(c => c.getAttribute('data-sort'))"
        )
    ]
    assert keys == sorted(keys, reverse=True)
    # Drill-down: every run, filterable by arm.
    page.locator("#runs summary").click()
    page.locator("#run-arm").select_option("with_skelly")
    shown = page.locator("#run-table tbody tr:not(.hidden)").count()
    assert shown == document["arm_summaries"]["with_skelly"]["runs"]
    assert visit.problems == []
    assert visit.screenshot(screenshots, "compare").stat().st_size > 0
    visit.close()


def test_page_in_chromium_without_run_records(
    browser: Browser, document: dict[str, Any], tmp_path: Path, screenshots: Path
) -> None:
    visit = open_page(browser, run_site(tmp_path, document, ()))
    assert visit.problems == []
    # Everything comes from the report: the runs and their distributions without the records.
    assert "One point per run" in visit.page.inner_text(".distribution-source")
    assert visit.page.locator("#runs").count() == 1
    visit.screenshot(screenshots, "compare-no-records")
    visit.close()


def test_injected_names_render_as_text_in_chromium(
    browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    runs = write_run_records(tmp_path / "runs.jsonl", [IMG, "control"], [SCRIPT, "plain"], 5)
    document = compare_document([runs], treatments=[IMG], control="control")
    visit = open_page(browser, run_site(tmp_path, document, (runs,)))
    page = visit.page
    page.locator("#runs summary").click()
    assert visit.dialogs == []
    assert visit.problems == []
    assert page.locator("main img").count() == 0
    assert page.locator("main script").count() == 0
    assert page.locator("#per-task-1 tbody td", has_text=SCRIPT).first.is_visible()
    assert page.locator(".arm", has_text=IMG).first.is_visible()
    visit.screenshot(screenshots, "compare-injection")
    visit.close()


def test_compare_html_option_writes_the_site(
    browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    from click.testing import CliRunner

    from plumbline.cli.main import main

    out = tmp_path / "compare.json"
    site = tmp_path / "site"
    result = CliRunner().invoke(
        main,
        [
            "compare",
            str(RUNS),
            *ARMS,
            "--resamples",
            "500",
            "--json",
            str(out),
            "--html",
            str(site),
        ],
    )
    assert result.exit_code == 0, result.output
    page = site / "compare-agent-runs" / "index.html"
    assert f"HTML report: {page.resolve().as_uri()}" in result.output.replace("\n", "")
    # The page's data copy is exactly what --json wrote; the records fed the distributions.
    copy = site / "data" / "compare-agent-runs.json"
    assert json.loads(copy.read_text()) == json.loads(out.read_text())
    html = page.read_text()
    assert "One point per run" in html and 'id="run-table"' in html
    assert (site / "index.html").is_file()
    visit = open_page(browser, page)
    assert visit.problems == []
    visit.page.locator("header.site a").first.click()
    assert visit.page.url == (site / "index.html").resolve().as_uri()
    assert visit.problems == []
    visit.screenshot(screenshots, "compare-cli-index")
    visit.close()


def test_compare_html_with_json_on_stdout_keeps_stdout_json(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from plumbline.cli.main import main

    site = tmp_path / "site"
    result = CliRunner().invoke(
        main, ["compare", str(RUNS), *ARMS, "--resamples", "500", "--json", "--html", str(site)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["decision"] == MIXED
    assert "HTML report:" in result.stderr
    assert (site / "compare-agent-runs" / "index.html").is_file()
    # A comparison of other records gets a page of its own beside the first.
    other = write_run_records(tmp_path / "other.jsonl", ["control", "treatment"], ["t1", "t2"], 3)
    again = CliRunner().invoke(
        main,
        ["compare", str(other), "-t", "treatment", "-c", "control", "--html", str(site)],
    )
    assert again.exit_code == 0, again.output
    index = (site / "index.html").read_text()
    assert 'href="compare-agent-runs/index.html"' in index
    assert 'href="compare-other/index.html"' in index


def test_invalid_run_records_are_reported_on_the_page(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    lines = RUNS.read_text().splitlines()
    runs.write_text("\n".join([*lines, '{"task_id": "x", "arm": "with_skelly"}']) + "\n")
    document = compare_document([runs], treatments=["with_skelly"], control="without_skelly")
    view = view_of(document)
    assert any(error.startswith(f"{runs}:{len(lines) + 1}:") for error in view.record_errors)
    html = render_compare_pages(read_site_input("compare", "ab", document), "ab")[0].html
    assert "1 invalid records excluded" in html


def test_large_arms_are_thinned_keeping_the_extremes() -> None:
    from plumbline.compare.listing import MAX_POINTS, thin_points

    values = [float(v) for v in range(3 * MAX_POINTS, 0, -1)]
    thinned = thin_points(values)
    assert len(thinned) == MAX_POINTS
    assert thinned[0] == 1.0 and thinned[-1] == 3.0 * MAX_POINTS
    assert thin_points(values[:10]) == values[:10]


def test_arms_without_pairs_are_marked_missing(tmp_path: Path) -> None:
    first = write_run_records(tmp_path / "a.jsonl", ["new"], ["t1", "t2"], 3)
    second = write_run_records(tmp_path / "b.jsonl", ["old"], ["t3"], 3)
    document = compare_document([first, second], treatments=["new"], control="old")
    view = view_of(document)
    comparison = view.comparisons[0]
    assert comparison.pairs == 0
    assert all(d.estimate is None and d.interval == "—" for d in comparison.deltas)
    assert all(
        "no pairs" in plot.chart and 'class="whisker"' not in plot.chart for plot in view.forest
    )
    # A task with runs in one arm only: the other arm's cells are missing, not zero.
    rows = dict(zip(comparison.task_ids, comparison.tasks, strict=True))
    success_control = [h for h, _ in comparison.task_header].index("success C")
    assert rows["t1"][success_control].text == "—"
    assert rows["t1"][success_control].sort == ""


def test_every_number_on_the_page_is_in_the_report(document: dict[str, Any]) -> None:
    """The page computes nothing: each number it shows is a field of the report. (The charts'
    axis ticks and box-plot quartile tooltips are the drawing, not data, so the SVGs are left
    out; their points are the report's `distributions`.)"""
    html = render_compare_pages(read_site_input("compare", "ab", document), "ab")[0].html
    text = page_text(re.sub(r"<svg.*?</svg>", " ", html, flags=re.S))
    assert "Paired deltas" in text and "Arm summaries" in text
    assert unexplained_numbers(text, document) == []


def test_every_number_on_a_ci_rule_page_of_several_arms_is_in_the_report(
    tmp_path: Path,
) -> None:
    runs = write_run_records(tmp_path / "runs.jsonl", ["a1", "a2", "base"], ["t1", "t2"], 5)
    document = compare_document([runs], treatments=["a1", "a2"], control="base", rule="ci")
    html = render_compare_pages(read_site_input("compare", "ab", document), "ab")[0].html
    text = page_text(re.sub(r"<svg.*?</svg>", " ", html, flags=re.S))
    assert "margins (rule ci)" in text
    assert unexplained_numbers(text, document) == []


def test_a_version_1_report_is_refused_with_what_to_do(
    document: dict[str, Any], tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from plumbline.cli.main import main

    old = tmp_path / "compare.json"
    old.write_text(json.dumps({**document, "schema_version": "plumbline.compare/1"}))
    result = CliRunner().invoke(main, ["report", str(old), "-o", str(tmp_path / "site")])
    assert result.exit_code == 2
    flat = " ".join(result.stderr.split())
    assert f"{old}: schema_version: a plumbline.compare/1 report" in flat
    assert "rerun `plumbline compare RECORDS --treatment ARM --control ARM" in flat
    assert not (tmp_path / "site").exists()


def test_the_report_command_renders_a_compare_json_alone(
    document: dict[str, Any], tmp_path: Path
) -> None:
    """`plumbline report compare.json` (no run records): the typed report is the whole input."""
    from click.testing import CliRunner

    from plumbline.cli.main import main

    path = tmp_path / "compare.json"
    path.write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["report", str(path), "-o", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "site" / "compare" / "index.html").read_text()
    assert 'id="run-table"' in html and document["decision"] in html
    index = (tmp_path / "site" / "index.html").read_text()
    assert f"{document['input']['records_read']} records read" in index
