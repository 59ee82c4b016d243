"""The regression check after a model update (`reliability --baseline`), from simulated runs.

The runs are trial records drawn by `validation.coverage` (answers from per-prompt pools,
lognormal latencies) and analysed by `analyze`, as the CLI does; the embedding is the
simulation's own table, so no model is loaded.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats as sps

from plumbline.app.site import read_site_input
from plumbline.reliability.analysis import Embed, analyze
from plumbline.reliability.model_pairs import pair_models
from plumbline.reliability.regression import compare_to_baseline, verdict_of
from plumbline.reliability.result import METRICS, ReliabilityReport
from plumbline.views.reliability import render_markdown
from plumbline.views.reliability_page import render_reliability_pages
from validation.coverage import (
    SimulatedModel,
    embedding_table,
    simulated_prompts,
    simulated_records,
)

MODEL = SimulatedModel(name="sim/old", latency_sigma=0.5)


def _run(
    model: SimulatedModel, prompts: int, trials: int, seed: int, *, drop: int = 0
) -> tuple[ReliabilityReport, list]:
    drawn = simulated_prompts(prompts, np.random.default_rng(seed), model, tag="t")
    drawn = drawn[drop:]
    records = simulated_records(drawn, trials, np.random.default_rng([seed, 1]), model)
    return analyze(records, embedding_table(drawn)), records


def _embed(prompts: int, seed: int) -> Embed:
    """The embedding of every text the runs of `_run` with this many prompts and seed hold
    (the answers' texts do not depend on the model's probabilities)."""
    return embedding_table(simulated_prompts(prompts, np.random.default_rng(seed), MODEL, "t"))


def test_verdicts_equivalence_first_then_the_side_of_zero() -> None:
    assert verdict_of(-0.01, 0.02, 0.05, True) == "unchanged"
    assert verdict_of(-0.3, -0.1, 0.05, True) == "regressed"  # a score fell
    assert verdict_of(0.1, 0.3, 0.05, False) == "regressed"  # latency rose
    assert verdict_of(0.1, 0.3, 0.05, True) == "improved"
    assert verdict_of(-0.2, 0.3, 0.05, True) == "inconclusive"
    # wholly below 0 but inside the margin: unchanged (a negligible change)
    assert verdict_of(-0.04, -0.01, 0.05, True) == "unchanged"


def test_models_pair_by_name_by_the_single_model_or_explicitly() -> None:
    assert pair_models(["a", "b"], ["b", "c"]) == [("b", "b", "name")]
    assert pair_models(["v1"], ["v2"]) == [("v1", "v2", "single model")]
    assert pair_models(["a", "b"], ["c", "d"]) == []
    assert pair_models(["a", "b"], ["c", "d"], {"a": "d"}) == [("a", "d", "--pair")]
    with pytest.raises(ValueError, match="no model 'x'"):
        pair_models(["a"], ["b"], {"x": "b"})


def test_a_slower_update_regresses_and_identical_runs_do_not() -> None:
    baseline, old_records = _run(MODEL, 10, 10, seed=1)
    same_model = replace(MODEL, name="sim/new")
    same, same_records = _run(same_model, 10, 10, seed=1)
    slower_model = replace(MODEL, name="sim/new", latency_median=2.0)
    slower, slower_records = _run(slower_model, 10, 10, seed=1)

    identical = compare_to_baseline(baseline, old_records, same, same_records, _embed(10, 1))
    # same prompts and answers, the same draws: every change is exactly 0
    assert {e.metric for e in identical.entries} == set(METRICS)
    assert all(e.verdict != "regressed" for e in identical.entries)
    (pair,) = identical.pairs
    assert pair.paired_by == "single model" and pair.shared_prompts == 10
    assert identical.level == pytest.approx(1 - 0.05 / 6)

    comparison = compare_to_baseline(baseline, old_records, slower, slower_records, _embed(10, 1))
    verdicts = {e.metric: e.verdict for e in comparison.entries}
    assert verdicts["latency_p50"] == "regressed"
    assert comparison.regressed and comparison.pairs[0].verdict == "regressed"
    p50 = next(e for e in comparison.entries if e.metric == "latency_p50")
    assert p50.difference.estimate == pytest.approx(p50.current - p50.baseline)
    assert p50.difference.interval is not None and p50.difference.interval.low > 0
    assert p50.margin == pytest.approx(0.1 * p50.baseline)  # 10% of the baseline, in seconds
    assert "REGRESSED latency_p50" in comparison.pairs[0].summary


def test_different_prompt_sets_compare_on_the_shared_prompts_and_list_the_rest() -> None:
    baseline, old_records = _run(MODEL, 6, 5, seed=3)
    current, new_records = _run(replace(MODEL, name="sim/new"), 6, 5, seed=3, drop=2)
    comparison = compare_to_baseline(
        baseline, old_records, current, new_records, _embed(6, 3), margins={"error_rate": 5.0}
    )
    (pair,) = comparison.pairs
    assert pair.shared_prompts == 4
    assert pair.only_in_baseline == ["q000", "q001"] and pair.only_in_current == []
    assert comparison.margins["error_rate"] == 5.0
    inconclusive = [e for e in comparison.entries if e.verdict == "inconclusive"]
    # every inconclusive change says what it could have detected, or why nothing could be
    assert all(
        e.detectable_change is not None or e.note.startswith("too few trials to test")
        for e in inconclusive
        if e.difference.interval
    )

    document = current.model_copy(update={"baseline_comparison": comparison})
    text = render_markdown(document)
    assert "## Change from the baseline" in text and "only in the baseline: q000, q001" in text
    pages = render_reliability_pages(
        read_site_input("reliability", "r", document.json_document(), ()), "r"
    )
    assert [p.path for p in pages] == ["r/index.html", "r/baseline.html"]
    assert "baseline-table" in pages[1].html and "Bonferroni" in pages[1].html
    assert 'href="baseline.html"' in pages[0].html
    ReliabilityReport.model_validate(document.json_document())  # the document round-trips


def test_unknown_margin_is_refused() -> None:
    baseline, records = _run(MODEL, 3, 5, seed=4)
    with pytest.raises(ValueError, match="unknown metric"):
        compare_to_baseline(
            baseline, records, baseline, records, _embed(3, 4), margins={"speed": 1.0}
        )


def test_more_erratic_answers_are_called_by_the_test_of_no_change() -> None:
    deterministic = replace(MODEL, concentration=(0.03, 0.3), log_concentration=True)
    baseline, old_records = _run(deterministic, 10, 10, seed=5)
    erratic = replace(deterministic, name="sim/new", erratic=0.6)
    current, new_records = _run(erratic, 10, 10, seed=5)
    embed = embedding_table(simulated_prompts(10, np.random.default_rng(5), deterministic, tag="t"))
    comparison = compare_to_baseline(baseline, old_records, current, new_records, embed)
    agreement = next(e for e in comparison.entries if e.metric == "agreement")
    test = agreement.test
    assert test is not None and test.prompts == 10 and test.metrics_tested == 6
    assert test.z < 0 and test.p_worse_adjusted <= test.alpha == pytest.approx(0.05)
    # the statistic is the published difference: the mean over prompts of their changes
    assert test.statistic == pytest.approx(agreement.difference.estimate, abs=1e-9)
    assert agreement.verdict == "regressed"
    # every metric has its test; the adjusted p-values are at least the raw ones
    for entry in comparison.entries:
        assert entry.test is not None and entry.test.p_worse_adjusted >= entry.test.p_worse
    # the first step's threshold lies between Bonferroni's and one test's at the share of the
    # level the five relabelled-trial metrics get (5/6; the error rate's blocks 1/6), up to
    # one relabelling's step
    assert 0.05 / 6 - 1 / test.resamples <= test.critical_p < 0.05 * 5 / 6
    errors = next(e for e in comparison.entries if e.metric == "error_rate").test
    assert errors is not None and errors.block_length and errors.blocks
    assert "bursts" in errors.assumption and "exchangeable" in test.assumption
    assert agreement.detectable_change == pytest.approx(
        (sps.norm.isf(test.critical_p) + 0.8416) * test.null_standard_error, rel=1e-3
    )


def test_a_chosen_family_spends_the_level_on_its_metrics_alone() -> None:
    """`tested`: only these metrics may be called regressed or improved; their adjustment is
    over them alone (one metric: its own p-value)."""
    baseline, old_records = _run(MODEL, 4, 5, seed=8)
    slower = replace(MODEL, name="sim/new", latency_median=3 * MODEL.latency_median)
    current, new_records = _run(slower, 4, 5, seed=8)
    embed = _embed(4, 8)
    everything = compare_to_baseline(baseline, old_records, current, new_records, embed)
    chosen = compare_to_baseline(
        baseline, old_records, current, new_records, embed, tested=["latency_p95", "agreement"]
    )
    assert everything.tested_metrics == list(METRICS)
    assert chosen.tested_metrics == ["agreement", "latency_p95"]  # in report order
    for entry in chosen.entries:
        if entry.metric in chosen.tested_metrics:
            assert entry.test is not None and entry.test.metrics_tested == 2
        else:
            assert entry.test is None and entry.verdict in ("unchanged", "inconclusive")
            assert entry.verdict == "unchanged" or entry.note == "not tested: outside --test-metric"
    # the same relabellings: raw p-values equal, adjusted ones no larger over fewer metrics
    before = {e.metric: e.test for e in everything.entries}
    for entry in chosen.entries:
        if entry.test is not None:
            old_test = before[entry.metric]
            assert old_test is not None and entry.test.p_worse == old_test.p_worse
            assert entry.test.p_worse_adjusted <= old_test.p_worse_adjusted
    for wrong in ([], ["speed"]):
        with pytest.raises(ValueError, match="--test-metric"):
            compare_to_baseline(baseline, old_records, current, new_records, embed, tested=wrong)


def test_too_few_trials_to_test_are_inconclusive_with_the_reason() -> None:
    """2 prompts × 2 trials: 36 relabellings, so no p-value below 1/36, and the median's
    adjusted p-value cannot reach 0.05 over the six metrics: even a tenfold slowdown leaves it
    inconclusive, never regressed, and the note says why (the p95, whose most extreme
    relabelling is rarer, can be called)."""
    baseline, old_records = _run(replace(MODEL, error_rate=0.0), 2, 2, seed=6)
    slower = replace(MODEL, name="sim/new", latency_median=10.0, error_rate=0.0)
    current, new_records = _run(slower, 2, 2, seed=6)
    comparison = compare_to_baseline(baseline, old_records, current, new_records, _embed(2, 6))
    latency = next(e for e in comparison.entries if e.metric == "latency_p50")
    assert latency.difference.estimate is not None and latency.difference.estimate > 1
    assert latency.verdict == "inconclusive"
    assert latency.test is not None and latency.test.smallest_p == pytest.approx(1 / 36)
    assert latency.test.attainable_p_worse > 0.05
    assert "too few trials to test" in latency.note


def test_score_changes_stay_within_their_possible_range() -> None:
    """2 shared prompts: the paired t quantile at 99.17% is 76, and the interval would reach
    far past ±1 (the demo printed +0.261 [-3.442, 3.964]); the change of a 0–1 score lies in
    [-1, 1] and of agreement in [-2, 2], and the interval says it was bounded."""
    erratic = replace(MODEL, name="sim/new", erratic=0.6)
    baseline, old_records = _run(MODEL, 2, 8, seed=11)
    current, new_records = _run(erratic, 2, 8, seed=11)
    comparison = compare_to_baseline(baseline, old_records, current, new_records, _embed(2, 11))
    bounded = 0
    for entry in comparison.entries:
        interval = entry.difference.interval
        if entry.metric in ("consistency", "performance", "agreement") and interval is not None:
            limit = 2.0 if entry.metric == "agreement" else 1.0
            assert interval.low is not None and interval.high is not None
            assert -limit <= interval.low <= interval.high <= limit
            bounded += "within the possible change" in interval.method
    assert bounded >= 1
