"""`plumbline compare`: paired A/B decision between agent arms from run records (the A/B schema)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from plumbline.cli.output import (
    EXIT_FAILED,
    Command,
    FiniteFloatRange,
    InputError,
    deprecation,
    error_console,
    json_option,
    markdown_option,
    parquet_option,
    progress_bar,
    seed_option,
    strict_records_option,
    write_output,
)
from plumbline.cli.prices import price_table_option
from plumbline.cli.report import html_option, publish_result, report_outputs
from plumbline.cli.sequential_options import sequential_options
from plumbline.cli.storing import StoreOptions, store_options, store_step
from plumbline.core.escape import terminal
from plumbline.core.limits import MAX_RESAMPLES, MIN_SEQUENTIAL_EFFECT

if TYPE_CHECKING:
    from plumbline.compare.result import (
        CompareReport,
        CompareSettings,
        Margins,
        SequentialSettings,
    )
    from plumbline.core.prices import PriceTable
    from plumbline.records.run_record import RunRecordTable

MAX_SHOWN_ERRORS = 20


RULES = ("schema", "ci")


def _rule(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """`schema` or `ci`; the old spelling `seed` still means `schema`, for one release."""
    if value == "seed":
        deprecation("--rule seed", "--rule schema (the A/B schema's three gates)")
        return "schema"
    if value not in RULES:
        raise click.BadParameter(f"{value!r} is not one of 'schema', 'ci'")
    return value


def _margins(ctx: click.Context, param: click.Parameter, value: str | None) -> Margins:
    from plumbline.compare.result import Margins

    if value is None:
        return Margins()
    try:
        return Margins.parse(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


@click.command(cls=Command)
@click.argument("records", nargs=-1, type=click.Path(dir_okay=False))
@click.option(
    "--treatment",
    "-t",
    "treatments",
    multiple=True,
    help="Treatment arm (repeat for several; each is compared with the control, Holm-corrected).",
)
@click.option("--control", "-c", help="Control arm.")
@click.option(
    "--rule",
    metavar="[schema|ci]",
    default="schema",
    show_default=True,
    callback=_rule,
    help="schema: the A/B schema's three gates on point values; ci: gates must exclude a "
    "regression beyond --margin.",
)
@click.option(
    "--margin",
    "margins",
    callback=_margins,
    metavar="success=0.05,duration=0.10,tokens=0.10",
    help="Margins for --rule ci: absolute for success rate, relative for duration and tokens.",
)
@click.option(
    "--resamples",
    type=click.IntRange(min=100, max=MAX_RESAMPLES),
    default=10_000,
    show_default=True,
    help=f"Bootstrap resamples (tasks, then repeats within task; at most {MAX_RESAMPLES:,}).",
)
@seed_option("Random seed of the bootstrap resampling (and of --sequential's pair order).")
@click.option(
    "--level",
    type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
    default=0.95,
    show_default=True,
    help="Confidence level of the intervals.",
)
@strict_records_option
@json_option
@markdown_option(help="Write a Markdown report.")
@parquet_option(
    help="Write one row per run record as Parquet (Inspect samples_df column names added)."
)
@html_option
@sequential_options(
    "--sequential",
    "Anytime-valid sequential verdict on paired success, pairs in a random order "
    "drawn from --seed (whatever the records' order); the success gate reads it.",
    effect_type=FiniteFloatRange(MIN_SEQUENTIAL_EFFECT, 1, max_open=True),
    effect_note="smaller ones need more pairs than an A/B of agents runs, and their plan "
    "takes minutes",
    planning=[
        click.option(
            "--baseline",
            type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
            help="--sequential: planned control pass rate (0.5 needs the most pairs)  "
            "[default: 0.5]",
        ),
        click.option(
            "--alpha",
            type=FiniteFloatRange(0, 1, min_open=True, max_open=True),
            help="--sequential: error rate over all looks  [default: 0.05]",
        ),
    ],
)
@click.option(
    "--fail-unless",
    type=click.Choice(["prefer-treatment"]),
    help="Exit with status 1 unless every treatment is preferred (for CI).",
)
@price_table_option
@store_options
def compare(
    records: tuple[str, ...],
    treatments: tuple[str, ...],
    control: str | None,
    rule: str,
    margins: Margins,
    resamples: int,
    seed: int,
    level: float,
    strict: bool,
    json_path: str | None,
    markdown_path: Path | None,
    parquet_path: Path | None,
    html_dir: Path | None,
    sequential: bool,
    effect: float | None,
    baseline: float | None,
    alpha: float | None,
    correlation: float | None,
    fail_unless: str | None,
    prices: PriceTable | None,
    store: StoreOptions,
) -> None:
    """Compare agent arms from run records: the A/B schema's three gates, paired deltas
    with bootstrap intervals, paired tests, and a decision.

    RECORDS are JSONL, JSON-array or concatenated-JSON files of run records. Name the arms with
    --treatment and --control (with only --control, every other arm is a treatment; with only
    --treatment, the one arm left is the control).

    --sequential takes the pairs in a random order (drawn from --seed, whatever the records'
    order) and stops at the first pair where an anytime-valid confidence sequence decides, or
    at the cap; the success gate reads that verdict.

    --prices FILE prices every run again from its per-model usage (`model_usage`) with that
    table; without it, the costs the records carry are used.
    """
    _require_records(records, json_path)
    from plumbline.compare.result import CompareSettings

    _check_inputs(records, rule, sequential)
    sequential_settings = _sequential_settings(
        click.get_current_context(),
        sequential,
        effect,
        baseline,
        alpha,
        margins,
        correlation=correlation,
        seed=seed,
    )
    table = _read_records(records, strict)
    settings = CompareSettings(
        rule="ci" if rule == "ci" else "schema",
        sequential=sequential_settings,
        margins=margins,
        n_resamples=resamples,
        level=level,
        seed=seed,
    )
    report = _compare_arms(table, treatments, control, settings, prices)
    _write_report(report, table, records, json_path, markdown_path, parquet_path, html_dir, store)
    _exit_on_failure(report, table, fail_unless)


def _require_records(records: tuple[str, ...], json_path: str | None) -> None:
    """Usage error without record files, with a hint when `--json` swallowed the only one."""
    if not records:
        hint = (
            f" (--json took {json_path!r} as its output path: put the record files first, or "
            "use --json with no path last)"
            if json_path not in (None, "-")
            else ""
        )
        raise click.UsageError(f"give at least one run record file{hint}")


def _read_records(records: tuple[str, ...], strict: bool) -> RunRecordTable:
    """Read the run records, printing the first problems with invalid ones to stderr."""
    from plumbline.records.io import InvalidRecordError
    from plumbline.records.run_record import read_run_records

    try:
        table = read_run_records(list(records), strict=strict)
    except InvalidRecordError as error:
        raise InputError(str(error)) from None
    for problem in table.errors[:MAX_SHOWN_ERRORS]:
        error_console.print(terminal(problem), soft_wrap=True)
    if len(table.errors) > MAX_SHOWN_ERRORS:
        error_console.print(f"... and {len(table.errors) - MAX_SHOWN_ERRORS} more problems")
    return table


def _compare_arms(
    table: RunRecordTable,
    treatments: tuple[str, ...],
    control: str | None,
    settings: CompareSettings,
    prices: PriceTable | None = None,
) -> CompareReport:
    """`app.compare_run.compare_arms` under a progress bar; an arm choice that does not fit is
    a usage error."""
    from plumbline.app.compare_run import compare_arms
    from plumbline.compare.analysis import CompareError

    try:
        return compare_arms(table, treatments, control, settings, progress_bar, prices)
    except CompareError as error:
        raise click.UsageError(str(error)) from None


def _write_report(
    report: CompareReport,
    table: RunRecordTable,
    records: tuple[str, ...],
    json_path: str | None,
    markdown_path: Path | None,
    parquet_path: Path | None,
    html_dir: Path | None,
    store: StoreOptions,
) -> None:
    """Write the Parquet, then publish the report: its Markdown, its page, the report (or its
    JSON on stdout) shown, and the stored result."""
    from plumbline.views.compare import render_markdown, render_terminal

    if parquet_path:
        from plumbline.app.frames import parquet_bytes, runs_frame

        write_output(parquet_path, parquet_bytes(runs_frame(table.frame)))
    sources = [Path(p) for p in records]
    outputs = report_outputs(
        report,
        sources,
        json_path=json_path,
        terminal_view=lambda console: render_terminal(report, console),
        markdown=(markdown_path, render_markdown),
        html_dir=html_dir,
        store=store_step(store, inputs=records),
        shown=report,
    )
    publish_result(report, sources, outputs)


def _exit_on_failure(report: CompareReport, table: RunRecordTable, fail_unless: str | None) -> None:
    """Exit 1 when `--fail-unless prefer-treatment` fails or invalid records were left out."""
    if fail_unless == "prefer-treatment" and not report.all_prefer_treatment():
        for line in fail_unless_reasons(report):
            click.echo(f"--fail-unless prefer-treatment: {line}", err=True)
        raise SystemExit(EXIT_FAILED)
    if table.errors:
        # README, exit codes: invalid records are exit 1 (the comparison left them out)
        click.echo(
            f"{table.invalid_records} invalid run record(s) were left out (listed above): exit 1",
            err=True,
        )
        raise SystemExit(EXIT_FAILED)


def _check_inputs(records: tuple[str, ...], rule: str, sequential: bool = False) -> None:
    """Usage errors before any work: `--margin` without `--rule ci` or `--sequential`, a record
    file that is missing or a directory (pipes and process substitution, `<(cat runs.jsonl)`,
    are files)."""
    ctx = click.get_current_context()
    if (
        rule != "ci"
        and not sequential
        and ctx.get_parameter_source("margins") is click.core.ParameterSource.COMMANDLINE
    ):
        raise click.UsageError(
            "--margin applies only to --rule ci or --sequential: add one, or drop --margin"
        )
    for path in records:
        # pipes and process substitution (`<(cat runs.jsonl)`) are ordinary inputs
        if not Path(path).exists():
            raise click.UsageError(f"{path}: no such file")
        if Path(path).is_dir():
            raise click.UsageError(f"{path}: a directory; give the run record files in it")


def _sequential_settings(
    ctx: click.Context,
    sequential: bool,
    effect: float | None,
    baseline: float | None,
    alpha: float | None,
    margins: Margins,
    *,
    correlation: float | None = None,
    seed: int = 0,
) -> SequentialSettings | None:
    from click.core import ParameterSource

    from plumbline.compare.result import SequentialSettings
    from plumbline.compare.sequential import DEFAULT_BASELINE, DEFAULT_EFFECT

    if not sequential:
        given = [
            f"--{name}"
            for name, value in (
                ("effect", effect),
                ("baseline", baseline),
                ("alpha", alpha),
                ("correlation", correlation),
            )
            if value is not None
        ]
        if given:
            raise click.UsageError(f"{', '.join(given)} only apply with --sequential")
        return None
    planned_effect = DEFAULT_EFFECT if effect is None else effect
    planned_baseline = DEFAULT_BASELINE if baseline is None else baseline
    if not 0 < planned_baseline + planned_effect < 1:
        raise click.UsageError(
            f"--baseline + --effect = {planned_baseline + planned_effect:g} must be below 1"
        )
    explicit = ctx.get_parameter_source("margins") not in (ParameterSource.DEFAULT, None)
    settings = SequentialSettings(
        effect=planned_effect,
        baseline=planned_baseline,
        alpha=0.05 if alpha is None else alpha,
        margin=margins.success if explicit and margins.success > 0 else None,
        correlation=0.0 if correlation is None else correlation,
        seed=seed,
    )
    from plumbline.stats.sequential import plan_sequential

    try:  # the plan is made again per comparison (its cap is cached)
        check_sequential_size(fixed_pairs(settings), "--effect, --baseline and --alpha")
        plan_sequential(
            settings.baseline,
            settings.effect,
            alpha=settings.alpha,
            correlation=settings.correlation,
        )
    except ValueError as error:
        raise click.UsageError(
            f"--sequential: no design for --effect {settings.effect:g} from --baseline "
            f"{settings.baseline:g}: {str(error).split(';')[0]}"
        ) from None
    return settings


def fixed_pairs(settings: SequentialSettings) -> int:
    """The pairs of the fixed design behind a sequential plan (closed form, no planning)."""
    from plumbline.stats.power import mcnemar_sample_size
    from plumbline.stats.sequential import DEFAULT_CORRELATION

    correlation = DEFAULT_CORRELATION if settings.correlation is None else settings.correlation
    return mcnemar_sample_size(
        settings.baseline, settings.effect, alpha=settings.alpha, correlation=correlation
    ).n


def check_sequential_size(pairs: int, options: str) -> None:
    """A usage error before any work when a sequential plan would rest on more than
    `MAX_SEQUENTIAL_PAIRS` pairs of the fixed design (its planning cost grows with them)."""
    from plumbline.core.limits import MAX_SEQUENTIAL_PAIRS

    if pairs > MAX_SEQUENTIAL_PAIRS:
        raise click.UsageError(
            f"--sequential: the design needs {pairs:,} pairs of the fixed design, more than "
            f"the bound of {MAX_SEQUENTIAL_PAIRS:,} a sequential plan is made for; plan for a "
            f"larger difference or a larger error rate ({options})"
        )


def fail_unless_reasons(report: CompareReport) -> list[str]:
    """Why `--fail-unless prefer-treatment` fails: each comparison not preferring its
    treatment, with the gates that did not hold for the treatment and their values."""
    from plumbline.views.compare import gate_format

    reasons: list[str] = []
    for comparison in report.comparisons:
        if comparison.decision_role == "treatment":
            continue
        failed = [
            f"{gate.name} ({gate.criterion}: "
            f"treatment {gate_format(gate.name)(gate.treatment)}, "
            f"control {gate_format(gate.name)(gate.control)})"
            for gate in comparison.gates
            if not gate.holds_for_treatment
        ]
        reasons.append(
            f"{comparison.treatment} vs {comparison.control} decided {comparison.decision!r}; "
            f"failed gate{'s' if len(failed) != 1 else ''}: {'; '.join(failed) or 'none'}"
        )
    return reasons
