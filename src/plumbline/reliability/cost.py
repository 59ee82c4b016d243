"""What a model's trials cost, from the provider's usage in the probe's records: the mean cost of
a trial and of a prompt (all its trials), with intervals over prompts, and per point of the
performance heuristic.

A trial's cost is its input and output tokens (as the provider reported them) priced by the
model's `--price MODEL=IN:OUT`, or else by the price table (`--prices FILE`). Over the prompts
`p = 1..P` that have priced trials, with `c_pt` the cost of trial t of prompt p and `T_p` its
priced trials:

    per trial  = (1/P) Σ_p (1/T_p) Σ_t c_pt     (trials averaged within prompt first)
    per prompt = (1/P) Σ_p Σ_t c_pt             (what one prompt's trials cost together)

Both intervals are the studentized bootstrap over prompts that prices the leaderboard
(`stats.cost.cost_per_sample`: prompts resampled, each bound the further of the equal-tailed and
symmetric bootstrap-t bounds); its coverage is measured in docs/statistics.md
(`benchmarks/bench_cost.py`) and is below 93.5% in its smallest, heaviest-tailed cell, so the
interval is labelled approximate.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from plumbline.core.prices import PriceTable, TokenCounts
from plumbline.records.trial_record import TrialRecord
from plumbline.reliability.result import (
    CostResult,
    PerformanceResult,
    ReliabilityInterval,
)
from plumbline.stats.cost import METHOD, Stratum, cost_per_sample, draw_indices

#: Where the probe's token counts come from.
PROVENANCE = "provider-reported"
#: The lowest coverage simulated for the cost interval (σ = 1, 20 prompts; docs/statistics.md).
COST_COVERAGE = 0.925
LEVEL = 0.95
REPLICATES = 2000


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input_per_million: float
    output_per_million: float

    def __post_init__(self) -> None:
        if self.input_per_million < 0 or self.output_per_million < 0:
            raise ValueError("prices must be non-negative")

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (
            input_tokens * self.input_per_million + output_tokens * self.output_per_million
        ) / 1e6


@dataclass(frozen=True)
class Pricing:
    """How one model's trials are priced: its `--price` rate, else the price table's entry for
    `model` (the model's name in the records)."""

    model: str
    price: Price | None = None
    table: PriceTable | None = None

    @property
    def label(self) -> str:
        if self.price is not None or self.table is None:
            return "--price"
        return self.table.version

    def trial_cost(self, record: TrialRecord) -> tuple[float | None, str | None]:
        """The trial's cost, or None with the reason."""
        tokens_in, tokens_out = record.input_tokens or 0, record.output_tokens or 0
        if self.price is not None:
            return self.price.cost(tokens_in, tokens_out), None
        if self.table is None:
            return None, "no price"
        found = self.table.cost(self.model, TokenCounts(input=tokens_in, output=tokens_out))
        return found.usd, found.note


def priced_cost(record: TrialRecord, pricing: Pricing) -> float:
    """A successful trial's cost in USD by `pricing`; NaN for a failed trial, one without
    token counts, or one its pricing cannot price."""
    if not record.ok or record.input_tokens is None or record.output_tokens is None:
        return math.nan
    usd, _ = pricing.trial_cost(record)
    return math.nan if usd is None else usd


def price_problem(records: Sequence[TrialRecord], pricing: Pricing | None) -> str | None:
    """Why `records` (one model's trials) cannot be priced, or None: no price, the price table
    lacks the model, or no successful trial reports token counts."""
    if pricing is None:
        return "no price: give --price MODEL=IN:OUT or --prices FILE"
    ok = [r for r in records if r.ok]
    counted = [r for r in ok if r.input_tokens is not None and r.output_tokens is not None]
    if not counted:
        return "no successful trial reports token counts"
    usd, note = pricing.trial_cost(counted[0])
    return None if usd is not None else f"no cost: {note}"


def pricing_of(
    name: str, model: str, prices: Mapping[str, Price], table: PriceTable | None
) -> Pricing | None:
    """How the trials of `name` (a configuration of `model`) are priced, if at all: its
    `--price` (or its model's), else the price table."""
    if name in prices:
        return Pricing(model, price=prices[name])
    if model in prices:
        return Pricing(model, price=prices[model])
    return None if table is None else Pricing(model, table=table)


def _interval(
    values: Sequence[float], trials: int, seed: int
) -> tuple[float, ReliabilityInterval | None]:
    """The mean over prompts and its bootstrap-t interval (module docstring)."""
    costs = np.asarray(values, dtype=np.float64)
    stratum = Stratum(costs, np.zeros(costs.size), 1.0, "prompts")
    draws = draw_indices({"prompts": costs.size}, REPLICATES, np.random.default_rng(seed))
    estimate = cost_per_sample([stratum], draws, LEVEL)
    if estimate.low is None or estimate.high is None:
        return estimate.estimate, None
    interval = ReliabilityInterval(
        low=estimate.low,
        high=estimate.high,
        level=LEVEL,
        method=f"{METHOD.replace('questions', 'prompts')}, approximate",
        prompts=int(costs.size),
        trials=trials,
        coverage="approximate",
        simulated_coverage=COST_COVERAGE,
    )
    return estimate.estimate, interval


def cost_result(
    model: str,
    ok: list[TrialRecord],
    pricing: Pricing | None,
    performance: PerformanceResult | None,
    seed: int,
) -> tuple[CostResult | None, list[str]]:
    """The model's `CostResult` (None without a price, with a warning when one was asked for)."""
    if pricing is None:
        return None, []
    priced = [r for r in ok if r.input_tokens is not None and r.output_tokens is not None]
    if not priced:
        return None, [f"{model}: a price was given but no trial reports token counts"]
    by_prompt: dict[str, list[float]] = defaultdict(list)
    for record in priced:
        usd, note = pricing.trial_cost(record)
        if usd is None:
            return None, [f"{model}: no cost: {note}"]
        by_prompt[record.prompt_id].append(usd)
    mean_cost = float(np.mean([c for costs in by_prompt.values() for c in costs]))
    prompts = [by_prompt[p] for p in sorted(by_prompt)]
    per_trial, trial_interval = _interval([float(np.mean(c)) for c in prompts], len(priced), seed)
    per_prompt, prompt_interval = _interval([float(np.sum(c)) for c in prompts], len(priced), seed)
    per_point = (
        mean_cost / performance.score if performance is not None and performance.score > 0 else None
    )
    return CostResult(
        mean_cost_per_trial=mean_cost,
        trials_priced=len(priced),
        cost_per_heuristic_point=per_point,
        per_trial_usd=per_trial,
        per_trial_interval=trial_interval,
        per_prompt_usd=per_prompt,
        per_prompt_interval=prompt_interval,
        prompts_priced=len(prompts),
        price_table=pricing.label,
        provenance=PROVENANCE,
    ), []
