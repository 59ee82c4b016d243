"""Every interval whose simulated coverage is below its level is labelled so wherever it is
shown (issue 45): Cohen's d at 3 prompts × 25 trials (simulated 91.5%) in the terminal, the
Markdown, the JSON and the page, whether the two models asked the same prompts or not."""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
import pytest
from rich.console import Console

from plumbline.reliability.analysis import analyze
from plumbline.reliability.result import ReliabilityInterval, ReliabilityReport
from plumbline.views.reliability import render_markdown, render_terminal
from plumbline.views.reliability_page import reliability_view
from validation.coverage import (
    SimulatedModel,
    embedding_table,
    simulated_prompts,
    simulated_records,
)

LABEL = "approximate (simulated 92%)"


def _two_models(shared: bool) -> ReliabilityReport:
    first = SimulatedModel(name="sim/a", latency_sigma=1.0)
    second = replace(first, name="sim/b", latency_median=1.3 * first.latency_median)
    prompts = simulated_prompts(3, np.random.default_rng(1), first, "t")
    others = prompts if shared else simulated_prompts(3, np.random.default_rng(1), first, "u")
    records = simulated_records(prompts, 25, np.random.default_rng(2), first)
    records += simulated_records(others, 25, np.random.default_rng(3), second)
    texts = prompts if shared else prompts + others
    return analyze(records, embedding_table(texts))


@pytest.mark.parametrize("shared", [True, False], ids=["same prompts", "different prompts"])
def test_cohens_d_at_three_prompts_is_labelled_in_every_output(shared: bool) -> None:
    report = _two_models(shared)
    effects = [c.effect for c in report.comparisons if c.effect is not None]
    assert len(effects) == 2
    for effect in effects:
        assert effect.interval.coverage == "approximate"
        assert effect.interval.simulated_coverage == pytest.approx(0.915)
    buffer = io.StringIO()
    render_terminal(report, Console(file=buffer, width=400, color_system=None))
    terminal_lines = [line for line in buffer.getvalue().splitlines() if "sim/a vs sim/b" in line]
    assert len(terminal_lines) == 2 and all(LABEL in line for line in terminal_lines)
    markdown = [line for line in render_markdown(report).splitlines() if "sim/a vs sim/b" in line]
    assert markdown and all(LABEL in line for line in markdown)
    document = report.model_dump(mode="json")
    for comparison in document["comparisons"]:
        interval = comparison["effect"]["interval"]
        assert interval["coverage"] == "approximate" and "approximate" in interval["method"]
    rows = reliability_view(report).effect_rows
    assert len(rows) == 2
    for row in rows:  # the interval's own cell, not only its basis
        assert any(c.text.startswith("[") and c.text.endswith(LABEL) for c in row)


def test_an_interval_below_its_level_cannot_claim_a_guarantee() -> None:
    with pytest.raises(ValueError, match="must be labelled approximate"):
        ReliabilityInterval(
            low=0.0,
            high=1.0,
            level=0.95,
            method="t",
            prompts=3,
            trials=75,
            coverage="guaranteed",
            simulated_coverage=0.915,
        )
