"""The five CERT metrics, exactly as CERT states them, plus their intervals.

Every function here is pure: it takes texts, numbers and embedding arrays and returns a result
object. Embeddings come from `plumbline.reliability.embeddings` at the edge, so the formulas are
testable with hand-made vectors. Results are parts of the reliability report (pydantic,
every number with its unit) and validate themselves as CERT's Validation section asks (scores
in [0, 1], min ≤ p50 ≤ p95 ≤ p99 ≤ max, rates in [0, 100], enough trials) and raise
`ValueError` otherwise.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Self

import numpy as np
import numpy.typing as npt
from pydantic import Field, model_validator
from scipy.spatial.distance import pdist

from plumbline.records.trial_record import ErrorClass
from plumbline.reliability.bands import (
    Band,
    agreement_band,
    consistency_band,
    diversity_band,
    error_rate_band,
    p95_latency_band,
    performance_band,
    repetition_band,
    timeout_rate_band,
    variation_band,
)
from plumbline.result import Interval, ResultModel, unit_field
from plumbline.stats import (
    EstimateResult,
    bootstrap_interval,
    bootstrap_percentile_intervals,
    cert_ci_95,
    percentile,
    proportion_interval,
)

FloatArray = npt.NDArray[np.float64]

# A tolerance for the ordering checks: interpolated percentiles can differ in the last ulp.
_EPS = 1e-9


def _matrix(embeddings: Any, name: str = "embeddings") -> FloatArray:
    array = np.asarray(embeddings, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (responses x dimensions)")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array


def _check_unit(value: float, name: str) -> None:
    if not (-_EPS <= value <= 1 + _EPS):
        raise ValueError(f"{name} must be between 0 and 1, got {value!r}")


def valid_responses(responses: Iterable[str | None]) -> list[str]:
    """The responses the consistency metric uses: not missing, not empty or whitespace."""
    return [text for text in responses if text is not None and text.strip()]


_BLOCK_ELEMENTS = 1 << 22


def _cosine_distance_moments(matrix: FloatArray, *, spread: bool = True) -> tuple[float, float]:
    """Mean and population std (NaN unless `spread`) of the cosine distances of all row pairs.

    The values of `pdist(matrix, "cosine")` (up to rounding), without its n²·d loop. With unit
    rows u and every pair counted once, `Σ_{i<j} u_i·u_j = (‖Σ u_i‖² − Σ ‖u_i‖²) / 2`, so the
    mean costs O(n·d). For the spread, identical rows (repeated responses) are merged and their
    pairs weighted by multiplicity, and the distances `1 − u_a·u_b` of the distinct rows,
    clipped to [0, 2] as scipy does, come from matrix products a block of rows at a time.
    """
    norms = np.linalg.norm(matrix, axis=1)
    if np.any(norms == 0):  # cosine is undefined; keep scipy's behaviour for this case
        distances = pdist(matrix, "cosine")
        return float(np.mean(distances)), float(np.std(distances))
    unit_all = matrix / norms[:, None]
    n = unit_all.shape[0]
    pairs = n * (n - 1) / 2
    total = unit_all.sum(axis=0)
    similarity_sum = (float(total @ total) - float(np.einsum("ij,ij->", unit_all, unit_all))) / 2
    mean = min(max(1.0 - similarity_sum / pairs, 0.0), 2.0)
    if not spread:
        return mean, math.nan
    rows, counts = np.unique(matrix, axis=0, return_counts=True)
    unit = rows / np.linalg.norm(rows, axis=1)[:, None]
    weights = counts.astype(np.float64)
    m = unit.shape[0]
    block = max(1, _BLOCK_ELEMENTS // m)
    column = np.arange(m)[None, :]
    squares = 0.0
    for start in range(0, m, block):
        stop = min(start + block, m)
        distances = np.clip(1.0 - unit[start:stop] @ unit.T, 0.0, 2.0)
        row = np.arange(start, stop)[:, None]
        # pairs a < b of distinct rows count w_a·w_b times; a row with itself w_a(w_a − 1)/2
        pair_weights = np.where(
            column > row,
            weights[start:stop, None] * weights[None, :],
            np.where(column == row, weights[start:stop, None] * (weights[None, :] - 1) / 2, 0.0),
        )
        squares += float(np.sum(pair_weights * (distances - mean) ** 2))
    return mean, math.sqrt(max(squares / pairs, 0.0))


# --- 1. consistency --------------------------------------------------------------------------


class ConsistencyResult(ResultModel):
    """CERT's consistency score: `max(0, 1 − std/mean)` of pairwise cosine distances.

    It measures how evenly the responses are spread, not whether they agree: equidistant
    unrelated responses score 1.0, two responses always score 1.0, and 19 identical responses
    plus one outlier score 0.0. Read it beside `semantic_agreement`.
    """

    score: float = unit_field("CERT consistency score, 0–1.", "score")
    mean_distance: float = unit_field("Mean pairwise cosine distance (0–2).", "score")
    std_distance: float = unit_field("Population SD of the pairwise cosine distances.", "score")
    n_responses: int = unit_field("Valid (non-empty) responses compared.", "count")
    band: Band = Field(description="CERT's reading of the score.")

    @model_validator(mode="after")
    def _valid(self) -> Self:
        _check_unit(self.score, "consistency score")
        if self.n_responses < 2:
            raise ValueError("consistency needs at least 2 responses")
        return self


def consistency_score(embeddings: Any) -> ConsistencyResult:
    """Consistency from response embeddings (one row per valid response).

    `distances = pdist(E, "cosine")` (their moments from `_cosine_distance_moments`);
    `score = max(0, 1 − std(distances)/mean(distances))` with
    the population std; a mean distance of 0 (identical responses) scores 1.0; clamped to
    [0, 1]. Reference: CERT metrics §1 (CERT).
    """
    matrix = _matrix(embeddings)
    if matrix.shape[0] < 2:
        raise ValueError(
            f"consistency needs at least 2 valid (non-empty) responses, got {matrix.shape[0]}"
        )
    mean_distance, std_distance = _cosine_distance_moments(matrix)
    # distances of identical vectors can come out at -1e-16 rather than 0
    score = 1.0 if mean_distance <= _EPS else max(0.0, 1.0 - std_distance / mean_distance)
    score = min(1.0, score)
    return ConsistencyResult(
        score=score,
        mean_distance=mean_distance,
        std_distance=std_distance,
        n_responses=int(matrix.shape[0]),
        band=consistency_band(score),
    )


class AgreementResult(ResultModel):
    """`semantic_agreement`: mean pairwise cosine similarity of responses, with an interval.

    The interval resamples responses (the unit that varies between trials) and averages the
    similarity over pairs of distinct original responses, so a response is never paired with
    its own copy. It is None below 3 responses, where a bootstrap has nothing to resample.
    """

    similarity: float = unit_field("Mean pairwise cosine similarity, -1–1.", "score")
    n_responses: int = unit_field("Responses compared.", "count")
    interval: Interval | None = Field(
        description="Percentile-bootstrap interval over responses; null below 3 responses."
    )
    band: Band = Field(description="plumbline's reading of the similarity.")


def _unit_rows(matrix: FloatArray) -> FloatArray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("embeddings must not contain zero vectors (cosine is undefined)")
    return np.asarray(matrix / norms, dtype=np.float64)


def _pair_similarity_means(
    indices: FloatArray, similarities: FloatArray, unit: FloatArray
) -> FloatArray:
    """Mean similarity over the pairs of distinct original responses of each resample (row).

    With `c_i` copies of response i in a resample, its pairs of positions holding different
    responses number `(n² − Σ c_i²) / 2` and their similarities sum to
    `(cᵀSc − Σ c_i² S_ii) / 2`, so each row costs O(n·min(n, dimensions)) instead of O(n²).
    `cᵀSc` is `‖cᵀU‖²` for the unit embeddings U when there are more responses than dimensions.
    """
    picked = indices.astype(np.intp)
    rows, n = picked.shape
    flat = (picked + (np.arange(rows, dtype=np.intp) * n)[:, None]).ravel()
    counts = np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)
    if n <= unit.shape[1]:
        quadratic = np.einsum("ij,ij->i", counts @ similarities, counts)
    else:
        projected = counts @ unit
        quadratic = np.einsum("ij,ij->i", projected, projected)
    squares = counts * counts
    same = squares @ np.diag(similarities)
    pairs = (n * n - squares.sum(axis=1)) / 2
    means = np.clip((quadratic - same) / 2 / np.maximum(pairs, 1), -1.0, 1.0)
    # a resample of one repeated response has no pair: it agrees with itself
    return np.asarray(np.where(pairs > 0, means, 1.0), dtype=np.float64)


def semantic_agreement(
    embeddings: Any,
    *,
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int | None = 42,
) -> AgreementResult:
    """Mean pairwise cosine similarity `(2 / n(n−1)) Σ_{i<j} cos(e_i, e_j)`, bootstrapped.

    Percentile bootstrap over responses (Efron & Tibshirani 1993, ch. 13): each resample draws
    n response indices with replacement and averages the similarity over its pairs of distinct
    responses (from the resample's copy counts, see `_pair_similarity_means`).
    """
    matrix = _matrix(embeddings)
    n = int(matrix.shape[0])
    if n < 2:
        raise ValueError(f"semantic agreement needs at least 2 responses, got {n}")
    unit = _unit_rows(matrix)
    similarities = np.asarray(np.clip(unit @ unit.T, -1.0, 1.0), dtype=np.float64)
    upper = np.triu_indices(n, k=1)
    point = float(np.mean(similarities[upper]))
    interval: Interval | None = None
    if n >= 3:

        def mean_pair_similarity(indices: FloatArray) -> FloatArray:
            return _pair_similarity_means(indices, similarities, unit)

        result = bootstrap_interval(
            np.arange(n, dtype=np.float64),
            mean_pair_similarity,
            n_resamples=n_resamples,
            level=level,
            seed=seed,
        )
        bounds = result.interval
        interval = Interval(
            low=bounds.low, high=bounds.high, level=bounds.level, method="bootstrap percentile"
        )
    return AgreementResult(
        similarity=point, n_responses=n, interval=interval, band=agreement_band(point)
    )


#: Agreement at or above this, with CERT's consistency at or below CV_PATHOLOGY_CONSISTENCY,
#: is the CERT formula's coefficient-of-variation pathology, not instability.
CV_PATHOLOGY_AGREEMENT = 0.9
CV_PATHOLOGY_CONSISTENCY = 0.3

CV_PATHOLOGY = (
    "CERT's consistency is 1 − CV of the distances to the mean response: when responses "
    "nearly agree those distances are all tiny, so one slightly different answer makes their "
    "coefficient of variation large and the score low; trust semantic agreement here"
)


def agreement_conflict(consistency: float, agreement: float) -> str | None:
    """Say so when CERT's consistency score and semantic agreement tell different stories.

    The sharp case, agreement ≥ 0.9 with consistency ≤ 0.3, is the CV pathology of CERT's
    formula (1 − CV of distances), explained in the message.
    """
    if consistency >= 0.7 and agreement < 0.7:
        return (
            f"consistency score {consistency:.2f} reads '{consistency_band(consistency).label}', "
            f"but responses agree only {agreement:.2f} (mean cosine similarity): the score "
            "measures how evenly responses are spread, not whether they agree"
        )
    if consistency <= CV_PATHOLOGY_CONSISTENCY and agreement >= CV_PATHOLOGY_AGREEMENT:
        return (
            f"consistency score {consistency:.2f} reads '{consistency_band(consistency).label}', "
            f"but responses agree closely ({agreement:.2f} mean cosine similarity): " + CV_PATHOLOGY
        )
    if consistency < 0.5 and agreement >= CV_PATHOLOGY_AGREEMENT:
        return (
            f"consistency score {consistency:.2f} reads '{consistency_band(consistency).label}', "
            f"but responses agree closely ({agreement:.2f} mean cosine similarity): a few "
            "outliers among near-identical responses drive the score down"
        )
    return None


# --- 2. performance --------------------------------------------------------------------------


@dataclass(frozen=True)
class PerformanceScores:
    """Per-response performance and its three components (arrays aligned with responses)."""

    score: FloatArray
    relevance: FloatArray
    completeness: FloatArray
    structure: FloatArray


def performance_scores(
    prompt_embeddings: Any, response_embeddings: Any, responses: Sequence[str]
) -> PerformanceScores:
    """`0.5·relevance + 0.3·completeness + 0.2·structure` for each response.

    relevance = (cos(prompt, response) + 1) / 2; completeness = min(1, words / 200);
    structure = 1.0 when the response contains '.', a newline or ':', else 0.5. A response
    shorter than 10 characters scores 0.0. Reference: CERT metrics §2 (CERT).
    """
    prompts = _matrix(prompt_embeddings, "prompt_embeddings")
    answers = _matrix(response_embeddings, "response_embeddings")
    if prompts.shape != answers.shape or len(responses) != answers.shape[0]:
        raise ValueError(
            "prompt_embeddings, response_embeddings and responses must have the same length"
        )
    numerator = np.einsum("ij,ij->i", prompts, answers)
    denominator = np.linalg.norm(prompts, axis=1) * np.linalg.norm(answers, axis=1)
    cosine = np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0)
    relevance = (np.clip(cosine, -1.0, 1.0) + 1.0) / 2.0
    words = np.array([word_count(text) for text in responses], dtype=np.float64)
    completeness = np.minimum(1.0, words / 200.0)
    structure = np.array(
        [1.0 if any(mark in text for mark in (".", "\n", ":")) else 0.5 for text in responses]
    )
    score = relevance * 0.5 + completeness * 0.3 + structure * 0.2
    too_short = np.array([len(text) < 10 for text in responses], dtype=bool)
    score = np.where(too_short, 0.0, score)
    return PerformanceScores(
        score=np.asarray(score, dtype=np.float64),
        relevance=relevance,
        completeness=completeness,
        structure=structure,
    )


class PerformanceResult(ResultModel):
    """Mean performance with CERT's CI_95 over responses."""

    score: float = unit_field(
        "Mean CERT performance heuristic (length, structure, prompt similarity), 0–1.", "score"
    )
    n: int = unit_field("Successful responses scored.", "count")
    ci_95: Interval | None = Field(description="CERT's CI_95 over responses; null for one.")
    relevance: float = unit_field("Mean semantic relevance component (weight 0.5), 0–1.", "score")
    completeness: float = unit_field("Mean completeness component (weight 0.3), 0–1.", "score")
    structure: float = unit_field("Mean structure component (weight 0.2), 0–1.", "score")
    band: Band = Field(description="CERT's reading of the score (named as the heuristic).")

    @model_validator(mode="after")
    def _valid(self) -> Self:
        for name in ("score", "relevance", "completeness", "structure"):
            _check_unit(getattr(self, name), f"performance {name}")
        if self.n < 1:
            raise ValueError("performance needs at least 1 response")
        return self


def summarize_performance(scores: PerformanceScores) -> PerformanceResult:
    n = int(scores.score.size)
    if n == 0:
        raise ValueError("performance needs at least 1 response")
    ci = Interval.of(cert_ci_95(scores.score).interval) if n >= 2 else None
    mean = float(np.mean(scores.score))
    return PerformanceResult(
        score=mean,
        n=n,
        ci_95=ci,
        relevance=float(np.mean(scores.relevance)),
        completeness=float(np.mean(scores.completeness)),
        structure=float(np.mean(scores.structure)),
        band=performance_band(mean),
    )


# --- 3. latency ------------------------------------------------------------------------------


class LatencyResult(ResultModel):
    """Latency statistics in seconds (population std, numpy linear percentiles)."""

    n: int = unit_field("Successful trials timed.", "count")
    mean: float = unit_field("Mean latency.", "seconds")
    std: float = unit_field("Population standard deviation of latency.", "seconds")
    min: float = unit_field("Fastest trial.", "seconds")
    max: float = unit_field("Slowest trial.", "seconds")
    p25: float = unit_field(
        "First quartile of latency (the box of the per-trial chart).", "seconds"
    )
    p50: float = unit_field("Median latency.", "seconds")
    p95: float = unit_field("95th percentile latency.", "seconds")
    p75: float = unit_field("Third quartile of latency.", "seconds")
    p99: float = unit_field("99th percentile latency.", "seconds")
    coefficient_of_variation: float = unit_field("std / mean.", "ratio")
    tokens_per_second: float | None = unit_field(
        "Output tokens over latency of the trials that report tokens; null without any.",
        "ratio",
    )
    mean_ci_95: Interval = Field(description="CERT's CI_95 of the mean (seconds).")
    percentile_intervals: dict[str, Interval] = Field(
        description="Percentile-bootstrap intervals of p50, p95 and p99 (seconds)."
    )
    p95_band: Band = Field(description="CERT's reading of the P95 latency.")
    variation_band: Band = Field(description="CERT's reading of the coefficient of variation.")

    @model_validator(mode="after")
    def _valid(self) -> Self:
        if self.n < 2:
            raise ValueError("latency needs at least 2 samples")
        ordered = (self.min, self.p25, self.p50, self.p75, self.p95, self.p99, self.max)
        if any(a > b + _EPS for a, b in itertools.pairwise(ordered)):
            raise ValueError(f"latency ordering violated: min ≤ p50 ≤ p95 ≤ p99 ≤ max, {ordered}")
        if self.min < 0:
            raise ValueError("latencies must be non-negative")
        return self


def latency_metrics(
    latencies: Any,
    output_tokens: Any = None,
    *,
    n_resamples: int = 2000,
    seed: int | None = 42,
) -> LatencyResult:
    """Mean, std, min, max, p50, p95, p99, CV and tokens per second of successful calls.

    `tokens_per_second = Σ output tokens / Σ latency` over trials that have both; the mean's
    interval is CERT's CI_95 = mean ± 1.96·std/√n; percentiles get percentile-bootstrap
    intervals (resampling trials). Reference: CERT metrics §3 (CERT).
    """
    values = np.asarray(latencies, dtype=np.float64)
    if values.ndim != 1 or values.size < 2:
        raise ValueError(f"latency needs at least 2 samples, got {values.size}")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError("latencies must be finite and non-negative")
    mean = float(np.mean(values))
    std = float(np.std(values))
    p25, p50, p75, p95, p99 = (
        float(v) for v in np.asarray(percentile(values, [25, 50, 75, 95, 99]))
    )
    tokens_per_second: float | None = None
    if output_tokens is not None:
        tokens = np.asarray([np.nan if t is None else t for t in output_tokens], dtype=np.float64)
        if tokens.shape != values.shape:
            raise ValueError("output_tokens must have one entry per latency (None when unknown)")
        known = np.isfinite(tokens)
        total_time = float(np.sum(values[known]))
        if known.any() and total_time > 0:
            tokens_per_second = float(np.sum(tokens[known])) / total_time
    intervals: dict[str, Interval] = {}
    # One set of resamples for the three percentiles (the same draws as one call per percentile).
    boots = bootstrap_percentile_intervals(
        values, [50.0, 95.0, 99.0], n_resamples=n_resamples, seed=seed
    )
    for name, boot in zip(("p50", "p95", "p99"), boots, strict=True):
        intervals[name] = Interval(
            low=boot.interval.low,
            high=boot.interval.high,
            level=boot.interval.level,
            method="bootstrap percentile",
        )
    cv = std / mean if mean > 0 else 0.0
    return LatencyResult(
        n=int(values.size),
        mean=mean,
        std=std,
        min=float(np.min(values)),
        max=float(np.max(values)),
        p25=p25,
        p50=p50,
        p75=p75,
        p95=p95,
        p99=p99,
        coefficient_of_variation=cv,
        tokens_per_second=tokens_per_second,
        mean_ci_95=Interval.of(cert_ci_95(values).interval),
        percentile_intervals=intervals,
        p95_band=p95_latency_band(p95),
        variation_band=variation_band(cv),
    )


# --- 4. output quality -----------------------------------------------------------------------


_WORD = re.compile(r"\S+")


def iter_words(text: str) -> Iterator[str]:
    """The words of `text` as `text.split()` gives them, one at a time (a 100 MB response
    split at once is a list of millions of strings: gigabytes)."""
    return (match.group() for match in _WORD.finditer(text))


def word_count(text: str) -> int:
    """`len(text.split())` without building the list."""
    return sum(1 for _ in _WORD.finditer(text))


def repetition_score(text: str) -> float:
    """`1 − (distinct trigrams occurring more than once / distinct trigrams)`; 1.0 below 3 words.

    Word trigrams over `text.split()`, read word by word. Reference: CERT metrics §4C (CERT).
    """
    counts: Counter[tuple[str, str, str]] = Counter()
    words = iter_words(text)
    window = tuple(itertools.islice(words, 2))
    if len(window) < 2:
        return 1.0
    first, second = window
    for third in words:
        counts[(first, second, third)] += 1
        first, second = second, third
    if not counts:
        return 1.0
    repeated = sum(1 for count in counts.values() if count > 1)
    return 1.0 - repeated / len(counts)


def approximate_tokens(text: str) -> int:
    """CERT's token estimate: `int(words × 1.3)`."""
    return int(word_count(text) * 1.3)


class OutputQualityResult(ResultModel):
    """Length, semantic diversity and repetition of a model's responses."""

    n: int = unit_field("Successful responses.", "count")
    mean_words: float = unit_field("Mean words per response.", "count")
    mean_tokens: float = unit_field("Mean approximate tokens per response (words × 1.3).", "tokens")
    semantic_diversity: float | None = unit_field(
        "Mean pairwise cosine distance of responses (0–2); null below 2 responses.", "score"
    )
    repetition_score: float = unit_field("Mean CERT repetition score, 0–1.", "score")
    diversity_band: Band | None = Field(description="CERT's reading of the diversity.")
    repetition_band: Band = Field(description="CERT's reading of the repetition score.")

    @model_validator(mode="after")
    def _valid(self) -> Self:
        _check_unit(self.repetition_score, "repetition score")
        if self.semantic_diversity is not None and not (
            -_EPS <= self.semantic_diversity <= 2 + _EPS
        ):
            raise ValueError("semantic diversity (a cosine distance) must be between 0 and 2")
        if self.n < 1:
            raise ValueError("output quality needs at least 1 response")
        return self


def output_quality(responses: Sequence[str], embeddings: Any = None) -> OutputQualityResult:
    """Words, approximate tokens (`int(words × 1.3)`), diversity (mean pairwise cosine
    distance of `embeddings`, when at least 2 rows are given) and mean repetition score.
    Reference: CERT metrics §4 (CERT).
    """
    if len(responses) == 0:
        raise ValueError("output quality needs at least 1 response")
    diversity: float | None = None
    if embeddings is not None:
        matrix = _matrix(embeddings)
        if matrix.shape[0] >= 2:
            diversity = _cosine_distance_moments(matrix, spread=False)[0]
    repetition = float(np.mean([repetition_score(text) for text in responses]))
    return OutputQualityResult(
        n=len(responses),
        mean_words=float(np.mean([word_count(text) for text in responses])),
        mean_tokens=float(np.mean([approximate_tokens(text) for text in responses])),
        semantic_diversity=diversity,
        repetition_score=repetition,
        diversity_band=diversity_band(diversity) if diversity is not None else None,
        repetition_band=repetition_band(repetition),
    )


# --- 5. robustness ---------------------------------------------------------------------------


class ErrorClassRate(ResultModel):
    """How often one error class occurred: a proportion of all trials, with its interval."""

    error_class: str = Field(description="The exception class (CERT's names).")
    trials: int = unit_field("Trials that failed with this class.", "count")
    rate: float = unit_field("Share of all trials, 0–1.", "proportion")
    interval: Interval = Field(description="Wilson interval of the share (0–1).")


class RobustnessResult(ResultModel):
    """CERT's error and timeout rates in percent (0–100, as CERT defines them) with Wilson
    intervals in percent, counts by class, and each class's share of trials (0–1)."""

    total_trials: int = unit_field("Trials run.", "count")
    failed_trials: int = unit_field("Trials that failed.", "count")
    timeout_trials: int = unit_field("Trials that timed out.", "count")
    error_rate: float = unit_field("failed / total × 100 (CERT: a percentage).", "percent")
    timeout_rate: float = unit_field("timeouts / total × 100 (CERT: a percentage).", "percent")
    error_rate_interval: Interval = Field(description="Wilson interval of error_rate (percent).")
    timeout_rate_interval: Interval = Field(
        description="Wilson interval of timeout_rate (percent)."
    )
    exceptions: dict[str, int] = unit_field("Failed trials by exception class.", "count")
    error_classes: list[ErrorClassRate] = Field(
        description="Every exception class's share of trials with its Wilson interval (0–1)."
    )
    retries: int = unit_field("Retries used across all trials.", "count")
    band: Band = Field(description="CERT's reading of the error rate.")
    timeout_band: Band = Field(description="CERT's reading of the timeout rate.")
    notes: list[str] = Field(default_factory=list, description="What the rates do not say.")

    @model_validator(mode="after")
    def _valid(self) -> Self:
        for name in ("error_rate", "timeout_rate"):
            value = getattr(self, name)
            if not 0 <= value <= 100:
                raise ValueError(f"{name} must be between 0 and 100 percent, got {value!r}")
        if self.total_trials < 1:
            raise ValueError("robustness needs at least 1 trial")
        if not 0 <= self.timeout_trials <= self.failed_trials <= self.total_trials:
            raise ValueError("trial counts must satisfy timeouts ≤ failures ≤ total")
        return self


def _wilson(successes: int, trials: int) -> Interval:
    result: EstimateResult = proportion_interval(successes, trials, method="wilson")
    return Interval.of(result.interval)


def _percent_interval(successes: int, trials: int) -> Interval:
    bounds = _wilson(successes, trials)
    return bounds.model_copy(
        update={
            "low": None if bounds.low is None else 100 * bounds.low,
            "high": None if bounds.high is None else 100 * bounds.high,
        }
    )


def robustness(error_classes: Sequence[ErrorClass | None], retries: int = 0) -> RobustnessResult:
    """`error_rate = failed / total × 100`, `timeout_rate = timeouts / total × 100`.

    One entry per trial (None for a success). Wilson 95% intervals, because 0 errors in 20
    trials is not "0%": its upper bound is about 16%. Each class's share of trials is a
    proportion (0–1) with its Wilson interval. Reference: CERT metrics §5; Wilson (1927).
    """
    total = len(error_classes)
    if total == 0:
        raise ValueError("robustness needs at least 1 trial")
    failures = [c for c in error_classes if c is not None]
    timeouts = sum(1 for c in failures if c is ErrorClass.TIMEOUT)
    counts = Counter(c.value for c in failures)
    exceptions = {cls.value: counts.get(cls.value, 0) for cls in ErrorClass}
    error_rate = 100.0 * len(failures) / total
    timeout_rate = 100.0 * timeouts / total
    notes = []
    if not failures:
        upper = _percent_interval(0, total).high
        notes.append(
            f"0 errors in {total} trials: the error rate is at most {upper:.1f}% (95% upper bound)"
        )
    return RobustnessResult(
        total_trials=total,
        failed_trials=len(failures),
        timeout_trials=timeouts,
        error_rate=error_rate,
        timeout_rate=timeout_rate,
        error_rate_interval=_percent_interval(len(failures), total),
        timeout_rate_interval=_percent_interval(timeouts, total),
        exceptions=exceptions,
        error_classes=[
            ErrorClassRate(
                error_class=name, trials=count, rate=count / total, interval=_wilson(count, total)
            )
            for name, count in exceptions.items()
        ],
        retries=retries,
        band=error_rate_band(error_rate),
        timeout_band=timeout_rate_band(timeout_rate),
        notes=notes,
    )


def finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None
