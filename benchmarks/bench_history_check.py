"""History change alarms (plumbline.stats.change.detect_change): false alarms and detection delay.

Each series is a nightly leaderboard: run `i` scores one model on `n` questions, each answered
right with probability p (binary scores, or a rubric: the mean of 4 such answers per question),
and publishes the leaderboard's own category interval (`leaderboard.scores.category_bounds_batch`:
Wilson for 0/1 scores, Wilson at the effective n for a rubric) with `n` the number of questions.
`detect_change` is run on the whole series; its `alarms` are the checks after every run.

- **False alarms**: nothing changes over a 50-run series; the share of series with any alarm
  must be at most α = 0.05 (plus two Monte Carlo standard errors of allowance) at n = 20, 50, 200
  and 2,000 per run and p from 0.02 to 0.98, and with n varying within a series (each run's n
  drawn log-uniformly from 20 to 2,000; and runs of 20 and 2,000 alternating, where the small
  runs are skewed near 0 or 1).
- **Detection delay**: the true score drops by δ standard errors of one run
  (`δ·√(p(1−p)/n)`, p = 0.7), or an error rate of 5% rises by δ of them, from run 26 on (25 runs
  before); delay 1 = the alarm comes with the first changed run. Series with an alarm before
  the change are left out of the delays (they are the false alarms above) and counted.
- **Beyond the horizon**: 100-run series with nothing changing: alarms in runs 1–50 (the
  guarantee) and in runs 51–100 (the sliding 50-run window).

    PYTHONPATH=src python benchmarks/bench_history_check.py [--quick] [--seed 1]

`--quick` is a small seeded version (about a minute). Exits 1 if a target fails.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from plumbline.leaderboard.scores import category_bounds_batch
from plumbline.stats.change import ChangeDetection, detect_change

ALPHA = 0.05
HORIZON = 50
NULL_SIZES = (20, 50, 200, 2000)
NULL_RATES = (0.02, 0.1, 0.5, 0.9, 0.98)
RUBRIC_SIZES = (20, 200)
VARYING_RATES = (0.1, 0.5)
#: Small runs between large ones: skewed small runs are the hard case for a pooled spread.
ALTERNATING = np.array([20, 2000] * (50 // 2), dtype=np.int64)
ALTERNATING_RATES = (0.02, 0.1, 0.5)
SHIFTS = (2.0, 3.0, 5.0)
DELAY_SIZES = (20, 200, 2000)
#: (p before the change, direction): a score that drops, and an error rate near 0 that rises
DELAY_SCENARIOS = ((0.7, -1.0, DELAY_SIZES), (0.05, 1.0, (200, 2000)))
CHANGE_AT = 25  # 0-based index of the first changed run: 25 runs before it
#: Answers averaged per question in the rubric scenario (scores in quarters).
RUBRIC_ANSWERS = 4

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Series:
    estimates: FloatArray
    lows: FloatArray
    highs: FloatArray
    ns: IntArray


def leaderboard_series(
    rng: np.random.Generator, sizes: IntArray, truths: FloatArray, *, rubric: bool = False
) -> Series:
    """One model's category score per run, through the leaderboard's own interval."""
    estimates = np.empty(sizes.size)
    lows = np.empty(sizes.size)
    highs = np.empty(sizes.size)
    for n in np.unique(sizes):
        runs = np.flatnonzero(sizes == n)
        p = truths[runs, None]
        if rubric:
            means = rng.binomial(RUBRIC_ANSWERS, np.broadcast_to(p, (runs.size, n))) / (
                RUBRIC_ANSWERS
            )
        else:
            means = (rng.random((runs.size, n)) < p).astype(np.float64)
        low, high, _ = category_bounds_batch(means)
        estimates[runs] = means.mean(axis=1)
        lows[runs] = low
        highs[runs] = high
    return Series(estimates, lows, highs, sizes)


def check(series: Series) -> ChangeDetection:
    return detect_change(
        series.estimates,
        series.lows,
        series.highs,
        series.ns.tolist(),
        alpha=ALPHA,
        horizon=HORIZON,
    )


def first_alarm(series: Series) -> int | None:
    return check(series).first_alarm


def allowance(runs: int) -> float:
    """Two Monte Carlo standard errors of a rate of α over `runs` series."""
    return 2 * math.sqrt(ALPHA * (1 - ALPHA) / runs)


@dataclass(frozen=True)
class NullRow:
    label: str
    n: str
    p: str
    runs: int
    alarms: int

    @property
    def rate(self) -> float:
        return self.alarms / self.runs

    @property
    def ok(self) -> bool:
        return self.rate <= ALPHA + allowance(self.runs)


def null_rate(
    rng: np.random.Generator, label: str, runs: int, sizes_of: object, p: float, rubric: bool
) -> NullRow:
    alarms = 0
    for _ in range(runs):
        sizes = sizes_of(rng) if callable(sizes_of) else np.asarray(sizes_of)
        truths = np.full(sizes.size, p)
        alarms += first_alarm(leaderboard_series(rng, sizes, truths, rubric=rubric)) is not None
    fixed = None if callable(sizes_of) else np.asarray(sizes_of)
    if fixed is None:
        n_label = "20–2,000 (log-uniform)"
    elif np.all(fixed == fixed[0]):
        n_label = f"{int(fixed[0]):,}"
    else:
        n_label = "20 and 2,000 alternating"
    return NullRow(label, n_label, f"{p:g}", runs, alarms)


def varying_sizes(rng: np.random.Generator) -> IntArray:
    return np.round(np.exp(rng.uniform(math.log(20), math.log(2000), HORIZON))).astype(np.int64)


@dataclass(frozen=True)
class DelayRow:
    n: int
    base: float
    shift: float
    runs: int
    early: int
    delays: tuple[int, ...]
    #: |changed_at − the true first changed run| of each detected series
    misplaced: tuple[int, ...]

    def located(self, within: int) -> float:
        return float(np.mean(np.asarray(self.misplaced) <= within)) if self.misplaced else math.nan

    @property
    def detected(self) -> float:
        return len(self.delays) / max(1, self.runs - self.early)

    def quantile(self, q: float) -> float:
        if not self.delays:
            return math.nan
        return float(np.quantile(self.delays, q, method="inverted_cdf"))


def delay_row(rng: np.random.Generator, runs: int, n: int, base: float, shift: float) -> DelayRow:
    """`shift` standard errors of one run (negative: a drop) from run CHANGE_AT on."""
    sizes = np.full(HORIZON, n, dtype=np.int64)
    truths = np.where(
        np.arange(HORIZON) >= CHANGE_AT, base + shift * math.sqrt(base * (1 - base) / n), base
    )
    early = 0
    delays: list[int] = []
    misplaced: list[int] = []
    for _ in range(runs):
        result = check(leaderboard_series(rng, sizes, truths))
        if result.first_alarm is None or result.changed_at is None:
            continue
        if result.first_alarm < CHANGE_AT:
            early += 1
        else:
            delays.append(result.first_alarm - CHANGE_AT + 1)
            misplaced.append(abs(result.changed_at - CHANGE_AT))
    return DelayRow(n, base, shift, runs, early, tuple(delays), tuple(misplaced))


def fixed_questions_series(rng: np.random.Generator, n: int, p: float, rho: float) -> Series:
    """The same `n` questions every night: a latent difficulty per question (latent correlation
    `rho` between two answers to one question), so consecutive runs share their questions."""
    threshold = float(sps.norm.ppf(p))
    difficulty = math.sqrt(rho) * rng.standard_normal(n)
    latent = difficulty + math.sqrt(1 - rho) * rng.standard_normal((HORIZON, n))
    means = (latent < threshold).astype(np.float64)
    low, high, _ = category_bounds_batch(means)
    return Series(means.mean(axis=1), low, high, np.full(HORIZON, n, dtype=np.int64))


def assumption_rows(rng: np.random.Generator, runs: int) -> list[tuple[str, float]]:
    """False-alarm rates when the runs are not independent draws with the published noise."""
    n, p = 200, 0.5
    rows: list[tuple[str, float]] = []
    alarms = sum(
        first_alarm(fixed_questions_series(rng, n, p, 0.6)) is not None for _ in range(runs)
    )
    rows.append((f"the same {n} questions every night (latent difficulty, ρ = 0.6)", alarms / runs))
    sizes = np.full(HORIZON, n, dtype=np.int64)
    se = math.sqrt(p * (1 - p) / n)
    for extra in (0.25, 0.5, 1.0):
        alarms = 0
        for _ in range(runs):
            truths = np.clip(p + extra * se * rng.standard_normal(HORIZON), 0, 1)
            alarms += first_alarm(leaderboard_series(rng, sizes, truths)) is not None
        rows.append(
            (f"night-to-night noise of {extra:g} SE beyond the interval's (n = {n})", alarms / runs)
        )
    return rows


def beyond_horizon(rng: np.random.Generator, runs: int, n: int = 200, p: float = 0.5) -> str:
    length = 2 * HORIZON
    sizes = np.full(length, n, dtype=np.int64)
    truths = np.full(length, p)
    inside = later = checks_later = alarms_later = 0
    for _ in range(runs):
        series = leaderboard_series(rng, sizes, truths)
        result = detect_change(series.estimates, series.lows, series.highs, sizes.tolist())
        alarms = np.asarray(result.alarms)
        inside += bool(alarms[:HORIZON].any())
        later += bool(alarms[HORIZON:].any())
        checks_later += length - HORIZON
        alarms_later += int(alarms[HORIZON:].sum())
    return (
        f"{length}-run series, n = {n}, p = {p}, {runs:,} series: any alarm in runs 1–{HORIZON} "
        f"{inside / runs:.1%}; any alarm in runs {HORIZON + 1}–{length} {later / runs:.1%}; "
        f"alarms per check beyond the horizon {alarms_later / checks_later:.2%}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small seeded version")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    null_runs, varying_runs, delay_runs, beyond_runs = (
        (300, 30, 200, 100) if args.quick else (4000, 300, 2000, 1000)
    )
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    failures: list[str] = []

    rows: list[NullRow] = []
    for n in NULL_SIZES:
        for p in NULL_RATES:
            rows.append(null_rate(rng, "binary", null_runs, np.full(HORIZON, n), p, False))
    for n in RUBRIC_SIZES:
        rows.append(null_rate(rng, "rubric", null_runs, np.full(HORIZON, n), 0.5, True))
    for p in VARYING_RATES:
        rows.append(null_rate(rng, "binary", varying_runs, varying_sizes, p, False))
    for p in ALTERNATING_RATES:
        rows.append(null_rate(rng, "binary", null_runs, ALTERNATING, p, False))
    print(f"False alarms: any alarm in a {HORIZON}-run series with nothing changing (α = {ALPHA})")
    print()
    print("| scores | n per run | p | series | any alarm |")
    print("|---|---|---:|---:|---:|")
    for row in rows:
        mark = "" if row.ok else " ✗"
        print(f"| {row.label} | {row.n} | {row.p} | {row.runs:,} | {row.rate:.1%}{mark} |")
        if not row.ok:
            failures.append(f"false alarms {row.rate:.1%} at n {row.n}, p {row.p} ({row.label})")
    print()

    print(
        f"Detection delay: p moves by δ standard errors of one run from run {CHANGE_AT + 1} on "
        f"(runs to the first alarm; 1 = with the first changed run)"
    )
    print()
    print(
        "| p before | n | δ | found by run 50 | median delay | 90% within | changed_at exact "
        "| ±1 | early |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    delays: list[DelayRow] = []
    for base, sign, sizes in DELAY_SCENARIOS:
        for n in sizes:
            for shift in SHIFTS:
                row = delay_row(rng, delay_runs, n, base, sign * shift)
                delays.append(row)
                print(
                    f"| {base:g} | {n:,} | {sign * shift:+g} | {row.detected:.1%} | "
                    f"{row.quantile(0.5):g} | "
                    f"{row.quantile(0.9):g} | {row.located(0):.0%} | {row.located(1):.0%} | "
                    f"{row.early / row.runs:.1%} |"
                )
    print()
    print(beyond_horizon(rng, beyond_runs))
    print()
    print(f"When the assumptions fail (n = 200, p = 0.5, {null_runs:,} series each)")
    print()
    print("| series | any alarm |")
    print("|---|---:|")
    for label, rate in assumption_rows(rng, null_runs):
        print(f"| {label} | {rate:.1%} |")
    for row in delays:
        if abs(row.shift) == 5 and row.quantile(0.5) > 2:
            failures.append(f"median delay {row.quantile(0.5):g} > 2 runs at 5 SE, n {row.n}")
        if abs(row.shift) == 3 and row.quantile(0.5) > 3:
            failures.append(f"median delay {row.quantile(0.5):g} > 3 runs at 3 SE, n {row.n}")
    worst = max(rows, key=lambda row: row.rate - allowance(row.runs))
    slowest_3 = max(row.quantile(0.5) for row in delays if abs(row.shift) == 3)
    slowest_5 = max(row.quantile(0.5) for row in delays if abs(row.shift) == 5)
    print(
        f"\ntarget: false alarms <= {ALPHA:.0%} (+2 MC SE) in every row: highest {worst.rate:.1%} "
        f"(n {worst.n}, p {worst.p}, {worst.label})"
    )
    print(f"target: median delay <= 3 runs at 3 SE: highest {slowest_3:g}")
    print(f"target: median delay <= 2 runs at 5 SE: highest {slowest_5:g}")
    print(f"\n{time.perf_counter() - started:.0f} s (seed {args.seed})")
    for failure in failures:
        print(f"FAIL: {failure}")
    if not failures:
        print("all targets met")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
