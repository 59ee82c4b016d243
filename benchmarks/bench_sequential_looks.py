"""Sequential A/B under repeated looks (issue 45): re-run `compare --sequential` after every
round on growing records, and the power of the plans at negative within-pair correlations.

**Repeated looks, through the published path.** Each series is an A/B of `--tasks` tasks run
round by round (a round = every task once in each arm, one repeat index), re-analysed after
every round until a decision or the plan's cap; a series counts as a false decision when any
look says `better` or `worse`. Two paths over the same seeded series:
- full (`--published` series per scenario): after every round the records so far are written
  to a JSONL file, read back with `read_run_records`, prepared with `prepare_runs` and analysed
  with `compare.sequential.sequential_comparison` (`compare --seed <series>`), exactly what
  `plumbline compare --sequential` does, its other gates and bootstraps aside; every look's
  path must start with the previous look's (`prefix broken` counts the series where not);
- fast (`--series`): compare's order (`analysis_order`) and the stop rule `run_sequential`
  uses (`stopping_points`) on the whole series; by the prefix property a look after round r
  sees the first r·tasks pairs, so a series decides at some look iff its path crosses before
  the cap. The full path's verdict and pairs used must equal the fast path's, series by series.
Scenarios with no effect: identical arms (0.5 v 0.5) and tasks that differ (half the tasks
0.5 ± `--spread`/2 for the treatment and the opposite for the control: the suite's mean
difference is 0), plus the planned effect (0.5 → 0.6). Reference row: the old order (a seeded
permutation of all the pairs present, drawn again at every look), with `stopping_points`.

**Negative correlations.** Power at the planned effect (0.5 → 0.6 and 0.6 → 0.7) of the
default plan (correlation 0) and of the `--correlation unknown` plan (the lowest correlation
the rates allow), simulated with `misspecification.pair_differences` and the stop rule
`run_sequential` uses (`stopping_points`), at true correlations from the lowest possible to
0.8, next to the exact figure `power --sequential` prints.

    python benchmarks/bench_sequential_looks.py --series 2000 --seed 45      # full size
    python benchmarks/bench_sequential_looks.py --quick                      # 200 series
    ... --only identical|tasks|effect|power                                  # one part

Exits 1 if a target fails: false better/worse ≤ 5% (+ 2 Monte Carlo SE at the size run) under
looks after every round, power ≥ 78% at the planned effect, no broken prefix, no series whose
verdict or pairs differ between the full published path and the fast path, power ≥ 78% at the
planned effect for the unknown plan at every correlation.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from plumbline.compare.metrics import prepare_runs
from plumbline.compare.result import SequentialSettings
from plumbline.compare.sequential import analysis_order, sequential_comparison
from plumbline.records.run_record import read_run_records
from plumbline.stats.sequential import (
    SequentialPlan,
    lowest_correlation,
    plan_sequential,
    power_at_correlations,
    stopping_points,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/: the repo root
from validation.misspecification import pair_differences

BASELINE = 0.5
EFFECT = 0.10
FALSE_TARGET = 0.05
POWER_FLOOR = 0.78


@dataclass
class LookRow:
    scenario: str
    order: str
    series: int
    better: float
    worse: float
    mean_pairs: float
    prefix_broken: int


def _rates(scenario: str, tasks: int, spread: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-task success rates (treatment, control)."""
    if scenario == "no effect, identical arms":
        return np.full(tasks, BASELINE), np.full(tasks, BASELINE)
    if scenario == "planned effect":
        return np.full(tasks, BASELINE + EFFECT), np.full(tasks, BASELINE)
    sign = np.where(np.arange(tasks) < tasks // 2, 1.0, -1.0)
    return BASELINE + sign * spread / 2, BASELINE - sign * spread / 2


def _round_lines(outcomes_t: np.ndarray, outcomes_c: np.ndarray, repeat: int) -> str:
    lines = []
    for task, (t, c) in enumerate(zip(outcomes_t, outcomes_c, strict=True)):
        for arm, success in (("T", t), ("C", c)):
            record = {
                "task_id": f"task{task:03d}",
                "arm": arm,
                "repeat": repeat,
                "success": bool(success),
                "duration_seconds": 1.0,
                "total_cost_usd": 0.01,
                "input_tokens": 100,
                "output_tokens": 10,
                "cache_read_tokens": 0,
                "cache_write_tokens": 0,
            }
            lines.append(json.dumps(record))
    return "\n".join(lines) + "\n"


def _outcomes(
    seed: int, number: int, rates: tuple[np.ndarray, np.ndarray], rounds: int
) -> tuple[np.ndarray, np.ndarray]:
    """Series `number`'s outcomes (rounds × tasks, treatment and control): the same data for
    every runner."""
    rng = np.random.default_rng([seed, number])
    return rng.random((rounds, rates[0].size)) < rates[0], rng.random(
        (rounds, rates[1].size)
    ) < rates[1]


def _series_published(
    outcomes: tuple[np.ndarray, np.ndarray], seed: int, path: Path
) -> tuple[str, int, bool]:
    """One series re-analysed after every round: (verdict at the first decision or last look,
    pairs used, prefix kept)."""
    settings = SequentialSettings(effect=EFFECT, baseline=BASELINE, seed=seed)
    path.write_text("")
    previous: list[tuple[float, float, float]] = []
    verdict, used, kept = "undecided", 0, True
    for repeat in range(outcomes[0].shape[0]):
        with path.open("a") as handle:
            handle.write(_round_lines(outcomes[0][repeat], outcomes[1][repeat], repeat))
        table = read_run_records([path])
        if table.errors:
            raise SystemExit(f"records rejected: {table.errors[0]}")
        result = sequential_comparison(prepare_runs(table.frame), "T", "C", settings)
        assert result is not None
        current = [(s.estimate, s.low, s.high) for s in result.path]
        kept = kept and current[: len(previous)] == previous
        previous = current
        verdict, used = result.verdict, result.pairs_used
        if verdict in ("better", "worse") or result.reason == "cap":
            break
    return verdict, used, kept


def looks_published(
    scenario: str, series: int, tasks: int, spread: float, plan: SequentialPlan, seed: int
) -> tuple[LookRow, list[tuple[str, int]]]:
    """Every look through files, `read_run_records`, `prepare_runs` and
    `sequential_comparison`; also each series' (verdict, pairs used), to check the fast path."""
    rates = _rates(scenario, tasks, spread)
    rounds = math.ceil(plan.max_pairs / tasks)
    verdicts, used, broken = [], [], 0
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.jsonl"
        for number in range(series):
            outcomes = _outcomes(seed, number, rates, rounds)
            verdict, pairs, kept = _series_published(outcomes, number, path)
            verdicts.append(verdict)
            used.append(pairs)
            broken += not kept
    found = np.array(verdicts)
    row = LookRow(
        scenario,
        "rounds (this release): `compare --sequential` after every round, full path",
        series,
        float(np.mean(found == "better")),
        float(np.mean(found == "worse")),
        float(np.mean(used)),
        broken,
    )
    return row, list(zip(verdicts, used, strict=True))


def looks_fast(
    scenario: str, series: int, tasks: int, spread: float, plan: SequentialPlan, seed: int
) -> tuple[LookRow, list[tuple[str, int]]]:
    """The same series without the files: compare's order (`analysis_order` over every round,
    seeded as `compare --seed <series>`) and the stop rule `run_sequential` uses
    (`stopping_points`). A look after round r sees the first r·tasks pairs of that order (the
    prefix property, checked on every series of `looks_published` and exactly in the tests),
    so the series decides at a look iff the path crosses before the last look's pairs: the
    first round end after the crossing is the look that reports it."""
    rates = _rates(scenario, tasks, spread)
    rounds = math.ceil(plan.max_pairs / tasks)
    names = [f"task{task:03d}" for task in range(tasks)]
    ids = names * rounds
    repeats = [repeat for repeat in range(rounds) for _ in range(tasks)]
    rows = []
    for number in range(series):
        t, c = _outcomes(seed, number, rates, rounds)
        d = (t.astype(float) - c.astype(float)).reshape(-1)  # round-major: repeat, task
        rows.append(d[analysis_order(ids, repeats, number)])
    first, code = stopping_points(np.stack(rows), plan)
    decided = np.isin(code, (1, -1))
    used = np.where(decided, first + 1, plan.max_pairs)
    verdicts = np.where(code == 1, "better", np.where(code == -1, "worse", "undecided"))
    row = LookRow(
        scenario,
        "rounds (this release): compare's order and stop rule, a look after every round",
        series,
        float(np.mean(code == 1)),
        float(np.mean(code == -1)),
        float(np.mean(used)),
        0,
    )
    return row, list(zip(verdicts.tolist(), used.astype(int).tolist(), strict=True))


def looks_reshuffled(
    scenario: str, series: int, tasks: int, spread: float, plan: SequentialPlan, seed: int
) -> tuple[LookRow, list[tuple[str, int]]]:
    """The old order: all pairs present permuted by the seed, drawn again at every look."""
    rates = _rates(scenario, tasks, spread)
    rounds = math.ceil(plan.max_pairs / tasks)
    codes, used = [], []
    for number in range(series):
        t, c = _outcomes(seed, number, rates, rounds)
        # canonical order: sorted by (task, repeat)
        d = (t.astype(float) - c.astype(float)).T.reshape(-1)
        repeats = np.tile(np.arange(rounds), tasks)
        code, stop = 0, 0
        for look in range(1, rounds + 1):
            present = d[repeats < look]
            order = np.random.default_rng(number).permutation(present.size)
            first, found = stopping_points(present[order][None, :], plan)
            stop = int(first[0]) + 1 if first[0] >= 0 else min(present.size, plan.max_pairs)
            if found[0] in (1, -1):
                code = int(found[0])
                break
        codes.append(code)
        used.append(stop)
    found = np.array(codes)
    row = LookRow(
        scenario,
        "old: one permutation of all pairs, redrawn at every look (reference)",
        series,
        float(np.mean(found == 1)),
        float(np.mean(found == -1)),
        float(np.mean(used)),
        0,
    )
    return row, []


@dataclass
class PowerRow:
    plan: str
    baseline: float
    cap: int
    correlation: float
    simulated: float
    exact: float


def correlation_power(replicates: int, seed: int) -> list[PowerRow]:
    rng = np.random.default_rng(seed)
    rows: list[PowerRow] = []
    for baseline in (0.5, 0.6):
        lowest = lowest_correlation(baseline, EFFECT)
        plans = {
            "default (correlation 0)": plan_sequential(baseline, EFFECT),
            f"unknown (lowest, {lowest:+.2f})": plan_sequential(
                baseline, EFFECT, correlation=lowest
            ),
        }
        grid = [lowest, -0.5, -0.3, 0.0, 0.3, 0.6]
        for name, plan in plans.items():
            exact = power_at_correlations(plan, grid)
            for row in exact:
                if row.power is None:
                    continue
                d = pair_differences(
                    rng, (replicates, plan.max_pairs), baseline + EFFECT, baseline, row.correlation
                )
                _, code = stopping_points(d, plan)
                rows.append(
                    PowerRow(
                        name,
                        baseline,
                        plan.max_pairs,
                        row.correlation,
                        float(np.mean(code == 1)),
                        row.power,
                    )
                )
    return rows


def _se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 0.25 / n) / n)


def _print(row: LookRow, scenario: str) -> None:
    false = row.better + row.worse
    label = f"{false:.2%}" if scenario != "planned effect" else "—"
    print(
        f"| {row.scenario} | {row.order} | {row.series:,} | {row.better:.2%} | "
        f"{row.worse:.2%} | {label} | {row.mean_pairs:.0f} | {row.prefix_broken} |",
        flush=True,
    )


def _check(row: LookRow, scenario: str, failures: list[str]) -> None:
    false = row.better + row.worse
    if scenario != "planned effect" and false > FALSE_TARGET + 2 * _se(false, row.series):
        failures.append(f"{scenario}: false decisions {false:.2%}")
    if scenario == "planned effect" and row.better < POWER_FLOOR:
        failures.append(f"power under looks {row.better:.2%}")
    if row.prefix_broken:
        failures.append(f"{scenario}: {row.prefix_broken} series broke the prefix")


def run_looks(args: argparse.Namespace, plan: SequentialPlan, failures: list[str]) -> None:
    print(
        "| scenario | order | series | better | worse | false better/worse | mean pairs "
        "| prefix broken |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    every = {
        "identical": "no effect, identical arms",
        "tasks": f"no effect, tasks ±{args.spread / 2:g}",
        "effect": "planned effect",
    }
    scenarios = [every[key] for key in every if args.only in (None, key)]
    common = (args.tasks, args.spread, plan, args.seed)
    for scenario in scenarios:
        fast, fast_series = looks_fast(scenario, args.series, *common)
        _print(fast, scenario)
        _check(fast, scenario, failures)
        if args.published:
            full, full_series = looks_published(scenario, args.published, *common)
            _print(full, scenario)
            if full.prefix_broken:  # its rates are the fast path's, series by series
                failures.append(f"{scenario}: {full.prefix_broken} series broke the prefix")
            differ = sum(a != b for a, b in zip(full_series, fast_series, strict=False))
            print(
                f"|  | full path vs the fast path, series by series | {args.published:,} | "
                f"{differ} differ |  |  |  |  |",
                flush=True,
            )
            if differ:
                failures.append(f"{scenario}: {differ} series differ between the two paths")
        if scenario != "planned effect":
            old, _ = looks_reshuffled(scenario, args.reference_series, *common)
            _print(old, scenario)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--series", type=int, default=2000, help="series per scenario")
    parser.add_argument(
        "--published",
        type=int,
        default=100,
        help="of them, how many also go through files and `sequential_comparison` (slow)",
    )
    parser.add_argument(
        "--reference-series", type=int, default=2000, help="series of the old-order rows"
    )
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--spread", type=float, default=0.4)
    parser.add_argument("--power-replicates", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument(
        "--only",
        choices=["identical", "tasks", "effect", "power"],
        help="one scenario (or the power table) alone, to run the parts in parallel",
    )
    parser.add_argument(
        "--quick", action="store_true", help="200 series (20 published), 1,000 replicates"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.series, args.published, args.reference_series = 200, 20, 200
        args.power_replicates = 1000
    start = time.perf_counter()
    plan = plan_sequential(BASELINE, EFFECT)
    failures: list[str] = []
    print(
        f"plan: {BASELINE} -> {BASELINE + EFFECT}, correlation 0: fixed {plan.fixed_pairs}, "
        f"cap {plan.max_pairs}; {args.tasks} tasks per round, a look after every round"
    )
    if args.only != "power":
        run_looks(args, plan, failures)
    if args.only not in (None, "power"):
        return _finish(start, failures)
    print()
    print(
        "| plan | baseline | cap | true correlation | power (simulated) | power (exact, printed) |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for power_row in correlation_power(args.power_replicates, args.seed + 1):
        print(
            f"| {power_row.plan} | {power_row.baseline:g} | {power_row.cap} | "
            f"{power_row.correlation:+.2f} | {power_row.simulated:.1%} | {power_row.exact:.1%} |",
            flush=True,
        )
        if power_row.plan.startswith("unknown") and power_row.simulated < POWER_FLOOR:
            failures.append(
                f"unknown plan at {power_row.correlation:+.2f}: {power_row.simulated:.1%}"
            )
    return _finish(start, failures)


def _finish(start: float, failures: list[str]) -> int:
    print(f"\n{time.perf_counter() - start:.0f} s")
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
