"""The five CERT metrics: known-value vectors (REFERENCE-NOTES §3), validation, bands, intervals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.distance import pdist

from plumbline.records.trial_record import ErrorClass
from plumbline.reliability.bands import (
    consistency_band,
    error_rate_band,
    p95_latency_band,
    performance_band,
    variation_band,
)
from plumbline.reliability.config import BenchmarkConfig, sample_size_warning
from plumbline.reliability.metrics import (
    agreement_conflict,
    approximate_tokens,
    consistency_score,
    latency_metrics,
    output_quality,
    performance_scores,
    repetition_score,
    robustness,
    semantic_agreement,
    summarize_performance,
    valid_responses,
)
from plumbline.reliability.result import LatencyResult

# --- latency ---------------------------------------------------------------------------------


def test_latency_known_vector_five_values() -> None:
    result = latency_metrics([0.5, 0.6, 0.55, 0.58, 0.52])
    assert result.mean == pytest.approx(0.55)
    assert result.std == pytest.approx(0.0368782, abs=1e-7)
    assert result.p50 == pytest.approx(0.55)
    assert result.p95 == pytest.approx(0.596)
    assert result.p99 == pytest.approx(0.5992)
    assert result.min == 0.5 and result.max == 0.6
    assert result.coefficient_of_variation == pytest.approx(0.0368782 / 0.55, rel=1e-6)


def test_latency_known_vector_tenths() -> None:
    result = latency_metrics(np.arange(1, 11) / 10)
    assert result.p50 == pytest.approx(0.55)
    assert result.p95 == pytest.approx(0.955)
    assert result.p99 == pytest.approx(0.991)


def test_tokens_per_second_known_vector() -> None:
    result = latency_metrics([1.0, 1.0, 1.0], [100, 100, 100])
    assert result.tokens_per_second == pytest.approx(100.0)


def test_tokens_per_second_uses_only_trials_with_tokens() -> None:
    # 300 tokens over the 3 s of trials that report tokens; the 10 s trial has no count
    result = latency_metrics([1.0, 1.0, 1.0, 10.0], [100, 100, 100, None])
    assert result.tokens_per_second == pytest.approx(100.0)
    assert latency_metrics([1.0, 2.0]).tokens_per_second is None


def test_latency_mean_interval_is_log_scale_and_states_its_claim() -> None:
    values = [0.5, 0.6, 0.55, 0.58, 0.52]
    result = latency_metrics(values, prompts=1)
    interval = result.mean_ci_95
    logs = np.log(values)
    s2 = np.var(logs, ddof=1)
    centre = np.mean(logs) + s2 / 2
    half = stats.t.ppf(0.975, 4) * np.sqrt(s2 / 5 + s2**2 / 8)
    assert interval.low == pytest.approx(np.exp(centre - half))
    assert interval.high == pytest.approx(np.exp(centre + half))
    assert "modified Cox" in interval.method
    assert (interval.prompts, interval.trials, interval.coverage) == (1, 5, "guaranteed")


def test_latency_percentile_intervals_are_order_statistics() -> None:
    rng = np.random.default_rng(0)
    values = rng.lognormal(0, 0.5, size=200)
    result = latency_metrics(values, prompts=10)
    ordered = np.sort(values)
    for name in ("p50", "p95"):
        interval = result.percentile_intervals[name]
        assert interval.sided == "two-sided"
        assert interval.low in ordered and interval.high in ordered
        assert interval.low <= getattr(result, name) <= interval.high
        assert interval.prompts == 10 and interval.trials == 200
    # 200 values cannot bound p99 from above at 95%: only the lower bound, and it says why
    p99 = result.percentile_intervals["p99"]
    assert p99.sided == "lower" and p99.high is None and p99.low is not None
    assert "n ≥ 299" in p99.method


def test_latency_validation() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        latency_metrics([1.0])
    with pytest.raises(ValueError, match="non-negative"):
        latency_metrics([1.0, -0.5])
    good = latency_metrics([1.0, 2.0, 3.0])
    fields = {name: getattr(good, name) for name in type(good).model_fields}
    with pytest.raises(ValueError, match="ordering"):
        LatencyResult(**{**fields, "p95": 5.0})


# --- output quality --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the cat sat the cat sat the cat sat", 0.0),
        ("the cat sat on the mat and the cat sat", 0.857143),
        ("a b c d e f", 1.0),
        ("hello world", 1.0),
    ],
)
def test_repetition_known_vectors(text: str, expected: float) -> None:
    assert repetition_score(text) == pytest.approx(expected, abs=1e-6)


def test_output_quality_lengths_and_diversity() -> None:
    responses = ["one two three four five", "six seven eight nine ten eleven"]
    result = output_quality(responses, np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert result.mean_words == pytest.approx(5.5)
    assert approximate_tokens(responses[0]) == 6  # int(5 * 1.3)
    assert result.mean_tokens == pytest.approx((6 + 7) / 2)  # int(6 * 1.3) = 7
    assert result.semantic_diversity == pytest.approx(1.0)  # orthogonal: cosine distance 1
    assert result.repetition_score == 1.0
    assert result.diversity_band is not None
    assert result.diversity_band.label == "High diversity (creative responses)"
    assert output_quality(["just one"]).semantic_diversity is None


def test_diversity_is_computed_per_prompt_then_averaged() -> None:
    # two prompts, each answered identically every time, but the prompts differ: pooled, the
    # responses look diverse (distance 1 between the prompts' answers); per prompt, they are 0
    first = np.array([[1.0, 0.0]] * 3)
    second = np.array([[0.0, 1.0]] * 3)
    result = output_quality(["an answer"] * 6, embeddings_by_prompt=[first, second])
    assert result.semantic_diversity == pytest.approx(0.0)
    assert result.diversity_prompts == 2
    pooled = float(np.mean(pdist(np.vstack([first, second]), "cosine")))
    assert pooled == pytest.approx(0.6)  # what pooling across prompts would have said
    # each prompt weighs the same: mean of 0 (first) and 1 (an orthogonal pair)
    mixed = output_quality(["x"] * 5, embeddings_by_prompt=[first, np.eye(2)])
    assert mixed.semantic_diversity == pytest.approx(0.5)
    # a prompt with a single response has no pair and is left out
    lone = output_quality(["x"] * 4, embeddings_by_prompt=[first, np.ones((1, 2))])
    assert lone.diversity_prompts == 1


# --- consistency and agreement ---------------------------------------------------------------


def test_consistency_equidistant_identity_scores_one() -> None:
    assert consistency_score(np.eye(5)).score == pytest.approx(1.0)


def test_consistency_any_two_vectors_score_one() -> None:
    assert consistency_score(np.array([[1.0, 0.0], [0.3, 0.9]])).score == pytest.approx(1.0)


def test_consistency_four_copies_and_one_outlier_scores_zero() -> None:
    vectors = np.array([[1.0, 0.0]] * 4 + [[0.8, 0.6]])
    result = consistency_score(vectors)
    assert result.mean_distance == pytest.approx(0.08)
    assert result.std_distance == pytest.approx(0.09798, abs=1e-5)
    assert result.score == 0.0
    assert result.band.label == "High variance"


def test_consistency_identical_responses_score_one() -> None:
    result = consistency_score(np.ones((6, 3)))
    assert result.score == 1.0
    assert result.band.label == "Highly deterministic"


def test_consistency_needs_two_responses() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        consistency_score(np.ones((1, 3)))
    assert valid_responses(["a", "", "  \n", None, "b"]) == ["a", "b"]


def test_agreement_and_the_seeds_pathology() -> None:
    # equidistant, unrelated responses: the seed's score says "consistent", agreement says no
    unrelated = np.eye(6)
    seed_score = consistency_score(unrelated).score
    agreement = semantic_agreement(unrelated)
    assert seed_score == pytest.approx(1.0)
    assert agreement.similarity == pytest.approx(0.0)
    conflict = agreement_conflict(seed_score, agreement.similarity)
    assert conflict is not None and "not whether they agree" in conflict

    # 19 identical responses and one outlier: the seed's score is 0, agreement is high
    vectors = np.array([[1.0, 0.0]] * 19 + [[0.8, 0.6]])
    seed_score = consistency_score(vectors).score
    agreement = semantic_agreement(vectors)
    assert seed_score == 0.0
    assert agreement.similarity == pytest.approx(1 - 19 * 0.2 / 190)  # 0.98
    conflict = agreement_conflict(seed_score, agreement.similarity)
    # agreement ≥ 0.9 with consistency ≤ 0.3: the seed formula's CV pathology, explained
    assert conflict is not None and "coefficient of variation" in conflict
    milder = agreement_conflict(0.4, 0.95)
    assert milder is not None and "outliers" in milder
    assert agreement_conflict(0.8, 0.85) is None


def test_agreement_interval_is_the_jackknife_t_over_responses() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(15, 8)) + 2.0
    result = semantic_agreement(vectors)
    assert result.interval is not None
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    similarity = unit @ unit.T
    leave_out = []
    for i in range(15):
        keep = np.delete(np.arange(15), i)
        sub = similarity[np.ix_(keep, keep)]
        leave_out.append(sub[np.triu_indices(14, 1)].mean())
    se = np.sqrt(14 / 15 * np.sum((np.array(leave_out) - np.mean(leave_out)) ** 2))
    half = stats.t.ppf(0.975, 14) * se
    assert result.similarity == pytest.approx(similarity[np.triu_indices(15, 1)].mean())
    assert result.interval.low == pytest.approx(result.similarity - half)
    assert result.interval.high == pytest.approx(result.similarity + half)
    assert result.interval.approximate and result.interval.simulated_coverage is not None
    assert semantic_agreement(vectors[:2]).interval is None  # nothing to leave out
    identical = semantic_agreement(np.ones((5, 3)))
    assert identical.similarity == pytest.approx(1.0)
    assert identical.interval is not None
    assert identical.interval.low == pytest.approx(1.0)


# --- performance -----------------------------------------------------------------------------


def test_performance_formula() -> None:
    prompt = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    answer = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    long_text = " ".join(["word"] * 250) + "."
    responses = [long_text, "no structure here at all", "short"]
    scores = performance_scores(prompt, answer, responses)
    # identical direction: relevance 1; 251 words: completeness 1; has '.': structure 1
    assert scores.score[0] == pytest.approx(1.0)
    # orthogonal: relevance 0.5; 5 words: 0.025; no mark: 0.5
    assert scores.relevance[1] == pytest.approx(0.5)
    assert scores.score[1] == pytest.approx(0.5 * 0.5 + 0.3 * 5 / 200 + 0.2 * 0.5)
    # under 10 characters scores 0.0
    assert scores.score[2] == 0.0
    summary = summarize_performance(scores, ["a", "b", "c"])
    assert summary.n == 3
    assert summary.score == pytest.approx(np.mean(scores.score))
    assert summary.ci_95 is not None and summary.ci_95.prompts == 3
    assert summary.ci_95.method.startswith("these prompts: t over prompt means")
    assert summary.population_ci_95 is not None
    assert summary.population_ci_95.coverage == "guaranteed"
    # one prompt: no interval over prompts
    assert summarize_performance(scores).ci_95 is None
    # the seed's bands, named for what the score is (a heuristic), the seed's name kept beside
    assert performance_band(0.85).label == "High heuristic score"
    assert "Excellent quality" in performance_band(0.85).recommendation
    assert performance_band(0.3).label == "Low heuristic score"
    assert "Poor quality" in performance_band(0.3).recommendation


def _cert_reference_performance(prompt: np.ndarray, answer: np.ndarray, response: str) -> float:
    """CERT's reference formula, written out independently of plumbline's vectorised one."""
    if len(response.strip()) < 10:
        return 0.0
    cosine = float(prompt @ answer / (np.linalg.norm(prompt) * np.linalg.norm(answer)))
    relevance = (cosine + 1) / 2
    completeness = min(1.0, len(response.split()) / 200)
    structure = 1.0 if any(mark in response for mark in (".", "\n", ":")) else 0.5
    return relevance * 0.5 + completeness * 0.3 + structure * 0.2


@pytest.mark.parametrize(
    "response",
    [
        "   Paris.   ",  # 12 characters, 6 once stripped: CERT scores 0
        " " * 40,  # whitespace only
        "\n\tParis.\n\n\n\n",
        "  The capital of France is Paris.  ",  # long enough once stripped: scored
        "Paris is it",  # exactly 11 characters, no padding
    ],
)
def test_performance_matches_the_cert_reference_on_padded_answers(response: str) -> None:
    prompt = np.array([[0.6, 0.8]])
    answer = np.array([[0.8, 0.6]])
    ours = float(performance_scores(prompt, answer, [response]).score[0])
    assert ours == pytest.approx(_cert_reference_performance(prompt[0], answer[0], response))
    if len(response.strip()) < 10:
        assert ours == 0.0


def test_performance_rejects_mismatched_inputs() -> None:
    with pytest.raises(ValueError, match="same length"):
        performance_scores(np.ones((2, 2)), np.ones((3, 2)), ["a", "b", "c"])


# --- robustness ------------------------------------------------------------------------------


def test_robustness_rates_and_wilson_upper_bound_for_zero_errors() -> None:
    result = robustness([None] * 20)
    assert result.error_rate == 0.0
    assert result.error_rate_interval.low == 0.0
    # 0 of 20 is not "0%": Wilson's upper bound is about 16.1%
    assert result.error_rate_interval.high == pytest.approx(16.11, abs=0.05)
    assert result.band.label == "Excellent"
    assert any("at most 16.1%" in note for note in result.notes)


def test_robustness_counts_by_class_and_timeouts() -> None:
    classes = [None] * 16 + [
        ErrorClass.TIMEOUT,
        ErrorClass.RATE_LIMIT,
        ErrorClass.RATE_LIMIT,
        ErrorClass.SERVER,
    ]
    result = robustness(classes, retries=3)
    assert result.error_rate == pytest.approx(20.0)
    assert result.timeout_rate == pytest.approx(5.0)
    assert result.exceptions["RateLimitError"] == 2
    assert result.exceptions["TimeoutError"] == 1
    assert result.exceptions["AuthenticationError"] == 0
    assert result.retries == 3
    assert result.band.label == "Critical"
    assert result.timeout_band.label == "Above target"
    assert result.error_rate_interval.low < 20.0 < result.error_rate_interval.high


def test_robustness_needs_trials() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        robustness([])


# --- bands, config, sample sizes -------------------------------------------------------------


@pytest.mark.parametrize(
    ("score", "label"),
    [
        (0.95, "Highly deterministic"),
        (0.9, "Reliably consistent"),
        (0.7, "Reliably consistent"),
        (0.6, "Moderate variance"),
        (0.2, "High variance"),
    ],
)
def test_consistency_bands(score: float, label: str) -> None:
    assert consistency_band(score).label == label


def test_latency_and_error_bands() -> None:
    assert p95_latency_band(0.4).label == "Excellent for interactive use"
    assert p95_latency_band(2.0).label == "Acceptable for chatbots"
    assert p95_latency_band(4.0).label == "Suitable for batch processing"
    assert p95_latency_band(9.0).label == "May impact user experience"
    assert variation_band(0.1).label == "Predictable latency"
    assert variation_band(0.7).label == "High variance (investigate)"
    assert error_rate_band(3.0).label == "Good"
    assert error_rate_band(10.0).label == "Concerning"


def test_benchmark_config_defaults_and_validation() -> None:
    config = BenchmarkConfig()
    assert config.random_seed == 42
    assert config.embedding_model_name == "all-MiniLM-L6-v2"
    assert (config.consistency_trials, config.performance_trials) == (20, 15)
    assert (config.max_tokens, config.temperature, config.timeout) == (1024, 0.7, 30.0)
    with pytest.raises(ValueError, match="consistency_trials"):
        BenchmarkConfig(consistency_trials=9)
    with pytest.raises(ValueError, match="performance_trials"):
        BenchmarkConfig(performance_trials=4)
    with pytest.raises(ValueError, match="temperature"):
        BenchmarkConfig(temperature=-0.1)
    with pytest.raises(ValueError, match="timeout"):
        BenchmarkConfig(timeout=0)


def test_sample_size_warnings() -> None:
    assert sample_size_warning("robustness", 20, "m") is None
    warning = sample_size_warning("robustness", 12, "m")
    assert warning is not None and "minimum of 20" in warning
    assert sample_size_warning("performance", 5, "m") is None
    assert sample_size_warning("latency", 9, "m") is not None
