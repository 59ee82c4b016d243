"""The cost columns of a leaderboard (Markdown, CSV, terminal): cost per sample with its
interval, the run's total, tokens by kind, provenance, price table and the posterior
probability of being on the cost–score front. Renders `ModelCost`; computes nothing."""

from __future__ import annotations

import math
from typing import Any

from plumbline.core import present
from plumbline.leaderboard.result import (
    CostInterval,
    LeaderboardDocument,
    LeaderboardRow,
    ModelCost,
)

TOKEN_KINDS = ("input", "output", "cache_read", "cache_write", "reasoning")


def usd(value: float | None) -> str:
    """Dollars with three significant digits below one cent (`$0.000123`), else `present.usd`."""
    if value is None or not math.isfinite(value):
        return present.MISSING
    if value == 0 or abs(value) >= 0.01:
        return present.usd(value)
    decimals = 2 - math.floor(math.log10(abs(value)))
    return f"${value:.{decimals}f}"


def per_sample_cell(cost: CostInterval) -> str:
    """`$0.00123 [$0.00110, $0.00140]`, or `—` when not priced."""
    if cost.estimate is None:
        return present.MISSING
    if cost.low is None or cost.high is None:
        return usd(cost.estimate)
    return f"{usd(cost.estimate)} [{usd(cost.low)}, {usd(cost.high)}]"


def has_cost(document: LeaderboardDocument) -> bool:
    return any(row.cost is not None for row in document.models)


def front_probabilities(document: LeaderboardDocument) -> dict[str, float]:
    return {entry.model: entry.probability_on_front for entry in document.pareto}


def markdown_cells(document: LeaderboardDocument, row: LeaderboardRow) -> list[str]:
    """The ranking table's cost cells: cost per sample [CI], total, probability on the front."""
    cost = row.cost
    if cost is None:
        return [present.MISSING] * 3
    probability = front_probabilities(document).get(row.model)
    return [
        per_sample_cell(cost.per_sample_usd),
        usd(cost.total_usd),
        present.MISSING if probability is None else present.fixed(probability, 2),
    ]


def markdown_section(document: LeaderboardDocument) -> list[str]:
    """`## Cost`: tokens by kind, provenance, price table and notes of each model."""
    rows: list[list[str]] = []
    for row in document.models:
        cost = row.cost
        if cost is None:
            continue
        rows.append(
            [
                row.model,
                *[present.number(cost.tokens.get(kind, 0)) for kind in TOKEN_KINDS],
                cost.provenance,
                cost.price_table,
                cost.note or "",
            ]
        )
    header = ["model", *[f"{kind} tokens" for kind in TOKEN_KINDS]]
    header += ["tokens from", "price table", "note"]
    return [
        "## Cost",
        "",
        "Cost per sample is the mean over questions of each question's cost (the unit the "
        "score rests on), weighted over categories as the overall is; its interval is a "
        "studentized bootstrap over questions. P(on front) is the model's posterior probability "
        "of being on the true cost–score front (no other model truly scores at least as high for "
        "at most the cost), from a hierarchical model of the models' true scores and costs "
        "estimated from this board. Simulated, it is calibrated within Monte Carlo error on "
        "average over boards drawn from that model (3–5 models, 20–500 questions, lognormal "
        "costs, one category). For one board it is not: when the models differ by more than "
        "their noise it errs toward caution (by up to about 7 points); when they are nearly "
        "equal it is much too confident (given 0.77, on the true front about half the time) "
        "(docs/statistics.md). "
        "A model the price table does not price has no cost (never $0).",
        "",
        present.markdown_table(header, rows, align="l" + "r" * len(TOKEN_KINDS) + "lll"),
    ]


def csv_columns(document: LeaderboardDocument, row: LeaderboardRow) -> dict[str, Any]:
    """The CSV's `cost.*` columns (empty when the model has no cost)."""
    cost: ModelCost | None = row.cost
    per_sample = None if cost is None else cost.per_sample_usd
    columns: dict[str, Any] = {
        "cost.per_sample_usd": None if per_sample is None else per_sample.estimate,
        "cost.per_sample_usd.low": None if per_sample is None else per_sample.low,
        "cost.per_sample_usd.high": None if per_sample is None else per_sample.high,
        "cost.total_usd": None if cost is None else cost.total_usd,
    }
    for kind in TOKEN_KINDS:
        columns[f"cost.tokens.{kind}"] = None if cost is None else cost.tokens.get(kind)
    columns["cost.provenance"] = None if cost is None else cost.provenance
    columns["cost.price_table"] = None if cost is None else cost.price_table
    columns["cost.probability_on_front"] = front_probabilities(document).get(row.model)
    columns["cost.note"] = None if cost is None else cost.note
    for key in document.categories:
        category = None if cost is None else cost.categories.get(key)
        columns[f"{key}.cost_per_sample_usd"] = (
            None if category is None else category.per_sample_usd.estimate
        )
    return columns
