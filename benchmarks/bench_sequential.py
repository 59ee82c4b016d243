"""Sequential A/B (plumbline.stats.sequential) against the naive "test after every pair".

Scenarios: paired binary outcomes, control 0.6 and treatment 0.6 / 0.7 / 0.75 / 0.8, planned
effect 0.10 (baseline 0.6), alpha 0.05, power 0.8, a look after every pair. Two pairings:

- independent: the two arms' outcomes are independent within a pair (planned with correlation 0);
- shared difficulty: each task has a latent difficulty z ~ N(0, 1) shared by both arms
  (Gaussian copula, latent correlation 0.6), planned with the outcome correlation it implies at
  0.6 vs 0.7.

Each scenario draws `--runs` (≥ 4,000) seeded sequences of `max_pairs` pairs and runs the same
vectorised stop rule `run_sequential` uses. Targets (issue 30): false decisions (better or worse
at 0.6 vs 0.6) ≤ 5%; power ≥ 80% at the planned effect with a cap ≤ 1.7× the fixed design;
mean pairs used ≤ 0.6× the fixed design at 1.5× the effect and ≤ 0.4× at 2×. The naive
baseline runs McNemar's exact test after every pair up to the same cap and stops at the first
p < 0.05. A continuous check (Gaussian differences, effect 0.2 SD) reports the same numbers.

    .venv/bin/python benchmarks/bench_sequential.py [--runs 10000] [--seed 1]

Exits 1 if a target fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from plumbline.stats.sequential import (
    SequentialPlan,
    plan_sequential,
    plan_sequential_continuous,
    stopping_points,
)

BASELINE = 0.6
EFFECT = 0.10
TREATMENTS = (0.6, 0.7, 0.75, 0.8)
LATENT_CORRELATION = 0.6
MIN_RUNS = 4000


@dataclass
class Row:
    pairing: str
    treatment: float
    better: float
    worse: float
    mean_pairs: float
    ratio: float
    coverage: float
    naive_false: float | None


def pairs(
    rng: np.random.Generator, runs: int, n: int, p_t: float, p_c: float, latent: float
) -> np.ndarray:
    """(runs × n) paired differences T − C; `latent` is the shared-difficulty correlation."""
    if latent == 0:
        t = rng.random((runs, n)) < p_t
        c = rng.random((runs, n)) < p_c
    else:
        z = rng.standard_normal((runs, n))
        root, rest = np.sqrt(latent), np.sqrt(1 - latent)
        t = root * z + rest * rng.standard_normal((runs, n)) < sps.norm.ppf(p_t)
        c = root * z + rest * rng.standard_normal((runs, n)) < sps.norm.ppf(p_c)
    return t.astype(np.float64) - c.astype(np.float64)


def outcome_correlation(p_t: float, p_c: float, latent: float) -> float:
    """The phi correlation of the two arms' outcomes under the Gaussian copula."""
    both = sps.multivariate_normal(mean=[0, 0], cov=[[1, latent], [latent, 1]]).cdf(
        [sps.norm.ppf(p_t), sps.norm.ppf(p_c)]
    )
    return float((both - p_t * p_c) / np.sqrt(p_t * (1 - p_t) * p_c * (1 - p_c)))


def naive_false_rate(d: np.ndarray, alpha: float) -> float:
    """McNemar's exact test after every pair, stop at the first p < alpha."""
    n = d.shape[1]
    # critical |b − c| for k discordant pairs: smallest c with two-sided exact p < alpha
    critical = np.full(n + 1, n + 1, dtype=np.int64)
    for k in range(1, n + 1):
        for c in range(k % 2 if k % 2 else 0, k + 1, 2):
            larger = (k + c) // 2
            p = min(1.0, 2 * float(sps.binom.sf(larger - 1, k, 0.5)))
            if p < alpha:
                critical[k] = c
                break
    s = np.abs(np.cumsum(d, axis=1)).astype(np.int64)
    k = np.cumsum(d != 0, axis=1)
    return float(np.mean(np.any(s >= critical[k], axis=1)))


def simulate(
    plan: SequentialPlan, d: np.ndarray, truth: float
) -> tuple[float, float, float, float]:
    first, code = stopping_points(d, plan)
    used = np.where(first >= 0, first + 1, plan.max_pairs)
    rows = np.arange(d.shape[0])
    sums = np.cumsum(d, axis=1)[rows, used - 1]
    bound = plan.boundary(np.cumsum(d * d, axis=1)[rows, used - 1])
    covered = np.abs(sums - used * truth) <= bound
    return (
        float(np.mean(code == 1)),
        float(np.mean(code == -1)),
        float(np.mean(used)),
        float(np.mean(covered)),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.runs < MIN_RUNS:
        parser.error(f"--runs must be at least {MIN_RUNS}")
    rng = np.random.default_rng(args.seed)
    failures: list[str] = []
    rows: list[Row] = []
    started = time.perf_counter()
    for pairing, latent in (("independent", 0.0), ("shared difficulty", LATENT_CORRELATION)):
        correlation = (
            0.0 if latent == 0 else outcome_correlation(BASELINE + EFFECT, BASELINE, latent)
        )
        plan = plan_sequential(BASELINE, EFFECT, correlation=correlation)
        print(
            f"{pairing}: outcome correlation {correlation:.3f}, fixed design "
            f"{plan.fixed_pairs} pairs, cap {plan.max_pairs} ({plan.cap_ratio:.2f}x), "
            f"exact power at the cap {plan.planned_power:.3f}, rho {plan.mixture:.2f}, "
            f"L {plan.level_constant:.3f}"
        )
        if plan.cap_ratio > 1.7:
            failures.append(f"{pairing}: cap {plan.cap_ratio:.2f}x > 1.7x")
        for p_t in TREATMENTS:
            d = pairs(rng, args.runs, plan.max_pairs, p_t, BASELINE, latent)
            better, worse, mean_pairs, coverage = simulate(plan, d, p_t - BASELINE)
            naive = naive_false_rate(d, plan.alpha) if p_t == BASELINE else None
            row = Row(
                pairing,
                p_t,
                better,
                worse,
                mean_pairs,
                mean_pairs / plan.fixed_pairs,
                coverage,
                naive,
            )
            rows.append(row)
            effect = p_t - BASELINE
            if effect == 0 and better + worse > 0.05:
                failures.append(f"{pairing}: false decisions {better + worse:.3f} > 0.05")
            if abs(effect - EFFECT) < 1e-9 and better < 0.80:
                failures.append(f"{pairing}: power {better:.3f} < 0.80")
            if abs(effect - 1.5 * EFFECT) < 1e-9 and row.ratio > 0.6:
                failures.append(f"{pairing}: mean pairs {row.ratio:.2f}x fixed > 0.6x at 1.5x")
            if abs(effect - 2 * EFFECT) < 1e-9 and row.ratio > 0.4:
                failures.append(f"{pairing}: mean pairs {row.ratio:.2f}x fixed > 0.4x at 2x")
    print()
    print(
        f"{'pairing':<18} {'arms':>10} {'better':>7} {'worse':>7} {'mean pairs':>10} "
        f"{'x fixed':>7} {'covered':>7} {'naive false':>11}"
    )
    for row in rows:
        naive = "" if row.naive_false is None else f"{row.naive_false:.3f}"
        print(
            f"{row.pairing:<18} {row.treatment:>4.2f} v 0.6 {row.better:>7.3f} {row.worse:>7.3f} "
            f"{row.mean_pairs:>10.1f} {row.ratio:>7.2f} {row.coverage:>7.3f} {naive:>11}"
        )
    # continuous differences (cost, time): Gaussian, effect 0.2 SD
    plan = plan_sequential_continuous(0.2, 1.0)
    print()
    print(
        f"continuous (effect 0.2 SD): fixed {plan.fixed_pairs}, cap {plan.max_pairs} "
        f"({plan.cap_ratio:.2f}x)"
    )
    for effect in (0.0, 0.2, 0.3, 0.4):
        d = rng.normal(effect, 1.0, size=(args.runs, plan.max_pairs))
        better, worse, mean_pairs, coverage = simulate(plan, d, effect)
        print(
            f"  effect {effect:.1f}: better {better:.3f} worse {worse:.3f} mean pairs "
            f"{mean_pairs:.1f} ({mean_pairs / plan.fixed_pairs:.2f}x) covered {coverage:.3f}"
        )
        if effect == 0 and better + worse > 0.05:
            failures.append(f"continuous: false decisions {better + worse:.3f} > 0.05")
    print(f"\n{args.runs} runs per scenario, {time.perf_counter() - started:.1f} s")
    for failure in failures:
        print(f"FAIL: {failure}")
    if not failures:
        print("all targets met")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
