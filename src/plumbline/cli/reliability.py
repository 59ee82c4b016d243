"""`plumbline probe` (run repeated trials) and `plumbline reliability` (the CERT metrics)."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from plumbline.cli.output import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    Command,
    FiniteFloatRange,
    InfraError,
    InputError,
    InputFile,
    OutputJournal,
    concurrency_option,
    emit,
    error_console,
    json_option,
    markdown_option,
    max_tokens_option,
    model_args_option,
    output_option,
    parquet_option,
    parse_model_args,
    progress_bar,
    quiet,
    seed_option,
    stdout_for_json_only,
    warn,
    write_output,
)
from plumbline.cli.prices import PRICES_HELP, PriceTableType
from plumbline.cli.report import html_option, publish_result, report_outputs
from plumbline.cli.storing import StoreOptions, store_options, store_step
from plumbline.core.escape import terminal
from plumbline.core.limits import MAX_CONCURRENCY, MAX_RESAMPLES, MAX_TRIALS

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import TaskID

    from plumbline.app.reliability_run import BaselineRun, RegressionOptions
    from plumbline.core.prices import PriceTable
    from plumbline.probe.runner import ProbeSummary
    from plumbline.probe.settings import ProbeSettings, Prompt
    from plumbline.records.io import ReadResult
    from plumbline.records.trial_record import TrialRecord
    from plumbline.results.stored import ResultDocument


def _parse_model_arg(values: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
    return tuple(parse_model_args(values).items())


@click.command(cls=Command)
@click.option(
    "--model",
    "models",
    multiple=True,
    required=True,
    help="Inspect model name (repeat for several), e.g. openai/gpt-4o or "
    "openai-api/local/my-model (with LOCAL_BASE_URL and LOCAL_API_KEY set).",
)
@click.option("--prompt", "prompt_texts", multiple=True, help="A prompt (repeatable).")
@click.option(
    "--prompts",
    "prompts_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Prompts file: JSONL ({'id', 'prompt'}) or text with one prompt per line.",
)
@click.option(
    "--trials",
    default=20,
    show_default=True,
    type=click.IntRange(min=1, max=MAX_TRIALS),
    help=f"Trials per model and prompt (at most {MAX_TRIALS:,}).",
)
@concurrency_option("Model calls in flight at once.", default=8, maximum=MAX_CONCURRENCY)
@click.option(
    "--timeout",
    default=30.0,
    show_default=True,
    type=FiniteFloatRange(min=0, min_open=True, max=604800),
    help="Seconds per call.",
)
@click.option(
    "--temperature",
    default=0.7,
    show_default=True,
    type=FiniteFloatRange(min=0, max=100),
    help="Sampling temperature of every call (reliability needs the variation).",
)
@seed_option("Random seed that shuffles the call order; trial i is sent seed + i.")
@max_tokens_option("Most tokens a model may generate per trial.", default=1024)
@click.option(
    "--retries",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="Retries allowed per trial (timeouts, 429, 5xx, connection errors); counted per trial.",
)
@click.option("--stream/--no-stream", default=False, help="Stream responses (records TTFT).")
@model_args_option("every --model")
@output_option(
    required=True,
    type=OutputJournal(path_type=Path),
    help="Trial journal (JSONL). Rerunning the same command resumes it.",
)
@click.option(
    "--allow-config-change",
    is_flag=True,
    help="Add trials to a journal written with other generation settings (temperature, "
    "seed, max tokens, timeout, retries, streaming, -M arguments); without it such a rerun "
    "stops. reliability reports each configuration separately.",
)
@click.option("--progress/--no-progress", default=True, help="Show a progress bar on stderr.")
@json_option
def probe(
    models: tuple[str, ...],
    prompt_texts: tuple[str, ...],
    prompts_file: Path | None,
    trials: int,
    concurrency: int,
    timeout: float,
    temperature: float,
    seed: int,
    max_tokens: int,
    retries: int,
    stream: bool,
    model_args: tuple[str, ...],
    output: Path,
    allow_config_change: bool,
    progress: bool,
    json_path: str | None,
) -> None:
    """Call models repeatedly with the same prompts and journal every trial.

    Calls are shuffled with the seed so that models share a time window, run with bounded
    concurrency, and are appended (and flushed) as they complete. Provider retries are off
    unless --retries is given. One probe writes a journal at a time (OUTPUT.lock), and a
    journal keeps one generation configuration unless --allow-config-change. Then run
    `plumbline reliability OUTPUT`.
    """
    from plumbline.probe.settings import ProbeSettings

    prompts = _probe_prompts(prompt_texts, prompts_file)
    try:
        settings = ProbeSettings(
            models=models,
            prompts=tuple({p.id: p for p in prompts}.values()),
            trials=trials,
            concurrency=concurrency,
            timeout=timeout,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            retries=retries,
            stream=stream,
            model_args=_parse_model_arg(model_args),
        )
    except ValueError as error:
        raise click.UsageError(str(error)) from None

    summary = _run_probe(settings, output, allow_config_change, progress, json_path)
    emit(summary, json_path, lambda out: _render_probe_summary(out, summary, output))


def _probe_prompts(prompt_texts: tuple[str, ...], prompts_file: Path | None) -> list[Prompt]:
    """The `--prompt` texts, then the `--prompts` file's; at least one is a usage rule."""
    from plumbline.probe.settings import Prompt, load_prompts, prompt_id_for

    prompts = [Prompt(prompt_id_for(text), text) for text in prompt_texts]
    if prompts_file is not None:
        try:
            prompts += load_prompts(prompts_file)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--prompts") from None
    if not prompts:
        raise click.UsageError("give at least one --prompt or a --prompts file")
    return prompts


def _run_probe(
    settings: ProbeSettings,
    output: Path,
    allow_config_change: bool,
    progress: bool,
    json_path: str | None,
) -> ProbeSummary:
    """Run the probe with a progress bar counting failed trials; Ctrl-C stops it resumably."""
    import asyncio

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from plumbline.core.redaction import secret_arguments
    from plumbline.probe.errors import redact, secrets_from_environment
    from plumbline.probe.runner import run_probe

    secrets = [*secrets_from_environment(), *secret_arguments(settings.model_args)]
    bar = Progress(
        TextColumn("[bold]probe"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("errors: {task.fields[errors]}"),
        TimeElapsedColumn(),
        console=error_console,
        disable=not progress or quiet(),
        transient=False,
    )
    task: TaskID | None = None
    failures = 0

    def on_plan(planned: int, done: int) -> None:
        nonlocal task
        task = bar.add_task("probe", total=planned, completed=done, errors=0)

    def on_record(record: TrialRecord) -> None:
        nonlocal failures
        if record.error_class is not None:
            failures += 1
        if task is not None:
            bar.update(task, advance=1, errors=failures)

    try:
        with bar, stdout_for_json_only(json_path):
            return asyncio.run(
                run_probe(
                    settings,
                    output,
                    on_record=on_record,
                    on_plan=on_plan,
                    allow_config_change=allow_config_change,
                    processes=None,  # one per core at high concurrency
                )
            )
    except KeyboardInterrupt:
        warn("interrupted: completed trials are in %s; rerun the same command to resume", output)
        sys.exit(EXIT_INTERRUPTED)
    except (RuntimeError, ValueError) as error:
        raise InputError(redact(str(error), secrets)) from None  # a setting or model to fix


def _render_probe_summary(out: Console, summary: ProbeSummary, output: Path) -> None:
    """What the probe ran, failed trials by class, journal notes, and the next command."""
    out.print(
        f"{summary.completed} trials run, {summary.already_done} already in "
        f"{terminal(output)} "
        f"({summary.planned} planned) in {summary.elapsed_seconds:.1f} s "
        f"({summary.trials_per_second:.1f} trials/s)"
    )
    if summary.errors:
        counts = ", ".join(f"{name} {count}" for name, count in sorted(summary.errors.items()))
        out.print(f"failed trials by class: {counts}")
    if summary.config_mismatches:
        out.print(
            f"note: {summary.config_mismatches} trials in {output} were sent with other "
            "generation settings (--allow-config-change); reliability reports each "
            "configuration separately"
        )
    if summary.duplicates_in_journal:
        out.print(f"warning: the journal holds {summary.duplicates_in_journal} duplicates")
    out.print(f"next: plumbline reliability {terminal(output)}")


def _parse_price(values: tuple[str, ...]) -> dict[str, Any]:
    from plumbline.reliability.analysis import Price

    prices: dict[str, Price] = {}
    for value in values:
        model, sep, rates = value.rpartition("=")
        first, colon, second = rates.partition(":")
        try:
            if not sep or not model or not colon:
                raise ValueError
            rates_given = (float(first), float(second))
        except ValueError:
            raise click.BadParameter(
                f"expected MODEL=INPUT_USD_PER_1M:OUTPUT_USD_PER_1M, got {value!r}",
                param_hint="--price",
            ) from None
        if not all(math.isfinite(rate) and 0 <= rate <= MAX_PRICE for rate in rates_given):
            raise click.BadParameter(
                f"{value!r}: prices are USD per million tokens, finite numbers from 0 to "
                f"{MAX_PRICE:g}",
                param_hint="--price",
            )
        prices[model] = Price(*rates_given)
    return prices


#: The largest price per million tokens `--price` takes (USD).
MAX_PRICE = 1_000_000.0


def _parse_assignments(values: tuple[str, ...], option: str, what: str) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key.strip() or not rest.strip():
            raise click.BadParameter(f"expected {what}, got {value!r}", param_hint=option)
        parsed[key.strip()] = rest.strip()
    return parsed


def _parse_margins(values: tuple[str, ...]) -> dict[str, float]:
    from plumbline.reliability.regression import ALL_METRICS as METRICS

    margins: dict[str, float] = {}
    for metric, text in _parse_assignments(values, "--margin", "METRIC=VALUE").items():
        if metric not in METRICS:
            raise click.BadParameter(
                f"unknown metric {metric!r}: one of {', '.join(METRICS)}", param_hint="--margin"
            )
        try:
            margin = float(text)
        except ValueError:
            margin = -1.0
        if not (margin >= 0 and margin < float("inf")):
            raise click.BadParameter(
                f"{metric}: the margin must be a non-negative number, got {text!r}",
                param_hint="--margin",
            )
        margins[metric] = margin
    return margins


def _regression_options(
    baseline_paths: tuple[Path, ...],
    margins: tuple[str, ...],
    pairs: tuple[str, ...],
    tested: tuple[str, ...],
    fail_on_regression: bool,
) -> RegressionOptions:
    """The parsed regression options; a usage error when they come without --baseline. Cost is
    tested with the six when only `--margin cost=...` asks for it."""
    from plumbline.reliability.regression import ALL_METRICS as METRICS
    from plumbline.reliability.regression import COST
    from plumbline.reliability.result import METRICS as SIX

    if (margins or pairs or tested or fail_on_regression) and not baseline_paths:
        raise click.UsageError(
            "--margin, --pair, --test-metric and --fail-on-regression need --baseline"
        )
    unknown = sorted(set(tested) - set(METRICS))
    if unknown:
        raise click.BadParameter(
            f"unknown metric {unknown[0]!r}: one of {', '.join(METRICS)}",
            param_hint="--test-metric",
        )
    pair_table = _parse_assignments(pairs, "--pair", "OLD=NEW (baseline model = current model)")
    margin_table = _parse_margins(margins)
    default = METRICS if COST in margin_table else SIX
    chosen = tuple(m for m in METRICS if m in tested) if tested else tuple(default)
    from plumbline.app.reliability_run import RegressionOptions

    return RegressionOptions(margin_table, pair_table, chosen)


@click.command(cls=Command)
@click.argument(
    "paths", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--baseline",
    "baseline_paths",
    multiple=True,
    type=InputFile(),
    help="Trial records of the baseline run (repeatable): compare every metric with it, "
    "paired by prompt, and give each a verdict (regressed, improved, unchanged, inconclusive).",
)
@click.option(
    "--margin",
    "margins",
    multiple=True,
    help="METRIC=VALUE equivalence margin for --baseline (consistency, agreement, performance: "
    "score points; latency_p50, latency_p95: fraction of the baseline; error_rate: "
    "percentage points; cost: fraction of the baseline's cost per trial, and cost is then "
    "compared too).",
)
@click.option(
    "--pair",
    "pairs",
    multiple=True,
    help="OLD=NEW: compare baseline model OLD with current model NEW (repeatable); by default "
    "models pair by name, or the two models when each run holds one.",
)
@click.option(
    "--test-metric",
    "test_metrics",
    multiple=True,
    help="Call only this metric regressed or improved (repeatable; default: all six): the "
    "5% chance of a false 'regressed' is then spent on these alone, so each is found more "
    "often; the others are still measured, and judged unchanged or inconclusive. 'cost' "
    "(cost per trial, priced by --price or --prices) is compared only when named here or in "
    "--margin.",
)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 when any metric of any model regressed against --baseline.",
)
@json_option
@markdown_option(
    help="Write the report as Markdown to PATH.",
)
@click.option(
    "--price",
    "prices",
    multiple=True,
    help="MODEL=IN:OUT prices in USD per million input/output tokens (cost per trial, per "
    "prompt and per performance-heuristic point); they take precedence over --prices.",
)
@click.option(
    "--prices",
    "price_file",
    type=PriceTableType(),
    help=f"{PRICES_HELP} Prices the models without a --price (none are priced without either).",
)
@parquet_option(
    help="Write one row per trial record as Parquet (Inspect samples_df column names added).",
)
@html_option
@click.option(
    "--embedding-model",
    default="all-MiniLM-L6-v2",
    show_default=True,
    help="Sentence-embedding model for semantic consistency (a sentence-transformers name).",
)
@seed_option("Random seed of the bootstrap resampling.")
@click.option(
    "--resamples",
    default=2000,
    show_default=True,
    type=click.IntRange(min=100, max=MAX_RESAMPLES),
    help="--baseline: relabellings of the permutation test of no change, and bootstrap "
    f"resamples of the latency changes' intervals (at most {MAX_RESAMPLES:,}).",
)
@store_options
def reliability(
    paths: tuple[Path, ...],
    json_path: str | None,
    markdown_path: Path | None,
    parquet_path: Path | None,
    html_dir: Path | None,
    prices: tuple[str, ...],
    price_file: PriceTable | None,
    embedding_model: str,
    seed: int,
    resamples: int,
    baseline_paths: tuple[Path, ...],
    margins: tuple[str, ...],
    pairs: tuple[str, ...],
    test_metrics: tuple[str, ...],
    fail_on_regression: bool,
    store: StoreOptions,
) -> None:
    """Compute the five CERT metrics, with intervals, from trial records (no model calls).

    With --baseline OLD.jsonl: also compare every metric with the baseline run, on the prompts
    both share, and exit 1 with --fail-on-regression when any metric regressed.
    """
    from plumbline.app.reliability_run import BaselineError, reliability_report
    from plumbline.reliability.config import BenchmarkConfig
    from plumbline.reliability.embeddings import Embedder

    price_table = _parse_price(prices)
    regression = _regression_options(
        baseline_paths, margins, pairs, test_metrics, fail_on_regression
    )
    result, problems = _read_trials(paths, price_table, baseline_paths)
    config = BenchmarkConfig(
        embedding_model_name=embedding_model, random_seed=seed, bootstrap_resamples=resamples
    )
    embedder = Embedder(embedding_model)
    baseline = (lambda: _read_baseline(baseline_paths, regression)) if baseline_paths else None
    try:
        report = reliability_report(
            result.records,
            embedder,
            config,
            prices=price_table,
            record_errors=problems,
            baseline=baseline,
            progress_bar=progress_bar,
            price_table=price_file,
        )
    except BaselineError as error:
        raise click.UsageError(str(error)) from None
    except RuntimeError as error:  # the embedding model cannot be loaded
        raise InfraError(str(error)) from None
    _write_reliability(
        report,
        result.records,
        paths,
        json_path,
        markdown_path,
        parquet_path,
        html_dir,
        store_step(store, inputs=[*paths, *baseline_paths]),
    )
    comparison = report.baseline_comparison
    if fail_on_regression and comparison is not None and comparison.regressed:
        sys.exit(EXIT_FAILED)


def _read_trials(
    paths: tuple[Path, ...], price_table: dict[str, Any], baseline_paths: tuple[Path, ...] = ()
) -> tuple[ReadResult[TrialRecord], list[str]]:
    """The trial records and their problems; no valid record, or a price for a model neither
    the records nor the baseline's hold (a baseline model is priced for cost's change), is an
    error."""
    from plumbline.records.trial_record import read_trial_records

    result = read_trial_records(paths)
    problems = [str(error) for error in result.errors]
    if not result.records:
        for problem in problems[:20]:
            error_console.print(terminal(problem))
        raise click.ClickException("no valid trial records found")  # EXIT_FAILED
    present_models = sorted({record.model for record in result.records})
    absent = sorted(set(price_table) - set(present_models))
    if absent and baseline_paths:
        baseline_models = {record.model for record in read_trial_records(baseline_paths).records}
        absent = sorted(set(absent) - baseline_models)
    if absent:
        raise click.BadParameter(
            f"no trial records of {', '.join(map(repr, absent))}: the records hold "
            f"{', '.join(map(repr, present_models))}",
            param_hint="--price",
        )
    return result, problems


def _write_reliability(
    report: Any,
    records: list[TrialRecord],
    paths: tuple[Path, ...],
    json_path: str | None,
    markdown_path: Path | None,
    parquet_path: Path | None,
    html_dir: Path | None,
    store: Callable[[Callable[[], ResultDocument]], Any],
) -> None:
    """Write the Parquet, then publish the report: its Markdown, its page, the report (or its
    JSON on stdout) shown, and the stored result."""
    from plumbline.views.reliability import render_markdown, render_terminal

    if parquet_path is not None:
        from plumbline.app.frames import parquet_bytes, trials_frame

        write_output(parquet_path, parquet_bytes(trials_frame(records)))
    outputs = report_outputs(
        report,
        paths,
        json_path=json_path,
        terminal_view=lambda console: render_terminal(report, console),
        markdown=(markdown_path, render_markdown),
        html_dir=html_dir,
        store=store,
    )
    publish_result(report, paths, outputs)


def _read_baseline(baseline_paths: tuple[Path, ...], options: RegressionOptions) -> BaselineRun:
    """The baseline run's valid trial records (its invalid ones are warnings; none valid is a
    usage error)."""
    from plumbline.app.reliability_run import BaselineRun
    from plumbline.records.trial_record import read_trial_records

    baseline_read = read_trial_records(baseline_paths)
    for problem in baseline_read.errors[:20]:
        warn("baseline: %s", str(problem))
    if not baseline_read.records:
        raise click.BadParameter("no valid trial records found", param_hint="--baseline")
    return BaselineRun(baseline_read.records, options)
