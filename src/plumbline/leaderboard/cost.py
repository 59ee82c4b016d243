"""What each model's run cost, per category and overall, and the cost–score Pareto front.

Per category, cost per sample is the mean over questions of each question's mean cost over its
epochs: the unit the score's interval rests on (repeats averaged within question first). Per
model it is weighted over the categories that ran as the overall score is:
`Σ_c w_c · cost_c / Σ_c w_c`. The intervals are the studentized bootstrap over questions
(`stats.cost`), with the same draws for models scored on the same questions. Each priced
model's probability of being on the true cost–score front is the posterior of a hierarchical
model of the board's true scores and log costs, from the same questions (`stats.front`). Every
sample-epoch read costs, errored ones too (unless `--errors exclude` left them out). A cost is
null, with a note, when any of its samples has no price (an unpriced model, a kind of token the
table does not price, or no usage recorded).

Inspect's per-sample usage sums a sample's requests, so a long-context tier is decided on the
sample's summed prompt: for a model with tiers and samples near the threshold, price per request.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from plumbline.core.prices import PriceTable
from plumbline.leaderboard.collect import CategoryData
from plumbline.leaderboard.result import CategoryCost, CostInterval, ModelCost, ParetoEntry
from plumbline.leaderboard.scores import LEVEL, ModelScores
from plumbline.leaderboard.suite import Suite
from plumbline.leaderboard.usage import TOKEN_KINDS
from plumbline.stats.cost import (
    DEFAULT_REPLICATES,
    METHOD,
    CostEstimate,
    Stratum,
    cost_per_sample,
    draw_indices,
    on_front,
)
from plumbline.stats.front import FrontInput, front_posterior

PROVENANCE = "provider-reported"
#: The bootstrap's seed: the same logs give the same intervals and probabilities.
SEED = 48


def _stratum(key: str, data: CategoryData, weight: float) -> Stratum | None:
    """The category's question means of cost and score; None when any cell is unpriced."""
    present = ~np.isnan(data.matrix)
    costs = data.costs if data.costs is not None else np.full(data.matrix.shape, np.nan)
    if data.n == 0 or bool(np.any(present & np.isnan(costs))):
        return None
    counts = present.sum(axis=1)
    cost_means = np.where(present, costs, 0.0).sum(axis=1) / counts
    digest = hashlib.sha1(data.questions.tobytes()).hexdigest()[:16]
    return Stratum(cost_means, data.question_means(), weight, f"{key}:{digest}")


def _interval(estimate: CostEstimate | None) -> CostInterval:
    if estimate is None:
        return CostInterval(estimate=None, low=None, high=None, level=LEVEL, method=METHOD)
    return CostInterval(
        estimate=estimate.estimate,
        low=estimate.low,
        high=estimate.high,
        level=estimate.level,
        method=METHOD,
    )


def _note(notes: Counter[str], table: PriceTable) -> str:
    if not notes:
        return f"no sample was priced by price table {table.version}"
    reason, count = notes.most_common(1)[0]
    more = sum(notes.values()) - count
    return f"{reason} ({count} sample-epochs" + (f", {more} more unpriced)" if more else ")")


def _model_cost(
    model: str,
    suite: Suite,
    data: Mapping[tuple[str, str], CategoryData],
    draws: Mapping[str, np.ndarray],
    table: PriceTable,
) -> tuple[ModelCost, CostEstimate | None, list[Stratum]]:
    categories: dict[str, CategoryCost] = {}
    strata: list[Stratum] = []
    notes: Counter[str] = Counter()
    tokens = dict.fromkeys(TOKEN_KINDS, 0)
    total: float | None = 0.0
    for key in suite.keys:
        found = data.get((model, key))
        if found is None or found.n == 0:
            continue
        stratum = _stratum(key, found, suite.weights[key])
        notes.update(found.usage.note_counts())
        for kind, count in found.usage.token_totals().items():
            tokens[kind] += count
        estimate = None if stratum is None else cost_per_sample([stratum], draws, LEVEL)
        spent = None if stratum is None else float(np.nansum(found.usage.costs))
        total = None if spent is None or total is None else total + spent
        categories[key] = CategoryCost(
            per_sample_usd=_interval(estimate),
            total_usd=spent,
            tokens=found.usage.token_totals(),
        )
        if stratum is not None:
            strata.append(stratum)
    priced = bool(strata) and len(strata) == len(categories)
    overall = None
    if priced:
        # one category: the model's cost is that category's (same draws, same estimate)
        overall = estimate if len(strata) == 1 else cost_per_sample(strata, draws, LEVEL)
    cost = ModelCost(
        per_sample_usd=_interval(overall),
        total_usd=total if priced else None,
        tokens=tokens,
        provenance=PROVENANCE,
        price_table=table.version,
        categories=categories,
        note=None if priced else _note(notes, table),
    )
    return cost, overall, strata


def board_costs(
    suite: Suite,
    data: Mapping[tuple[str, str], CategoryData],
    models: Sequence[ModelScores],
    table: PriceTable,
    *,
    replicates: int = DEFAULT_REPLICATES,
) -> tuple[dict[str, ModelCost], list[ParetoEntry]]:
    """Each model's `ModelCost` and the priced models' probabilities of being on the front."""
    rng = np.random.default_rng(SEED)
    sizes: dict[str, int] = {}
    for (_, key), found in sorted(data.items()):
        stratum = _stratum(key, found, 1.0) if found.n else None
        if stratum is not None:
            sizes[stratum.key] = found.n
    draws = draw_indices(sizes, replicates, rng)
    costs: dict[str, ModelCost] = {}
    front_inputs: dict[str, FrontInput] = {}
    for scores in models:
        cost, estimate, strata = _model_cost(scores.model, suite, data, draws, table)
        costs[scores.model] = cost
        if estimate is not None:
            front_inputs[scores.model] = FrontInput(scores.overall, estimate.estimate, strata)
    return costs, pareto(front_inputs)


def pareto(inputs: Mapping[str, FrontInput]) -> list[ParetoEntry]:
    """`ParetoEntry`s of the priced models: each model's posterior probability of being on
    the true front (`stats.front`), and whether it is on the front of the point estimates."""
    if not inputs:
        return []
    items = list(inputs.values())
    point = on_front(np.array([i.score for i in items]), np.array([i.cost for i in items]))
    probabilities = front_posterior(items).probabilities
    return [
        ParetoEntry(model=model, probability_on_front=float(p), on_front=bool(front))
        for model, p, front in zip(inputs, probabilities, point, strict=True)
    ]
