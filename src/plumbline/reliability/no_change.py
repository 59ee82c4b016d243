"""The test of "no change" behind `regressed` and `improved`: trials exchanged within prompts.

Under the null hypothesis that nothing changed between the baseline and the current run, the
trials of one prompt in both runs are independent draws from the same distribution, so they are
exchangeable: which of a prompt's `N_p` trials carry the label "current" (`n_p` of them) is a
uniformly random choice, whatever the prompt (deterministic or erratic), the answer
distribution or the latency tails. A stratified permutation test relabels the trials of each
prompt at random (keeping `n_p` per prompt), recomputes every metric's statistic on each
relabelling, and refers the observed statistic to that distribution:
`p = (1 + #{T* ≤ T}) / (1 + B)` for a change downwards (and the mirror for upwards), which is a
valid p-value at any sample size (Phipson & Smyth 2010, "Permutation p-values should never be
zero", SAGMB 9(1); the stratified relabelling: Good 2005, "Permutation, Parametric and
Bootstrap Tests of Hypotheses", §3.5; Ernst 2004, Statist. Sci. 19(4)). The Monte Carlo draws
are random, the level is not approximate: `P(p ≤ α) ≤ α` holds exactly under exchangeability.

Statistics (the same function on the observed labels and on every relabelling):

- consistency, agreement, performance: `T = (1/k) Σ_p Δ_p` over the k prompts, `Δ_p` the
  prompt's score on its current-labelled trials minus its score on the baseline-labelled ones
  (0 when a side has fewer than 2 valid answers, or no scored answer for performance): the
  published difference, every prompt counted once. A prompt whose pooled answers are all
  alike has `Δ_p = 0` under every relabelling and adds nothing to the null spread, while a
  deterministic baseline prompt answered differently now is judged against the relabellings
  of both runs' answers, not against the baseline's zero spread. (Precision weights and
  Fisher's combination of per-prompt p-values were tried: both exact, both less powerful on
  the erratic-answers alternative of the benchmark.)
- latency p50 and p95: the percentile of the current-labelled latencies (all prompts pooled, as
  the report computes it) minus the baseline-labelled one;
- error rate: the current-labelled share of failed trials minus the baseline-labelled share,
  in percentage points;
- cost (only when the trials carry a cost: `reliability --baseline` with cost asked for):
  `T = (1/k) Σ_p Δ_p`, `Δ_p` the mean cost of the prompt's current-labelled priced trials
  minus that of its baseline-labelled ones (0 when a side has none): the published change of
  cost per trial (trials averaged within prompt, then over prompts).

`scipy.stats.permutation_test` exchanges observations across the whole sample; it has no strata,
so the within-prompt relabelling is done here (with one prompt both are the same test, checked in
`tests/reliability/test_no_change.py`). The cosine similarity of every pair of a prompt's trials
is computed once, so each relabelling's pairwise scores are quadratic forms of its label vector.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from plumbline.reliability.metric_result import _EPS
from plumbline.stats.arrays import BoolArray, FloatArray

#: The metrics with a test, in report order.
TESTED = (
    "consistency",
    "agreement",
    "performance",
    "latency_p50",
    "latency_p95",
    "error_rate",
    "cost",
)
_SCORES = ("consistency", "agreement", "performance")


@dataclass(frozen=True)
class PromptTrials:
    """One prompt's trials of both runs, pooled, as the six metrics read each trial."""

    #: True for the current run's trials (the observed labels).
    current: BoolArray
    #: Cosine similarity of every pair of trials' answers (rows of trials without one: any).
    similarity: FloatArray
    #: A valid (non-empty) answer, read by consistency and agreement.
    answered: BoolArray
    #: The performance heuristic of the trial's response; NaN when it has none.
    performance: FloatArray
    #: Latency in seconds of a successful trial; NaN when it has none.
    latency: FloatArray
    #: The trial failed (an error class).
    failed: BoolArray
    #: The trial's cost in USD (NaN for a trial without one); None when cost is not compared.
    cost: FloatArray | None = None

    def __post_init__(self) -> None:
        size = self.current.shape[0]
        columns = (self.answered, self.performance, self.latency, self.failed)
        if self.similarity.shape != (size, size) or any(
            a.shape != (size,) for a in (*columns, *([] if self.cost is None else [self.cost]))
        ):
            raise ValueError("every field of PromptTrials must describe the same trials")


@dataclass(frozen=True)
class NoChange:
    """One metric's permutation test."""

    #: The observed statistic (current − baseline, weighted over prompts for the scores).
    estimate: float
    #: Standard deviation of the statistic over the relabellings (its null spread).
    null_standard_error: float
    #: estimate / null_standard_error (0 when the spread is 0).
    z: float
    #: One-sided p-value for a change downwards: `(1 + #{T* ≤ T}) / (1 + B)`.
    p_lower: float
    #: One-sided p-value for a change upwards.
    p_higher: float
    #: Prompts whose trials were relabelled.
    prompts: int
    #: Relabellings drawn (B).
    resamples: int
    #: The smallest p-value this design can give: 1 / (distinct relabellings), at least
    #: 1 / (1 + B).
    smallest_p: float
    #: The statistic on the observed labels (row 0) and on every relabelling (rows 1…B), the
    #: same relabellings for every metric: what a joint adjustment over the metrics reads.
    statistics: FloatArray = field(repr=False, compare=False, default_factory=lambda: np.empty(0))


def _labels(rng: np.random.Generator, draws: int, size: int, current: int) -> BoolArray:
    """`draws` uniformly random subsets of `current` of `size` trials, as boolean rows."""
    ranks = rng.random((draws, size)).argsort(axis=1).argsort(axis=1)
    return np.asarray(ranks < current, dtype=np.bool_)


def _pair_means(side: FloatArray, matrix: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Mean of `matrix` (zero diagonal) over the pairs i < j of each row's trials, and the
    number of trials of each row (`side`: 0/1 rows)."""
    count = side.sum(axis=1)
    pairs = count * (count - 1) / 2
    total = ((side @ matrix) * side).sum(axis=1) / 2
    return np.divide(total, pairs, out=np.zeros_like(total), where=pairs > 0), count


def _score_changes(trials: PromptTrials, labels: BoolArray) -> dict[str, FloatArray]:
    """`Δ_p` of consistency, agreement and performance for each row of `labels`."""
    answered = trials.answered.astype(np.float64)
    new = labels * answered
    old = (~labels) * answered
    similarity = trials.similarity.copy()
    np.fill_diagonal(similarity, 0.0)
    distance = np.clip(1.0 - trials.similarity, 0.0, 2.0)
    np.fill_diagonal(distance, 0.0)
    squared = distance**2
    changes: dict[str, FloatArray] = {}
    scores: dict[str, list[FloatArray]] = {"consistency": [], "agreement": []}
    counts = []
    for side in (new, old):
        agreement, count = _pair_means(side, similarity)
        mean, _ = _pair_means(side, distance)
        second, _ = _pair_means(side, squared)
        spread = np.sqrt(np.maximum(second - mean**2, 0.0))
        safe = np.where(mean > _EPS, mean, 1.0)
        consistency = np.where(mean > _EPS, np.maximum(0.0, 1.0 - spread / safe), 1.0)
        scores["consistency"].append(np.minimum(1.0, consistency))
        scores["agreement"].append(np.clip(agreement, -1.0, 1.0))
        counts.append(count)
    both = (counts[0] >= 2) & (counts[1] >= 2)
    for name, (current, baseline) in scores.items():
        changes[name] = np.where(both, current - baseline, 0.0)
    scored = np.isfinite(trials.performance)
    values = np.where(scored, trials.performance, 0.0)
    new_n = (labels & scored).sum(axis=1)
    old_n = (~labels & scored).sum(axis=1)
    new_sum = (labels * values).sum(axis=1)
    old_sum = ((~labels) * values).sum(axis=1)
    present = (new_n > 0) & (old_n > 0)
    changes["performance"] = np.where(
        present, new_sum / np.maximum(new_n, 1) - old_sum / np.maximum(old_n, 1), 0.0
    )
    return changes


def _cost_changes(trials: PromptTrials, labels: BoolArray) -> FloatArray:
    """`Δ_p` of cost per trial for each row of `labels`: the current-labelled priced trials'
    mean cost minus the baseline-labelled ones' (0 when a side has none)."""
    cost = trials.cost if trials.cost is not None else np.full(labels.shape[1], math.nan)
    priced = np.isfinite(cost)
    values = np.where(priced, cost, 0.0)
    new_n = (labels & priced).sum(axis=1)
    old_n = (~labels & priced).sum(axis=1)
    new_mean = (labels * values).sum(axis=1) / np.maximum(new_n, 1)
    old_mean = ((~labels) * values).sum(axis=1) / np.maximum(old_n, 1)
    return np.asarray(np.where((new_n > 0) & (old_n > 0), new_mean - old_mean, 0.0))


def _row_percentiles(
    values: FloatArray, mask: BoolArray, q: float
) -> tuple[FloatArray, FloatArray]:
    """numpy's linear percentile of each row's masked values, and the count of each row."""
    filled = np.where(mask, values[None, :], np.inf)
    ordered = np.sort(filled, axis=1)
    count = mask.sum(axis=1)
    position = q / 100 * np.maximum(count - 1, 0)
    low = np.floor(position).astype(np.intp)
    high = np.minimum(low + 1, np.maximum(count - 1, 0))
    rows = np.arange(ordered.shape[0])
    lower, upper = ordered[rows, low], ordered[rows, high]
    fraction = position - low
    # rows with fewer than 2 values read infinities (their statistic is set to 0 by the caller)
    with np.errstate(invalid="ignore"):
        result = np.where(upper > lower, lower + fraction * (upper - lower), lower)
    return np.asarray(result, dtype=np.float64), count


def _pooled_statistics(trials: Sequence[PromptTrials], labels: BoolArray) -> dict[str, FloatArray]:
    """Latency p50 and p95 and the error rate, current − baseline, for each row of `labels`."""
    latency = np.concatenate([t.latency for t in trials])
    failed = np.concatenate([t.failed for t in trials])
    timed = np.isfinite(latency)
    values = np.where(timed, latency, 0.0)
    found: dict[str, FloatArray] = {}
    for name, q in (("latency_p50", 50.0), ("latency_p95", 95.0)):
        new, new_count = _row_percentiles(values, labels & timed, q)
        old, old_count = _row_percentiles(values, ~labels & timed, q)
        found[name] = np.where((new_count >= 2) & (old_count >= 2), new - old, 0.0)
    new_size = labels.sum(axis=1)
    old_size = labels.shape[1] - new_size
    new_rate = (labels & failed).sum(axis=1) / np.maximum(new_size, 1)
    old_rate = (~labels & failed).sum(axis=1) / np.maximum(old_size, 1)
    found["error_rate"] = 100 * (new_rate - old_rate)
    return found


def _log_relabellings(trials: Sequence[PromptTrials]) -> float:
    """log of Π_p C(N_p, n_p): the number of distinct relabellings."""
    total = 0.0
    for t in trials:
        size, current = t.current.shape[0], int(t.current.sum())
        total += math.lgamma(size + 1) - math.lgamma(current + 1) - math.lgamma(size - current + 1)
    return total


def pooled_digest(trials: Sequence[PromptTrials]) -> int:
    """A number that depends on each prompt's pooled trials but not on which run each came from
    (their values sorted within the prompt), to seed the relabellings with.

    With one fixed seed, every comparison of the same shape would draw the same relabellings,
    and a Monte Carlo p-value is only exact on average over its draws: the same draws for every
    comparison would make its small error systematic. Seeding with the user's seed and this
    digest keeps the result reproducible while the draws vary with the data; the digest does
    not see the labels, so the draws stay independent of them."""
    digest = hashlib.sha256()
    for t in trials:
        for values in (t.latency, t.performance):
            digest.update(np.sort(np.nan_to_num(values, nan=-1.0)).tobytes())
        digest.update(np.array([t.failed.sum(), t.answered.sum(), t.current.sum()]).tobytes())
        digest.update(np.sort(np.round(t.similarity, 9), axis=None).tobytes())
        if t.cost is not None:
            digest.update(np.sort(np.nan_to_num(t.cost, nan=-1.0)).tobytes())
    return int.from_bytes(digest.digest()[:8], "big")


def permutation_result(statistic: FloatArray, prompts: int, smallest: float) -> NoChange:
    """The test of one metric from its statistic on every row (row 0: the observed labels)."""
    observed, null = float(statistic[0]), statistic[1:]
    draws = null.size
    spread = float(np.std(null, ddof=1)) if draws > 1 else 0.0
    # relabellings giving the observed value up to rounding count as at least as extreme
    tolerance = 1e-9 * (1.0 + abs(observed))
    below = int(np.sum(null <= observed + tolerance))
    above = int(np.sum(null >= observed - tolerance))
    return NoChange(
        estimate=observed,
        null_standard_error=spread,
        z=observed / spread if spread > 0 else 0.0,
        p_lower=(1 + below) / (1 + draws),
        p_higher=(1 + above) / (1 + draws),
        prompts=prompts,
        resamples=draws,
        smallest_p=smallest,
        statistics=statistic,
    )


def permutation_tests(
    trials: Sequence[PromptTrials], *, rng: np.random.Generator, resamples: int
) -> dict[str, NoChange]:
    """Every metric's stratified permutation test of no change (`resamples` relabellings).

    `trials`: the shared prompts, each with both runs' trials. Prompts without trials in both
    runs are left out. Empty when no prompt is left.
    """
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    kept = [
        t for t in trials if t.current.shape[0] and 0 < int(t.current.sum()) < t.current.shape[0]
    ]
    if not kept:
        return {}
    labels = []
    priced = any(t.cost is not None for t in kept)
    names = (*_SCORES, "cost") if priced else _SCORES
    changes: dict[str, list[FloatArray]] = {name: [] for name in names}
    for t in kept:
        size, current = t.current.shape[0], int(t.current.sum())
        rows = np.vstack([t.current[None, :], _labels(rng, resamples, size, current)])
        labels.append(rows)
        for name, values in _score_changes(t, rows).items():
            changes[name].append(values)
        if priced:
            changes["cost"].append(_cost_changes(t, rows))
    smallest = max(math.exp(-min(_log_relabellings(kept), 700.0)), 1 / (1 + resamples))
    results: dict[str, NoChange] = {}
    for name in names:
        # the mean over prompts of each prompt's change: every prompt counts once, as in the
        # published difference
        results[name] = permutation_result(
            np.mean(np.vstack(changes[name]), axis=0), len(kept), smallest
        )
    for name, statistic in _pooled_statistics(kept, np.hstack(labels)).items():
        results[name] = permutation_result(statistic, len(kept), smallest)
    return {name: results[name] for name in TESTED if name in results}
