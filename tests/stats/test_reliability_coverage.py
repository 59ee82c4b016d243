"""Coverage of every reliability interval, simulated through the published document (issue 28).

A small, seeded version of docs/statistics.md's reliability section (400 models per design
there, `scripts/coverage_table.py`): simulated trial records with answers clustered in prompts
and lognormal latencies, analysed by `analyze`, at 3 and 10 prompts × 5 trials and 3 prompts ×
25 trials. Each published interval must hold its claim: no bound out of range; guaranteed ones
at least 93.5% (less two Monte Carlo standard errors at this size), approximate ones no less
than the coverage they state (less 3 points) and never below 80%.
"""

from __future__ import annotations

import pytest

from validation.coverage import (
    RELIABILITY_INTERVALS,
    IntervalCoverage,
    SimulatedModel,
    reliability_coverage,
    reliability_truth,
)

# One xdist group: the module's tests share one simulation (`cells`), which `--dist loadgroup`
# would otherwise run once in each worker that gets one of them.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("reliability_coverage")]

DESIGNS = ((3, 5), (10, 5), (3, 25))
MODELS = 80


@pytest.fixture(scope="module")
def cells() -> list[IntervalCoverage]:
    model = SimulatedModel()
    found: list[IntervalCoverage] = []
    # one truth per number of trials (two designs share 5 trials: the same truth, once)
    truths = {
        trials: reliability_truth(model, trials, prompts=1500) for trials in {t for _, t in DESIGNS}
    }
    for prompts, trials in DESIGNS:
        found += reliability_coverage(
            prompts, trials, datasets=MODELS, seed=prompts * 100 + trials, truth=truths[trials]
        )
    return found


def _describe(cell: IntervalCoverage) -> str:
    return (
        f"{cell.interval} at {cell.label}: {cell.coverage:.3f} over {cell.intervals} "
        f"({cell.claim}, {cell.out_of_range} out of range)"
    )


def test_every_interval_of_the_document_is_simulated(cells: list[IntervalCoverage]) -> None:
    assert {c.interval for c in cells} == set(RELIABILITY_INTERVALS)
    assert all(c.intervals >= MODELS for c in cells), [_describe(c) for c in cells]


def test_every_interval_holds_its_claim(cells: list[IntervalCoverage]) -> None:
    bad = [_describe(c) for c in cells if not c.acceptable]
    assert not bad, "\n".join(bad)
    # approximate ones say by how much (a figure of at least 80%)
    approximate = [c for c in cells if c.approximate]
    assert approximate and all(
        c.simulated_coverage is not None and c.simulated_coverage >= 0.8 for c in approximate
    )


def test_small_samples_give_one_sided_percentile_bounds_never_a_fake_upper_bound(
    cells: list[IntervalCoverage],
) -> None:
    by = {(c.interval, c.prompts, c.trials): c for c in cells}
    # 15 or 50 latencies cannot bound p95 or p99 from above; 75 can bound p95 but not p99
    for prompts, trials in ((3, 5), (10, 5)):
        for name in ("p95", "p99"):
            cell = by[(f"latency.percentile_intervals.{name}", prompts, trials)]
            assert cell.one_sided == cell.intervals
    p95 = by[("latency.percentile_intervals.p95", 3, 25)]
    assert p95.one_sided < p95.intervals
    assert by[("latency.percentile_intervals.p99", 3, 25)].one_sided == MODELS


def test_on_prompt_types_one_much_harder_each_interval_holds_its_own_question() -> None:
    """Issue 37: prompts drawn from types of which one is much harder (a seeded, small version of
    benchmarks/bench_reliability_population.py). The t interval is held to the mean of the
    prompts drawn, the population interval beside it to the population's mean."""
    types = SimulatedModel(
        concentration=(0.03, 5.0), log_concentration=True, latency_sigma=1.5, hard_share=0.25
    )
    truth = reliability_truth(types, 5, prompts=1500)
    found = {
        c.interval: c
        for c in reliability_coverage(3, 5, datasets=60, seed=37, model=types, truth=truth)
    }
    for name in (
        "agreement.interval",
        "performance.ci_95",
        "consistency.population_interval",
        "agreement.population_interval",
        "performance.population_ci_95",
    ):
        cell = found[name]
        assert cell.intervals == 60 and cell.acceptable, _describe(cell)
    effect = found["comparisons[].effect.interval (latency)"]
    assert effect.approximate == effect.intervals  # 3 prompts: labelled approximate
