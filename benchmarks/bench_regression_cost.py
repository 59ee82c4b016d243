"""Cost in the regression check (`reliability NEW --baseline OLD --margin cost=0.1 --price ...`):
false alarms with no change over all seven metrics, the coverage of cost's change interval, and
power against a real cost change.

The runs are those of `benchmarks/bench_reliability_regression.py` (answers from per-prompt
pools, lognormal latencies σ 1.5, 3% failures; `validation.coverage`), each successful trial
given token counts as a provider reports them: input tokens fixed per prompt (50–800), output
tokens `scale_p · LogNormal(0, σ)` with a per-prompt scale `200 · exp(0.5 · N(0, 1))` and
σ = 1 (heavy-tailed, as the leaderboard's cost simulation). Priced at $1 / $4 per million input
/ output tokens through `--price`. Compared by `reliability.regression.compare_to_baseline`
with cost asked for as the CLI asks (`--margin cost=0.1`: the family is the six metrics and
cost; `tests/reliability/test_regression_cost.py` checks that the CLI's JSON equals this
module's `compare`).

Rows: `no change` (both runs drawn from the same model: any `regressed` over the seven metrics
is a false alarm, claim at most 5%; cost's 99.29% interval should hold 0) and `cost +100%`
(output tokens × 2 in the current run: cost per trial rises by about 78%; a hit is cost
`regressed`).

    PYTHONPATH=src python benchmarks/bench_regression_cost.py [--runs 200] [--seed 0]
        [--sizes 8x10,20x10,60x5] [--quick]

Exit 1 when a no-change cell's false alarms exceed 5% beyond Monte Carlo error (one-sided exact
binomial test at 5%, Bonferroni over the null cells).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import binomtest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_reliability_regression
from bench_reliability_regression import CONFIG, MIXED, Scenario, simulated_pair
from plumbline.reliability.analysis import analyze
from plumbline.reliability.cost import Price
from plumbline.reliability.no_change import TESTED
from plumbline.reliability.regression import COST, CostPrices, compare_to_baseline
from plumbline.reliability.result import BaselineComparison

PRICE = Price(1.0, 4.0)
#: The CLI's `--price` for the simulated model.
PRICE_OPTION = f"{MIXED.name}=1:4"
COST_MARGIN = {COST: 0.10}
TOKEN_SIGMA = 1.0
COSTLIER = 2.0
SIZES = ((8, 10), (20, 10), (60, 5))
QUICK_SIZES = ((8, 10),)
LIMIT = 0.05


def with_tokens(
    records: list[Any], rng: np.random.Generator, factor: float = 1.0, seed: int = 0
) -> list[Any]:
    """The records with token counts on every successful trial (module docstring); the
    per-prompt sizes depend on the prompt and `seed` alone (both runs share them), the draws
    on `rng`; output tokens × `factor`."""
    sized: dict[str, tuple[int, float]] = {}
    found = []
    for record in records:
        if record.prompt_id not in sized:
            prompt_rng = np.random.default_rng([seed, int(record.prompt_id[1:])])
            sized[record.prompt_id] = (
                int(prompt_rng.integers(50, 800)),
                200.0 * float(np.exp(0.5 * prompt_rng.standard_normal())),
            )
        tokens_in, scale = sized[record.prompt_id]
        tokens_out = max(1, round(factor * scale * float(rng.lognormal(0.0, TOKEN_SIGMA))))
        if record.ok:
            record = record.model_copy(
                update={"input_tokens": tokens_in, "output_tokens": tokens_out}
            )
        found.append(record)
    return found


def priced_pair(
    prompts: int, trials: int, key: Sequence[int], factor: float
) -> tuple[list[Any], list[Any], Callable[[Any], Any]]:
    """Baseline and current runs of the same model with token counts; the current's output
    tokens × `factor`."""
    scenario = Scenario("cost", MIXED, MIXED)
    old, new, embed = simulated_pair(scenario, prompts, trials, key)
    rng = np.random.default_rng([*key, 7])
    return with_tokens(old, rng, 1.0, key[0]), with_tokens(new, rng, factor, key[0]), embed


def compare(old: list[Any], new: list[Any], embed: Any) -> BaselineComparison:
    """What `plumbline reliability NEW --baseline OLD --margin cost=0.1 --price M=1:4`
    computes with its default settings."""
    current = analyze(new, embed, config=CONFIG, prices={MIXED.name: PRICE})
    baseline = analyze(old, embed, config=CONFIG)
    return compare_to_baseline(
        baseline,
        old,
        current,
        new,
        embed,
        margins=COST_MARGIN,
        tested=TESTED,
        seed=CONFIG.random_seed,
        resamples=CONFIG.bootstrap_resamples,
        prices=CostPrices({MIXED.name: PRICE}),
    )


@dataclass
class CostCell:
    """One size of one scenario: false alarms, cost's verdicts and coverage."""

    scenario: str
    prompts: int
    trials: int
    runs: int = 0
    regressed_any: int = 0
    improved_any: int = 0
    cost_regressed: int = 0
    cost_covered: int = 0
    cost_intervals: int = 0
    regressed_by_metric: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def excess_pvalue(self) -> float:
        return float(binomtest(self.regressed_any, self.runs, LIMIT, "greater").pvalue)


def run_cell(name: str, factor: float, prompts: int, trials: int, runs: int, seed: int) -> CostCell:
    cell = CostCell(name, prompts, trials)
    start = time.perf_counter()
    for run in range(runs):
        key = (seed, int(factor * 10), prompts, run)
        old, new, embed = priced_pair(prompts, trials, key, factor)
        comparison = compare(old, new, embed)
        regressed = {e.metric for e in comparison.entries if e.verdict == "regressed"}
        cell.runs += 1
        cell.regressed_any += bool(regressed)
        cell.improved_any += any(e.verdict == "improved" for e in comparison.entries)
        cell.cost_regressed += COST in regressed
        for metric in regressed:
            cell.regressed_by_metric[metric] = cell.regressed_by_metric.get(metric, 0) + 1
        (cost,) = [e for e in comparison.entries if e.metric == COST]
        interval = cost.difference.interval
        if factor == 1.0 and interval is not None and None not in (interval.low, interval.high):
            cell.cost_intervals += 1
            cell.cost_covered += bool(interval.low <= 0.0 <= interval.high)  # type: ignore[operator]
    cell.seconds = time.perf_counter() - start
    return cell


def row(cell: CostCell) -> str:
    coverage = (
        f"{cell.cost_covered / cell.cost_intervals:.1%} ({cell.cost_intervals})"
        if cell.cost_intervals
        else "—"
    )
    metrics = ", ".join(f"{m} {n}" for m, n in sorted(cell.regressed_by_metric.items())) or "—"
    return (
        f"| {cell.scenario} | {cell.prompts} × {cell.trials} | {cell.runs} | "
        f"{cell.regressed_any / cell.runs:.1%} | {cell.improved_any / cell.runs:.1%} | "
        f"{cell.cost_regressed / cell.runs:.1%} | {coverage} | {metrics} | {cell.seconds:.0f} s |"
    )


HEADER = (
    "| scenario | prompts × trials | runs | any regressed | any improved | cost regressed | "
    "cost interval holds the truth (intervals) | regressed by metric | time |\n"
    "|---|---:|---:|---:|---:|---:|---:|---|---:|"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="pairs per cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sizes", default=None, help="PROMPTSxTRIALS, comma-separated")
    parser.add_argument("--quick", action="store_true", help="8 × 10 only")
    args = parser.parse_args(argv)
    sizes = (
        [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
        if args.sizes
        else QUICK_SIZES
        if args.quick
        else SIZES
    )
    print(HEADER)
    null_cells = []
    for name, factor in (("no change", 1.0), (f"cost +{COSTLIER - 1:.0%}", COSTLIER)):
        for prompts, trials in sizes:
            cell = run_cell(name, factor, prompts, trials, args.runs, args.seed)
            print(row(cell), flush=True)
            if factor == 1.0:
                null_cells.append(cell)
    failed = [c for c in null_cells if c.excess_pvalue() < LIMIT / len(null_cells)]
    print(f"\nfalse alarms above 5% beyond Monte Carlo error: {len(failed)} cell(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
