"""Ranking with tie groups: neighbours whose overall difference is not significant share a group.

For each pair of adjacent models (sorted by overall), the overall difference is estimated paired
over the questions both models answered: in each category the question-level differences
`d_q = mean_epochs(A_q) − mean_epochs(B_q)` give `Δ_c = mean(d_q)` with `SE_c = sd(d_q)/√n`, and

    Δ = Σ w_c · Δ_c,   SE = sqrt(Σ w_c² · SE_c²),   df by Welch–Satterthwaite,

tested with a two-sided t test. A category only one model has enters as that model's score and
SE (the other's missing category is a fixed 0); a category the two share no questions in enters
unpaired. The p-values of the adjacent pairs are Holm-corrected together; a pair is tied when
the corrected p is at least α = 0.05, and a new group starts below each significant gap.

The seed's own reading is reported beside it: models within 5 points of overall are
"statistically equivalent" (its "Interpreting Close Scores"), chained the same way.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

from plumbline.leaderboard.scores import LEVEL, CategoryScore, ModelScores
from plumbline.leaderboard.suite import Suite
from plumbline.stats import holm, t_interval

ALPHA = 1 - LEVEL
SEED_EQUIVALENCE = 0.05


@dataclass(frozen=True)
class _Part:
    difference: float
    variance: float | None  # None: not estimable
    df: float
    shared: int
    paired: bool


@dataclass(frozen=True)
class Comparison:
    """The test between two models adjacent in the ranking (`higher` ranks above `lower`)."""

    higher: str
    lower: str
    overall_difference: float
    difference: float
    standard_error: float | None
    df: float | None
    low: float | None
    high: float | None
    pvalue: float | None
    pvalue_holm: float | None
    tied: bool
    seed_equivalent: bool
    shared_questions: dict[str, int]
    method: str = "paired t over shared questions, Holm across adjacent pairs"

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _category_part(a: CategoryScore, b: CategoryScore) -> _Part:
    if a.missing and b.missing:
        return _Part(0.0, 0.0, math.inf, 0, paired=False)
    if a.missing or b.missing:
        present, sign = (b, -1.0) if a.missing else (a, 1.0)
        se = present.standard_error
        return _Part(
            sign * present.contribution,
            None if se is None else se**2,
            max(present.n - 1, 1),
            0,
            paired=False,
        )
    common, ia, ib = np.intersect1d(a.questions, b.questions, return_indices=True)
    if common.size >= 2:
        differences = a.question_means[ia] - b.question_means[ib]
        estimate = t_interval(differences)
        se = estimate.standard_error
        return _Part(
            float(estimate.statistic),
            None if se is None else se**2,
            common.size - 1,
            int(common.size),
            paired=True,
        )
    # Too few shared questions to pair: compare the two category scores as independent.
    if a.standard_error is None or b.standard_error is None:
        variance = None
    else:
        variance = a.standard_error**2 + b.standard_error**2
    return _Part(
        a.contribution - b.contribution,
        variance,
        max(min(a.n, b.n) - 1, 1),
        int(common.size),
        paired=False,
    )


def paired_difference(
    suite: Suite, a: ModelScores, b: ModelScores
) -> tuple[float, float | None, float | None, dict[str, int]]:
    """Weighted overall difference A − B over shared questions: (Δ, SE, df, shared counts)."""
    weights = suite.weights
    difference = 0.0
    variance = 0.0
    satterthwaite = 0.0
    estimable = True
    shared: dict[str, int] = {}
    for key in suite.keys:
        part = _category_part(a.categories[key], b.categories[key])
        shared[key] = part.shared
        difference += weights[key] * part.difference
        if part.variance is None:
            estimable = False
            continue
        component = weights[key] ** 2 * part.variance
        variance += component
        if component > 0 and math.isfinite(part.df):
            satterthwaite += component**2 / part.df
    if not estimable:
        return difference, None, None, shared
    df = variance**2 / satterthwaite if satterthwaite > 0 else math.inf
    return difference, math.sqrt(variance), df, shared


def _two_sided_p(difference: float, se: float, df: float) -> float:
    if se == 0:
        return 1.0 if abs(difference) < 1e-12 else 0.0
    statistic = abs(difference) / se
    if math.isinf(df):
        return float(2 * sps.norm.sf(statistic))
    return float(2 * sps.t.sf(statistic, df))


def rank_models(
    suite: Suite, models: list[ModelScores]
) -> tuple[list[ModelScores], list[Comparison]]:
    """Sort by overall, test adjacent pairs, and assign rank, tie group and seed group."""
    ordered = sorted(models, key=lambda m: (-m.overall, m.model))
    raw: list[tuple[float, float | None, float | None, dict[str, int], float | None]] = []
    for higher, lower in itertools.pairwise(ordered):
        difference, se, df, shared = paired_difference(suite, higher, lower)
        pvalue = None if se is None or df is None else _two_sided_p(difference, se, df)
        raw.append((difference, se, df, shared, pvalue))

    tested = {index: item[4] for index, item in enumerate(raw) if item[4] is not None}
    adjusted: dict[int, float] = {}
    if tested:
        corrected = holm(list(tested.values()))
        adjusted = {index: float(p) for index, p in zip(tested, corrected, strict=True)}

    comparisons: list[Comparison] = []
    for index, (higher, lower) in enumerate(itertools.pairwise(ordered)):
        difference, se, df, shared, pvalue = raw[index]
        low = high = None
        if se is not None and df is not None:
            critical = (
                float(sps.norm.ppf(0.5 + LEVEL / 2))
                if math.isinf(df)
                else float(sps.t.ppf(0.5 + LEVEL / 2, df))
            )
            low, high = difference - critical * se, difference + critical * se
        p_holm = adjusted.get(index)
        overall_difference = higher.overall - lower.overall
        comparisons.append(
            Comparison(
                higher=higher.model,
                lower=lower.model,
                overall_difference=overall_difference,
                difference=difference,
                standard_error=se,
                df=None if df is None or math.isinf(df) else df,
                low=low,
                high=high,
                pvalue=pvalue,
                pvalue_holm=p_holm,
                # Without an SE the difference cannot be shown to be real: the pair stays tied.
                tied=p_holm is None or p_holm >= ALPHA,
                seed_equivalent=overall_difference <= SEED_EQUIVALENCE + 1e-12,
                shared_questions=shared,
            )
        )

    ranked: list[ModelScores] = []
    tie_group = seed_group = 1
    for index, model in enumerate(ordered):
        if index > 0:
            tie_group += not comparisons[index - 1].tied
            seed_group += not comparisons[index - 1].seed_equivalent
        ranked.append(
            ModelScores(
                model=model.model,
                categories=model.categories,
                overall=model.overall,
                overall_interval=model.overall_interval,
                rank=index + 1,
                tie_group=tie_group,
                seed_group=seed_group,
            )
        )
    return ranked, comparisons
