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
- reliability: `reliability.analysis.mean_over_prompts`, the CERT CI_95 of a metric's mean over
  prompts, clipped to [0, 1] as the report publishes it.

Scores come from one generator: each question (task, prompt) has a latent difficulty `z ~ N(0,1)`
shared by both models, and each 0/1 answer is `1{ρ·z + √(1−ρ²)·e < Φ⁻¹(p)}` with fresh noise e,
so every answer is right with probability exactly p while answers to one question are correlated
(repeats clustered in questions, and two models paired on the same questions). A rubric score is
the mean of 4 such answers (0, ¼, ½, ¾, 1). True p is fixed (0.02, 0.5, 0.98) or drawn per
dataset from U(0.1, 0.9), as Brown, Cai & DasGupta (2001) average coverage.

For compare, datasets that share every number the interval depends on are bootstrapped once.

A judged category corrected with human labels publishes the PPI interval (`stats.ppi_mean`); its
grid (judges × labels × rates) is `plumbline.ppi_coverage`, printed by `benchmarks/bench_ppi.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
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
from plumbline.reliability.analysis import APPROXIMATE_BELOW, mean_over_prompts
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


def reliability_cell(
    n: int, truth: float | None, *, datasets: int = DATASETS, seed: int = 0
) -> Simulated:
    """A CERT metric's mean over n prompts (per-prompt values in [0, 1], beta distributed around
    the truth), with the CERT CI_95 clipped to [0, 1] as `reliability` publishes it."""
    rng = np.random.default_rng(seed)
    p = _truths(truth, rng, datasets)
    concentration = 8.0
    values = rng.beta(p[:, None] * concentration, (1 - p[:, None]) * concentration, (datasets, n))
    low = np.empty(datasets)
    high = np.empty(datasets)
    for index in range(datasets):
        interval = mean_over_prompts(values[index].tolist(), None).interval
        low[index], high[index] = interval.low, interval.high
    return Simulated(p, low, high)


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
RELIABILITY = Scenario(
    "reliability",
    "metric mean over prompts (consistency, agreement)",
    "CERT CI_95 = mean ± 1.96·SD/√n (SD with n), clipped to [0, 1]",
    "CERT metrics §3 (the methodology's contract)",
    "95%",
    approximate_below=APPROXIMATE_BELOW,
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
    documents: Iterable[str] = ("leaderboard", "compare", "reliability"),
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
            if "reliability" in wanted:
                data = reliability_cell(n, truth, datasets=datasets, seed=seed)
                add(_result(RELIABILITY, n, truth, data, 0.0, 1.0))
    return results
