"""`plumbline power --sequential`, and `--correlation unknown`: the anytime-valid sequential
design's cap and expected pairs, and the correlation a paired plan assumes."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

import click

from plumbline.cli.output import emit
from plumbline.core import present

if TYPE_CHECKING:
    from rich.console import Console

    from plumbline.stats import DetectableEffectResult, SampleSizeResult

UNKNOWN = "unknown"
R = TypeVar("R")


if TYPE_CHECKING:  # click 8.5 types are generic; older clicks are not (as in cli.output)
    _ParamType = click.ParamType[Any, Any]
else:
    _ParamType = click.ParamType


class CorrelationParam(_ParamType):
    """A correlation in [-1, 1], or `unknown` (plan at the lowest one the rates allow)."""

    name = "[-1..1|unknown]"

    def convert(self, value: Any, param: Any, ctx: Any) -> float | str:
        if isinstance(value, float | int) and not isinstance(value, bool):
            number = float(value)
        elif str(value).strip().lower() == UNKNOWN:
            return UNKNOWN
        else:
            try:
                number = float(str(value))
            except ValueError:
                self.fail(f"{value!r} is not a number in [-1, 1] nor 'unknown'", param, ctx)
        if not (math.isfinite(number) and -1 <= number <= 1):
            self.fail(f"{value!r} is not in the range -1<=x<=1", param, ctx)
        return number


@dataclass(frozen=True)
class PowerDesign:
    """The design `power` plans: a paired t test with `sd`, McNemar when `paired`, else two
    independent proportions from `baseline`; `common` (alpha, power, epochs, within_share) and
    `pairing` (correlation, discordant) are `stats.power`'s keyword arguments."""

    baseline: float | None
    paired: bool
    sd: float | None
    common: dict[str, Any]
    pairing: dict[str, Any]

    def sample_size(self, effect: float) -> SampleSizeResult:
        """The fixed design's questions needed to detect `effect`."""
        from plumbline import stats

        return self._solve(
            effect,
            stats.paired_sample_size,
            stats.mcnemar_sample_size,
            stats.two_proportion_sample_size,
        )

    def detectable(self, n: int, decrease: bool) -> DetectableEffectResult:
        """`power --n`: the smallest difference `n` questions can detect (a drop with
        `decrease`)."""
        from plumbline import stats

        return self._solve(
            n,
            stats.paired_minimum_detectable_effect,
            stats.mcnemar_minimum_detectable_effect,
            stats.two_proportion_minimum_detectable_effect,
            increase=not decrease,
        )

    def _solve(
        self,
        given: float,
        paired_t: Callable[..., R],
        mcnemar: Callable[..., R],
        two_proportions: Callable[..., R],
        **direction: bool,
    ) -> R:
        """The design's function of `stats.power` called with `given` (the effect, or the
        questions); `direction` (`increase`) goes to the proportions' functions alone."""
        if self.sd is not None:
            return paired_t(given, self.sd, **self.common)
        assert self.baseline is not None
        if self.paired:
            return mcnemar(self.baseline, given, **direction, **self.common, **self.pairing)
        return two_proportions(self.baseline, given, **direction, **self.common)


def sequential_correlation(
    correlation: float | str, baseline: float | None, effect: float | None
) -> float:
    """`--correlation` as given, else the sequential plan's default (0, not the paired design's
    0.5): the plan never assumes a positive correlation it was not given, so its power holds
    whatever the true correlation >= 0 (`stats.sequential`). `unknown`: the lowest correlation
    the planned rates allow (`stats.lowest_correlation`), so the power holds at any."""
    from click.core import ParameterSource

    from plumbline.stats.sequential import DEFAULT_CORRELATION, lowest_correlation

    if correlation == UNKNOWN:
        if baseline is None or effect is None:
            raise click.UsageError("--correlation unknown needs --baseline and --effect")
        try:
            return lowest_correlation(baseline, effect)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    source = click.get_current_context().get_parameter_source("correlation")
    if source in (ParameterSource.DEFAULT, None):
        return DEFAULT_CORRELATION
    return float(correlation)


def power_sequential(
    design: PowerDesign, effect: float | None, n: int | None, json_path: str | None
) -> None:
    """`power --sequential`: the cap and the expected pairs (terminal or JSON)."""
    if n is not None:
        raise click.UsageError("--sequential plans from --effect; --n does not apply")
    if design.common["epochs"] != 1 or design.common["within_share"] != 0:
        raise click.UsageError(
            "--sequential counts pairs: --epochs and --within-share do not apply"
        )
    assert effect is not None
    from plumbline.cli.compare import check_sequential_size

    try:
        fixed = replace(design, paired=True).sample_size(effect)
        check_sequential_size(fixed.n, "--effect, --sd or --baseline, and --alpha, --power")
        document = _sequential(design, effect)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    emit(document, json_path, lambda console: _render_sequential(console, document))


def _sequential(design: PowerDesign, effect: float) -> dict[str, Any]:
    from plumbline.stats import expected_pairs, plan_sequential, plan_sequential_continuous

    baseline = design.baseline
    alpha, power = design.common["alpha"], design.common["power"]
    if design.sd is not None:
        plan = plan_sequential_continuous(effect, design.sd, alpha=alpha, power=power)
    else:
        assert baseline is not None
        plan = plan_sequential(baseline, effect, alpha=alpha, power=power, **design.pairing)
    rows: list[dict[str, Any]] = []
    for multiple in (1.0, 1.5, 2.0):
        scaled = effect * multiple
        pairs: float | None
        if baseline is not None and not 0 < baseline + scaled < 1:
            pairs = None
        else:
            try:
                pairs = expected_pairs(plan, scaled)
            except ValueError:
                pairs = None  # e.g. the correlation is impossible at that effect
        rows.append(
            {
                "multiple": multiple,
                "effect": scaled,
                "expected_pairs": pairs,
                "ratio_to_fixed": None if pairs is None else pairs / plan.fixed_pairs,
            }
        )
    by_correlation: list[dict[str, Any]] = []
    if plan.outcome == "binary":
        from plumbline.stats.sequential import REPORTED_CORRELATIONS, power_at_correlations

        planned = float(plan.assumptions["correlation"] or 0.0)
        shown = sorted({*REPORTED_CORRELATIONS, planned})
        by_correlation = [asdict(row) for row in power_at_correlations(plan, shown)]
    return {**plan.to_dict(), "expected": rows, "power_by_correlation": by_correlation}


def _render_correlation_power(console: Console, document: dict[str, Any]) -> None:
    """Power at the planned effect if the arms' true within-pair correlation is another."""
    from rich.table import Table

    rows = document.get("power_by_correlation") or []
    if not rows:
        return
    grid = Table(
        "true correlation",
        "discordant pairs",
        "power at the planned effect",
        title="Power if the arms correlate otherwise (exact)",
    )
    for row in rows:
        grid.add_row(
            f"{row['correlation']:+.2g}",
            present.MISSING if row["discordant"] is None else present.percent(row["discordant"]),
            "impossible at these rates"
            if row["power"] is None
            else present.percent(row["power"], 1),
        )
    console.print(grid)
    console.print(
        "  negatively correlated arms (one tends to fail where the other passes) need more "
        "pairs; when the correlation is unknown, --correlation unknown plans at the lowest "
        "the rates allow, so the power holds at any correlation",
        soft_wrap=True,
    )


def _render_sequential(console: Console, document: dict[str, Any]) -> None:
    from rich.table import Table

    console.print("Sequential paired design (anytime-valid: a look after every pair)")
    if document["baseline"] is None:
        target = f"a mean difference of {document['effect']:+.4g}"
    else:
        baseline = document["baseline"]
        target = (
            f"{baseline:.3f} -> {baseline + document['effect']:.3f} ({document['effect']:+.3f})"
        )
    console.print(
        f"To detect {target} with power {document['power']:.0%} at alpha "
        f"{document['alpha']:g} (two-sided, over all looks):"
    )
    fixed_method = document["assumptions"]["fixed_method"]
    console.print(f"  fixed design: {document['fixed_pairs']} pairs ({fixed_method})")
    console.print(
        f"  [bold]cap: {document['max_pairs']} pairs[/bold] ({document['cap_ratio']:.2f}x the "
        f"fixed design); power at the cap {document['planned_power']:.1%}"
    )
    grid = Table("true effect", "expected pairs", "x fixed design", title="Expected pairs used")
    for row in document["expected"]:
        pairs = row["expected_pairs"]
        grid.add_row(
            f"{row['multiple']:g}x ({row['effect']:+.3g})",
            present.MISSING if pairs is None else f"{pairs:.0f}",
            present.MISSING if pairs is None else f"{row['ratio_to_fixed']:.2f}",
        )
    console.print(grid)
    _render_correlation_power(console, document)
    if "discordant" in document["assumptions"]:
        correlation = document["assumptions"].get("correlation")
        assumed = (
            ""
            if correlation is None
            else f"correlation {correlation:g} between the arms' outcomes within a pair"
            + (" (independent: the most pairs of any correlation >= 0)" if correlation == 0 else "")
            + ", so "
        )
        console.print(
            f"  assumes {assumed}{present.percent(document['assumptions']['discordant'])} of "
            "pairs discordant at the planned effect (--correlation, --discordant); the fixed "
            "design uses the same assumption"
        )
    console.print(f"  method: {document['method']} (docs/statistics.md)")
