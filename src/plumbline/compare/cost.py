"""What each arm cost, per task and per success, and the difference between two arms, with
intervals resampling the unit the rest of `compare` resamples: tasks, then repeats within task.

For an arm's runs with a known cost (`c_r` the cost of run r, `s_r` 1 when it succeeded):

    per task    = Σ c_r / R          (the mean cost of one attempt at one task)
    per success = Σ c_r / Σ s_r      (what the arm spends for each task it solves)

The difference is treatment − control of each, over the pairs `(task_id, repeat)` where both
runs have a cost. Each interval is the percentile interval of a two-stage cluster bootstrap
(Davison & Hinkley 1997, §3.8, strategy 2; Field & Welsh 2007): tasks drawn with replacement,
then each drawn task's runs (or pairs) drawn with replacement, every sum built from the
multinomial counts of its draws. A ratio whose resampled denominator is 0 (no success drawn) is
infinite: when that happens in more than α/2 of the replicates the upper bound is unbounded and
no interval is given. Coverage measured through this code: docs/statistics.md
(`benchmarks/bench_compare_cost.py`).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import numpy.typing as npt
import polars as pl

from plumbline.compare.cost_result import (
    AS_RECORDED,
    ArmCost,
    CostComparison,
    CostDifference,
    CostFigure,
)
from plumbline.compare.metrics import PreparedRuns
from plumbline.compare.paired_tests import APPROXIMATE_TASKS
from plumbline.compare.result import CompareSettings
from plumbline.core.prices import PriceTable, TokenCounts
from plumbline.core.result import Interval
from plumbline.stats.arrays import FloatArray

METHOD = (
    "percentile two-stage cluster bootstrap (tasks, then repeats within task; Davison & "
    "Hinkley 1997, §3.8)"
)
#: The seed's offset from `--seed`, so the cost draws are not the paired deltas' draws.
SEED_OFFSET = 48


def cluster_sums(
    columns: FloatArray, tasks: npt.NDArray[np.int64], resamples: int, rng: np.random.Generator
) -> FloatArray:
    """Two-stage resampled column sums (resamples × columns): tasks drawn with replacement,
    then each drawn task's rows drawn with replacement (multinomial counts; exact)."""
    codes, inverse = np.unique(tasks, return_inverse=True)
    count = codes.size
    drawn = rng.multinomial(count, np.full(count, 1.0 / count), size=resamples)
    sums = np.zeros((resamples, columns.shape[1]))
    for task in range(count):
        rows = columns[inverse == task]
        size = rows.shape[0]
        picks = rng.multinomial(drawn[:, task] * size, np.full(size, 1.0 / size))
        sums += picks @ rows
    return sums


def _ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(
            denominator > 0, numerator / np.where(denominator > 0, denominator, 1), np.inf
        )


def _figure(
    estimate: float | None,
    replicates: FloatArray,
    n: int,
    tasks: int,
    level: float,
    note: str | None = None,
) -> CostFigure:
    """The figure with the percentile interval of its replicates (module docstring)."""
    if estimate is None or n < 2:
        return CostFigure(estimate=estimate, n=n, note=note or "fewer than 2 runs with a cost")
    alpha = 1.0 - level
    undefined = float(np.mean(~np.isfinite(replicates)))
    if undefined > alpha / 2:
        return CostFigure(
            estimate=estimate,
            n=n,
            note=f"{undefined:.0%} of the resamples drew no success: the upper bound is "
            "unbounded at these successes",
        )
    low, high = np.quantile(
        np.where(np.isnan(replicates), np.inf, replicates),
        [alpha / 2, 1 - alpha / 2],
        method="inverted_cdf",
    )
    approximate = f", approximate: {tasks} tasks" if tasks < APPROXIMATE_TASKS else ""
    interval = Interval(low=float(low), high=float(high), level=level, method=METHOD + approximate)
    return CostFigure(estimate=estimate, interval=interval, n=n, note=note)


def _source(runs: pl.DataFrame) -> str:
    if "usage_source" not in runs.columns:
        return "unrecorded"
    found = sorted({s or "unrecorded" for s in runs["usage_source"].to_list()})
    if len(found) == 1:
        return found[0]
    return f"mixed ({', '.join(found)})"


def arm_cost(
    runs: pl.DataFrame, settings: CompareSettings, price_table: str, rng: np.random.Generator
) -> ArmCost:
    """One arm's cost per task and per success (module docstring), over its runs (duplicates
    kept, as in the arm summary) with a known cost."""
    priced = runs.filter(pl.col("total_cost_usd").is_not_null())
    cost = priced["total_cost_usd"].cast(pl.Float64).to_numpy()
    success = priced["success_int"].cast(pl.Float64).to_numpy()
    n, tasks = int(cost.size), int(priced["task_id"].n_unique())
    source = _source(runs)
    if n == 0:
        none = CostFigure(n=0, note="no run of this arm has a cost")
        return ArmCost(
            per_task_usd=none, per_success_usd=none, source=source, price_table=price_table
        )
    columns = np.column_stack([cost, np.ones(n), success])
    sums = cluster_sums(columns, _codes(priced["task_id"]), settings.n_resamples, rng)
    per_task = _figure(float(cost.mean()), sums[:, 0] / sums[:, 1], n, tasks, settings.level)
    solved = float(success.sum())
    per_success = (
        _figure(
            float(cost.sum() / solved), _ratio(sums[:, 0], sums[:, 2]), n, tasks, settings.level
        )
        if solved
        else CostFigure(n=n, note="no run with a cost succeeded: no cost per success")
    )
    return ArmCost(
        per_task_usd=per_task, per_success_usd=per_success, source=source, price_table=price_table
    )


def _codes(column: pl.Series) -> npt.NDArray[np.int64]:
    return column.rank("dense").cast(pl.Int64).to_numpy()


def cost_difference(
    pairs: pl.DataFrame, settings: CompareSettings, rng: np.random.Generator
) -> CostDifference:
    """Treatment − control of cost per task and per success over the pairs where both runs have
    a cost, resampling tasks, then pairs within task (module docstring)."""
    both = pairs.filter(
        pl.col("total_cost_usd_t").is_not_null() & pl.col("total_cost_usd_c").is_not_null()
    )
    n, tasks = both.height, int(both["task_id"].n_unique()) if both.height else 0
    if n == 0:
        none = CostFigure(n=0, note="no pair where both runs have a cost")
        return CostDifference(pairs=0, per_task_usd=none, per_success_usd=none)
    values = {
        name: both[name].cast(pl.Float64).to_numpy()
        for name in ("total_cost_usd_t", "total_cost_usd_c", "success_int_t", "success_int_c")
    }
    columns = np.column_stack(list(values.values()))
    sums = cluster_sums(columns, _codes(both["task_id"]), settings.n_resamples, rng)
    cost_t, cost_c, solved_t, solved_c = (float(v.sum()) for v in values.values())
    per_task = _figure(
        (cost_t - cost_c) / n, (sums[:, 0] - sums[:, 1]) / n, n, tasks, settings.level
    )
    if solved_t and solved_c:
        with np.errstate(invalid="ignore"):
            replicates = _ratio(sums[:, 0], sums[:, 2]) - _ratio(sums[:, 1], sums[:, 3])
        per_success = _figure(
            cost_t / solved_t - cost_c / solved_c, replicates, n, tasks, settings.level
        )
    else:
        per_success = CostFigure(n=n, note="an arm has no success among these pairs")
    return CostDifference(pairs=n, per_task_usd=per_task, per_success_usd=per_success)


def cost_comparison(
    prepared: PreparedRuns,
    pairs: pl.DataFrame,
    treatment: str,
    control: str,
    settings: CompareSettings,
    price_table: str | None,
) -> CostComparison:
    """Both arms' `ArmCost` and their `CostDifference` (seeded from `settings.seed`)."""
    seed = None if settings.seed is None else settings.seed + SEED_OFFSET
    rng = np.random.default_rng(seed)
    table = price_table or AS_RECORDED
    arm = {
        name: arm_cost(prepared.runs.filter(pl.col("arm") == name), settings, table, rng)
        for name in (treatment, control)
    }
    return CostComparison(
        treatment=arm[treatment],
        control=arm[control],
        difference=cost_difference(pairs, settings, rng),
        method=METHOD,
    )


def cost_warnings(comparison: CostComparison, treatment: str, control: str) -> list[str]:
    """A warning for each arm whose cost comes from mixed sources."""
    return [
        f"{arm}: its cost comes from mixed sources ({cost.source.removeprefix('mixed (')[:-1]}); "
        "cost per task and per success mix those measurements"
        for arm, cost in ((treatment, comparison.treatment), (control, comparison.control))
        if cost.source.startswith("mixed (")
    ]


def reprice(frame: pl.DataFrame, prices: PriceTable) -> tuple[pl.DataFrame, Counter[str]]:
    """Each run's `total_cost_usd` priced again with `prices` (`--prices`) from its per-model
    usage (`model_usage`): the sum of `prices.cost` over its models, null when the run has no
    per-model usage or any model is unpriced. Returns the frame and each note with its count."""
    notes: Counter[str] = Counter()
    costs: list[float | None] = []
    usage = (
        frame["model_usage"].to_list() if "model_usage" in frame.columns else [None] * frame.height
    )
    for entries in usage:
        if not entries:
            notes["a run records no per-model usage to price"] += 1
            costs.append(None)
            continue
        total: float | None = 0.0
        for entry in entries:
            tokens = TokenCounts(
                entry["input_tokens"],
                entry["output_tokens"],
                entry["cache_read_tokens"],
                entry["cache_write_tokens"],
            )
            priced = prices.cost(entry["model"], tokens)
            if priced.usd is None:
                notes[priced.note or "unpriced"] += 1
                total = None
                break
            total = (total or 0.0) + priced.usd
        costs.append(total)
    return frame.with_columns(pl.Series("total_cost_usd", costs, dtype=pl.Float64)), notes
