"""Coverage of `compare`'s cost intervals (cost per task and per success of an arm, and the
paired difference of cost per task), simulated through `compare.cost` (what `compare_runs`
calls) on frames built as `compare.metrics` builds them; exit 1 when a cell is below 93%.

Each dataset: `tasks` tasks × `repeats` repeats in two arms; task j's cost level is
LogNormal(0, 0.5) shared by both arms, each run costs `level_j · a · LogNormal(0, σ)` (a = 1 in
the treatment, 1.5 in the control) and succeeds with probability 0.7 (treatment) or 0.5. True
cost per task: `a · E[level] · exp(σ²/2)`; per success: that over the pass rate.

    python benchmarks/bench_compare_cost.py [--datasets 1000] [--tasks 10,20,50] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np
import polars as pl

from plumbline.compare.cost import arm_cost, cost_difference
from plumbline.compare.result import CompareSettings

SIGMA = 1.0
RATES = {"T": 0.7, "C": 0.5}
SCALES = {"T": 1.0, "C": 1.5}


def _frame(rng: np.random.Generator, tasks: int, repeats: int) -> dict[str, pl.DataFrame]:
    levels = rng.lognormal(0.0, 0.5, tasks)
    frames = {}
    for arm in ("T", "C"):
        task = np.repeat(np.arange(tasks), repeats)
        costs = levels[task] * SCALES[arm] * rng.lognormal(0.0, SIGMA, task.size)
        frames[arm] = pl.DataFrame(
            {
                "task_id": [f"t{j}" for j in task],
                "repeat": np.tile(np.arange(repeats), tasks),
                "total_cost_usd": costs,
                "success_int": (rng.random(task.size) < RATES[arm]).astype(np.int64),
            }
        )
    return frames


def _pairs(frames: dict[str, pl.DataFrame]) -> pl.DataFrame:
    t, c = frames["T"], frames["C"]
    return pl.DataFrame(
        {
            "task_id": t["task_id"],
            "total_cost_usd_t": t["total_cost_usd"],
            "total_cost_usd_c": c["total_cost_usd"],
            "success_int_t": t["success_int"],
            "success_int_c": c["success_int"],
        }
    )


def _covers(figure: object, truth: float) -> bool:
    interval = getattr(figure, "interval", None)
    if interval is None or interval.low is None or interval.high is None:
        return False
    return bool(interval.low <= truth <= interval.high)


def cell(tasks: int, repeats: int, datasets: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng([seed, tasks, repeats])
    settings = CompareSettings(n_resamples=2000)
    mean_level = math.exp(0.5**2 / 2) * math.exp(SIGMA**2 / 2)
    truth = {
        "T per task": SCALES["T"] * mean_level,
        "T per success": SCALES["T"] * mean_level / RATES["T"],
        "T − C per task": (SCALES["T"] - SCALES["C"]) * mean_level,
    }
    hits = dict.fromkeys(truth, 0)
    for _ in range(datasets):
        frames = _frame(rng, tasks, repeats)
        treated = arm_cost(frames["T"], settings, "sim", rng)
        difference = cost_difference(_pairs(frames), settings, rng)
        hits["T per task"] += _covers(treated.per_task_usd, truth["T per task"])
        hits["T per success"] += _covers(treated.per_success_usd, truth["T per success"])
        hits["T − C per task"] += _covers(difference.per_task_usd, truth["T − C per task"])
    return {name: count / datasets for name, count in hits.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--tasks", default="10,20,50")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    failed = False
    print("| tasks × repeats | T per task | T per success | T − C per task |")
    print("|---|---:|---:|---:|")
    for tasks in (int(t) for t in args.tasks.split(",")):
        found = cell(tasks, args.repeats, args.datasets, args.seed)
        failed |= min(found.values()) < 0.93
        row = " | ".join(f"{value:.3f}" for value in found.values())
        print(f"| {tasks} × {args.repeats} | {row} |")
    print(f"\n{time.perf_counter() - started:.0f} s; targets {'FAILED' if failed else 'met'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
