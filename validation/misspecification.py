"""The misspecification grid of the sequential A/B and the judge correction (issue 37).

Each cell simulates data that break one assumption the way real runs do, and runs it through
the functions the commands call, counting how often the published verdict is wrong:

- **within-pair correlation** (`correlation`): the arms' outcomes correlate at ρ = 0 … 0.8
  within a pair; the plan is the default one (`plan_sequential`, correlation 0 unless told).
  Claim: power at the planned effect ≥ 78%. One reference cell plans at the old default
  (ρ = 0.5) on independent arms, the case issue 37 measured at 44–48%.
- **task heterogeneity with grouped arrival** (`heterogeneity`): the suite's mean difference
  over tasks is 0, but half the tasks favour each arm (by ±0.4; by ±0.2 with 10 repeats), and
  the records arrive grouped by task. Orders: `compare` (the records given to
  `compare --sequential` in any order: `compare.sequential.analysis_order`), `harness`
  (`agent run --until-decided`: the random schedule of `agent.schedule.build_schedule`, pairs
  in the order `agent.sequential.SequentialMonitor` takes them) and, for reference, `grouped
  (time order)` (what a time-ordered analysis did). Claim: false `better` + `worse` ≤ 5%.
- **coverage at δ ≠ 0** (`coverage`): heterogeneous tasks whose mean difference is 0.10; the
  interval reported at the stop is labelled approximate away from 0: its coverage of the
  suite's mean is reported, held to a 93% floor.
- **PPI at few labels** (`ppi_bias`): a lenient judge (accepts 40% of failures), 10–59 labels,
  1,000 judged: the bias of the cross-fitted estimate (`stats.ppi.ppi_bounds_batch`, what
  `ppi_mean` calls) against λ tuned on the same labels. Claim: |bias| within 3 Monte Carlo
  standard errors of 0 (and below 0.005).
- **hand-picked labels** (`selection`): the labels are drawn uniformly (claim: the
  `leaderboard --labels` check, `stats.selection_check`, warns in ≤ 1% of datasets), or chosen
  (a labeller who takes the judge's "yes" answers three times as often, or only them): the
  warning rate and the PPI interval's coverage, which the warning exists for.

`run_grid(replicates, seed)` runs every cell; `benchmarks/bench_misspecification.py` prints the
table (≥ 1,000 replicates per cell; `--quick` for a small seeded run), and
`tests/stats/test_misspecification.py` runs the quick version.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from plumbline.agent.schedule import build_schedule
from plumbline.agent.sequential import SequentialMonitor
from plumbline.compare.sequential import analysis_order
from plumbline.stats.ppi import ppi_bounds_batch, selection_check, tuned_lambda
from plumbline.stats.sequential import SequentialPlan, plan_sequential, stopping_points
from validation.ppi_coverage import draw

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

BASELINE = 0.5
EFFECT = 0.10
CORRELATIONS = (0.0, 0.2, 0.4, 0.6, 0.8)
POWER_FLOOR = 0.78
FALSE_DECISION_CEILING = 0.05
COVERAGE_FLOOR = 0.93
SELECTION_CEILING = 0.01
PPI_LABELS = (10, 25, 59)
PPI_JUDGED = 1_000


@dataclass(frozen=True)
class Cell:
    """One grid cell: `rate` is the measured rate the claim is about (power, false decisions,
    coverage, warnings) or the bias; `passed` whether the claim holds beyond Monte Carlo
    error (None where the cell is a reference, not a claim)."""

    group: str
    scenario: str
    order: str
    replicates: int
    measure: str
    rate: float
    claim: str
    passed: bool | None
    detail: str = ""

    @property
    def monte_carlo_error(self) -> float:
        p = min(max(self.rate, 0.0), 1.0)
        return math.sqrt(max(p * (1 - p), 1e-4) / self.replicates)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _at_most(rate: float, ceiling: float, replicates: int) -> bool:
    """The claim `rate ≤ ceiling`, allowing two Monte Carlo standard errors at the ceiling."""
    return rate <= ceiling + 2 * math.sqrt(ceiling * (1 - ceiling) / replicates)


def _at_least(rate: float, floor: float, replicates: int) -> bool:
    return rate >= floor - 2 * math.sqrt(floor * (1 - floor) / replicates)


# ---------------------------------------------------------------------------------------------
# Paired outcomes


def pair_differences(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    p_t: FloatArray | float,
    p_c: FloatArray | float,
    correlation: float,
) -> FloatArray:
    """T − C per pair (+1, 0, −1) for arms with success rates `p_t`, `p_c` (broadcast over the
    trailing axes of `shape`) whose outcomes correlate at `correlation` (phi) within a pair:
    `P(both) = p_t p_c + ρ √(p_t q_t p_c q_c)`."""
    pt, pc = np.asarray(p_t, dtype=np.float64), np.asarray(p_c, dtype=np.float64)
    both = pt * pc + correlation * np.sqrt(pt * (1 - pt) * pc * (1 - pc))
    up, down = pt - both, pc - both
    if np.any(up < -1e-12) or np.any(down < -1e-12):
        raise ValueError(f"correlation {correlation} is impossible for these rates")
    u = rng.random(shape)
    return np.where(u < up, 1.0, np.where(u < up + down, -1.0, 0.0))


def _outcome(
    plan: SequentialPlan, d: FloatArray, truth: float
) -> tuple[IntArray, IntArray, npt.NDArray[np.bool_]]:
    """(code, pairs used, interval at the stop holds `truth`) per row, as `run_sequential`."""
    used_d = d[:, : plan.max_pairs]
    first, code = stopping_points(used_d, plan)
    used = np.where(first >= 0, first + 1, used_d.shape[1])
    rows = np.arange(d.shape[0])
    sums = np.cumsum(used_d, axis=1)[rows, used - 1]
    bound = plan.boundary(np.cumsum(used_d * used_d, axis=1)[rows, used - 1])
    covered = np.abs(sums - used * truth) <= bound
    return code, used, covered


# ---------------------------------------------------------------------------------------------
# Orders


def _task_ids(tasks: int) -> list[str]:
    return [f"task{t:03d}" for t in range(tasks)]


def order_compare(tasks: int, repeats: int, seed: int) -> IntArray:
    """`compare --sequential`'s order of the (task, repeat) cells (flat index task·K + repeat),
    whatever order the records came in."""
    ids = [task for task in _task_ids(tasks) for _ in range(repeats)]
    reps = [repeat for _ in range(tasks) for repeat in range(repeats)]
    return analysis_order(ids, reps, seed)


def order_harness(tasks: int, repeats: int, seed: int, plan: SequentialPlan) -> IntArray:
    """`agent run --until-decided`'s order: the random schedule, pairs as the monitor takes
    them (by the later unit of each block)."""
    ids = _task_ids(tasks)
    monitor = SequentialMonitor(build_schedule(ids, ["T", "C"], repeats, seed=seed), "T", "C", plan)
    index = {task: number for number, task in enumerate(ids)}
    return np.array(
        [index[block.task_id] * repeats + block.repeat for block in monitor.blocks],
        dtype=np.int64,
    )


def _ordered(d: FloatArray, orders: Callable[[int], IntArray]) -> FloatArray:
    flat = d.reshape(d.shape[0], -1)
    return np.stack([flat[r, orders(r)] for r in range(flat.shape[0])])


# ---------------------------------------------------------------------------------------------
# Sequential cells


def correlation_cells(
    replicates: int, rng: np.random.Generator, effect: float = EFFECT
) -> list[Cell]:
    plan = plan_sequential(BASELINE, effect)
    cells = []
    for rho in CORRELATIONS:
        d = pair_differences(rng, (replicates, plan.max_pairs), BASELINE + effect, BASELINE, rho)
        code, used, _ = _outcome(plan, d, effect)
        power = float(np.mean(code == 1))
        cells.append(
            Cell(
                "correlation",
                f"{BASELINE:.1f} → {BASELINE + effect:.1f}, within-pair correlation {rho:g}",
                "any (pairs exchangeable)",
                replicates,
                "power",
                power,
                f"≥ {POWER_FLOOR:.0%}",
                _at_least(power, POWER_FLOOR, replicates),
                f"default plan (correlation 0): fixed {plan.fixed_pairs}, cap "
                f"{plan.max_pairs}; mean pairs {used.mean():.0f}",
            )
        )
    old = plan_sequential(BASELINE, effect, correlation=0.5)
    d = pair_differences(rng, (replicates, old.max_pairs), BASELINE + effect, BASELINE, 0.0)
    code, _, _ = _outcome(old, d, effect)
    cells.append(
        Cell(
            "correlation",
            f"{BASELINE:.1f} → {BASELINE + effect:.1f}, correlation 0, planned at 0.5",
            "any (pairs exchangeable)",
            replicates,
            "power",
            float(np.mean(code == 1)),
            "reference: the old default",
            None,
            f"fixed {old.fixed_pairs}, cap {old.max_pairs}",
        )
    )
    return cells


@dataclass(frozen=True)
class Suite:
    """Tasks that differ: half favour the treatment by `spread`, half the control, around a
    mean difference `mean` (rates around 0.5), `repeats` pairs per task."""

    name: str
    tasks: int
    repeats: int
    spread: float
    mean: float = 0.0

    def rates(self) -> tuple[FloatArray, FloatArray]:
        sign = np.where(np.arange(self.tasks) < self.tasks // 2, 1.0, -1.0)
        delta = self.mean + sign * self.spread
        return 0.5 + delta / 2, 0.5 - delta / 2

    @property
    def truth(self) -> float:
        p_t, p_c = self.rates()
        return float(np.mean(p_t - p_c))


NULL_SUITES = (
    Suite("±0.4, 40 tasks × 15", 40, 15, 0.4),
    Suite("±0.4, 6 tasks × 100", 6, 100, 0.4),
    Suite("±0.2, 60 tasks × 10", 60, 10, 0.2),
    Suite("±0.2, 20 tasks × 10", 20, 10, 0.2),
)
EFFECT_SUITES = (
    Suite("+0.10 ± 0.3, 40 tasks × 15", 40, 15, 0.3, EFFECT),
    Suite("+0.10 ± 0, 40 tasks × 15", 40, 15, 0.0, EFFECT),
)


def _suite_outcomes(
    suite: Suite, order: str, plan: SequentialPlan, replicates: int, rng: np.random.Generator
) -> tuple[IntArray, IntArray, npt.NDArray[np.bool_]]:
    p_t, p_c = suite.rates()
    shape = (replicates, suite.tasks, suite.repeats)
    d = pair_differences(rng, shape, p_t[:, None], p_c[:, None], 0.0)
    if order == "compare":
        ordered = _ordered(d, lambda r: order_compare(suite.tasks, suite.repeats, r))
    elif order == "harness":
        ordered = _ordered(d, lambda r: order_harness(suite.tasks, suite.repeats, r, plan))
    else:  # grouped by task, taken in that (time) order
        ordered = d.reshape(replicates, -1)
    return _outcome(plan, ordered, suite.truth)


def heterogeneity_cells(
    replicates: int, rng: np.random.Generator, orders: Sequence[str], effect: float = EFFECT
) -> list[Cell]:
    plan = plan_sequential(BASELINE, effect)
    cells = []
    for suite in NULL_SUITES:
        for order in orders:
            code, used, _ = _suite_outcomes(suite, order, plan, replicates, rng)
            false = float(np.mean(code != 0))
            reference = order == "grouped (time order)"
            cells.append(
                Cell(
                    "heterogeneity",
                    f"suite mean 0, tasks {suite.name}, grouped by task (the treatment's "
                    "tasks first)",
                    order,
                    replicates,
                    "false better/worse",
                    false,
                    "reference: pairs in time order" if reference else "≤ 5%",
                    None if reference else _at_most(false, FALSE_DECISION_CEILING, replicates),
                    f"better {np.mean(code == 1):.1%}, worse {np.mean(code == -1):.1%}; "
                    f"mean pairs {used.mean():.0f} of {suite.tasks * suite.repeats}",
                )
            )
    return cells


def coverage_cells(replicates: int, rng: np.random.Generator, effect: float = EFFECT) -> list[Cell]:
    plan = plan_sequential(BASELINE, effect)
    cells = []
    for suite in EFFECT_SUITES:
        code, used, covered = _suite_outcomes(suite, "compare", plan, replicates, rng)
        coverage = float(np.mean(covered))
        cells.append(
            Cell(
                "coverage",
                f"suite mean {suite.truth:+.2f}, tasks {suite.name}",
                "compare",
                replicates,
                "coverage at the stop",
                coverage,
                f"≥ {COVERAGE_FLOOR:.0%} (labelled approximate)",
                _at_least(coverage, COVERAGE_FLOOR, replicates),
                f"better {np.mean(code == 1):.1%}; mean pairs {used.mean():.0f}",
            )
        )
    return cells


# ---------------------------------------------------------------------------------------------
# PPI cells


def ppi_bias_cells(replicates: int, rng: np.random.Generator) -> list[Cell]:
    cells = []
    for rate in (0.5, 0.9):
        for n in PPI_LABELS:
            y, f, u = draw("lenient", rate, n, replicates, rng, judged=PPI_JUDGED)
            estimate, low, high, _ = ppi_bounds_batch(y, f, u)
            tuned = tuned_lambda(y, f, u)
            in_sample = tuned * u.mean(axis=1) + (y - tuned[:, None] * f).mean(axis=1)
            bias = float(estimate.mean() - rate)
            error = float(estimate.std() / math.sqrt(replicates))
            coverage = float(np.mean((low <= rate) & (rate <= high)))
            cells.append(
                Cell(
                    "ppi_bias",
                    f"lenient judge, θ = {rate:g}, {n} labels of {n + PPI_JUDGED}",
                    "uniform labels",
                    replicates,
                    "bias",
                    bias,
                    "bias within 3 MC errors of 0, and ≤ 0.005 in size",
                    abs(bias) <= max(3 * error, 1e-4) and abs(bias) <= 0.005,
                    f"± {error:.4f} MC; λ tuned on the same labels: "
                    f"{float(in_sample.mean() - rate):+.4f}; coverage {coverage:.1%}",
                )
            )
    return cells


def _picked(
    rng: np.random.Generator, judge: FloatArray, n: int, weight: float | None
) -> npt.NDArray[np.bool_]:
    """A labelled mask of `n` items: uniform (`weight` None), or drawn with the judge's "yes"
    answers `weight` times as likely (inf: only them)."""
    total = judge.size
    if weight is None:
        chosen = rng.permutation(total)[:n]
    elif math.isinf(weight):
        chosen = rng.permutation(np.flatnonzero(judge >= 0.5))[:n]
    else:
        p = np.where(judge >= 0.5, weight, 1.0)
        chosen = rng.choice(total, n, replace=False, p=p / p.sum())
    mask = np.zeros(total, dtype=bool)
    mask[chosen] = True
    return mask


SELECTIONS: tuple[tuple[str, float | None], ...] = (
    ("uniform (judge sample)", None),
    ("judge's yes 3× as likely", 3.0),
    ("only the judge's yes", math.inf),
)


def selection_cells(replicates: int, rng: np.random.Generator) -> list[Cell]:
    cells = []
    for judge_name in ("lenient", "continuous"):
        for n in (20, 50):
            for label, weight in SELECTIONS:
                y, f, _ = draw(judge_name, 0.5, 300, replicates, rng, judged=0)
                masks = np.stack([_picked(rng, judge, n, weight) for judge in f])
                warned = sum(
                    selection_check(judge[mask], judge[~mask]).chosen
                    for judge, mask in zip(f, masks, strict=True)
                )
                shape = (replicates, -1)
                _, low, high, _ = ppi_bounds_batch(
                    y[masks].reshape(shape), f[masks].reshape(shape), f[~masks].reshape(shape)
                )
                truth = y.mean(axis=1)  # the human mean over the judged questions
                covered = int(np.sum((low <= truth) & (truth <= high)))
                rate = warned / replicates
                uniform = weight is None
                cells.append(
                    Cell(
                        "selection",
                        f"{judge_name} judge, {n} labels of 300, labels {label}",
                        "labelled vs unlabelled",
                        replicates,
                        "warned",
                        rate,
                        "≤ 1%" if uniform else "reported",
                        _at_most(rate, SELECTION_CEILING, replicates) if uniform else None,
                        f"PPI interval covers the human mean {covered / replicates:.1%}",
                    )
                )
    return cells


# ---------------------------------------------------------------------------------------------
# The grid


ORDERS = ("compare", "harness", "grouped (time order)")


def run_grid(
    replicates: int,
    seed: int = 37,
    *,
    effect: float = EFFECT,
    bias_replicates: int = 20_000,
    progress: Callable[[Cell], None] | None = None,
) -> list[Cell]:
    """Every cell, `replicates` seeded datasets each (each group its own stream; the PPI bias
    cells `bias_replicates`, since a bias needs more than a rate). `effect` is the planned
    effect of the sequential plan (0.10 in the documented run; larger in the quick test, whose
    smaller plan is faster to calibrate)."""
    cells: list[Cell] = []
    groups: list[tuple[str, Callable[[np.random.Generator], list[Cell]]]] = [
        ("correlation", lambda rng: correlation_cells(replicates, rng, effect)),
        ("heterogeneity", lambda rng: heterogeneity_cells(replicates, rng, ORDERS, effect)),
        ("coverage", lambda rng: coverage_cells(replicates, rng, effect)),
        ("ppi_bias", lambda rng: ppi_bias_cells(bias_replicates, rng)),
        ("selection", lambda rng: selection_cells(replicates, rng)),
    ]
    for number, (_, run) in enumerate(groups):
        for cell in run(np.random.default_rng([seed, number])):
            cells.append(cell)
            if progress is not None:
                progress(cell)
    return cells


def _figure(cell: Cell) -> str:
    if cell.measure == "bias":
        return f"{cell.rate:+.4f}"
    return f"{cell.rate:.1%}"


def table(cells: Iterable[Cell]) -> str:
    """The grid as a Markdown table."""
    lines = [
        "| group | scenario | order | replicates | measure | figure | claim | holds | detail |",
        "|---|---|---|---:|---|---:|---|---|---|",
    ]
    for cell in cells:
        holds = "—" if cell.passed is None else ("yes" if cell.passed else "**NO**")
        lines.append(
            f"| {cell.group} | {cell.scenario} | {cell.order} | {cell.replicates:,} | "
            f"{cell.measure} | {_figure(cell)} | {cell.claim} | {holds} | {cell.detail} |"
        )
    return "\n".join(lines)


def failures(cells: Iterable[Cell]) -> list[Cell]:
    return [cell for cell in cells if cell.passed is False]


__all__ = [
    "Cell",
    "Suite",
    "failures",
    "order_compare",
    "order_harness",
    "pair_differences",
    "run_grid",
    "table",
]
