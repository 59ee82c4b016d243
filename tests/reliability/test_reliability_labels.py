"""Issue 15's reliability case: a model that answers "Paris" almost every time.

CERT's consistency (1 − CV of distances) scores it low while semantic agreement is near 1;
every output must carry the CV-pathology warning, the performance score must be named as the
CERT heuristic it is, and every output must open with a one-line verdict per model.
"""

from __future__ import annotations

import io

from rich.console import Console
from tests.reliability.test_analysis import bag_of_words, record

from plumbline.reliability.analysis import analyze
from plumbline.reliability.bands import performance_band
from plumbline.reliability.metrics import CV_PATHOLOGY
from plumbline.reliability.verdict import model_verdict
from plumbline.views.reliability import render_markdown, render_terminal
from plumbline.views.reliability_page import reliability_view

PROMPTS = ("capital-fr", "capital-fr-2", "capital-fr-3")


def _report():  # type: ignore[no-untyped-def]
    records = []
    for prompt in PROMPTS:
        for trial in range(10):
            answer = "Paris France" if trial == 0 else "Paris"
            records.append(record("p/paris", prompt, trial, response=answer))
            noise = f"zebra {trial} quantum {trial * 7} lantern"
            records.append(record("p/noise", prompt, trial, response=noise))
    return analyze(records, bag_of_words)


def test_the_cv_pathology_is_explained_in_every_output() -> None:
    report = _report()
    paris = next(m for m in report.models if m.model == "p/paris")
    assert paris.consistency is not None and paris.agreement is not None
    assert paris.agreement.statistic >= 0.9 and paris.consistency.statistic <= 0.3
    assert any(CV_PATHOLOGY in w for w in report.warnings_for("p/paris"))
    markdown = render_markdown(report)
    assert "coefficient of variation" in markdown
    buffer = io.StringIO()
    render_terminal(report, Console(file=buffer, width=400, color_system=None))
    terminal = buffer.getvalue()
    assert "coefficient of variation" in terminal
    view = reliability_view(report)
    page_model = next(m for m in view.models if m.model == "p/paris")
    assert any("coefficient of variation" in w for w in page_model.warnings)


def test_each_output_opens_with_a_verdict_per_model() -> None:
    report = _report()
    lines = [model_verdict(entry) for entry in report.models]
    assert lines == [entry.verdict for entry in report.models]
    paris = next(line for line in lines if line.startswith("p/paris"))
    assert paris.startswith("p/paris (n = 30 trials, 3 prompts): can rely on answers repeat")
    assert "CERT's consistency score" in paris and "correctness" in paris
    # intervals no longer turn approximate below 100 prompts: each says its own claim
    assert "approximate with fewer than" not in paris
    noise = next(line for line in lines if line.startswith("p/noise"))
    assert "cannot rely on the same answer twice" in noise
    markdown = render_markdown(report)
    assert markdown.index(paris) < markdown.index("## p/")  # before the per-model tables
    buffer = io.StringIO()
    render_terminal(report, Console(file=buffer, width=400, color_system=None))
    assert buffer.getvalue().splitlines()[0] in lines
    view = reliability_view(report)
    assert view.verdicts == lines


def test_performance_is_named_as_the_heuristic_it_is() -> None:
    for score in (0.95, 0.7, 0.5, 0.1):
        band = performance_band(score)
        assert "heuristic" in band.label and "quality" not in band.label
        assert "CERT band" in band.recommendation
    markdown = render_markdown(_report())
    assert "Good quality |" not in markdown and "Excellent quality |" not in markdown
    assert "performance heuristic (length, structure, prompt similarity)" in markdown
