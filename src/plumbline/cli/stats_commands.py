"""`plumbline interval` and `plumbline power`: the statistics users want on their own."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import click

from plumbline.cli.output import FINITE, Command, FiniteFloatRange, emit, json_option
from plumbline.core import present

if TYPE_CHECKING:
    from rich.console import Console

    from plumbline.stats import DetectableEffectResult, SampleSizeResult

#: A number strictly between 0 and 1 (a level, a rate, a power).
OPEN_UNIT = FiniteFloatRange(0, 1, min_open=True, max_open=True)


#: Repeat counts shown in the `power` table when repeats can help (within-share > 0).
REPEAT_TABLE = (1, 2, 4, 8, 16)


def format_interval(
    statistic: float, low: float, high: float, label: str, level: float, n: int
) -> str:
    """`0.840 [0.715, 0.917] Wilson 95%, n=50`."""
    from plumbline.stats._validation import level_label

    return f"{statistic:.3f} [{low:.3f}, {high:.3f}] {label} {level_label(level)}, n={n}"


@click.command(cls=Command)
@click.option(
    "--successes",
    "-k",
    type=click.IntRange(min=0),
    required=True,
    help="Number of successes (e.g. 42).",
)
@click.option(
    "--trials", "-n", type=click.IntRange(min=1), required=True, help="Number of trials (e.g. 50)."
)
@click.option(
    "--method",
    type=click.Choice(["wilson", "exact", "wald"]),
    default="wilson",
    show_default=True,
    help="Wilson score, Clopper-Pearson exact, or Wald (normal; under-covers at small n).",
)
@click.option("--level", type=OPEN_UNIT, default=0.95, show_default=True, help="Confidence level.")
@json_option
def interval(successes: int, trials: int, method: str, level: float, json_path: str | None) -> None:
    """Estimate a success rate with its confidence interval.

    \b
    Example: plumbline interval --successes 42 --trials 50
    0.840 [0.715, 0.917] Wilson 95%, n=50
    """
    from plumbline.stats import proportion_interval

    try:
        result = proportion_interval(successes, trials, method=method, level=level)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    ci = result.interval
    text = format_interval(result.statistic, ci.low, ci.high, ci.method, ci.level, result.n)
    emit({**result.to_dict(), "text": text}, json_path, lambda console: console.print(text))


def _assumption_lines(result: SampleSizeResult | DetectableEffectResult, paired: bool) -> list[str]:
    lines: list[str] = []
    assumptions = result.assumptions
    if result.design == "paired proportions":
        psi = assumptions["discordant"]
        if assumptions.get("correlation") is None:
            lines.append(
                f"assumes {present.percent(psi)} discordant questions (one arm right, the other "
                "wrong)"
            )
        else:
            lines.append(
                f"assumes correlation {assumptions['correlation']:.2f} between the arms' "
                f"per-question outcomes\n  (--correlation): {present.percent(psi)} of questions "
                "discordant (or set --discordant)"
            )
    elif result.design == "paired difference":
        lines.append(f"assumes SD {assumptions['sd']:.4g} of the per-question differences (--sd)")
    elif paired:
        lines.append("assumes independent arms")
    share = float(assumptions.get("within_share", 0.0))
    if share > 0:
        lines.append(
            f"assumes {present.percent(share)} of a single run's variance is run-to-run noise\n"
            f"  (--within-share): {result.epochs} repeat(s) per question scale the variance "
            f"by {(1 - share) + share / result.epochs:.3f}"
        )
    return lines


def _design_title(design: str) -> str:
    return {
        "two independent proportions": "Two independent proportions (two-proportion z test)",
        "paired proportions": "Paired: both arms on the same questions (McNemar, Connor 1987)",
        "paired difference": "Paired difference of scores (paired t test)",
    }[design]


def _sample_size(
    *,
    baseline: float | None,
    effect: float,
    paired: bool,
    sd: float | None,
    common: dict[str, Any],
    pairing: dict[str, Any],
) -> SampleSizeResult:
    from plumbline.stats import mcnemar_sample_size, paired_sample_size, two_proportion_sample_size

    if sd is not None:
        return paired_sample_size(effect, sd, **common)
    assert baseline is not None
    if paired:
        return mcnemar_sample_size(baseline, effect, **common, **pairing)
    return two_proportion_sample_size(baseline, effect, **common)


UNKNOWN = "unknown"


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


def _sequential_correlation(
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


def _power_sequential(
    baseline: float | None,
    effect: float | None,
    sd: float | None,
    n: int | None,
    epochs: int,
    within_share: float,
    common: dict[str, Any],
    pairing: dict[str, Any],
    json_path: str | None,
) -> None:
    """`power --sequential`: the cap and the expected pairs (terminal or JSON)."""
    if n is not None:
        raise click.UsageError("--sequential plans from --effect; --n does not apply")
    if epochs != 1 or within_share != 0:
        raise click.UsageError(
            "--sequential counts pairs: --epochs and --within-share do not apply"
        )
    assert effect is not None
    from plumbline.cli.compare import check_sequential_size

    try:
        fixed = _sample_size(
            baseline=baseline, effect=effect, paired=True, sd=sd, common=common, pairing=pairing
        )
        check_sequential_size(fixed.n, "--effect, --sd or --baseline, and --alpha, --power")
        document = _sequential(baseline, effect, sd, common["alpha"], common["power"], pairing)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    emit(document, json_path, lambda console: _render_sequential(console, document))


def _sequential(
    baseline: float | None,
    effect: float,
    sd: float | None,
    alpha: float,
    power: float,
    pairing: dict[str, Any],
) -> dict[str, Any]:
    from plumbline.stats import expected_pairs, plan_sequential, plan_sequential_continuous

    if sd is not None:
        plan = plan_sequential_continuous(effect, sd, alpha=alpha, power=power)
    else:
        assert baseline is not None
        plan = plan_sequential(baseline, effect, alpha=alpha, power=power, **pairing)
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


def _detectable(
    *,
    baseline: float | None,
    n: int,
    paired: bool,
    sd: float | None,
    decrease: bool,
    common: dict[str, Any],
    pairing: dict[str, Any],
) -> DetectableEffectResult:
    from plumbline.stats import (
        mcnemar_minimum_detectable_effect,
        paired_minimum_detectable_effect,
        two_proportion_minimum_detectable_effect,
    )

    if sd is not None:
        return paired_minimum_detectable_effect(n, sd, **common)
    assert baseline is not None
    if paired:
        return mcnemar_minimum_detectable_effect(
            baseline, n, increase=not decrease, **common, **pairing
        )
    return two_proportion_minimum_detectable_effect(baseline, n, increase=not decrease, **common)


def _render_sample_size(
    console: Console,
    result: SampleSizeResult,
    table: list[dict[str, Any]],
    paired: bool,
    show_table: bool,
) -> None:
    from rich.table import Table

    console.print(_design_title(result.design))
    if result.design == "paired difference":
        target = f"a mean difference of {result.effect:+.4g}"
    else:
        baseline = result.assumptions["baseline"]
        target = f"{baseline:.3f} -> {result.assumptions['target']:.3f} ({result.effect:+.3f})"
    console.print(
        f"To detect {target} with power {result.power:.0%} at alpha {result.alpha:g} (two-sided):"
    )
    unit = "questions per arm" if result.per_arm else "questions"
    repeats = "once" if result.epochs == 1 else f"{result.epochs} times"
    console.print(
        f"  [bold]{result.n} {unit}[/bold], each run {repeats} per arm "
        f"({result.total_runs} scored runs)"
    )
    for line in _assumption_lines(result, paired):
        console.print(f"  {line}")
    if show_table:
        grid = Table("repeats per question", unit, "scored runs", title="With repeats")
        for row in table:
            grid.add_row(str(row["epochs"]), str(row["n"]), str(row["total_runs"]))
        console.print(grid)
    else:
        console.print(
            "  Repeats only shrink run-to-run noise: pass --within-share (from a pilot\n"
            "  with repeats) to see how many questions they save."
        )


def _render_detectable(console: Console, result: DetectableEffectResult, paired: bool) -> None:
    console.print(_design_title(result.design))
    unit = "questions per arm" if result.per_arm else "questions"
    repeats = "" if result.epochs == 1 else f" x {result.epochs} repeats"
    if result.baseline is None:
        detail = f"a mean difference of {result.effect:+.4g}"
    else:
        detail = (
            f"{result.effect:+.3f} ({result.baseline:.3f} -> {result.baseline + result.effect:.3f})"
        )
    console.print(
        f"With {result.n} {unit}{repeats}, power {result.power:.0%} at alpha "
        f"{result.alpha:g} (two-sided)\ndetects a change of at least [bold]{detail}[/bold]"
    )
    for line in _assumption_lines(result, paired):
        console.print(f"  {line}")


@click.command(cls=Command)
@click.option("--baseline", type=OPEN_UNIT, help="Current success rate, e.g. 0.80.")
@click.option(
    "--effect",
    type=FINITE,
    help="Change to detect (absolute), e.g. 0.05 for 0.80 -> 0.85; negative for a drop.",
)
@click.option("--paired", is_flag=True, help="Both arms answer the same questions (McNemar).")
@click.option(
    "--power",
    "power_",
    type=OPEN_UNIT,
    default=0.8,
    show_default=True,
    help="Chance of detecting the effect if it is real.",
)
@click.option("--alpha", type=OPEN_UNIT, default=0.05, show_default=True, help="Two-sided level.")
@click.option(
    "--n",
    "n",
    type=click.IntRange(min=2),
    help="Questions available (per arm if unpaired): print the minimum detectable effect.",
)
@click.option("--decrease", is_flag=True, help="With --n: look for a drop instead of a gain.")
@click.option(
    "--correlation",
    type=CorrelationParam(),
    default=0.5,
    show_default=True,
    help="Paired: correlation of the two arms' per-question outcomes (sets the discordant "
    "share; with --sequential the default is 0, and 'unknown' plans at the lowest correlation "
    "the rates allow: power at any correlation, more pairs).",
)
@click.option(
    "--discordant",
    type=FiniteFloatRange(0, 1, min_open=True),
    help="Paired: share of questions where exactly one arm is right (overrides --correlation).",
)
@click.option(
    "--sd",
    type=FiniteFloatRange(0, min_open=True),
    help="Paired continuous scores: SD of per-question differences (paired t; no --baseline).",
)
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Repeats per question.",
)
@click.option(
    "--within-share",
    type=FiniteFloatRange(0, 1, max_open=True),
    default=0.0,
    show_default=True,
    help="Share of a single run's variance that is run-to-run noise (0 = deterministic).",
)
@click.option(
    "--sequential",
    is_flag=True,
    help="Paired, anytime-valid sequential design (a look after every pair): the cap and the "
    "expected pairs at 1x, 1.5x and 2x the effect.",
)
@json_option
def power(
    baseline: float | None,
    effect: float | None,
    paired: bool,
    power_: float,
    alpha: float,
    n: int | None,
    decrease: bool,
    correlation: float | str,
    discordant: float | None,
    sd: float | None,
    epochs: int,
    within_share: float,
    sequential: bool,
    json_path: str | None,
) -> None:
    """How many questions (and repeats) are needed to detect a difference, or with --n, the
    smallest difference a given number of questions can detect.

    \b
    plumbline power --baseline 0.80 --effect 0.05 --paired
    plumbline power --baseline 0.80 --n 200 --paired
    plumbline power --sd 0.3 --effect 0.05         (paired continuous scores)
    plumbline power --baseline 0.60 --effect 0.10 --sequential

    Paired binary questions need an assumption about discordance: by default the two arms'
    per-question outcomes correlate at 0.5 (--correlation; 0 with --sequential, whose power
    then holds at any correlation >= 0); give --discordant to fix the share of questions where
    exactly one arm is right. Repeats (--epochs) shrink only the run-to-run
    share of the variance (--within-share, estimated from a pilot by repeated_measures_mean).
    """
    _check_power_options(baseline, effect, n, sd, power_, alpha)
    if sd is not None:
        paired = True
    common: dict[str, Any] = {
        "alpha": alpha,
        "power": power_,
        "epochs": epochs,
        "within_share": within_share,
    }
    if correlation == UNKNOWN and not sequential:
        raise click.UsageError("--correlation unknown applies with --sequential")
    pairing: dict[str, Any] = {"correlation": correlation, "discordant": discordant}
    if sequential:
        pairing["correlation"] = _sequential_correlation(correlation, baseline, effect)
        _power_sequential(baseline, effect, sd, n, epochs, within_share, common, pairing, json_path)
        return
    try:
        if n is not None:
            detectable = _detectable(
                baseline=baseline,
                n=n,
                paired=paired,
                sd=sd,
                decrease=decrease,
                common=common,
                pairing=pairing,
            )
            emit(
                detectable,
                json_path,
                lambda console: _render_detectable(console, detectable, paired),
            )
            return
        assert effect is not None
        result = _sample_size(
            baseline=baseline, effect=effect, paired=paired, sd=sd, common=common, pairing=pairing
        )
        show_table = within_share > 0
        table: list[dict[str, Any]] = []
        if show_table:
            table = _repeats_table(baseline, effect, paired, sd, epochs, common, pairing)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    emit(
        {**result.to_dict(), "repeats": table},
        json_path,
        lambda console: _render_sample_size(console, result, table, paired, show_table),
    )


def _check_power_options(
    baseline: float | None,
    effect: float | None,
    n: int | None,
    sd: float | None,
    power_: float,
    alpha: float,
) -> None:
    """Usage errors for option combinations `power` cannot answer."""
    if sd is None and baseline is None:
        raise click.UsageError("give --baseline (a success rate), or --sd for continuous scores")
    if n is None and effect is None:
        raise click.UsageError("give --effect to get the questions needed, or --n for the MDE")
    if n is not None and effect is not None:
        raise click.UsageError("give either --effect (questions needed) or --n (MDE), not both")
    if power_ <= alpha:
        raise click.BadParameter(
            f"{power_:g} is not above --alpha {alpha:g}: a test detects any effect, even none, "
            "with probability alpha, so a power at or below it needs no data at all",
            param_hint="--power",
        )


def _repeats_table(
    baseline: float | None,
    effect: float,
    paired: bool,
    sd: float | None,
    epochs: int,
    common: dict[str, Any],
    pairing: dict[str, Any],
) -> list[dict[str, Any]]:
    """Questions and total runs needed at each repeat count of the table (and --epochs)."""
    table: list[dict[str, Any]] = []
    for k in sorted({*REPEAT_TABLE, epochs}):
        row = _sample_size(
            baseline=baseline,
            effect=effect,
            paired=paired,
            sd=sd,
            common={**common, "epochs": k},
            pairing=pairing,
        )
        table.append({"epochs": k, "n": row.n, "total_runs": row.total_runs})
    return table
