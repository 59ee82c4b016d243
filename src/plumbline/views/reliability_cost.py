"""The cost rows of a model's reliability figures (terminal, Markdown and page): cost per trial
and per prompt in dollars with their intervals over prompts, and per performance-heuristic
point, with what priced the tokens and where they came from."""

from __future__ import annotations

from plumbline.core import present
from plumbline.reliability.result import CostResult, ReliabilityInterval


def usd_interval(interval: ReliabilityInterval | None) -> str:
    """`[$0.0010, $0.0030] approximate (simulated 93%)`; `n/a` without bounds."""
    if interval is None or interval.low is None or interval.high is None:
        return "n/a"
    text = f"[{present.usd(interval.low)}, {present.usd(interval.high)}]"
    if interval.approximate and interval.simulated_coverage is not None:
        return f"{text} approximate (simulated {present.percent(interval.simulated_coverage, 0)})"
    return text + (" approximate" if interval.approximate else "")


def priced_by(cost: CostResult) -> str:
    """`openai/… tokens provider-reported, priced by plumbline-prices-…`."""
    table = cost.price_table or "--price"
    source = cost.provenance or "provider-reported"
    return f"{source} tokens of {cost.trials_priced} trials, priced by {table}"


def cost_figures(cost: CostResult) -> list[tuple[str, str, ReliabilityInterval | None]]:
    """(label, value with interval, interval) for each cost figure."""
    figures: list[tuple[str, str, ReliabilityInterval | None]] = []
    for label, value, interval in (
        ("cost per trial", cost.per_trial_usd, cost.per_trial_interval),
        ("cost per prompt", cost.per_prompt_usd, cost.per_prompt_interval),
    ):
        shown = cost.mean_cost_per_trial if value is None and label == "cost per trial" else value
        figures.append((label, f"{present.usd(shown)} {usd_interval(interval)}", interval))
    figures.append(
        (
            "cost per performance-heuristic point",
            present.usd(cost.cost_per_heuristic_point),
            None,
        )
    )
    return figures
