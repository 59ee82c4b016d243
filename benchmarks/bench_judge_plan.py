"""`judge plan` against the PPI estimator it plans for (issue 45 item 4): does the planned
number of labels reach the planned half-width, at positive and at negative judge–human
correlations?

For each correlation ρ the plan is `stats.label_budget(ρ, judged, half_width)` (what `judge
plan` prints); `--datasets` seeded datasets are then drawn with that many uniformly chosen
labels among `judged` questions (human truth Bernoulli(0.5), a 0/1 judge with phi correlation
ρ to it) and corrected with `stats.ppi_mean` (what `leaderboard --labels` publishes). The
table gives the mean half-width reached and the interval's coverage; the old plan (λ at −ρ,
as if a negative correlation helped) is shown for reference.

    python benchmarks/bench_judge_plan.py --datasets 2000 --seed 45
    python benchmarks/bench_judge_plan.py --quick      # 300 datasets

Exits 1 if the plan misses its half-width by more than 10% at any correlation.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from plumbline.stats.ppi import label_budget, ppi_mean

RATE = 0.5
CORRELATIONS = (-0.8, -0.5, 0.0, 0.5, 0.8)


def _dataset(rng: np.random.Generator, size: int, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """Human truth and a 0/1 judge with phi correlation `rho` (both rates 0.5)."""
    both = RATE * RATE + rho * RATE * (1 - RATE)
    human = rng.random(size) < RATE
    # P(judge = 1 | human = 1) = both / RATE; P(judge = 1 | human = 0) = (RATE − both) / (1 − RATE)
    judge = np.where(
        human, rng.random(size) < both / RATE, rng.random(size) < (RATE - both) / (1 - RATE)
    )
    return human.astype(float), judge.astype(float)


def reached(
    rho: float, labels: int, judged: int, datasets: int, rng: np.random.Generator
) -> tuple[float, float]:
    """(mean half-width, coverage of the human mean over the judged questions)."""
    widths, covered = [], 0
    for _ in range(datasets):
        human, judge = _dataset(rng, judged, rho)
        mask = np.zeros(judged, dtype=bool)
        mask[rng.choice(judged, size=labels, replace=False)] = True
        result = ppi_mean(human[mask], judge[mask], judge[~mask])
        widths.append((result.interval.high - result.interval.low) / 2)
        covered += result.interval.low <= human.mean() <= result.interval.high
    return float(np.mean(widths)), covered / datasets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=2000)
    parser.add_argument("--judged", type=int, default=1000)
    parser.add_argument("--half-width", type=float, default=0.08)
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.datasets = 300
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    failures = []
    print(f"{args.judged} judged, half-width {args.half_width}, {args.datasets:,} datasets each")
    print("| ρ | plan | λ planned | labels | half-width reached | coverage |")
    print("|---:|---|---:|---:|---:|---:|")
    for rho in CORRELATIONS:
        plan = label_budget(rho, args.judged, args.half_width, rate=RATE)
        old = label_budget(abs(rho), args.judged, args.half_width, rate=RATE)
        rows = [("judge plan", plan.lambda_planned, plan.labels_needed)]
        if rho < 0:
            rows.append(
                ("old: λ from the size of ρ (reference)", old.lambda_planned, old.labels_needed)
            )
        for name, lam, labels in rows:
            assert labels is not None
            width, coverage = reached(rho, labels, args.judged, args.datasets, rng)
            print(
                f"| {rho:+.1f} | {name} | {lam:.2f} | {labels} | {width:.3f} | {coverage:.1%} |",
                flush=True,
            )
            if name == "judge plan" and width > 1.1 * args.half_width:
                failures.append(f"ρ = {rho}: half-width {width:.3f}")
    print(f"\n{time.perf_counter() - start:.0f} s")
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
