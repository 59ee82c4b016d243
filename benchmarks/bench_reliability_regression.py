"""Regression check after a model update: false regressions and power over a misspecification grid.

Each simulated run is a set of trial records (`validation.coverage.simulated_records`: answers
drawn from per-prompt pools, lognormal latencies, 3% failures), analysed by
`reliability.analysis.analyze` and compared by `reliability.regression.compare_to_baseline`
with the CLI's defaults (seed 42, 2,000 resamples), exactly as `plumbline reliability NEW
--baseline OLD` does (`tests/reliability/test_regression_benchmark.py` checks that the CLI's
JSON equals this function's).

The grid (issue 37): how deterministic the prompts are (the Dirichlet concentration of each
prompt's answer probabilities, log-uniform over a range: `mixed` 0.03–5, from nearly
deterministic to erratic; `deterministic` 0.03–0.1; `erratic` 2–5) × how heavy the latency
tails are (lognormal σ 0.5, 1.5, 2.5) × prompts × trials per prompt. Rows:

- null cells: baseline and current drawn from the same model. "False regression" is the share
  of pairs in which any of the six metrics is `regressed` (claim: at most 5%);
- a bursty null cell (issue 45): the same model, its 3% failures in bursts of 6 consecutive
  trials on average in time (`in_bursts`: the trials run in a shuffled order, one second apart,
  as the probe records their start times);
- power cells, on the mixed prompts with σ 1.5: `erratic answers` (60% of each prompt's
  probability moved to the uniform distribution over its answers, caught as an agreement
  regression) and `latency +50%` (caught as a p50 or p95 regression).

    PYTHONPATH=src python benchmarks/bench_reliability_regression.py [--quick] [--runs 300]
        [--seed 0] [--json PATH]

`--quick` is the small seeded version the test suite runs (a few cells, few runs). Prints a
Markdown table (the one in docs/statistics.md) and exits 1 when the false-regression rates are
above 5% by more than Monte Carlo error allows: one-sided exact binomial tests against 5%, of
every null cell (Bonferroni over the null cells, so that an exact test fails none of them by
chance at 95%) and of all the null cells together (at 5%).
"""

from __future__ import annotations

import os

# a small matrix product per relabelling: BLAS threads on a shared machine only slow it down
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest

from plumbline.records.trial_record import ErrorClass
from plumbline.reliability.analysis import analyze
from plumbline.reliability.config import BenchmarkConfig
from plumbline.reliability.regression import compare_to_baseline
from plumbline.reliability.result import METRICS, BaselineComparison

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the repo root
from validation.coverage import (
    SimulatedModel,
    embedding_table,
    simulated_prompts,
    simulated_records,
)

#: The issue's realistic data: prompts from nearly deterministic to erratic, heavy tails.
MIXED = SimulatedModel(
    name="sim/model", concentration=(0.03, 5.0), log_concentration=True, latency_sigma=1.5
)
DETERMINISM = {"mixed": (0.03, 5.0), "deterministic": (0.03, 0.1), "erratic": (2.0, 5.0)}
TAILS = (0.5, 1.5, 2.5)
SIZES = ((5, 3), (5, 20), (8, 10), (20, 10), (60, 3), (60, 20))
#: 60 × 20 costs as much as the other sizes together: only the headline null cell runs it.
SMALLER = SIZES[:-1]
QUICK_SIZES = ((5, 3), (8, 10))
ERRATIC = 0.6
#: Mean burst of failures of the bursty cell (issue 45: 8.05% false regressions before blocks).
BURST = 6.0
BURSTY_NULL = f"no change, mixed prompts, σ 1.5, failures in bursts of {BURST:g} trials"
SLOWER = 1.5
FALSE_REGRESSION_LIMIT = 0.05
POWER_TARGET = 0.80
RUNS = 300
QUICK_RUNS = 12
CONFIG = BenchmarkConfig()
STAMP = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Scenario:
    """A baseline model and the current one (the same model in a null cell)."""

    name: str
    baseline: SimulatedModel
    current: SimulatedModel
    #: The metrics whose `regressed` counts as a hit (empty: a null cell).
    targets: tuple[str, ...] = ()
    #: prompts × trials per prompt of its cells.
    sizes: tuple[tuple[int, int], ...] = SMALLER
    #: The metrics that may be called regressed (`--test-metric`; empty: all six).
    tested: tuple[str, ...] = ()
    #: Mean length of a burst of failures in time (0: failures independent, as drawn by
    #: `simulated_records`); the share of failures stays the model's error rate.
    burst: float = 0.0

    @property
    def null(self) -> bool:
        return not self.targets


def null_scenario(determinism: str, sigma: float) -> Scenario:
    model = replace(MIXED, concentration=DETERMINISM[determinism], latency_sigma=sigma)
    return Scenario(f"no change, {determinism} prompts, σ {sigma:g}", model, model)


def scenarios(quick: bool) -> list[Scenario]:
    """The null cells (determinism × tails: the mixed prompts at every σ, the others at
    σ 1.5) and the two power cells; `quick`: the headline null cell at 5 × 3 and 8 × 10 and
    the agreement power cell at 8 × 10."""
    erratic = replace(MIXED, erratic=ERRATIC)
    if quick:
        return [
            replace(null_scenario("mixed", 1.5), sizes=QUICK_SIZES),
            Scenario("erratic answers (agreement)", MIXED, erratic, ("agreement",), ((8, 10),)),
        ]
    slower = replace(MIXED, latency_median=SLOWER * MIXED.latency_median)
    return [
        replace(null_scenario("mixed", 1.5), sizes=SIZES),
        *(null_scenario(d, 1.5) for d in ("deterministic", "erratic")),
        *(null_scenario("mixed", s) for s in TAILS if s != 1.5),
        Scenario("erratic answers (agreement)", MIXED, erratic, ("agreement",)),
        Scenario("latency +50%", MIXED, slower, ("latency_p50", "latency_p95")),
        # a family chosen in advance (`--test-metric agreement`): the level spent on it alone
        replace(
            null_scenario("mixed", 1.5),
            name="no change, mixed prompts, σ 1.5, --test-metric agreement",
            sizes=((8, 10),),
            tested=("agreement",),
        ),
        # provider incidents: failures in bursts of 6 trials on average, 3% of trials
        replace(null_scenario("mixed", 1.5), name=BURSTY_NULL, burst=BURST),
        Scenario(
            "erratic answers (agreement), --test-metric agreement",
            MIXED,
            erratic,
            ("agreement",),
            ((8, 10),),
            ("agreement",),
        ),
    ]


def simulated_pair(
    scenario: Scenario, prompts: int, trials: int, rng_key: Sequence[int]
) -> tuple[list[Any], list[Any], Callable[[Any], Any]]:
    """Baseline and current records on the same prompts (the same answer texts), and the
    embedding of every text they hold."""
    tag = "-".join(str(k) for k in rng_key) + "-"
    old_prompts = simulated_prompts(prompts, np.random.default_rng(rng_key), scenario.baseline, tag)
    new_prompts = simulated_prompts(prompts, np.random.default_rng(rng_key), scenario.current, tag)
    rng = np.random.default_rng([*rng_key, 1])
    if not scenario.burst:
        old_records = simulated_records(old_prompts, trials, rng, scenario.baseline)
        new_records = simulated_records(new_prompts, trials, rng, scenario.current)
        return old_records, new_records, embedding_table(old_prompts + new_prompts)
    runs = []
    for prompts_of, model in ((old_prompts, scenario.baseline), (new_prompts, scenario.current)):
        answered = simulated_records(prompts_of, trials, rng, replace(model, error_rate=0.0))
        runs.append(in_bursts(answered, rng, model.error_rate, scenario.burst))
    return runs[0], runs[1], embedding_table(old_prompts + new_prompts)


def in_bursts(
    records: list[Any], rng: np.random.Generator, share: float, burst: float
) -> list[Any]:
    """The records run in a shuffled order (as the probe runs its plan), one second apart, and
    failed in bursts: a two-state Markov chain over that order that fails with stationary
    probability `share`, bursts of geometric length with mean `burst` (a failure continues with
    probability 1 − 1/burst; one starts after a success with probability
    share / ((1 − share) · burst))."""
    start = share / ((1 - share) * burst)
    stay = 1 - 1 / burst
    order = rng.permutation(len(records))
    failing = bool(rng.random() < share)
    timed: list[Any] = [None] * len(records)
    for position, index in enumerate(order):
        record = records[index]
        update: dict[str, Any] = {"timestamp": STAMP + timedelta(seconds=position)}
        if failing:
            update |= {
                "error_class": ErrorClass.SERVER,
                "response": None,
                "latency_seconds": None,
                "timed_out": False,
            }
        timed[index] = record.model_copy(update=update)
        failing = bool(rng.random() < (stay if failing else start))
    return timed


def compare(
    old_records: list[Any], new_records: list[Any], embed: Any, tested: Sequence[str] = ()
) -> BaselineComparison:
    """What `plumbline reliability NEW --baseline OLD` computes, with its default settings (the
    current run analysed first, as the CLI does: an embedding model's batches are the same)."""
    current = analyze(new_records, embed, config=CONFIG)
    baseline = analyze(old_records, embed, config=CONFIG)
    return compare_to_baseline(
        baseline,
        old_records,
        current,
        new_records,
        embed,
        tested=tested or None,
        seed=CONFIG.random_seed,
        resamples=CONFIG.bootstrap_resamples,
    )


@dataclass
class Cell:
    """One scenario at one size: how often each verdict came out."""

    scenario: str
    prompts: int
    trials: int
    runs: int = 0
    regressed_any: int = 0
    #: Runs in which any metric was `improved` (false in a null cell).
    improved_any: int = 0
    hits: int = 0
    regressed_by_metric: dict[str, int] = field(default_factory=dict)
    #: Runs in which a metric was inconclusive because too few relabellings exist.
    untestable_by_metric: dict[str, int] = field(default_factory=dict)
    #: Null cells: per metric, (runs whose 99.17% change interval holds 0, runs with one).
    covered: dict[str, list[int]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.regressed_any / self.runs if self.runs else math.nan

    @property
    def power(self) -> float:
        return self.hits / self.runs if self.runs else math.nan

    def excess_pvalue(self) -> float:
        """One-sided exact binomial p-value of this many false regressions at a 5% rate."""
        return float(
            binomtest(self.regressed_any, self.runs, FALSE_REGRESSION_LIMIT, "greater").pvalue
        )


def run_cell(scenario: Scenario, prompts: int, trials: int, runs: int, seed: int) -> Cell:
    cell = Cell(scenario.name, prompts, trials)
    start = time.perf_counter()
    key = _key(scenario.name)
    for run in range(runs):
        old, new, embed = simulated_pair(
            scenario, prompts, trials, (seed, key, prompts, trials, run)
        )
        comparison = compare(old, new, embed, scenario.tested)
        regressed = {e.metric for e in comparison.entries if e.verdict == "regressed"}
        cell.runs += 1
        cell.regressed_any += bool(regressed)
        cell.improved_any += any(e.verdict == "improved" for e in comparison.entries)
        cell.hits += bool(regressed & set(scenario.targets))
        for metric in regressed:
            cell.regressed_by_metric[metric] = cell.regressed_by_metric.get(metric, 0) + 1
        for entry in comparison.entries:
            interval = entry.difference.interval
            if scenario.null and interval is not None and None not in (interval.low, interval.high):
                counts = cell.covered.setdefault(entry.metric, [0, 0])
                counts[0] += bool(interval.low <= 0.0 <= interval.high)  # type: ignore[operator]
                counts[1] += 1
            if entry.note.startswith("too few trials to test"):
                counts = cell.untestable_by_metric
                counts[entry.metric] = counts.get(entry.metric, 0) + 1
    cell.seconds = time.perf_counter() - start
    return cell


def _key(name: str) -> int:
    """A stable number for a scenario's name (Python's hash of a str changes per process)."""
    return sum((index + 1) * ord(char) for index, char in enumerate(name)) % 1_000_003


def run_grid(
    *,
    quick: bool,
    runs: int,
    seed: int,
    progress: Callable[[Cell], None] | None = None,
    only: Sequence[str] = (),
    sizes: Sequence[tuple[int, int]] = (),
) -> list[Cell]:
    """Every cell (`only`: scenarios whose name holds one of these; `sizes`: those sizes);
    each cell's draws depend on its scenario, size and `seed` only."""
    cells = []
    for scenario in scenarios(quick):
        if only and not any(part in scenario.name for part in only):
            continue
        for prompts, trials in scenario.sizes:
            if sizes and (prompts, trials) not in sizes:
                continue
            cell = run_cell(scenario, prompts, trials, runs, seed)
            cells.append(cell)
            if progress is not None:
                progress(cell)
    return cells


def _metric_counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{m} {counts[m]}" for m in METRICS if counts.get(m))


def table(cells: list[Cell]) -> str:
    """The Markdown table: one row per scenario, one column per size."""
    sizes = sorted({(c.prompts, c.trials) for c in cells}, key=lambda s: (s[0], s[1]))
    head = "| scenario | " + " | ".join(f"{p} × {t}" for p, t in sizes) + " |"
    lines = [head, "|---|" + "---:|" * len(sizes)]
    for name in dict.fromkeys(c.scenario for c in cells):
        row = {(c.prompts, c.trials): c for c in cells if c.scenario == name}
        values = []
        for size in sizes:
            cell = row.get(size)
            if cell is None:
                values.append("")
            elif name.startswith("no change"):
                values.append(f"{cell.rate:.1%}")
            else:
                values.append(f"{cell.power:.1%}")
        lines.append(f"| {name} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def level_misses(cells: Sequence[Cell]) -> list[str]:
    """The null cells whose false-regression rate is above 5% beyond Monte Carlo error, and the
    null cells together (see the module docstring)."""
    null = [c for c in cells if c.scenario.startswith("no change") and c.runs]
    misses = [
        f"{c.scenario}, {c.prompts} × {c.trials}: false regression {c.rate:.1%} "
        f"(p = {c.excess_pvalue():.2g} against 5%, below 0.05 / {len(null)} cells)"
        for c in null
        if c.excess_pvalue() < 0.05 / len(null)
    ]
    regressed = sum(c.regressed_any for c in null)
    runs = sum(c.runs for c in null)
    if runs:
        overall = binomtest(regressed, runs, FALSE_REGRESSION_LIMIT, "greater").pvalue
        if overall < 0.05:
            misses.append(
                f"all null cells: false regression {regressed / runs:.2%} of {runs} pairs "
                f"(p = {overall:.2g} against 5%)"
            )
    return misses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small seeded version")
    parser.add_argument("--runs", type=int, default=None, help=f"pairs per cell ({RUNS})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="write every cell as JSON")
    parser.add_argument(
        "--scenario", action="append", default=[], help="only scenarios whose name holds this"
    )
    parser.add_argument(
        "--size", action="append", default=[], help="only this size, PROMPTSxTRIALS (e.g. 8x10)"
    )
    args = parser.parse_args(argv)
    sizes = [tuple(int(v) for v in size.split("x")) for size in args.size]
    runs = args.runs if args.runs is not None else QUICK_RUNS if args.quick else RUNS

    def show(cell: Cell) -> None:
        what = (
            f"false regression {cell.rate:.1%}"
            if cell.scenario.startswith("no change")
            else f"caught {cell.power:.1%}"
        )
        detail = _metric_counts(cell.regressed_by_metric)
        covered = ", ".join(f"{m} {hit / n:.1%}" for m, (hit, n) in cell.covered.items() if n)
        untestable = _metric_counts(cell.untestable_by_metric)
        print(
            f"{cell.scenario}, {cell.prompts} × {cell.trials}: {what} ({cell.runs} pairs"
            + (f"; improved {cell.improved_any / cell.runs:.1%}" if cell.runs else "")
            + (f"; regressed: {detail}" if detail else "")
            + (f"; too few trials to test: {untestable}" if untestable else "")
            + (f"; change intervals holding 0: {covered}" if covered else "")
            + f"; {cell.seconds:.0f} s)",
            flush=True,
        )

    cells = run_grid(
        quick=args.quick,
        runs=runs,
        seed=args.seed,
        progress=show,
        only=args.scenario,
        sizes=[(p, t) for p, t in sizes],
    )
    print()
    print(table(cells))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(c) for c in cells], indent=1) + "\n")
    misses = level_misses(cells)
    for miss in misses:
        print(f"MISS: {miss}", file=sys.stderr)
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
