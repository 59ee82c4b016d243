"""The error rate's test of no change when failures come in bursts: blocks of trials in time.

Provider incidents fail many consecutive calls: within one run the failures are not
independent, and relabelling single trials between the runs (`reliability.no_change`) gives a
null distribution far narrower than the spread of a run's failure share (with a mean burst of
6 trials at a 3% share, 8% false regressions at a 5% level). Here the unit relabelled is a
block of consecutive trials of one run, in the order of their recorded start times
(`TrialRecord.timestamp`; records with equal times keep their order in the file), so a burst
stays inside its block (Künsch 1989, Ann. Statist. 17(3), the moving-block idea; for
permutation tests of dependent series: Politis, Romano & Wolf 1999, "Subsampling", ch. 3).

Block length `L = max(⌈√n⌉, ⌈4 · b̄⌉)`, n the smaller run's trials and b̄ the mean length of a
run of consecutive failures over both runs (1 when none failed): the blocks grow with n (the
usual `n^{1/2}` order) and are long beside the bursts seen. Each run is cut into `⌈N / L⌉`
blocks of nearly equal length; under no change with bursts shorter than the blocks, the blocks
of both runs are exchangeable, and `p = (1 + #{T* at least as extreme}) / (1 + B)` is a valid
p-value (Phipson & Smyth 2010). A burst that crosses a block boundary, or one as long as a block,
leaves some dependence: the level is then approximate (measured in
`benchmarks/bench_reliability_regression.py`, docs/statistics.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from plumbline.records.trial_record import TrialRecord
from plumbline.reliability.no_change import NoChange, permutation_result
from plumbline.stats.arrays import BoolArray

#: Blocks are at least this many mean bursts long.
BURST_FACTOR = 4.0
BLOCK_METHOD = (
    "block permutation test of no change: blocks of consecutive trials of each run (in the "
    "order of their start times) relabelled between the runs, so a burst of failures moves as "
    "one unit (Künsch 1989; Politis, Romano & Wolf 1999); p = (1 + #{T* at least as extreme}) "
    "/ (1 + B) (Phipson & Smyth 2010); valid when failures come in bursts shorter than a block"
)


def failures_in_time(records: Sequence[TrialRecord]) -> BoolArray:
    """Each record's failure flag, records in the order of their start times (ties: file
    order; Python's sort is stable)."""
    ordered = sorted(records, key=lambda record: record.timestamp)
    return np.array([r.error_class is not None for r in ordered], dtype=np.bool_)


def mean_burst(*runs: BoolArray) -> float:
    """Mean length of the runs of consecutive failures over `runs` (1 when none failed)."""
    lengths: list[int] = []
    for failed in runs:
        padded = np.concatenate([[False], failed, [False]]).astype(np.int8)
        edges = np.diff(padded)
        lengths += (np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).tolist()
    return float(np.mean(lengths)) if lengths else 1.0


def block_length(old: BoolArray, new: BoolArray) -> int:
    """`max(⌈√n⌉, ⌈4 · b̄⌉)` (see the module docstring), at least 1."""
    smaller = min(old.size, new.size)
    return max(1, math.ceil(math.sqrt(smaller)), math.ceil(BURST_FACTOR * mean_burst(old, new)))


@dataclass(frozen=True)
class BlockTest:
    """The error rate's block permutation test and the blocks it relabelled."""

    test: NoChange
    #: Trials per block (the block length L; blocks are within one trial of it or shorter).
    block_length: int
    #: Blocks of the baseline and of the current run.
    baseline_blocks: int
    current_blocks: int


def _blocks(failed: BoolArray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Failures and trials of each of the `⌈N / L⌉` nearly equal blocks of a run."""
    parts = np.array_split(failed.astype(np.float64), max(1, math.ceil(failed.size / length)))
    return np.array([p.sum() for p in parts]), np.array([float(p.size) for p in parts])


def block_error_test(
    old: BoolArray, new: BoolArray, *, prompts: int, rng: np.random.Generator, resamples: int
) -> BlockTest | None:
    """The error rate's change, current − baseline in percentage points, tested by relabelling
    whole blocks of consecutive trials; None when a run has no trial."""
    if old.size == 0 or new.size == 0:
        return None
    length = block_length(old, new)
    old_failed, old_size = _blocks(old, length)
    new_failed, new_size = _blocks(new, length)
    failed = np.concatenate([old_failed, new_failed])
    size = np.concatenate([old_size, new_size])
    total, current = failed.size, new_failed.size
    drawn = rng.random((resamples, total)).argsort(axis=1).argsort(axis=1) < current
    labels = np.vstack([np.arange(total) >= old_failed.size, drawn])
    new_rate = (labels * failed).sum(axis=1) / (labels * size).sum(axis=1)
    old_rate = (~labels * failed).sum(axis=1) / (~labels * size).sum(axis=1)
    distinct = math.lgamma(total + 1) - math.lgamma(current + 1) - math.lgamma(total - current + 1)
    smallest = max(math.exp(-min(distinct, 700.0)), 1 / (1 + resamples))
    return BlockTest(
        test=permutation_result(100 * (new_rate - old_rate), prompts, smallest),
        block_length=length,
        baseline_blocks=old_failed.size,
        current_blocks=current,
    )


def design_effect(old: BoolArray, new: BoolArray) -> float:
    """How much bursts widen the error rate's sampling variance, from the blocks of the test.

    `deff = max(1, K/(K − 2) · Σ_r Σ_k (f_rk − p̂_r n_rk)² / Σ_r Σ_k n_rk p̂_r (1 − p̂_r))`
    over the blocks k of both runs r (f failures, n trials, p̂_r the run's share, K the blocks,
    two shares estimated): the blocks' spread around their run's share against the binomial
    spread of independent trials (a cluster design effect, Kish 1965, §5.4). 1 when no run has
    both failed and successful trials, or fewer than 3 blocks."""
    length = block_length(old, new)
    residual = binomial = 0.0
    count = 0
    for run in (old, new):
        failed, size = _blocks(run, length)
        share = float(failed.sum() / size.sum())
        residual += float(np.sum((failed - share * size) ** 2))
        binomial += float(np.sum(size * share * (1 - share)))
        count += failed.size
    if binomial <= 0 or count < 3:
        return 1.0
    return max(1.0, count / (count - 2) * residual / binomial)


def wilson_effective(failed: int, trials: int, design: float, z: float) -> tuple[float, float]:
    """Wilson's score interval of a share at the effective sample size `n / deff` (Korn &
    Graubard 1998, Survey Methodology 24(2): Wilson with an effective n for clustered data):
    `(p̂ + z²/2m ± z √(p̂(1 − p̂)/m + z²/4m²)) / (1 + z²/m)`, m = n / deff."""
    share = failed / trials
    m = trials / design
    centre = share + z * z / (2 * m)
    half = z * math.sqrt(share * (1 - share) / m + z * z / (4 * m * m))
    scale = 1 + z * z / m
    return max(0.0, (centre - half) / scale), min(1.0, (centre + half) / scale)
