"""Adaptive leaderboard runs, simulated through the procedure `plumbline run --adaptive` uses.

Each simulated run draws a population of questions with known scores for every model (an
item-response model: P(correct) = expit(a_q (θ_m − b_q)), a_q lognormal around `--slope`,
b_q ~ N(0, 1.5²); graded scores are Beta draws around that probability), in three categories
of 60%, 20% and 20% of the questions with the SA Bench weights 0.34 / 0.33 / 0.33. The models'
abilities are set so their expected weighted overall scores have the cell's gaps. The truth of
a pair is the sign of its overall difference on the population drawn (the estimand of the
guarantee). Each run goes through `plumbline.leaderboard.adaptive.replay`, the same
`AdaptiveProcedure` loop a live run drives, in a fresh seeded order.

Printed per cell: the family-wise rate of a run with any pair whose status is false for the
population (`leaderboard.adaptive.disagrees`: decided apart by more than δ, a tie less than δ
apart, within the margin not the other way round by δ or more), with its exact binomial 95%
interval, and the median share of the full run's calls used.

    python benchmarks/bench_adaptive.py                 # every cell, 1,000 runs each
    python benchmarks/bench_adaptive.py --runs 100 --only gaps5
    python benchmarks/bench_adaptive.py --replay-only    # 100 replays of 5 models × 2,000

The replay timing (`leaderboard --replay-adaptive 100`'s analysis, target under 10 s) is
printed after the cells.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.stats import binomtest

from plumbline.leaderboard.adaptive import AdaptiveSettings, disagrees, replay, replay_many
from plumbline.leaderboard.adaptive_scores import (
    QuestionScores,
    draw_order,
    weighted_values,
)

SHARES = (0.6, 0.2, 0.2)
WEIGHTS = [0.34, 0.33, 0.33]
CENTRE = 0.6


@dataclass(frozen=True)
class Cell:
    name: str
    gaps: tuple[float, ...]  # between neighbours, from the weakest model up
    questions: int
    graded: bool = False
    margin: float = 0.0
    slope: float = 1.5
    target_share: float | None = None


CELLS = (
    Cell("gaps5", (0.05,) * 4, 10_000, target_share=0.25),
    Cell("gaps5-graded", (0.05,) * 4, 10_000, graded=True, target_share=0.25),
    Cell("gaps5-10models", (0.05,) * 9, 10_000, target_share=0.25),
    Cell("gaps10", (0.10,) * 4, 2_000),
    Cell("frontier", (0.0, 0.0, 0.05, 0.20), 5_000),
    Cell("all-equal", (0.0,) * 5, 2_000),
    Cell("gaps1-margin", (0.01,) * 4, 10_000, margin=0.02, target_share=0.50),
    Cell("gaps1-margin-graded", (0.01,) * 4, 10_000, graded=True, margin=0.02, target_share=0.50),
    Cell("frontier-margin", (0.0, 0.0, 0.05, 0.20), 5_000, margin=0.02),
    Cell("gaps1-5-margin", (0.01, 0.05, 0.01, 0.05), 10_000, margin=0.02, target_share=0.50),
    Cell("gaps1-5-margin-100k", (0.01, 0.05, 0.01, 0.05), 100_000, margin=0.02, target_share=0.50),
    Cell("gaps0-20-graded", (0.0, 0.05, 0.10, 0.20, 0.0, 0.02), 5_000, graded=True),
)


def _abilities(targets: np.ndarray, slopes: np.ndarray, difficulty: np.ndarray) -> np.ndarray:
    """The ability giving each target mean accuracy over the questions (bisection)."""
    low = np.full(targets.size, -15.0)
    high = np.full(targets.size, 15.0)
    for _ in range(40):  # the bracket's 30 shrinks below 1e-10
        middle = (low + high) / 2
        mean = expit(slopes[None, :] * (middle[:, None] - difficulty[None, :])).mean(axis=1)
        low = np.where(mean < targets, middle, low)
        high = np.where(mean < targets, high, middle)
    return (low + high) / 2


def population(cell: Cell, rng: np.random.Generator) -> QuestionScores:
    """One population of questions and every model's score on each."""
    count = len(cell.gaps) + 1
    levels = np.concatenate([[0.0], np.cumsum(cell.gaps)])
    targets = CENTRE + levels - levels.mean()
    slopes = np.exp(rng.normal(np.log(cell.slope), 0.3, cell.questions))
    difficulty = rng.normal(0.0, 1.5, cell.questions)
    theta = _abilities(targets, slopes, difficulty)
    p = expit(slopes[None, :] * (theta[:, None] - difficulty[None, :]))
    if cell.graded:
        concentration = 4.0
        scores = rng.beta(p * concentration + 1e-3, (1 - p) * concentration + 1e-3)
    else:
        scores = (rng.random(p.shape) < p).astype(float)
    category_of = rng.choice(3, size=cell.questions, p=SHARES).astype(np.int64)
    return QuestionScores(
        models=[f"m{index}" for index in range(count)],
        scores=scores,
        category_of=category_of,
        categories=["a", "b", "c"],
        weights=WEIGHTS,
        labels=[str(index) for index in range(cell.questions)],
    )


def run_cell(cell: Cell, runs: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    settings = AdaptiveSettings(tie_margin=cell.margin, round_size=max(10, cell.questions // 100))
    wrong = 0
    shares = []
    for index in range(runs):
        scores = population(cell, rng)
        values, _ = weighted_values(scores.scores, scores.category_of, scores.weights)
        means = values.mean(axis=1)
        outcome = replay(scores.table(draw_order(cell.questions, seed * 100_003 + index)), settings)
        truths = [
            (pair.status, float(means[int(pair.first[1:])] - means[int(pair.second[1:])]))
            for pair in outcome.pairs
        ]
        wrong += any(disagrees(status, truth, cell.margin) for status, truth in truths)
        shares.append(outcome.share)
    interval = binomtest(wrong, runs).proportion_ci(0.95, method="exact")
    return {
        "fwer": wrong / runs,
        "fwer_low": interval.low,
        "fwer_high": interval.high,
        "median_share": float(np.median(shares)),
    }


def replay_timing() -> bool:
    """100 replays over 5 models × 2,000 questions: the analysis `--replay-adaptive 100` runs.
    The target is judged on the CPU time (the wall time on a shared machine is printed too)."""
    scores = population(Cell("timing", (0.03,) * 4, 2_000), np.random.default_rng(1))
    start, cpu = time.perf_counter(), time.process_time()
    report = replay_many(scores, 100, AdaptiveSettings())
    seconds, wall = time.process_time() - cpu, time.perf_counter() - start
    met = seconds < 10
    print(
        f"replay: 100 replays of 5 models × 2,000 questions in {seconds:.2f} s of CPU "
        f"({wall:.2f} s wall; median share {report.median_share:.1%}); target < 10 s: "
        f"{'met' if met else 'MISSED'}"
    )
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--only", help="comma-separated cell names")
    parser.add_argument("--replay-only", action="store_true", help="only the replay timing")
    args = parser.parse_args()
    if args.replay_only:
        return 0 if replay_timing() else 1
    chosen = [cell for cell in CELLS if not args.only or cell.name in args.only.split(",")]
    missed = False
    header = f"{'cell':<18} {'models':>6} {'N':>6} {'δ':>5} {'FWER [95% CI]':>22} {'share':>7}"
    print(f"{header}  target")
    for cell in chosen:
        start = time.perf_counter()
        found = run_cell(cell, args.runs, args.seed)
        fwer_ok = found["fwer_low"] <= 0.05
        share_ok = cell.target_share is None or found["median_share"] <= cell.target_share
        missed |= not (fwer_ok and share_ok)
        target = "FWER ≤ 5%" + (
            f", share ≤ {cell.target_share:.0%}" if cell.target_share is not None else ""
        )
        print(
            f"{cell.name:<18} {len(cell.gaps) + 1:>6} {cell.questions:>6} {cell.margin:>5g} "
            f"{found['fwer']:>7.2%} [{found['fwer_low']:.2%}, {found['fwer_high']:.2%}] "
            f"{found['median_share']:>7.1%}  {target}: "
            f"{'met' if fwer_ok and share_ok else 'MISSED'}"
            f"  ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )
    missed |= not replay_timing()
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
