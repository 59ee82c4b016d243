"""`plumbline judge`: check that an LLM judge agrees with hand scores and cannot be fooled."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from plumbline.cli.output import (
    EXIT_FAILED,
    EXIT_USAGE,
    FiniteFloatRange,
    Group,
    OutputFile,
    concurrency_option,
    emit,
    json_option,
    limit_option,
    log_inputs,
    max_tokens_option,
    model_args_option,
    output_option,
    parse_model_args,
    renamed,
    seed_option,
    suite_option,
)
from plumbline.core import present
from plumbline.core.escape import terminal
from plumbline.core.limits import MAX_CONCURRENCY, MAX_EPOCHS

if TYPE_CHECKING:
    from rich.console import Console

    from plumbline.suites.sa_bench.scorers.calibration import (
        CalibrationItem,
        CalibrationReport,
        JudgeCalibration,
    )


PLAN_HINT = (
    "  plan human labels from the measured correlation: plumbline judge plan "
    "--correlation R --judged N --half-width H (R = the Pearson r above)"
)


@click.group(cls=Group)
def judge() -> None:
    """LLM-judge tools for the architecture_design category."""


def _adversarial_mark(fooled: bool | None) -> str:
    """FOOLED for an adversarial item scored high; UNSCORED when the judge never scored it."""
    return " UNSCORED" if fooled is None else " FOOLED" if fooled else ""


@judge.command()
@click.option(
    "--judge",
    "judge_models",
    multiple=True,
    required=True,
    metavar="MODEL",
    help="Judge model (Inspect model name, e.g. openai/gpt-4o). Repeat for several judges.",
)
@click.option(
    "--runs",
    default=3,
    show_default=True,
    type=click.IntRange(min=1, max=MAX_EPOCHS),
    help="Times each judge grades every item (self-consistency).",
)
@click.option(
    "--set",
    "calibration_set",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Calibration set JSONL (default: the packaged set).",
)
@limit_option(
    "Grade a seeded subset of this many items (adversarial items kept first), "
    "for a quick look with a slow judge."
)
@click.option(
    "--rubric",
    "rubric_version",
    default="v1",
    show_default=True,
    help="Rubric version shown to the judge.",
)
@seed_option("Random seed of generation (temperature is 0) and of the --limit subset.")
@model_args_option("every judge")
@max_tokens_option(
    "Most tokens per verdict; a reply cut off there is unscored.", default=512, minimum=16
)
@concurrency_option(
    "Judge requests in flight at once.",
    default=8,
    maximum=MAX_CONCURRENCY,
    old=("--max-concurrency",),
)
@renamed("--output", "--json PATH", "json_path", type=OutputFile())
@json_option
def calibrate(
    judge_models: tuple[str, ...],
    runs: int,
    calibration_set: Path | None,
    limit: int | None,
    rubric_version: str,
    seed: int,
    model_args: tuple[str, ...],
    max_tokens: int,
    concurrency: int,
    json_path: str | None,
) -> None:
    """Grade the hand-scored calibration set with each judge and report agreement.

    Per dimension: mean absolute error against the hand scores, the share within ±0.15,
    Spearman correlation, and run-to-run spread; the scores each adversarial response
    (keyword salad, prompt injection, off-topic) received; unscored verdicts. With several
    judges, also their mean and Krippendorff's alpha between them.

    Exit status 1 when a judge fails any threshold: Spearman < 0.70, MAE > 0.15, under 70%
    within ±0.15, run spread > 0.05, an adversarial item scored above 0.35, or over 5% of
    verdicts unscored.
    """
    import asyncio
    import logging

    from inspect_ai.model import get_model

    from plumbline.suites.sa_bench.scorers.calibration import (
        calibrate as run_calibration,
    )
    from plumbline.suites.sa_bench.scorers.calibration import heuristic_baseline

    items = _calibration_items(calibration_set, rubric_version, limit, seed)
    extra = parse_model_args(model_args)
    models = [get_model(name, memoize=False, **extra) for name in judge_models]
    report = asyncio.run(
        run_calibration(
            models,
            items,
            runs=runs,
            seed=seed,
            rubric_version=rubric_version,
            max_concurrency=concurrency,
            names=list(judge_models),
            max_tokens=max_tokens,
        )
    )
    result = {**report.to_dict(), "heuristic_baseline": heuristic_baseline(items).to_dict()}
    logging.getLogger(__name__).debug(
        "graded %d items with %s", len(items), ", ".join(judge_models)
    )
    emit(result, json_path, lambda console: _render_calibration(console, report, result))
    if not report.passed:
        sys.exit(EXIT_FAILED)


def _calibration_items(
    calibration_set: Path | None, rubric_version: str, limit: int | None, seed: int
) -> list[CalibrationItem]:
    """The calibration items to grade (a seeded subset with `--limit`); exit 2 if unusable."""
    from plumbline.suites.sa_bench.scorers.calibration import (
        calibration_subset,
        load_calibration,
    )
    from plumbline.suites.sa_bench.scorers.judge import load_rubric

    try:
        items = load_calibration(calibration_set)
        load_rubric(rubric_version)
        if limit is not None:
            items = calibration_subset(items, limit, seed)
    except ValueError as error:
        # plain echo: a `file:line:` location must never be wrapped across lines
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_USAGE)
    return items


def _render_calibration(
    console: Console, report: CalibrationReport, result: dict[str, Any]
) -> None:
    """Print each judge's (and the mean judge's) calibration, then agreement and baseline."""
    for calibration in [*report.judges, *([report.mean_judge] if report.mean_judge else [])]:
        _render_judge_calibration(console, calibration)
    console.print(PLAN_HINT)
    if report.agreement:
        alphas = ", ".join(f"{k} {present.fixed(v, 2)}" for k, v in report.agreement.items())
        console.print(f"Krippendorff's alpha between judges (interval): {terminal(alphas)}")
    base = result["heuristic_baseline"]["dimensions"]
    console.print(
        "heuristic scorer on the same set (for reference, not gated): Spearman "
        + ", ".join(f"{k} {present.fixed(v['spearman'], 2)}" for k, v in base.items())
    )


def _render_judge_calibration(console: Console, calibration: JudgeCalibration) -> None:
    """One judge's table per dimension, its adversarial scores, unscored count and failures."""
    from rich.table import Table

    verdict = "[green]PASS[/green]" if calibration.passed else "[red]FAIL[/red]"
    table = Table(
        title=f"{terminal(calibration.judge)}: {calibration.items} items × "
        f"{calibration.runs} runs — {verdict}",
        title_justify="left",
    )
    for column in (
        "dimension",
        "MAE",
        "within ±0.15",
        "Spearman",
        "Pearson r",
        "run spread",
    ):
        table.add_column(column, justify="left" if column == "dimension" else "right")
    for name, dim in calibration.dimensions.items():
        table.add_row(
            name,
            present.fixed(dim.mae, 3),
            present.percent(dim.within_share, 0),
            present.fixed(dim.spearman, 2),
            present.fixed(dim.correlation, 2),
            present.fixed(dim.run_spread, 3),
        )
    console.print(table)
    adversarial = ", ".join(
        f"{a['id']} {a['tier']} {present.fixed(a['judged'], 2)}{_adversarial_mark(a['fooled'])}"
        for a in calibration.adversarial
    )
    console.print(f"  adversarial (hand ≈ 0): {terminal(adversarial)}")
    console.print(f"  unscored verdicts: {calibration.unscored}")
    for failure in calibration.failures:
        console.print(f"  [red]✗[/red] {terminal(failure)}")


@judge.command("sample", directory_inputs=log_inputs)
@click.argument("logs", nargs=-1, required=True)
@click.option(
    "--per-model",
    "per_model",
    required=True,
    type=click.IntRange(min=1),
    help="Questions to label per model, drawn uniformly from that model's judged questions "
    "(the same questions for models scored on the same ones, so that differences pair up).",
)
@output_option(
    required=True,
    type=OutputFile(path_type=Path),
    help="Rows to label: JSONL, or CSV when the name ends in .csv (written atomically).",
)
@suite_option
@click.option(
    "--category",
    "categories",
    multiple=True,
    metavar="KEY",
    help="Category to sample (repeatable; default: every rubric-scored category).",
)
@seed_option("Random seed of the draw (the draw must be random for the correction to hold).")
@json_option
def sample(
    logs: tuple[str, ...],
    per_model: int,
    output: Path,
    suite: str,
    categories: tuple[str, ...],
    seed: int,
    json_path: str | None,
) -> None:
    """Draw a uniformly random subset of the judged samples in LOGS for humans to label.

    Each row carries model, task, sample_id, epoch, category, the question, the response, the
    judge's score and explanation, and an empty `value` for the human's score in [0, 1]. Give
    the filled file to `plumbline leaderboard LOGS --labels FILE`.
    """
    from plumbline.leaderboard import SuiteError, build_leaderboard, load_suite
    from plumbline.leaderboard.label_sampling import (
        draw_label_rows,
        paired_questions,
        write_label_rows,
    )

    try:
        resolved = load_suite(suite)
    except SuiteError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(EXIT_USAGE)
    unknown = [key for key in categories if key not in resolved.keys]
    if unknown:
        raise click.BadParameter(
            f"{', '.join(unknown)}: not a category of suite {resolved.name!r} "
            f"({', '.join(resolved.keys)})",
            param_hint="--category",
        )
    board = build_leaderboard(list(logs), resolved)
    chosen = list(categories) or [c.key for c in resolved.categories if c.scoring == "rubric"]
    rows = draw_label_rows(board.document(), [Path(p) for p in logs], chosen, per_model, seed)
    if not rows:
        click.echo(f"error: no judged samples of {', '.join(chosen)} in the logs", err=True)
        sys.exit(EXIT_FAILED)
    write_label_rows(output, rows)
    models = sorted({row["model"] for row in rows})
    paired = paired_questions(rows)
    draw = (
        "uniform over each model's own judged questions (one seeded order for all models); "
        "no question is added from outside a model's own"
    )
    summary = {
        "output": str(output),
        "rows": len(rows),
        "models": models,
        "seed": seed,
        "draw": draw,
        "paired_questions": paired,
    }

    def render(console: Console) -> None:
        console.print(
            f"{len(rows)} samples of {len(models)} model(s) to label written to "
            f"{terminal(output)}: fill in `value` (0–1) and pass it to "
            "`plumbline leaderboard LOGS --labels FILE`",
            soft_wrap=True,
        )
        console.print(f"Drawn {draw}.", soft_wrap=True)
        if len(models) > 1 and paired * len(models) < len(rows):
            console.print(
                f"The models were scored on different questions: {paired} of the drawn "
                "questions are labelled for every model (only those pair up for differences).",
                soft_wrap=True,
            )

    emit(summary, json_path, render)


@judge.command("plan")
@click.option(
    "--correlation",
    required=True,
    type=FiniteFloatRange(-1, 1),
    help="Judge–human correlation (from `judge calibrate` or a corrected leaderboard).",
)
@click.option(
    "--judged", required=True, type=click.IntRange(min=1), help="Samples the judge scores."
)
@click.option(
    "--half-width",
    "half_width",
    required=True,
    type=FiniteFloatRange(0, 0.5, min_open=True),
    help="The 95% interval half-width wanted (0.05 = ±5 points).",
)
@click.option(
    "--rate",
    default=0.5,
    show_default=True,
    type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
    help="The expected score (0.5 is the worst case).",
)
@json_option
def plan(
    correlation: float, judged: int, half_width: float, rate: float, json_path: str | None
) -> None:
    """Human labels needed for a half-width, with the judge (PPI++) and without it, planned at
    the λ the estimator will use (clipped to [0, 1]: no gain from a negative correlation)."""
    from plumbline.stats import label_budget

    budget = label_budget(correlation, judged, half_width, rate=rate)

    def render(console: Console) -> None:
        needed = budget.labels_needed
        with_judge = (
            f"{needed} labels"
            if needed is not None
            else f"not reachable with {judged} judged samples (label more, or judge more)"
        )
        lam = budget.lambda_planned
        clipped = (
            " (a negative correlation gains nothing: the estimator clips λ to [0, 1], so it "
            "uses the labels alone)"
            if correlation < 0
            else ""
        )
        console.print(
            f"±{present.fixed(half_width, 3)} at 95% with a judge of correlation "
            f"{present.fixed(correlation, 2)} on {judged} samples, planned at the λ the "
            f"estimator uses, {present.fixed(lam, 2)}{clipped}: {with_judge}; "
            f"without the judge: {budget.labels_needed_without_judge} labels",
            soft_wrap=True,
        )

    emit(budget.to_dict(), json_path, render)
