"""Coverage of every published interval, simulated through the functions that publish it.

Each cell draws at least 2,000 seeded datasets whose truth is known, builds the published number
with the same public function the documents use, and counts how often the 95% interval holds the
truth and whether any bound left its range:

- leaderboard: the vectorised cores that `leaderboard.scores.score_model` and
  `leaderboard.ties.pairwise_difference` call (`category_bounds_batch`, `overall_bounds`,
  `paired_bounds_batch`, `combine_differences`), over all datasets at once; and, for the first
  `CHECKED` datasets of every cell, `score_model` and `pairwise_difference` themselves on
  `CategoryData` built like `leaderboard.collect` builds it, which must give the same bounds
  (`CellResult.mismatches`);
- compare: `stats.cluster_bootstrap` called exactly as `compare` calls it for the mean paired
  pass-rate difference (tasks, then repeats within task; percentile);
- reliability: every interval of the reliability document, from simulated trial records
  analysed by `reliability.analysis.analyze` itself (`reliability_coverage`): 3, 10 and 30
  prompts × 5 and 25 trials per prompt, lognormal latencies, answers clustered in prompts.

Scores come from one generator: each question (task, prompt) has a latent difficulty `z ~ N(0,1)`
shared by both models, and each 0/1 answer is `1{ρ·z + √(1−ρ²)·e < Φ⁻¹(p)}` with fresh noise e,
so every answer is right with probability exactly p while answers to one question are correlated
(repeats clustered in questions, and two models paired on the same questions). A rubric score is
the mean of 4 such answers (0, ¼, ½, ¾, 1). True p is fixed (0.02, 0.5, 0.98) or drawn per
dataset from U(0.1, 0.9), as Brown, Cai & DasGupta (2001) average coverage.

For compare, datasets that share every number the interval depends on are bootstrapped once.

A judged category corrected with human labels publishes the PPI interval (`stats.ppi_mean`); its
grid (judges × labels × rates) is `validation.ppi_coverage`, printed by `benchmarks/bench_ppi.py`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from plumbline.compare.analysis import APPROXIMATE_TASKS
from plumbline.leaderboard.collect import CategoryData
from plumbline.leaderboard.scores import (
    ModelScores,
    category_bounds_batch,
    overall_bounds,
    score_model,
)
from plumbline.leaderboard.suite import Suite, parse_suite
from plumbline.leaderboard.ties import (
    combine_differences,
    paired_bounds_batch,
    pairwise_difference,
)
from plumbline.stats import cluster_bootstrap

FloatArray = npt.NDArray[np.float64]

SIZES = (5, 10, 30, 100, 1000)
#: None: a true p drawn per dataset from U(0.1, 0.9).
TRUTHS: tuple[float | None, ...] = (0.02, 0.5, 0.98, None)
DATASETS = 2_000
BAND = (0.935, 0.965)
EXTREME_FLOOR = 0.90
CORRELATION = 0.6  # ρ: question difficulty shared by repeats and by the two models
RUBRIC_POINTS = 4
REPEATS = 3
#: Bootstrap resamples per simulated compare dataset (compare itself uses 10,000; the
#: percentile interval's coverage does not depend on the count beyond Monte Carlo noise).
COMPARE_RESAMPLES = 1_000
#: Datasets per leaderboard cell also built through `score_model` / `pairwise_difference`.
CHECKED = 20


@dataclass(frozen=True)
class Scenario:
    """One published number: the document, what it is, its method and reference."""

    document: str
    number: str
    method: str
    reference: str
    claim: str  # "95%" or "conservative"
    #: Below this n the method is documented as conservative (coverage ≥ 93.5%, may exceed 96.5%).
    conservative_below: int = 0
    #: Below this n no method reaches the band and the output says "approximate".
    approximate_below: int = 0


@dataclass(frozen=True)
class CellResult:
    """Coverage of one scenario at one (n, true p)."""

    scenario: Scenario
    n: int
    truth: float | None
    datasets: int
    coverage: float
    out_of_range: int
    mean_width: float
    checked: int = 0
    mismatches: int = 0

    @property
    def truth_label(self) -> str:
        return "U(0.1, 0.9)" if self.truth is None else f"{self.truth:g}"

    @property
    def in_band(self) -> bool:
        return BAND[0] <= self.coverage <= BAND[1]

    @property
    def approximate(self) -> bool:
        """The output labels this interval approximate at this n (see `Scenario`)."""
        return self.n < self.scenario.approximate_below

    @property
    def acceptable(self) -> bool:
        """The claim holds: no bound out of range, the same bounds through the document's own
        functions, and, unless the output says "approximate" at this n: at a fixed p never below
        90% (less a Monte Carlo allowance of 2 standard errors, `floor`), and averaged over
        p ~ U(0.1, 0.9) within [93.5%, 96.5%] (at least 93.5% where documented conservative)."""
        if self.out_of_range or self.mismatches:
            return False
        if self.approximate:
            return True
        if self.truth is not None:
            return self.coverage >= floor(self.datasets)
        if self.scenario.claim == "conservative" or self.n < self.scenario.conservative_below:
            return self.coverage >= BAND[0]
        return self.in_band

    def to_dict(self) -> dict[str, Any]:
        return {
            "document": self.scenario.document,
            "number": self.scenario.number,
            "n": self.n,
            "truth": self.truth_label,
            "datasets": self.datasets,
            "coverage": self.coverage,
            "out_of_range": self.out_of_range,
            "mean_width": self.mean_width,
            "approximate": self.approximate,
            "acceptable": self.acceptable,
            "checked": self.checked,
            "mismatches": self.mismatches,
        }


def floor(datasets: int) -> float:
    """90% less two Monte Carlo standard errors of a coverage near 90% over `datasets`: the
    figure a method whose true coverage is exactly 90% falls below only 2.5% of the time."""
    return EXTREME_FLOOR - 2 * float(np.sqrt(EXTREME_FLOOR * (1 - EXTREME_FLOOR) / datasets))


# --- data ---------------------------------------------------------------------------------


def _truths(truth: float | None, rng: np.random.Generator, datasets: int) -> FloatArray:
    if truth is None:
        return rng.uniform(0.1, 0.9, datasets)
    return np.full(datasets, float(truth))


def answers(
    latent: FloatArray, p: FloatArray, shape: tuple[int, ...], rng: np.random.Generator
) -> FloatArray:
    """0/1 answers right with probability p each, correlated within a question through `latent`.

    `latent` is (datasets, n); `p` is (datasets,); the result is (datasets, n, *shape).
    """
    extra = (1,) * len(shape)
    z = latent.reshape(*latent.shape, *extra)
    noise = rng.standard_normal((*latent.shape, *shape))
    threshold = sps.norm.ppf(p).reshape(-1, *((1,) * (1 + len(shape))))
    value = CORRELATION * z + np.sqrt(1 - CORRELATION**2) * noise
    result: FloatArray = (value < threshold).astype(np.float64)
    return result


def category_matrix(
    kind: str, latent: FloatArray, p: FloatArray, rng: np.random.Generator
) -> FloatArray:
    """(datasets, n, epochs) scores of one model in one category of `kind`."""
    if kind == "binary":
        return answers(latent, p, (1,), rng)
    if kind == "repeats":
        return answers(latent, p, (REPEATS,), rng)
    if kind == "rubric":
        points = answers(latent, p, (1, RUBRIC_POINTS), rng)
        return np.asarray(points.mean(axis=-1), dtype=np.float64)
    raise ValueError(f"unknown category kind {kind!r}")


def _suite(weights: dict[str, float], kinds: dict[str, str]) -> Suite:
    return parse_suite(
        {
            "suite": {"name": "coverage"},
            "category": [
                {
                    "key": key,
                    "name": key,
                    "description": key,
                    "weight": weight,
                    "scoring": "rubric" if kinds[key] == "rubric" else "binary",
                    "tasks": [key],
                    "scorer": "s",
                }
                for key, weight in weights.items()
            ],
        }
    )


def _data(model: str, key: str, matrix: FloatArray) -> CategoryData:
    n = matrix.shape[0]
    return CategoryData(
        model, key, np.arange(n, dtype=np.int64), matrix, 0, 0, ("simulated",), (key,)
    )


# --- leaderboard --------------------------------------------------------------------------


@dataclass(frozen=True)
class LeaderboardDesign:
    """Categories (key → kind and weight) and which of them a model has no logs for."""

    name: str
    kinds: dict[str, str]
    weights: dict[str, float]
    missing: tuple[str, ...] = ()


ONE_BINARY = LeaderboardDesign("1 binary category, weight 1", {"c": "binary"}, {"c": 1.0})
ONE_REPEATS = LeaderboardDesign(
    "1 binary category, 3 repeats per question", {"c": "repeats"}, {"c": 1.0}
)
ONE_RUBRIC = LeaderboardDesign("1 rubric category (0–1 in quarters)", {"c": "rubric"}, {"c": 1.0})
THREE = LeaderboardDesign(
    "3 categories (binary 0.5, binary × 3 repeats 0.3, rubric 0.2)",
    {"a": "binary", "b": "repeats", "c": "rubric"},
    {"a": 0.5, "b": 0.3, "c": 0.2},
)
TWO_MISSING = LeaderboardDesign(
    "2 categories (binary 0.6, rubric 0.4 missing: counts 0)",
    {"a": "binary", "c": "rubric"},
    {"a": 0.6, "c": 0.4},
    missing=("c",),
)


def _simulate_model(
    design: LeaderboardDesign,
    latents: dict[str, FloatArray],
    truths: dict[str, FloatArray],
    rng: np.random.Generator,
) -> dict[str, FloatArray]:
    return {
        key: category_matrix(kind, latents[key], truths[key], rng)
        for key, kind in design.kinds.items()
        if key not in design.missing
    }


def _score(suite: Suite, model: str, matrices: dict[str, FloatArray], index: int) -> ModelScores:
    data = {(model, key): _data(model, key, m[index]) for key, m in matrices.items()}
    return score_model(suite, model, data)


@dataclass(frozen=True)
class Simulated:
    """Truth and published bounds of one number over every dataset of a cell."""

    truth: FloatArray
    low: FloatArray
    high: FloatArray
    checked: int = 0
    mismatches: int = 0


def _same(
    low: float | None, high: float | None, lows: FloatArray, highs: FloatArray, index: int
) -> bool:
    if low is None or high is None:
        return False
    return bool(
        np.isclose(low, lows[index], atol=1e-9) and np.isclose(high, highs[index], atol=1e-9)
    )


def leaderboard_cells(
    design: LeaderboardDesign,
    n: int,
    truth: float | None,
    *,
    datasets: int = DATASETS,
    seed: int = 0,
    checked: int = CHECKED,
) -> dict[str, Simulated]:
    """Simulate `datasets` leaderboards of two models A and B on the same questions: A's overall
    (its category's interval when there is one category) and the difference A − B."""
    rng = np.random.default_rng(seed)
    suite = _suite(design.weights, design.kinds)
    latents = {key: rng.standard_normal((datasets, n)) for key in design.kinds}
    truth_a = {key: _truths(truth, rng, datasets) for key in design.kinds}
    truth_b = {key: _truths(truth, rng, datasets) for key in design.kinds}
    if truth is not None:
        truth_b = truth_a  # fixed p: two equally good models (the difference is 0)
    a = _simulate_model(design, latents, truth_a, rng)
    b = _simulate_model(design, latents, truth_b, rng)
    present = [key for key in design.kinds if key not in design.missing]
    weights = np.array([design.weights[key] for key in present])
    overall_truth = np.stack([truth_a[key] for key in present], axis=1) @ weights
    difference_truth = np.stack([truth_a[key] - truth_b[key] for key in present], axis=1) @ weights

    means_a = {key: a[key].mean(axis=2) for key in present}
    means_b = {key: b[key].mean(axis=2) for key in present}
    estimates = np.stack([means_a[key].mean(axis=1) for key in present], axis=1)
    category = [category_bounds_batch(means_a[key]) for key in present]
    overall_low, overall_high = overall_bounds(
        estimates,
        np.stack([c[0] for c in category], axis=1),
        np.stack([c[1] for c in category], axis=1),
        weights,
    )
    overall = estimates @ weights
    overall_low = np.minimum(overall_low, overall)
    overall_high = np.maximum(overall_high, overall)
    parts = [paired_bounds_batch(means_a[key], means_b[key]) for key in present]
    deltas = np.stack([part[0] for part in parts], axis=1)
    difference_low, difference_high = combine_differences(
        deltas,
        np.stack([part[1] for part in parts], axis=1),
        np.stack([part[2] for part in parts], axis=1),
        weights,
    )
    difference = deltas @ weights
    difference_low = np.minimum(difference_low, difference)
    difference_high = np.maximum(difference_high, difference)

    # The same numbers through the functions the leaderboard calls, for the first datasets.
    overall_mismatch = difference_mismatch = 0
    count = min(checked, datasets)
    for index in range(count):
        scores_a = _score(suite, "A", a, index)
        scores_b = _score(suite, "B", b, index)
        interval = scores_a.overall_interval
        pair = pairwise_difference(suite, scores_a, scores_b)
        overall_mismatch += not _same(interval.low, interval.high, overall_low, overall_high, index)
        difference_mismatch += not _same(
            pair.low, pair.high, difference_low, difference_high, index
        )
    return {
        "overall": Simulated(overall_truth, overall_low, overall_high, count, overall_mismatch),
        "difference": Simulated(
            difference_truth, difference_low, difference_high, count, difference_mismatch
        ),
    }


# --- compare ------------------------------------------------------------------------------


def compare_cell(
    n: int,
    truth: float | None,
    *,
    datasets: int = DATASETS,
    seed: int = 0,
    resamples: int = COMPARE_RESAMPLES,
) -> Simulated:
    """Mean paired pass-rate difference over n tasks × 3 repeats per arm, as `compare` publishes
    it (two-stage cluster bootstrap, percentile)."""
    rng = np.random.default_rng(seed)
    latent = rng.standard_normal((datasets, n))
    p_t = _truths(truth, rng, datasets)
    p_c = p_t if truth is not None else _truths(truth, rng, datasets)
    treated = answers(latent, p_t, (REPEATS,), rng)
    control = answers(latent, p_c, (REPEATS,), rng)
    deltas = (treated - control).reshape(datasets, -1)
    tasks = np.repeat(np.arange(n), REPEATS)
    low = np.empty(datasets)
    high = np.empty(datasets)
    cache: dict[bytes, tuple[float, float]] = {}
    for index in range(datasets):
        row = deltas[index]
        per_task = np.sort(row.reshape(n, REPEATS), axis=1)
        key = bytes(per_task[np.lexsort(per_task.T[::-1])].tobytes())
        if key not in cache:
            if np.all(row == row[0]):
                cache[key] = (float(row[0]), float(row[0]))
            else:
                result = cluster_bootstrap(row, tasks, n_resamples=COMPARE_RESAMPLES, seed=index)
                cache[key] = (result.interval.low, result.interval.high)
        low[index], high[index] = cache[key]
    return Simulated(p_t - p_c, low, high)


# --- reliability --------------------------------------------------------------------------
#
# A simulated model answers each prompt by drawing (with its probabilities) one of a small pool
# of candidate answers, each with its own text and embedding: how variably a prompt is answered
# differs between prompts (clustered quality). Every per-prompt truth is then exact (agreement:
# Σ p_a p_b cos(a, b); performance: Σ p_a score_a); CERT's consistency at m trials has no
# closed form, so its truth is the mean over many simulated prompts. Latencies are lognormal.
# Records go through `reliability.analysis.analyze` (the published document) with an embedding
# table standing in for the sentence-transformers model.

RELIABILITY_PROMPTS = (3, 10, 30)
RELIABILITY_TRIALS = (5, 25)
RELIABILITY_DATASETS = 400
#: Simulated prompts behind each population truth (consistency, agreement, performance).
TRUTH_PROMPTS = 4_000
EMBEDDING_DIMENSIONS = 16
POOL = 12


@dataclass(frozen=True)
class SimulatedModel:
    """How a simulated model answers: the parameters of its answer pools and latencies."""

    name: str = "sim/model"
    #: Per-prompt spread of the candidate answers around the prompt's centre (uniform range).
    spread: tuple[float, float] = (0.4, 1.6)
    #: Per-prompt Dirichlet concentration of the answer probabilities (uniform range).
    concentration: tuple[float, float] = (0.3, 3.0)
    #: Weight moved onto each prompt's most likely answer (0: none); lowers CERT consistency.
    collapse: float = 0.0
    #: Draw the concentration log-uniformly over its range (prompts from nearly deterministic
    #: to erratic, e.g. 0.03–5) rather than uniformly.
    log_concentration: bool = False
    #: Share of each prompt's probability moved to the uniform distribution over its answers
    #: (0: none): the model answers more erratically.
    erratic: float = 0.0
    #: Share of prompts of a much harder type (short, unstructured, off-topic answers: a low
    #: performance heuristic); 0: one prompt type.
    hard_share: float = 0.0
    latency_median: float = 1.0
    latency_sigma: float = 1.0
    #: SD of a per-prompt log-latency factor shared by every model (some prompts are slower
    #: for everyone); latencies are then lognormal with σ² = latency_sigma² + this².
    prompt_latency_sigma: float = 0.0
    error_rate: float = 0.03
    timeout_share: float = 0.5


@dataclass(frozen=True)
class SimulatedPrompt:
    """One prompt: its text and embedding, the candidate answers and their probabilities."""

    prompt_id: str
    text: str
    vector: FloatArray
    answers: tuple[str, ...]
    embeddings: FloatArray
    probabilities: FloatArray
    #: CERT performance score of each candidate answer to this prompt.
    performance: FloatArray
    #: The prompt's latency factor (1: none).
    latency_factor: float = 1.0

    @property
    def agreement(self) -> float:
        """Expected cosine similarity of two independent answers: Σ p_a p_b cos(a, b)."""
        unit = self.embeddings / np.linalg.norm(self.embeddings, axis=1, keepdims=True)
        return float(self.probabilities @ (unit @ unit.T) @ self.probabilities)

    @property
    def expected_performance(self) -> float:
        return float(self.probabilities @ self.performance)


def simulated_prompts(
    count: int, rng: np.random.Generator, model: SimulatedModel = SimulatedModel(), tag: str = ""
) -> list[SimulatedPrompt]:
    """`count` prompts drawn from the prompt population, with `model`'s answer pools."""
    from plumbline.reliability.metrics import performance_scores

    prompts = []
    for index in range(count):
        centre = rng.standard_normal(EMBEDDING_DIMENSIONS)
        centre /= np.linalg.norm(centre)
        spread = rng.uniform(*model.spread)
        noise = rng.standard_normal((POOL, EMBEDDING_DIMENSIONS))
        embeddings = centre + spread * noise / np.sqrt(EMBEDDING_DIMENSIONS) * 2
        vector = centre + 0.8 * rng.standard_normal(EMBEDDING_DIMENSIONS) / 4
        low, high = model.concentration
        concentration = (
            float(np.exp(rng.uniform(np.log(low), np.log(high))))
            if model.log_concentration
            else rng.uniform(low, high)
        )
        probabilities = rng.dirichlet(np.full(POOL, concentration))
        if model.collapse:
            top = np.zeros(POOL)
            top[int(np.argmax(probabilities))] = 1.0
            probabilities = (1 - model.collapse) * probabilities + model.collapse * top
        if model.erratic:
            probabilities = (1 - model.erratic) * probabilities + model.erratic / POOL
        words = rng.integers(3, 260, POOL)
        marks = rng.random(POOL) < 0.7
        if model.hard_share and rng.random() < model.hard_share:
            # the hard type: answers of a few words, unstructured, pointing away from the prompt
            words = rng.integers(2, 6, POOL)
            marks = np.zeros(POOL, dtype=bool)
            embeddings = embeddings - 1.5 * vector
        answers = tuple(
            f"answer {tag}{index} {a} "
            + " ".join(["word"] * int(words[a]))
            + ("." if marks[a] else "")
            for a in range(POOL)
        )
        scores = performance_scores(np.tile(vector, (POOL, 1)), embeddings, answers).score
        factor = (
            float(np.exp(model.prompt_latency_sigma * rng.standard_normal()))
            if model.prompt_latency_sigma
            else 1.0
        )
        prompts.append(
            SimulatedPrompt(
                f"q{index:03d}",
                f"Question {tag}{index}?",
                vector,
                answers,
                embeddings,
                probabilities,
                np.asarray(scores, dtype=np.float64),
                factor,
            )
        )
    return prompts


def simulated_records(
    prompts: list[SimulatedPrompt],
    trials: int,
    rng: np.random.Generator,
    model: SimulatedModel = SimulatedModel(),
) -> list[Any]:
    """`trials` trial records per prompt: a drawn answer and a lognormal latency, or a failure
    (a timeout with probability `timeout_share` of the failures, else a server error)."""
    from datetime import UTC, datetime

    from plumbline.records.trial_record import ErrorClass, GenerationSettings, TrialRecord

    settings = GenerationSettings(temperature=0.7, seed=1)
    stamp = datetime(2026, 1, 1, tzinfo=UTC)
    records = []
    for prompt in prompts:
        picks = rng.choice(POOL, trials, p=prompt.probabilities)
        latencies = (
            model.latency_median
            * prompt.latency_factor
            * np.exp(model.latency_sigma * rng.standard_normal(trials))
        )
        failures = rng.random(trials) < model.error_rate
        timeouts = rng.random(trials) < model.timeout_share
        for trial in range(trials):
            fields: dict[str, Any] = {
                "model": model.name,
                "provider": model.name.split("/")[0],
                "prompt_id": prompt.prompt_id,
                "prompt": prompt.text,
                "trial": trial,
                "timestamp": stamp,
                "config": settings,
            }
            if failures[trial]:
                timeout = bool(timeouts[trial])
                fields["error_class"] = ErrorClass.TIMEOUT if timeout else ErrorClass.SERVER
                fields["timed_out"] = timeout
            else:
                fields["response"] = prompt.answers[int(picks[trial])]
                fields["latency_seconds"] = float(latencies[trial])
            records.append(TrialRecord(**fields))
    return records


def embedding_table(prompts: list[SimulatedPrompt]) -> Callable[[Any], FloatArray]:
    """The embedding function of simulated texts (prompt texts and candidate answers)."""
    table: dict[str, FloatArray] = {}
    for prompt in prompts:
        table[prompt.text] = prompt.vector
        table.update(zip(prompt.answers, prompt.embeddings, strict=True))

    def embed(texts: Any) -> FloatArray:
        return np.asarray([table[text] for text in texts], dtype=np.float64)

    return embed


@dataclass(frozen=True)
class ReliabilityTruth:
    """The population values a simulated model's intervals must cover."""

    consistency: float
    agreement: float
    performance: float
    latency_mean: float
    latency_percentiles: dict[str, float]
    error_rate_percent: float
    timeout_rate_percent: float
    #: Variance of one trial's value over prompts and trials (Cohen's d's pooled SD).
    performance_variance: float = math.nan
    latency_variance: float = math.nan


def cohens_d_truth(first: ReliabilityTruth, second: ReliabilityTruth, metric: str) -> float:
    """The population Cohen's d of two simulated models: `(μ₁ − μ₂) / √((σ₁² + σ₂²)/2)` over
    trial values (equal trials per model)."""
    if metric == "performance":
        means = (first.performance, second.performance)
        variances = (first.performance_variance, second.performance_variance)
    else:
        means = (first.latency_mean, second.latency_mean)
        variances = (first.latency_variance, second.latency_variance)
    return (means[0] - means[1]) / math.sqrt((variances[0] + variances[1]) / 2)


def partner_of(model: SimulatedModel) -> SimulatedModel:
    """The second model of every simulated reliability run (Cohen's d between two models):
    1.3 times slower, answering each prompt more often with its likeliest answer (collapse 0.5)."""
    return replace(
        model, name=model.name + "-partner", latency_median=1.3 * model.latency_median, collapse=0.5
    )


def reliability_truth(
    model: SimulatedModel, trials: int, *, prompts: int = TRUTH_PROMPTS, seed: int = 99
) -> ReliabilityTruth:
    """Population truths: exact for agreement and performance per prompt, averaged over
    `prompts` simulated prompts; CERT consistency at `trials` trials (with failures) simulated."""
    from plumbline.reliability.metrics import consistency_score

    rng = np.random.default_rng(seed)
    drawn = simulated_prompts(prompts, rng, model, tag="truth")
    scores = []
    for prompt in drawn:
        valid = int(np.sum(rng.random(trials) >= model.error_rate))
        if valid >= 2:
            picks = rng.choice(POOL, valid, p=prompt.probabilities)
            scores.append(consistency_score(prompt.embeddings[picks]).score)
    sigma = math.hypot(model.latency_sigma, model.prompt_latency_sigma)
    median = model.latency_median
    performance = float(np.mean([p.expected_performance for p in drawn]))
    second_moment = float(np.mean([p.probabilities @ p.performance**2 for p in drawn]))
    return ReliabilityTruth(
        consistency=float(np.mean(scores)),
        agreement=float(np.mean([p.agreement for p in drawn])),
        performance=performance,
        latency_mean=median * float(np.exp(sigma**2 / 2)),
        latency_percentiles={
            name: median * float(np.exp(sigma * sps.norm.ppf(q)))
            for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99))
        },
        error_rate_percent=100 * model.error_rate,
        timeout_rate_percent=100 * model.error_rate * model.timeout_share,
        performance_variance=second_moment - performance**2,
        latency_variance=median**2 * float(np.exp(sigma**2) * (np.exp(sigma**2) - 1)),
    )


#: Every reliability interval the document publishes, in the order of the table.
RELIABILITY_INTERVALS = (
    "consistency.interval",
    "consistency.population_interval",
    "agreement.interval",
    "agreement.population_interval",
    "prompts[].agreement.interval",
    "performance.ci_95",
    "performance.population_ci_95",
    "performance_by_prompt.interval",
    "performance_by_prompt.population_interval",
    "latency.mean_ci_95",
    "latency.percentile_intervals.p50",
    "latency.percentile_intervals.p95",
    "latency.percentile_intervals.p99",
    "robustness.error_rate_interval",
    "robustness.timeout_rate_interval",
    "comparisons[].effect.interval (latency)",
    "comparisons[].effect.interval (performance)",
)


@dataclass(frozen=True)
class IntervalCoverage:
    """Coverage of one reliability interval in one design (prompts × trials per prompt)."""

    interval: str
    prompts: int
    trials: int
    intervals: int
    coverage: float
    one_sided: int
    unpublished: int
    approximate: int
    simulated_coverage: float | None
    out_of_range: int

    @property
    def label(self) -> str:
        return f"{self.prompts}×{self.trials}"

    @property
    def claim(self) -> str:
        """`approximate` when the document labels it so, else `guaranteed`."""
        return "approximate" if self.approximate else "guaranteed"

    @property
    def acceptable(self) -> bool:
        """No bound out of range; a guaranteed interval covers at least 93.5% (less two Monte
        Carlo standard errors); an approximate one at least 80% and no less than 3 points under
        the simulated coverage it states."""
        if self.out_of_range:
            return False
        if not self.intervals:
            return True
        allowance = 2 * float(np.sqrt(0.95 * 0.05 / self.intervals))
        if self.approximate:
            stated = self.simulated_coverage if self.simulated_coverage is not None else 0.8
            return self.coverage >= max(0.8, stated - 0.03) - allowance
        return self.coverage >= BAND[0] - allowance

    def to_dict(self) -> dict[str, Any]:
        return {
            "interval": self.interval,
            "design": self.label,
            "intervals": self.intervals,
            "coverage": self.coverage,
            "one_sided": self.one_sided,
            "unpublished": self.unpublished,
            "claim": self.claim,
            "acceptable": self.acceptable,
        }


def expected_consistency(
    prompt: SimulatedPrompt, trials: int, error_rate: float, rng: np.random.Generator, draws: int
) -> float:
    """A prompt's expected CERT consistency at `trials` trials (each failing with
    `error_rate`; fewer than 2 valid answers score nothing), by simulation."""
    from plumbline.reliability.metrics import consistency_of_draws

    counts = rng.binomial(trials, 1 - error_rate, draws)
    scores = []
    for count, times in zip(*np.unique(counts[counts >= 2], return_counts=True), strict=True):
        picks = rng.choice(POOL, (int(times), int(count)), p=prompt.probabilities)
        scores.append(consistency_of_draws(prompt.embeddings, picks))
    return float(np.mean(np.concatenate(scores))) if scores else math.nan


@dataclass(frozen=True)
class DrawnTruth:
    """The means over the prompts actually drawn (what "these prompts" intervals estimate)."""

    consistency: float
    agreement: float
    performance: float


def drawn_truth(
    drawn: list[SimulatedPrompt], model: SimulatedModel, trials: int, rng: np.random.Generator
) -> DrawnTruth:
    return DrawnTruth(
        consistency=float(
            np.mean([expected_consistency(p, trials, model.error_rate, rng, 300) for p in drawn])
        ),
        agreement=float(np.mean([p.agreement for p in drawn])),
        performance=float(np.mean([p.expected_performance for p in drawn])),
    )


def _published(
    document: Any,
    truth: ReliabilityTruth,
    prompts: dict[str, SimulatedPrompt],
    effects: dict[str, float],
    these: DrawnTruth,
) -> dict[str, list[tuple[Any, float, tuple[float, float]]]]:
    """(interval, truth, range) of every published interval of the first model's entry, and of
    the effect sizes between it and its partner (`effects`: the true d per metric). An interval
    over "these prompts" is held to the mean of the prompts drawn (`these`), a population
    interval to the population's."""
    entry = document.models[0]
    found: dict[str, list[tuple[Any, float, tuple[float, float]]]] = {
        name: [] for name in RELIABILITY_INTERVALS
    }

    def add(name: str, interval: Any, value: float, bounds: tuple[float, float]) -> None:
        if interval is not None:
            found[name].append((interval, value, bounds))

    if entry.consistency is not None:
        add("consistency.interval", entry.consistency.interval, these.consistency, (0, 1))
        population = entry.consistency.population_interval
        add("consistency.population_interval", population, truth.consistency, (0, 1))
    if entry.agreement is not None:
        add("agreement.interval", entry.agreement.interval, these.agreement, (-1, 1))
        population = entry.agreement.population_interval
        add("agreement.population_interval", population, truth.agreement, (-1, 1))
    for prompt in entry.prompts:
        if prompt.agreement is not None and prompt.agreement.interval is not None:
            exact = prompts[prompt.prompt_id].agreement
            add("prompts[].agreement.interval", prompt.agreement.interval, exact, (-1, 1))
    if entry.performance is not None:
        add("performance.ci_95", entry.performance.ci_95, these.performance, (0, 1))
        population = entry.performance.population_ci_95
        add("performance.population_ci_95", population, truth.performance, (0, 1))
    if entry.performance_by_prompt is not None:
        interval = entry.performance_by_prompt.interval
        add("performance_by_prompt.interval", interval, these.performance, (0, 1))
        population = entry.performance_by_prompt.population_interval
        add("performance_by_prompt.population_interval", population, truth.performance, (0, 1))
    if entry.latency is not None:
        inf = float("inf")
        add("latency.mean_ci_95", entry.latency.mean_ci_95, truth.latency_mean, (0, inf))
        for name, value in truth.latency_percentiles.items():
            interval = entry.latency.percentile_intervals[name]
            add(f"latency.percentile_intervals.{name}", interval, value, (0, inf))
    robust = entry.robustness
    add(
        "robustness.error_rate_interval",
        robust.error_rate_interval,
        truth.error_rate_percent,
        (0, 100),
    )
    add(
        "robustness.timeout_rate_interval",
        robust.timeout_rate_interval,
        truth.timeout_rate_percent,
        (0, 100),
    )
    inf = float("inf")
    for comparison in document.comparisons:
        if comparison.effect is not None and comparison.model_a == entry.model:
            metric = "latency" if comparison.metric == "latency_seconds" else "performance"
            name = f"comparisons[].effect.interval ({metric})"
            add(name, comparison.effect.interval, effects[metric], (-inf, inf))
    return found


def reliability_coverage(
    prompts: int,
    trials: int,
    *,
    datasets: int = RELIABILITY_DATASETS,
    seed: int = 0,
    model: SimulatedModel = SimulatedModel(),
    truth: ReliabilityTruth | None = None,
) -> list[IntervalCoverage]:
    """Simulate `datasets` runs of `model` on `prompts` prompts × `trials` trials, analyse each
    with `reliability.analysis.analyze` and count how often every published interval holds its
    truth (a one-sided bound: its side; an interval without bounds is counted as unpublished)."""
    from plumbline.reliability.analysis import analyze

    truth = truth if truth is not None else reliability_truth(model, trials)
    partner = partner_of(model)
    partner_truth = reliability_truth(partner, trials, prompts=TRUTH_PROMPTS // 4)
    effects = {
        metric: cohens_d_truth(truth, partner_truth, metric)
        for metric in ("latency", "performance")
    }
    rng = np.random.default_rng(seed)
    hits: dict[str, list[bool]] = {name: [] for name in RELIABILITY_INTERVALS}
    one_sided = dict.fromkeys(RELIABILITY_INTERVALS, 0)
    unpublished = dict.fromkeys(RELIABILITY_INTERVALS, 0)
    approximate = dict.fromkeys(RELIABILITY_INTERVALS, 0)
    stated: dict[str, float] = {}
    out = dict.fromkeys(RELIABILITY_INTERVALS, 0)
    eps = 1e-9
    for index in range(datasets):
        # the same prompts (and answer texts) for both models, each with its own probabilities
        prompt_seed = int(rng.integers(2**63))
        drawn = simulated_prompts(prompts, np.random.default_rng(prompt_seed), model, f"d{index}-")
        paired = simulated_prompts(
            prompts, np.random.default_rng(prompt_seed), partner, f"d{index}-"
        )
        records = simulated_records(drawn, trials, rng, model)
        records += simulated_records(paired, trials, rng, partner)
        document = analyze(records, embedding_table(drawn + paired))
        by_id = {p.prompt_id: p for p in drawn}
        these = drawn_truth(drawn, model, trials, np.random.default_rng([seed, index, 7]))
        for name, entries in _published(document, truth, by_id, effects, these).items():
            for interval, value, (lower, upper) in entries:
                low, high = interval.low, interval.high
                if low is None and high is None:
                    unpublished[name] += 1
                    continue
                if low is None or high is None:
                    one_sided[name] += 1
                if getattr(interval, "approximate", False):
                    approximate[name] += 1
                    if getattr(interval, "simulated_coverage", None) is not None:
                        stated[name] = interval.simulated_coverage
                hits[name].append(
                    (low is None or low - eps <= value) and (high is None or value <= high + eps)
                )
                if (low is not None and low < lower - eps) or (
                    high is not None and high > upper + eps
                ):
                    out[name] += 1
    return [
        IntervalCoverage(
            interval=name,
            prompts=prompts,
            trials=trials,
            intervals=len(hits[name]),
            coverage=float(np.mean(hits[name])) if hits[name] else float("nan"),
            one_sided=one_sided[name],
            unpublished=unpublished[name],
            approximate=approximate[name],
            simulated_coverage=stated.get(name),
            out_of_range=out[name],
        )
        for name in RELIABILITY_INTERVALS
    ]


def run_reliability_cells(
    prompt_counts: Iterable[int] = RELIABILITY_PROMPTS,
    trial_counts: Iterable[int] = RELIABILITY_TRIALS,
    *,
    datasets: int = RELIABILITY_DATASETS,
    model: SimulatedModel = SimulatedModel(),
    progress: Callable[[IntervalCoverage], None] | None = None,
) -> list[IntervalCoverage]:
    """Every reliability interval in every design (seeded: the same figures on every run)."""
    results: list[IntervalCoverage] = []
    for trials in trial_counts:
        truth = reliability_truth(model, trials)
        for prompts in prompt_counts:
            cells = reliability_coverage(
                prompts,
                trials,
                datasets=datasets,
                seed=100 * prompts + trials,
                model=model,
                truth=truth,
            )
            for cell in cells:
                results.append(cell)
                if progress is not None:
                    progress(cell)
    return results


# --- the table ----------------------------------------------------------------------------

OVERALL = (
    "MOVER over category intervals (Zou & Donner 2008; Newcombe 2011); category: Wilson, or "
    "Wilson at Korn & Graubard's (1998) effective n for rubric / repeats"
)
DIFFERENCE = (
    "paired MOVER: Newcombe (1998) method 10 per binary category, MOVER with question-mean "
    "correlation otherwise, MOVER across categories (Newcombe 2011)"
)


def _leaderboard_scenarios() -> list[tuple[LeaderboardDesign, str, Scenario]]:
    scenarios: list[tuple[LeaderboardDesign, str, Scenario]] = []
    for design in (ONE_BINARY, ONE_REPEATS, ONE_RUBRIC, THREE, TWO_MISSING):
        scenarios.append(
            (
                design,
                "overall",
                Scenario(
                    "leaderboard",
                    f"overall (= category when one) — {design.name}",
                    OVERALL,
                    "Wilson 1927; Korn & Graubard 1998; Zou & Donner 2008; Newcombe 2011",
                    "95%",
                    conservative_below=30,
                ),
            )
        )
    for design in (ONE_BINARY, ONE_RUBRIC, THREE):
        scenarios.append(
            (
                design,
                "difference",
                Scenario(
                    "leaderboard",
                    f"adjacent-pair difference — {design.name}",
                    DIFFERENCE,
                    "Newcombe 1998 (Stat Med 17:2635); Zou & Donner 2008; Newcombe 2011",
                    "95%",
                    conservative_below=30,
                ),
            )
        )
    return scenarios


COMPARE = Scenario(
    "compare",
    "mean paired pass-rate difference (tasks × 3 repeats)",
    "two-stage cluster bootstrap, percentile (tasks, then repeats within task)",
    "Davison & Hinkley 1997 §3.8; Field & Welsh 2007",
    "conservative",
    approximate_below=APPROXIMATE_TASKS,
)


def _result(
    scenario: Scenario,
    n: int,
    truth: float | None,
    data: Simulated,
    lower: float,
    upper: float,
) -> CellResult:
    value, low, high = data.truth, data.low, data.high
    eps = 1e-12
    return CellResult(
        scenario=scenario,
        n=n,
        truth=truth,
        datasets=int(low.size),
        coverage=float(np.mean((low - eps <= value) & (value <= high + eps))),
        out_of_range=int(np.sum((low < lower - eps) | (high > upper + eps) | (low > high + eps))),
        mean_width=float(np.mean(high - low)),
        checked=data.checked,
        mismatches=data.mismatches,
    )


def run_cells(
    sizes: Iterable[int] = SIZES,
    truths: Iterable[float | None] = TRUTHS,
    *,
    datasets: int = DATASETS,
    documents: Iterable[str] = ("leaderboard", "compare"),
    compare_sizes: Iterable[int] | None = None,
    compare_resamples: int = COMPARE_RESAMPLES,
    progress: Callable[[CellResult], None] | None = None,
) -> list[CellResult]:
    """Every cell of the coverage table (seeded: the same figures on every run)."""
    wanted = set(documents)
    results: list[CellResult] = []

    def add(result: CellResult) -> None:
        results.append(result)
        if progress is not None:
            progress(result)

    size_list, truth_list = list(sizes), list(truths)
    compare_list = size_list if compare_sizes is None else list(compare_sizes)
    for n in size_list:
        for t_index, truth in enumerate(truth_list):
            seed = 1000 * n + t_index
            if "leaderboard" in wanted:
                by_design: dict[str, dict[str, Simulated]] = {}
                for design, number, scenario in _leaderboard_scenarios():
                    if design.name not in by_design:
                        by_design[design.name] = leaderboard_cells(
                            design, n, truth, datasets=datasets, seed=seed
                        )
                    lower = -1.0 if number == "difference" else 0.0
                    add(_result(scenario, n, truth, by_design[design.name][number], lower, 1.0))
            if "compare" in wanted and n in compare_list:
                add(
                    _result(
                        COMPARE,
                        n,
                        truth,
                        compare_cell(
                            n, truth, datasets=datasets, seed=seed, resamples=compare_resamples
                        ),
                        -1.0,
                        1.0,
                    )
                )
    return results
