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
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats as sps
from scipy.spatial.distance import pdist

from plumbline.core.result import Interval
from plumbline.records.trial_record import ErrorClass
from plumbline.reliability.bands import (
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
from plumbline.reliability.intervals import (
    latency_mean_interval,
    over_prompts,
    percentile_interval,
    population_interval,
    prompt_agreement_interval,
)
from plumbline.reliability.metric_result import _EPS
from plumbline.reliability.result import (
    AgreementResult,
    ConsistencyResult,
    ErrorClassRate,
    LatencyResult,
    OutputQualityResult,
    PerformanceResult,
    ReliabilityInterval,
    RobustnessResult,
)
from plumbline.stats import EstimateResult, percentile, proportion_interval
from plumbline.stats.arrays import FloatArray


def _matrix(embeddings: Any, name: str = "embeddings") -> FloatArray:
    array = np.asarray(embeddings, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (responses x dimensions)")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array


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


def _unit_rows(matrix: FloatArray) -> FloatArray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError("embeddings must not contain zero vectors (cosine is undefined)")
    return np.asarray(matrix / norms, dtype=np.float64)


def pair_similarity_jackknife(unit: FloatArray, level: float = 0.95) -> tuple[float, float, float]:
    """Mean pairwise similarity of unit rows and its jackknife t interval `(mean, low, high)`.

    With `T = Σ_{i≠j} u_i·u_j = ‖Σu‖² − Σ‖u_i‖²` and row sums `r_i = u_i·Σu − ‖u_i‖²`, the
    mean is `T / (m(m−1))` and leaving response i out gives `(T − 2r_i) / ((m−1)(m−2))`, all
    in O(m·d). The interval is `mean ± t_{m−1} · SE_jack`, `SE_jack² = (m−1)/m · Σ(θ_(i) − θ̄)²`
    (needs m ≥ 3). Reference: Efron & Tibshirani (1993), ch. 11 (jackknife); Arvesen (1969),
    "Jackknifing U-statistics", Ann. Math. Stat. 40(6).
    """
    m = int(unit.shape[0])
    total = unit.sum(axis=0)
    squares = np.einsum("ij,ij->i", unit, unit)
    pair_sum = float(total @ total - squares.sum())
    mean = min(1.0, max(-1.0, pair_sum / (m * (m - 1))))
    if m < 3:
        return mean, math.nan, math.nan
    rows = unit @ total - squares
    leave_out = (pair_sum - 2 * rows) / ((m - 1) * (m - 2))
    se = math.sqrt((m - 1) / m * float(np.sum((leave_out - leave_out.mean()) ** 2)))
    half = float(sps.t.ppf(0.5 + level / 2, m - 1)) * se
    return mean, mean - half, mean + half


def _pair_values_of_draws(embeddings: Any, draws: npt.NDArray[np.intp]) -> FloatArray:
    """Cosine similarities of every pair i < j of each draw (`draws`: rows of indices into
    the embeddings, one draw per row): shape (draws, pairs)."""
    unit = _unit_rows(_matrix(embeddings))
    gram = unit @ unit.T
    first, second = np.triu_indices(draws.shape[1], k=1)
    return np.asarray(gram[draws[:, first], draws[:, second]], dtype=np.float64)


def consistency_of_draws(embeddings: Any, draws: npt.NDArray[np.intp]) -> FloatArray:
    """`consistency_score(embeddings[d]).score` for each draw d (a row of `draws`), at once."""
    distances = np.clip(1.0 - _pair_values_of_draws(embeddings, draws), 0.0, 2.0)
    mean = distances.mean(axis=1)
    spread = distances.std(axis=1)
    safe = np.where(mean > _EPS, mean, 1.0)
    scores = np.where(mean > _EPS, np.maximum(0.0, 1.0 - spread / safe), 1.0)
    return np.asarray(np.minimum(1.0, scores), dtype=np.float64)


def agreement_of_draws(embeddings: Any, draws: npt.NDArray[np.intp]) -> FloatArray:
    """`semantic_agreement(embeddings[d]).similarity` for each draw d, at once."""
    similarity = _pair_values_of_draws(embeddings, draws).mean(axis=1)
    return np.asarray(np.clip(similarity, -1.0, 1.0), dtype=np.float64)


def semantic_agreement(embeddings: Any, *, level: float = 0.95) -> AgreementResult:
    """Mean pairwise cosine similarity `(2 / n(n−1)) Σ_{i<j} cos(e_i, e_j)`, with a jackknife t
    interval over responses (`pair_similarity_jackknife`)."""
    matrix = _matrix(embeddings)
    n = int(matrix.shape[0])
    if n < 2:
        raise ValueError(f"semantic agreement needs at least 2 responses, got {n}")
    point, low, high = pair_similarity_jackknife(_unit_rows(matrix), level)
    interval = prompt_agreement_interval(low, high, n, level=level) if n >= 3 else None
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
    shorter than 10 characters once stripped of surrounding whitespace
    (`len(response.strip()) < 10`, as CERT's reference checks it) scores 0.0, so a padded
    "   Paris.   " or a whitespace-only answer scores 0. Reference: CERT metrics §2 (CERT).
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
    too_short = np.array([len(text.strip()) < 10 for text in responses], dtype=bool)
    score = np.where(too_short, 0.0, score)
    return PerformanceScores(
        score=np.asarray(score, dtype=np.float64),
        relevance=relevance,
        completeness=completeness,
        structure=structure,
    )


def prompt_means(values: Sequence[float], prompt_ids: Sequence[str]) -> dict[str, float]:
    """The mean of `values` per prompt id, in prompt-id order."""
    if len(values) != len(prompt_ids):
        raise ValueError("values and prompt_ids must have the same length")
    groups: dict[str, list[float]] = {}
    for value, prompt_id in zip(values, prompt_ids, strict=True):
        groups.setdefault(prompt_id, []).append(float(value))
    return {key: float(np.mean(groups[key])) for key in sorted(groups)}


def summarize_performance(
    scores: PerformanceScores, prompt_ids: Sequence[str] | None = None
) -> PerformanceResult:
    """CERT's mean score over responses; its interval is two-stage over prompts
    (`intervals.over_prompts` of the per-prompt means; every response one prompt when
    `prompt_ids` is None)."""
    n = int(scores.score.size)
    if n == 0:
        raise ValueError("performance needs at least 1 response")
    ids = list(prompt_ids) if prompt_ids is not None else ["prompt"] * n
    means = prompt_means([float(v) for v in scores.score], ids)
    ci = over_prompts(list(means.values()), n)[2] if len(means) >= 2 else None
    mean = float(np.mean(scores.score))
    return PerformanceResult(
        score=mean,
        n=n,
        ci_95=ci,
        population_ci_95=population_interval(list(means.values()), n),
        relevance=float(np.mean(scores.relevance)),
        completeness=float(np.mean(scores.completeness)),
        structure=float(np.mean(scores.structure)),
        band=performance_band(mean),
    )


# --- 3. latency ------------------------------------------------------------------------------


def latency_metrics(
    latencies: Any,
    output_tokens: Any = None,
    *,
    prompts: int = 1,
) -> LatencyResult:
    """Mean, std, min, max, p50, p95, p99, CV and tokens per second of successful calls.

    `tokens_per_second = Σ output tokens / Σ latency` over trials that have both. A latency is
    one call's, so trials are the unit here. The mean's interval is log-scale (modified Cox,
    `intervals.latency_mean_interval`); percentiles get distribution-free order-statistic
    intervals (`intervals.percentile_interval`). Reference: CERT metrics §3 (CERT).
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
    listed = [float(v) for v in values]
    intervals = {
        name: percentile_interval(listed, q, prompts=prompts)
        for name, q in (("p50", 50.0), ("p95", 95.0), ("p99", 99.0))
    }
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
        mean_ci_95=latency_mean_interval(listed, prompts=prompts),
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


def output_quality(
    responses: Sequence[str],
    embeddings: Any = None,
    *,
    embeddings_by_prompt: Sequence[Any] | None = None,
) -> OutputQualityResult:
    """Words, approximate tokens (`int(words × 1.3)`), semantic diversity and mean repetition.

    Diversity is computed per prompt, then averaged: for each prompt with at least 2 response
    embeddings, the mean pairwise cosine distance `mean(pdist(E_prompt, "cosine"))`; the
    diversity is the mean of those over prompts (each prompt weighs the same). Pooling the
    responses to different prompts would measure how different the prompts are, not how
    variably one prompt is answered. `embeddings` (one matrix) is the one-prompt case;
    `embeddings_by_prompt` gives one matrix per prompt. Reference: CERT metrics §4 (CERT).
    """
    if len(responses) == 0:
        raise ValueError("output quality needs at least 1 response")
    groups: list[Any] = list(embeddings_by_prompt or [])
    if embeddings is not None:
        groups.append(embeddings)
    per_prompt = [
        _cosine_distance_moments(matrix, spread=False)[0]
        for matrix in (_matrix(group) for group in groups)
        if matrix.shape[0] >= 2
    ]
    diversity = float(np.mean(per_prompt)) if per_prompt else None
    repetition = float(np.mean([repetition_score(text) for text in responses]))
    return OutputQualityResult(
        n=len(responses),
        mean_words=float(np.mean([word_count(text) for text in responses])),
        mean_tokens=float(np.mean([approximate_tokens(text) for text in responses])),
        semantic_diversity=diversity,
        diversity_prompts=len(per_prompt),
        repetition_score=repetition,
        diversity_band=diversity_band(diversity) if diversity is not None else None,
        repetition_band=repetition_band(repetition),
    )


# --- 5. robustness ---------------------------------------------------------------------------


def _wilson(successes: int, trials: int, prompts: int = 1) -> ReliabilityInterval:
    result: EstimateResult = proportion_interval(successes, trials, method="wilson")
    bounds = Interval.of(result.interval)
    return ReliabilityInterval(
        low=bounds.low,
        high=bounds.high,
        level=bounds.level,
        method=f"{bounds.method} (trials as the unit)",
        prompts=prompts,
        trials=trials,
        coverage="guaranteed",
    )


def _percent_interval(successes: int, trials: int, prompts: int = 1) -> ReliabilityInterval:
    bounds = _wilson(successes, trials, prompts)
    return bounds.model_copy(
        update={
            "low": None if bounds.low is None else 100 * bounds.low,
            "high": None if bounds.high is None else 100 * bounds.high,
        }
    )


def robustness(
    error_classes: Sequence[ErrorClass | None], retries: int = 0, *, prompts: int = 1
) -> RobustnessResult:
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
        error_rate_interval=_percent_interval(len(failures), total, prompts),
        timeout_rate_interval=_percent_interval(timeouts, total, prompts),
        exceptions=exceptions,
        error_classes=[
            ErrorClassRate(
                error_class=name,
                trials=count,
                rate=count / total,
                interval=_wilson(count, total, prompts),
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
