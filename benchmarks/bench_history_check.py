"""History change alarms (`plumbline.stats.change.detect_change`, the function `history check`
calls for every series): false alarms over a year, a nightly family, extra variance, delay.

Each series is a nightly leaderboard: run `i` scores one model on `n` questions, each answered
right with probability p, and publishes the leaderboard's own category interval
(`leaderboard.scores.category_bounds_batch`, Wilson). `detect_change` runs with its defaults
(α = 5% within 365 runs, extra variance estimated) on the whole series; its `alarms` are the
checks after every run.

- **null**: nothing changes over 365 runs: the share of series with any alarm within 200 and
  within 365 runs (target: at most 5% + two Monte Carlo standard errors).
- **family**: a nightly job of 9 series (3 models × 3 categories, n = 50, p 0.3–0.9) checked
  together (`family=9`, as `history check` does): the share of years with any failing night,
  and of nights failing (a failed night stays failed until acknowledged, as with
  `--fail-on-change`).
- **extra variance**: the true score moves night to night by τ = 0.5 (and 1) standard errors of
  one run beyond the interval: with τ estimated (the default), given exactly, and assumed 0.
- **delay**: a 3-SE drop (δ·√(p(1−p)/n)) from run 26 on (25 runs before), n = 50, p 0.7 and 0.98:
  the median delay (1 = found with the first changed run) against an oracle CUSUM that knows
  the level before, each run's true standard error and the change's size and direction
  (one-sided, k = |δ|/2, threshold for the same 5% chance of a false alarm within 365 runs).
  Target: ours at most 2× the oracle's.

    PYTHONPATH=src python benchmarks/bench_history_check.py [--series 1000] [--years 300] [--seed 1]

`--quick` is a small seeded version (about two minutes). Exits 1 if a target fails.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from plumbline.leaderboard.scores import category_bounds_batch
from plumbline.stats.change import detect_change
from plumbline.stats.cusum import cusum_design

ALPHA = 0.05
YEAR = 365
SHORT = 200
NULL_CELLS = ((20, 0.5), (50, 0.5), (50, 0.9), (200, 0.1), (200, 0.7), (2000, 0.5), (2000, 0.98))
CHANGE_AT = 25
DELAY_RUNS = 60
FAMILY_RATES = (0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.9)

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Series:
    estimates: FloatArray
    lows: FloatArray
    highs: FloatArray
    ns: IntArray


def leaderboard_series(rng: np.random.Generator, sizes: IntArray, truths: FloatArray) -> Series:
    """One model's category score per run, through the leaderboard's own (Wilson) interval."""
    estimates = np.empty(sizes.size)
    lows = np.empty(sizes.size)
    highs = np.empty(sizes.size)
    for n in np.unique(sizes):
        runs = np.flatnonzero(sizes == n)
        p = np.clip(truths[runs, None], 0.0, 1.0)
        means = (rng.random((runs.size, int(n))) < p).astype(np.float64)
        low, high, _ = category_bounds_batch(means)
        estimates[runs] = means.mean(axis=1)
        lows[runs] = low
        highs[runs] = high
    return Series(estimates, lows, highs, sizes)


def check(series: Series, **options: float | int | None) -> npt.NDArray[np.bool_]:
    found = detect_change(
        series.estimates, series.lows, series.highs, series.ns.tolist(), **options
    )
    return np.asarray(found.alarms)


def first(alarms: npt.NDArray[np.bool_]) -> int | None:
    return int(np.argmax(alarms)) if alarms.any() else None


def allowance(count: int) -> float:
    return 2 * math.sqrt(ALPHA * (1 - ALPHA) / count)


def rate_text(hits: int, count: int) -> str:
    return f"{100 * hits / count:.1f}% ({hits}/{count})"


def null_cells(rng: np.random.Generator, count: int) -> bool:
    print("| scores | n per run | p | series | any alarm within 200 | within 365 |")
    print("|---|---|---:|---:|---:|---:|")
    ok = True
    sizes_of: list[tuple[str, Callable[[], IntArray], float]] = [
        (f"{n:,}", lambda n=n: np.full(YEAR, n), p) for n, p in NULL_CELLS
    ]
    log_uniform = lambda: np.exp(rng.uniform(np.log(20), np.log(2000), YEAR)).astype(np.int64)  # noqa: E731
    alternating = lambda: np.array([20, 2000] * (YEAR // 2 + 1))[:YEAR]  # noqa: E731
    sizes_of += [
        ("20–2,000 (log-uniform)", log_uniform, 0.5),
        ("20 and 2,000 alternating", alternating, 0.02),
        ("20 and 2,000 alternating", alternating, 0.5),
    ]
    for label, sizes, p in sizes_of:
        short = year = 0
        for _ in range(count):
            ns = sizes()
            at = first(check(leaderboard_series(rng, ns, np.full(YEAR, p))))
            short += at is not None and at < SHORT
            year += at is not None
        ok &= year / count <= ALPHA + allowance(count)
        print(
            f"| binary | {label} | {p} | {count:,} | {rate_text(short, count)} | "
            f"{rate_text(year, count)} |",
            flush=True,
        )
    return ok


def family_years(rng: np.random.Generator, years: int) -> bool:
    failed_years = 0
    failed_nights = 0
    for _ in range(years):
        firsts = []
        for p in FAMILY_RATES:
            series = leaderboard_series(rng, np.full(YEAR, 50), np.full(YEAR, p))
            firsts.append(first(check(series, family=len(FAMILY_RATES))))
        alarmed = [f for f in firsts if f is not None]
        if alarmed:
            failed_years += 1
            failed_nights += YEAR - min(alarmed)
    print(
        f"| 9 series (3 models × 3 categories), n 50 | {years:,} years | "
        f"{rate_text(failed_years, years)} | {100 * failed_nights / (years * YEAR):.2f}% |"
    )
    return failed_years / years <= ALPHA + allowance(years)


def extra_variance_cells(rng: np.random.Generator, count: int) -> None:
    print("| τ (SE of one run) | n | p | assumption | series | any alarm within 365 |")
    print("|---:|---:|---:|---|---:|---:|")
    for tau, n, p in ((0.5, 50, 0.7), (0.5, 200, 0.7), (1.0, 2000, 0.5)):
        se = math.sqrt(p * (1 - p) / n)
        hits = {"estimated (default)": 0, "given exactly": 0, "assumed 0": 0}
        for _ in range(count):
            truths = p + tau * se * rng.standard_normal(YEAR)
            series = leaderboard_series(rng, np.full(YEAR, n), truths)
            hits["estimated (default)"] += check(series).any()
            hits["given exactly"] += check(series, extra_variance=(tau * se) ** 2).any()
            hits["assumed 0"] += check(series, extra_variance=0.0).any()
        for name, value in hits.items():
            print(
                f"| {tau} | {n} | {p} | {name} | {count:,} | {rate_text(value, count)} |",
                flush=True,
            )


def oracle_delay(series: Series, p: float, direction: float, shift: float) -> int | None:
    """The one-sided CUSUM that knows p, the runs' true SEs and the change (k = |δ|/2)."""
    design = cusum_design(2 * ALPHA, YEAR, abs(shift) / 2)  # one side: α within 365 runs
    z = direction * (series.estimates - p) / np.sqrt(p * (1 - p) / series.ns)
    s = 0.0
    for t, value in enumerate(z):
        s = max(0.0, s + value - design.reference)
        if s > design.threshold:
            return t
    return None


def delays(rng: np.random.Generator, count: int) -> bool:
    print(
        "| p before | n | δ (SE) | series | ours: median delay | found by run 60 | "
        "oracle CUSUM: median delay | ratio | early alarms |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ok = True
    for p, n, shift in ((0.7, 50, -3.0), (0.98, 50, -3.0), (0.7, 50, -2.0), (0.7, 50, -5.0)):
        ours: list[float] = []
        oracle: list[float] = []
        early = found = 0
        for _ in range(count):
            se = math.sqrt(p * (1 - p) / n)
            truths = np.where(np.arange(DELAY_RUNS) >= CHANGE_AT, p + shift * se, p)
            series = leaderboard_series(rng, np.full(DELAY_RUNS, n), truths)
            at = first(check(series))
            if at is not None and at < CHANGE_AT:
                early += 1
                continue
            found += at is not None
            ours.append(math.inf if at is None else at - CHANGE_AT + 1)
            o = oracle_delay(series, p, math.copysign(1.0, shift), shift)
            oracle.append(math.inf if o is None or o < CHANGE_AT else o - CHANGE_AT + 1)
        mine, theirs = float(np.median(ours)), float(np.median(oracle))
        ratio = mine / theirs
        if shift == -3.0:
            ok &= ratio <= 2.0
        print(
            f"| {p} | {n} | {shift:+.0f} | {count:,} | {mine:.0f} | "
            f"{rate_text(found, len(ours))} | {theirs:.0f} | {ratio:.2f} | "
            f"{rate_text(early, count)} |",
            flush=True,
        )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=1000, help="series per null cell")
    parser.add_argument("--years", type=int, default=300, help="simulated years of the family")
    parser.add_argument("--delay-series", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="100 series, 60 years, 200 delays")
    parser.add_argument("--only", choices=("null", "family", "extra", "delay"), default=None)
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.series, arguments.years, arguments.delay_series = 100, 60, 200
    rng = np.random.default_rng(arguments.seed)
    started = time.perf_counter()
    ok = True
    if arguments.only in (None, "delay"):
        ok &= delays(rng, arguments.delay_series)
    if arguments.only in (None, "null"):
        ok &= null_cells(rng, arguments.series)
    if arguments.only in (None, "family"):
        ok &= family_years(rng, arguments.years)
    if arguments.only in (None, "extra"):
        extra_variance_cells(rng, arguments.series)
    print(f"({time.perf_counter() - started:.0f} s) targets {'met' if ok else 'MISSED'}")
    if not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
