"""`--tie-margin`, `--round-size` and `--budget`: how an adaptive run asks its questions, shared
by `plumbline run --adaptive` and `plumbline leaderboard --replay-adaptive`.

    @adaptive_options
    def run(..., adaptive: AdaptiveOptions) -> None:
        settings = adaptive.settings()
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from plumbline.cli.output import FiniteFloatRange

if TYPE_CHECKING:
    from plumbline.leaderboard.adaptive import AdaptiveSettings

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_ROUND_SIZE = 20


@dataclass(frozen=True)
class AdaptiveOptions:
    """The options of an adaptive run, as given (numbers only: no analysis imported)."""

    tie_margin: float = 0.0
    round_size: int = DEFAULT_ROUND_SIZE
    budget: Budget | None = None

    def settings(self) -> AdaptiveSettings:
        from plumbline.leaderboard.adaptive import AdaptiveSettings

        return AdaptiveSettings(
            tie_margin=self.tie_margin,
            round_size=self.round_size,
            budget_calls=self.budget.calls if self.budget is not None else None,
            budget_usd=self.budget.usd if self.budget is not None else None,
        )


@dataclass(frozen=True)
class Budget:
    """`--budget`: a number of calls, or US dollars."""

    calls: int | None = None
    usd: float | None = None


class BudgetType(click.ParamType):  # type: ignore[type-arg]
    """`N` calls (questions asked, summed over the models) or `$X` / `X usd` dollars."""

    name = "budget"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, Budget):
            return value
        text = str(value).strip().lower().replace(" ", "")
        dollars = text.startswith("$") or text.endswith("usd")
        number = text.removeprefix("$").removesuffix("usd")
        try:
            amount = float(number) if dollars else int(number)
        except ValueError:
            self.fail(f"{value!r} is neither a number of calls (500) nor dollars ($2.50)")
        if not (math.isfinite(amount) and amount > 0):
            self.fail(f"{value!r}: a budget must be above 0")
        return Budget(usd=float(amount)) if dollars else Budget(calls=int(amount))


def adaptive_options(function: F) -> F:
    """The three options, given to the command as one `adaptive: AdaptiveOptions` argument."""

    @functools.wraps(function)
    def wrapper(
        *args: Any,
        tie_margin: float,
        round_size: int,
        budget: Budget | None,
        **kwargs: Any,
    ) -> Any:
        adaptive = AdaptiveOptions(tie_margin, round_size, budget)
        return function(*args, adaptive=adaptive, **kwargs)

    decorated = click.option(
        "--budget",
        type=BudgetType(),
        help="Adaptive: stop before the round that would pass this budget: N calls (questions "
        "asked, summed over the models) or $X dollars (priced with the price table; each "
        "round projected at the models' cost per question so far, the first asked in full).",
    )(wrapper)
    decorated = click.option(
        "--round-size",
        type=click.IntRange(min=1, max=100_000),
        default=DEFAULT_ROUND_SIZE,
        show_default=True,
        help="Adaptive: questions asked per round (the pairs are looked at after each round).",
    )(decorated)
    decorated = click.option(
        "--tie-margin",
        type=FiniteFloatRange(min=0, max=0.5, max_open=True),
        default=0.0,
        show_default=True,
        help="Adaptive: δ. A pair is decided when its confidence sequence is above +δ or below "
        "−δ, and a certified tie when it lies inside ±δ (never at 0).",
    )(decorated)
    return decorated  # type: ignore[return-value]
