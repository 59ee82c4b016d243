"""`plumbline interval` and `plumbline power`: the statistics users want on their own."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from plumbline.cli.output import (
    FINITE,
    Command,
    FiniteFloatRange,
    choice_option,
    emit,
    json_option,
)
from plumbline.cli.power_sequential import (
    UNKNOWN,
    CorrelationParam,
    PowerDesign,
    power_sequential,
    sequential_correlation,
)
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
@choice_option(
    "--method",
    choices=["wilson", "exact", "wald"],
    default="wilson",
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
        pairing["correlation"] = sequential_correlation(correlation, baseline, effect)
    design = PowerDesign(baseline, paired, sd, common, pairing)
    if sequential:
        power_sequential(design, effect, n, json_path)
        return
    try:
        if n is not None:
            detectable = design.detectable(n, decrease)
            emit(
                detectable,
                json_path,
                lambda console: _render_detectable(console, detectable, paired),
            )
            return
        assert effect is not None
        result = design.sample_size(effect)
        show_table = within_share > 0
        table: list[dict[str, Any]] = []
        if show_table:
            table = _repeats_table(design, effect)
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


def _repeats_table(design: PowerDesign, effect: float) -> list[dict[str, Any]]:
    """Questions and total runs needed at each repeat count of the table (and --epochs)."""
    table: list[dict[str, Any]] = []
    for k in sorted({*REPEAT_TABLE, design.common["epochs"]}):
        row = replace(design, common={**design.common, "epochs": k}).sample_size(effect)
        table.append({"epochs": k, "n": row.n, "total_runs": row.total_runs})
    return table
