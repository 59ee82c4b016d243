"""The reliability page: view model (no browser), rendering, and the page in a real chromium."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from browser import open_page
from pages_support import (
    IMG,
    SCRIPT,
    example_path,
    example_trials,
    reliability_document,
    write_trial_records,
)
from rich.console import Console
from tests.support.rendered_numbers import page_text, unexplained_numbers

from plumbline.app.site import read_site_input, write_site
from plumbline.records.trial_record import read_trial_records
from plumbline.reliability.bands import tone
from plumbline.reliability.result import ReliabilityReport
from plumbline.results.errors import ResultDocumentError
from plumbline.views.reliability import render_markdown, render_terminal
from plumbline.views.reliability_charts import comparison_table
from plumbline.views.reliability_page import reliability_view, render_reliability_pages

if TYPE_CHECKING:
    from playwright.sync_api import Browser

TRIALS = example_path("trials.jsonl")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return reliability_document(example_trials())


def _view(document: dict[str, Any]) -> Any:
    return reliability_view(ReliabilityReport.model_validate(document))


def test_consistency_and_agreement_side_by_side(document: dict[str, Any]) -> None:
    view = _view(document)
    assert [m.model for m in view.models] == [m["model"] for m in document["models"]]
    for model, entry in zip(view.models, document["models"], strict=True):
        seed, agreement = model.consistency
        assert seed.label == "consistency (CERT)"
        assert seed.value == f"{entry['consistency']['statistic']:.3f}"
        assert agreement.label == "semantic agreement"
        assert agreement.n == str(entry["agreement"]["n"])
        # CERT's band for CERT's score (in the report); both carry a badge colour.
        assert seed.band == entry["consistency"]["band"]["label"]
        assert seed.band in {
            "Highly deterministic",
            "Reliably consistent",
            "Moderate variance",
            "High variance",
        }
        assert seed.css in {"ok", "warn", "bad"} and agreement.css in {"ok", "warn", "bad"}
        assert model.consistency_chart is not None
        assert len(model.prompts) == len(entry["prompts"])


def test_latency_percentiles_chart_and_intervals(document: dict[str, Any]) -> None:
    for model, entry in zip(_view(document).models, document["models"], strict=True):
        latency = entry["latency"]
        assert model.latency_chart is not None
        assert "p95" in model.latency_chart and "<rect" in model.latency_chart
        row = model.latency_rows[0]
        assert row[0].text == "latency (s)"
        assert float(row[8].sort) == pytest.approx(latency["p95"])
        p95 = latency["percentile_intervals"]["p95"]
        # 3 prompts × 20 trials (57–60 timed): a two-sided p95 interval needs 59 values
        if p95["sided"] == "lower":
            assert p95["high"] is None and row[9].text.startswith("≥ ")
            assert "(one-sided)" in row[9].text
        else:
            assert row[9].text.startswith("[")
        assert p95["low"] <= latency["p95"]
        # every interval's method, n and coverage claim is said on the page
        assert "order statistics" in model.latency_note and "guaranteed" in model.latency_note


def test_error_classes_with_rates_and_wilson_intervals(document: dict[str, Any]) -> None:
    for model, entry in zip(_view(document).models, document["models"], strict=True):
        robust = entry["robustness"]
        occurred = {k: v for k, v in robust["exceptions"].items() if v}
        assert {row[0].text for row in model.error_rows} == set(occurred)
        shares = {c["error_class"]: c for c in robust["error_classes"]}
        for row in model.error_rows:
            count = occurred[row[0].text]
            # a class's share of trials is a proportion (0-1), computed by the analysis
            assert shares[row[0].text]["rate"] == pytest.approx(count / robust["total_trials"])
            assert float(row[2].sort) == pytest.approx(count / robust["total_trials"])
            assert row[3].text.startswith("[")
        error_rate = model.errors[0]
        assert error_rate.value == f"{robust['error_rate']:.1f}%"
        assert error_rate.band == robust["band"]["label"]
        if len(occurred) < len(robust["exceptions"]):
            assert "No trial failed with" in model.error_note
        # One chart row per class that occurred (the error and timeout rates, in CERT's
        # percent, are in the metrics table above the chart).
        if occurred:
            assert model.error_chart.count('<g class="row') == len(occurred)
        else:
            assert model.error_chart is None


def test_model_comparison_table_and_effects(document: dict[str, Any]) -> None:
    header, rows = comparison_table(ReliabilityReport.model_validate(document).models)
    assert [h for h, _ in header][:3] == ["model", "error rate", "trials"]
    assert [row[0].text for row in rows] == [m["model"] for m in document["models"]]
    view = _view(document)
    assert len(view.effect_rows) == len(document["comparisons"])
    assert {c.title for c in view.effect_charts} == {
        "Cohen's d: latency (s)",
        "Cohen's d: performance heuristic (length, structure, prompt similarity)",
    }
    assert [c.title for c in view.charts] == [
        "Consistency (CERT score)",
        "Semantic agreement",
        "Performance heuristic",
        "Error rate",
        "Latency percentiles",
        "Latency p95 with its interval",
        "Latency per trial",
    ]


def test_band_colours() -> None:
    assert tone("Highly deterministic") == "ok"
    assert tone("Moderate variance") == "warn"
    assert tone("Critical") == "bad"
    assert tone("something else") == "missing"


def test_the_report_carries_failed_trials_and_samples(tmp_path: Path) -> None:
    path = write_trial_records(tmp_path / "trials.jsonl", ["local/a", "local/b"])
    records = list(read_trial_records([path]).records)
    document = reliability_document(records)
    view = _view(document)
    for model in view.models:
        mine = [r for r in records if r.model == model.model]
        failed = [r for r in mine if r.error_class is not None]
        assert model.failed is not None and len(model.failed) == model.failed_total == len(failed)
        assert {f.error_class for f in model.failed} == set(model.error_classes)
        assert all(SCRIPT in f.message for f in model.failed)
        assert model.samples is not None and len(model.samples) == 2
    latency = view.charts[-1]
    assert latency.title == "Latency per trial"
    successes = [r for r in records if r.error_class is None]
    assert latency.chart.count('class="point"') == len(successes)
    # the page needs no trial records: the same page from the JSON alone
    alone = render_reliability_pages(read_site_input("reliability", "r", document, ()), "r")[0].html
    assert 'class="failed-trials"' in alone and 'class="samples"' in alone
    assert "ServerError" in alone and "&lt;script&gt;" in alone


def test_a_model_without_successes_is_marked_not_zero(tmp_path: Path) -> None:
    path = write_trial_records(tmp_path / "trials.jsonl", ["local/a"], trials=4)
    records = [r for r in read_trial_records([path]).records if r.error_class is not None]
    document = reliability_document(records)
    model = _view(document).models[0]
    assert model.latency_rows == [] and model.latency_chart is None
    assert model.consistency[0].value == "—" and model.consistency[0].css == "missing"
    assert model.errors[0].value == "100.0%"


def test_escaping_in_the_rendered_html(tmp_path: Path) -> None:
    name = f"local/{SCRIPT}{IMG}"
    path = write_trial_records(tmp_path / "trials.jsonl", [name, "local/b"])
    records = list(read_trial_records([path]).records)
    page = render_reliability_pages(
        read_site_input("reliability", "probe", reliability_document(records), (path,)), "rel"
    )[0]
    assert SCRIPT not in page.html
    assert "<img" not in page.html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.html


def test_page_in_chromium(
    browser: Browser, document: dict[str, Any], tmp_path: Path, screenshots: Path
) -> None:
    site = write_site(
        [read_site_input("reliability", "trials", document, (TRIALS,))], tmp_path / "site"
    )
    visit = open_page(browser, site.root / "trials" / "index.html")
    page = visit.page
    assert visit.problems == []
    table = page.locator("#model-table")
    header = table.locator("th", has_text="latency p95 (s)")
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
    assert keys == sorted(keys) and len(keys) == len(document["models"])
    expected = sorted(document["models"], key=lambda m: m["latency"]["p95"])
    assert table.locator("tbody tr td:first-child").all_inner_texts() == [
        m["model"] for m in expected
    ]
    assert visit.problems == []
    visit.screenshot(screenshots, "reliability")
    visit.close()


def test_injected_text_renders_as_text_in_chromium(
    browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    name = f"local/{SCRIPT}{IMG}"
    path = write_trial_records(tmp_path / "trials.jsonl", [name, "local/b"])
    records = list(read_trial_records([path]).records)
    site = write_site(
        [read_site_input("reliability", "probe", reliability_document(records), (path,))],
        tmp_path / "site",
    )
    visit = open_page(browser, site.root / "probe" / "index.html")
    page = visit.page
    for summary in page.locator("details.failed-trials summary, details.samples summary").all():
        summary.click()
    assert visit.dialogs == []
    assert visit.problems == []
    assert page.locator("main img").count() == 0
    assert page.locator("main script").count() == 0
    assert page.locator("#model-1 h2").inner_text() == name
    message = page.locator("#model-1 td.error-message").first
    assert message.is_visible() and SCRIPT in message.inner_text() and IMG in message.inner_text()
    assert page.locator("#model-1 details.samples pre", has_text=IMG).first.is_visible()
    visit.screenshot(screenshots, "reliability-injection")
    visit.close()


def test_reliability_html_option_writes_the_site(
    browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    """The real command (real embedding model, offline) on trial records with failures."""
    from click.testing import CliRunner

    from plumbline.cli.main import main

    trials = write_trial_records(tmp_path / "trials.jsonl", ["local/a", "local/b"], trials=4)
    out = tmp_path / "reliability.json"
    site = tmp_path / "site"
    result = CliRunner().invoke(
        main,
        ["reliability", str(trials), "--resamples", "200", "--json", str(out), "--html", str(site)],
    )
    assert result.exit_code == 0, result.output
    page = site / "reliability-trials" / "index.html"
    assert f"HTML report: {page.resolve().as_uri()}" in result.output.replace("\n", "")
    assert json.loads((site / "data" / "reliability-trials.json").read_text()) == json.loads(
        out.read_text()
    )
    html = page.read_text()
    # The trial records given to the command feed the failed-trial drill-down.
    assert 'class="failed-trials"' in html and "ServerError" in html
    assert SCRIPT not in html
    visit = open_page(browser, page)
    assert visit.problems == [] and visit.dialogs == []
    visit.screenshot(screenshots, "reliability-cli")
    visit.close()


def test_one_model_has_no_comparison_section(tmp_path: Path) -> None:
    path = write_trial_records(tmp_path / "trials.jsonl", ["local/only"])
    records = list(read_trial_records([path]).records)
    document = reliability_document(records)
    assert document["comparisons"] == []
    html = render_reliability_pages(
        read_site_input("reliability", "one", document, (path,)), "one"
    )[0].html
    assert 'id="comparison"' not in html and 'href="#comparison"' not in html
    assert 'id="model-1"' in html


#: Axis tick labels of the charts: a scale, not figures of the report.
_TICK = re.compile(r'<text[^>]*fill="#555"[^>]*>[^<]*</text>')
#: Constants of CERT's formulas quoted in the views: the z of CI_95, the token estimate.
_METHOD_CONSTANTS = ("1.96", "words × 1.3")


def test_every_number_on_the_page_is_in_the_report_json(
    document: dict[str, Any], tmp_path: Path
) -> None:
    page = render_reliability_pages(read_site_input("reliability", "r", document, ()), "r")[0]
    text = page_text(_TICK.sub("", page.html))
    assert "Latency per trial" in text and "Wilson 95% CI" in text  # charts and tables rendered
    assert unexplained_numbers(text, document, allowed=_METHOD_CONSTANTS) == []
    # also with failed trials, an unmeasured model and prices (every section present)
    path = write_trial_records(tmp_path / "trials.jsonl", ["local/a", "local/b"], trials=4)
    records = list(read_trial_records([path]).records)
    failing = reliability_document([r for r in records if r.error_class is not None])
    mixed = reliability_document(records)
    for other in (failing, mixed):
        html = render_reliability_pages(read_site_input("reliability", "r", other, ()), "r")[0].html
        assert (
            unexplained_numbers(page_text(_TICK.sub("", html)), other, allowed=_METHOD_CONSTANTS)
            == []
        )


def test_every_number_in_markdown_and_terminal_is_in_the_report_json(
    document: dict[str, Any],
) -> None:
    report = ReliabilityReport.model_validate(document)
    markdown = render_markdown(report)
    assert "| error rate |" in markdown
    assert unexplained_numbers(markdown, document, allowed=_METHOD_CONSTANTS) == []
    buffer = io.StringIO()
    render_terminal(report, Console(file=buffer, width=2000, color_system=None))
    terminal = buffer.getvalue()
    assert "error rate" in terminal
    assert unexplained_numbers(terminal, document) == []


def test_the_index_card_counts_the_warnings_the_page_shows(
    document: dict[str, Any], tmp_path: Path
) -> None:
    report = ReliabilityReport.model_validate(document)
    assert report.warnings, "the example trials have per-model warnings"
    site = write_site([read_site_input("reliability", "trials", document, ())], tmp_path / "site")
    page = (site.root / "trials" / "index.html").read_text(encoding="utf-8")
    shown = page.count('<span class="badge warn">warning</span>')
    assert shown == len(report.warnings)
    assert f"{shown} warning(s)" in site.index.read_text(encoding="utf-8")


def test_a_document_of_another_version_is_refused_clearly(
    document: dict[str, Any], tmp_path: Path
) -> None:
    old = {k: v for k, v in document.items() if k != "schema_version"}
    old["models"] = [{**m, "warnings": []} for m in document["models"]]
    # refused where it comes in, field by field (a page renders only a typed report)
    with pytest.raises(ResultDocumentError, match=r"models\.0\.warnings"):
        write_site([read_site_input("reliability", "old", old, ())], tmp_path / "site")
    assert not (tmp_path / "site").exists()
