"""Regression test after a model update: false regressions and power, simulated end to end.

Each simulated run is a set of trial records (`plumbline.coverage.simulated_records`: answers
drawn from per-prompt pools, lognormal latencies, 3% failures), analysed by
`reliability.analysis.analyze` and compared by `reliability.regression.compare_to_baseline`,
exactly as `plumbline reliability NEW --baseline OLD` does. Three scenarios, at 10 prompts ×
10 trials by default:

- identical: baseline and current drawn from the same model. The share of runs in which any of
  the six metrics is `regressed` must be ≤ 5% (the family-wise claim);
- latency +50%: the current model's latencies 1.5 times the baseline's: `regressed` (latency
  p50 or p95) in ≥ 80% of runs;
- consistency −0.2: the current model answers each prompt more often with its most likely answer
  (a drop of about 0.2 in CERT consistency, measured and printed): `regressed` (consistency)
  in ≥ 80% of runs.

    PYTHONPATH=src python benchmarks/bench_reliability_regression.py [--runs 200] [--prompts 10]
        [--trials 10] [--seed 0]

Prints both rates and exits 1 when either claim misses.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field, replace

import numpy as np

from plumbline.coverage import (
    SimulatedModel,
    embedding_table,
    reliability_truth,
    simulated_prompts,
    simulated_records,
)
from plumbline.reliability.analysis import analyze
from plumbline.reliability.regression import compare_to_baseline

#: Lognormal σ 0.5 (a coefficient of variation of 0.53, CERT's "high variance" from 0.5).
BASELINE = SimulatedModel(name="sim/model", latency_sigma=0.5)
#: Weight moved onto each prompt's most likely answer: CERT consistency drops by 0.198 at 10 trials.
COLLAPSE = 0.35
FALSE_REGRESSION_LIMIT = 0.05
POWER_TARGET = 0.80


@dataclass(frozen=True)
class Outcome:
    scenario: str
    runs: int
    regressed_any: int
    regressed_target: int
    #: Per metric: runs whose interval holds the true change of 0 (identical scenario), of runs
    #: with an interval.
    covered: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Per metric: runs in which it was `regressed`.
    regressed_by_metric: dict[str, int] = field(default_factory=dict)

    @property
    def any_rate(self) -> float:
        return self.regressed_any / self.runs

    @property
    def target_rate(self) -> float:
        return self.regressed_target / self.runs


def simulate(
    scenario: str,
    current_model: SimulatedModel,
    targets: tuple[str, ...],
    *,
    runs: int,
    prompts: int,
    trials: int,
    seed: int,
) -> Outcome:
    """`runs` baseline/current pairs on the same prompts; count `regressed` verdicts."""
    any_count = target_count = 0
    covered: dict[str, list[int]] = {}
    by_metric: dict[str, int] = {}
    for run in range(runs):
        tag = f"{scenario}-{run}-"
        # the same prompts and answer pools for both runs; the current model may change them
        old_prompts = simulated_prompts(prompts, np.random.default_rng([seed, run]), BASELINE, tag)
        new_prompts = simulated_prompts(
            prompts, np.random.default_rng([seed, run]), current_model, tag
        )
        rng = np.random.default_rng([seed, run, 1])
        old_records = simulated_records(old_prompts, trials, rng, BASELINE)
        new_records = simulated_records(new_prompts, trials, rng, current_model)
        embed = embedding_table(old_prompts + new_prompts)
        baseline = analyze(old_records, embed)
        current = analyze(new_records, embed)
        comparison = compare_to_baseline(
            baseline, old_records, current, new_records, embed, seed=run
        )
        regressed = {e.metric for e in comparison.entries if e.verdict == "regressed"}
        any_count += bool(regressed)
        for metric in regressed:
            by_metric[metric] = by_metric.get(metric, 0) + 1
        target_count += bool(regressed & set(targets))
        for entry in comparison.entries:
            interval = entry.difference.interval
            if interval is not None and interval.low is not None and interval.high is not None:
                counts = covered.setdefault(entry.metric, [0, 0])
                counts[0] += interval.low <= 0.0 <= interval.high
                counts[1] += 1
    return Outcome(
        scenario,
        runs,
        any_count,
        target_count,
        {metric: (hit, total) for metric, (hit, total) in covered.items()},
        by_metric,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--prompts", type=int, default=10)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    sizes = {"runs": args.runs, "prompts": args.prompts, "trials": args.trials, "seed": args.seed}
    identical = simulate("identical", BASELINE, (), **sizes)
    slower = replace(BASELINE, latency_median=1.5 * BASELINE.latency_median)
    latency = simulate("latency+50%", slower, ("latency_p50", "latency_p95"), **sizes)
    collapsed = replace(BASELINE, collapse=COLLAPSE)
    drop = (
        reliability_truth(BASELINE, args.trials).consistency
        - reliability_truth(collapsed, args.trials).consistency
    )
    consistency = simulate("consistency-drop", collapsed, ("consistency",), **sizes)
    design = (
        f"{args.prompts} prompts × {args.trials} trials, {args.runs} runs each, lognormal "
        f"latency σ {BASELINE.latency_sigma:g}"
    )
    print(f"regression check, {design}")
    print(
        f"  false regression (identical distributions, any of 6 metrics): "
        f"{identical.any_rate:.1%} ({identical.regressed_any}/{identical.runs}); "
        f"limit {FALSE_REGRESSION_LIMIT:.0%}"
    )
    print(
        "    by metric: "
        + (
            ", ".join(f"{m} {n}" for m, n in sorted(identical.regressed_by_metric.items()))
            or "none"
        )
    )
    print(
        f"  latency +50%: regressed in {latency.target_rate:.1%} "
        f"({latency.regressed_target}/{latency.runs}); target ≥ {POWER_TARGET:.0%}"
    )
    print(
        f"  consistency −{drop:.2f} (true drop): regressed in {consistency.target_rate:.1%} "
        f"({consistency.regressed_target}/{consistency.runs}); target ≥ {POWER_TARGET:.0%}"
    )
    coverage = ", ".join(
        f"{metric} {hit / total:.1%}" for metric, (hit, total) in identical.covered.items() if total
    )
    print(f"  identical runs, share of 99.17% intervals holding the true change 0: {coverage}")
    print(f"  {time.perf_counter() - start:.0f} s")
    ok = (
        identical.any_rate <= FALSE_REGRESSION_LIMIT
        and latency.target_rate >= POWER_TARGET
        and consistency.target_rate >= POWER_TARGET
    )
    if not ok:
        print("MISS: a claim above does not hold", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
