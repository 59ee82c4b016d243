"""`plumbline run`: run a suite's Inspect tasks against models, then build its leaderboard.

    plumbline run sa-bench --model openai/gpt-4o --model anthropic/claude-sonnet-4-0
    plumbline run my-suite.toml --model openai-api/local/qwen --model-base-url http://...

The tasks run through Inspect's `eval_set`, so the same command resumes an interrupted run
(finished task × model logs are reused, unfinished ones retried) and adding a `--model` runs
only what is missing. The leaderboard is built from exactly the logs of this run, printed, and
written to `<log-dir>/leaderboard.json` (validated and written atomically).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from plumbline.cli.adaptive import AdaptiveOptions, adaptive_options
from plumbline.cli.cdk import cdk_executor_options, use_cdk_executor
from plumbline.cli.leaderboard import errors_option
from plumbline.cli.output import (
    EXIT_FAILED,
    EXIT_USAGE,
    Command,
    FiniteFloatRange,
    OutputDirectory,
    OutputFile,
    concurrency_option,
    dumps,
    emit,
    error_console,
    json_option,
    limit_option,
    markdown_option,
    max_tokens_option,
    model_args_option,
    output_option,
    parse_model_args,
    seed_option,
    stdout_for_json_only,
    wants_json,
    warn,
)
from plumbline.cli.prices import load_price_table, price_table_option
from plumbline.cli.report import html_option, print_site_written, publish_result
from plumbline.cli.storing import StoreOptions, store_options, store_step
from plumbline.core.escape import terminal, visible_controls
from plumbline.core.limits import MAX_CONCURRENCY, MAX_EPOCHS

if TYPE_CHECKING:
    from rich.console import Console

    from plumbline.app.site import SiteResult
    from plumbline.core.prices import PriceTable
    from plumbline.leaderboard.board import Leaderboard
DEFAULT_MAX_RETRIES = 3
DISPLAYS = ("full", "conversation", "rich", "plain", "log", "none")


def _fail(*messages: str) -> None:
    """Print each problem as one unwrapped `error:` line on stderr and exit 2."""
    from rich.text import Text

    for message in messages:
        error_console.print(
            Text("error: ", style="red") + Text(visible_controls(message)), soft_wrap=True
        )
    raise SystemExit(EXIT_USAGE)


def one_line(message: str) -> str:
    """An Inspect error message (rich markup, blank lines) as one plain line."""
    from rich.text import Text

    try:
        plain = Text.from_markup(message).plain
    except Exception:  # a message with brackets that are not markup
        plain = message
    plain = re.sub(r"^\s*ERROR:\s*", "", plain)
    return re.sub(r"\s+", " ", plain).strip()


def log_path(location: str) -> str:
    """A log's location as a path: eval_set reports reused logs as `file://` URLs."""
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    if location.startswith("file://"):
        return url2pathname(urlparse(location).path)
    return location


def model_problems(names: Sequence[str], base_url: str | None = None) -> list[str]:
    """One line per model Inspect cannot use here: unknown provider, missing package or key.

    Inspect resolves a provider and reads its API key when the model is created (no request
    is made), so creating each model up front finds these before any sample runs.
    """
    from inspect_ai.model import get_model

    problems = []
    for name in dict.fromkeys(names):
        try:
            get_model(name, base_url=base_url, memoize=False)
        except Exception as error:
            problems.append(f"model {name!r}: {one_line(str(error))}")
    return problems


@click.command(cls=Command)
@click.argument("suite", default="sa-bench")
@click.option(
    "-m",
    "--model",
    "models",
    multiple=True,
    required=True,
    help="An Inspect model name (openai/..., anthropic/..., openrouter/..., "
    "openai-api/<service>/...; offline: scripted/oracle, scripted/weak). Repeat for several "
    "models.",
)
@click.option(
    "--epochs",
    type=click.IntRange(min=1, max=MAX_EPOCHS),
    default=1,
    show_default=True,
    help="Times every sample is run per model (Inspect epochs; the leaderboard averages them).",
)
@limit_option(
    "Run N samples per task, the same N sample ids for every model (seeded by --seed, "
    "chosen by id after the dataset loads)."
)
@click.option(
    "--log-dir",
    type=OutputDirectory(path_type=Path),
    default=Path("logs"),
    show_default=True,
    help="Where the Inspect logs go; running the same command again resumes from them.",
)
@click.option(
    "--judge",
    "judges",
    multiple=True,
    help="Score architecture_design with this LLM judge model (repeat to average judges); "
    "the leaderboard then reads llm_judge_scorer instead of the heuristic.",
)
@concurrency_option(
    "Concurrent model requests (Inspect's max_connections; default: Inspect's).",
    default=None,
    maximum=MAX_CONCURRENCY,
    old=("--max-connections",),
)
@max_tokens_option(
    "Most tokens a model may generate per call (default: the provider's; Inspect's "
    "providers often allow thousands, which a slow local model takes minutes to produce)."
)
@click.option(
    "--timeout",
    type=FiniteFloatRange(min=0, min_open=True),
    help="Seconds one model call may take before it is abandoned (and retried, up to "
    "--max-retries); a sample whose calls all time out is recorded as an error.",
)
@click.option(
    "--max-retries",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_RETRIES,
    show_default=True,
    help="Retries of a failed model call before its sample is recorded as an error "
    "(Inspect's own default retries without end).",
)
@click.option(
    "--fail-on-error",
    is_flag=True,
    help="Stop a task at its first errored sample (the next run retries the task) instead of "
    "recording the error and going on.",
)
@seed_option(
    "Random seed of choice shuffling, --limit subsets and generation (where providers accept one)."
)
@model_args_option("every --model")
@click.option(
    "--model-base-url", help="Base URL for the models (e.g. a local OpenAI-compatible server)."
)
@output_option(
    type=OutputFile(path_type=Path),
    help="The leaderboard document (JSON; default: <log-dir>/leaderboard.json).",
)
@markdown_option(
    help="Also write the leaderboard as Markdown.",
)
@errors_option
@click.option(
    "--retry-attempts",
    type=click.IntRange(min=0),
    help="How often eval_set retries failed tasks before giving up (Inspect's default: 10).",
)
@click.option(
    "--display",
    type=click.Choice(DISPLAYS),
    help="Inspect's progress display (default: Inspect's; none with --json).",
)
@click.option(
    "--adaptive",
    "adaptive_run",
    is_flag=True,
    help="Ask the questions in rounds, in a seeded random order, and stop calling a model once "
    "its place against every other is decided (anytime-valid, family-wise error ≤ 5% over all "
    "pairs); the leaderboard says how many calls it used.",
)
@adaptive_options
@cdk_executor_options
@price_table_option
@html_option
@json_option
@store_options
def run(
    suite: str,
    models: tuple[str, ...],
    epochs: int,
    limit: int | None,
    log_dir: Path,
    judges: tuple[str, ...],
    concurrency: int | None,
    max_tokens: int | None,
    timeout: float | None,
    max_retries: int,
    fail_on_error: bool,
    seed: int,
    model_args: tuple[str, ...],
    model_base_url: str | None,
    output: Path | None,
    markdown_path: Path | None,
    errors: str,
    retry_attempts: int | None,
    display: str | None,
    adaptive_run: bool,
    adaptive: AdaptiveOptions,
    cdk_executor: str,
    ray_address: str | None,
    prices: PriceTable | None,
    html_dir: Path | None,
    json_path: str | None,
    store: StoreOptions,
) -> None:
    """Run SUITE (`sa-bench`, or a suite TOML file) against every --model; print the leaderboard.

    Resumable: run the same command again to finish an interrupted run, or with another
    --model to add it; only the task × model pairs without a finished log run.
    """
    from plumbline.leaderboard import SuiteError
    from plumbline.suites.registry import make_tasks

    resolved = _resolve(suite, judges)
    _check_models(models, judges, model_base_url)
    if adaptive_run:
        _check_adaptive(errors, models)
    use_cdk_executor(cdk_executor, ray_address)
    try:
        prepared = make_tasks(resolved, seed=seed, limit=limit, epochs=epochs, judge=judges)
    except SuiteError as error:
        _fail(*str(error).splitlines())
        return
    tasks = prepared.tasks
    for key, reason in prepared.not_run.items():
        warn("category %s is not run: %s", key, reason)
    options = _eval_set_options(
        seed=seed,
        max_retries=max_retries,
        fail_on_error=fail_on_error,
        max_tokens=max_tokens,
        timeout=timeout,
        concurrency=concurrency,
        retry_attempts=retry_attempts,
        display=display,
        json_path=json_path,
        model_base_url=model_base_url,
        model_args=model_args,
    )
    if adaptive_run:
        published = (output or log_dir / "leaderboard.json", markdown_path, json_path, html_dir)
        _run_adaptively(
            resolved, models, log_dir, adaptive, (seed, limit, epochs, judges), options,
            prepared.not_run, prices, published, store,
        )  # fmt: skip
        return
    success, logs = _run_tasks(tasks, log_dir, models, epochs, options, json_path)
    found = [log_path(log.location) for log in logs]
    _leaderboard(
        resolved.suite, found, output or log_dir / "leaderboard.json", markdown_path, errors,
        json_path, html_dir, prepared.not_run, store, prices,
    )  # fmt: skip
    if not success:
        _exit_unfinished(logs)


def _resolve(suite: str, judges: tuple[str, ...]) -> Any:
    """The suite to run (with the judge's task when --judge is given); exit 2 on a bad one."""
    from plumbline.leaderboard import SuiteError
    from plumbline.suites.registry import resolve_suite

    try:
        resolved = resolve_suite(suite)
        return resolved.with_judge() if judges else resolved
    except SuiteError as error:
        _fail(*str(error).splitlines())
        raise SystemExit(EXIT_USAGE) from None


def _check_adaptive(errors: str, models: tuple[str, ...]) -> None:
    """Exit 2 on options an adaptive run cannot honour."""
    if errors != "zero":
        _fail("--adaptive counts an errored sample as 0: it runs with --errors zero only")
    if len(models) < 2:
        _fail("--adaptive ranks models against each other: give at least two --model")


def _run_adaptively(
    resolved: Any,
    models: tuple[str, ...],
    log_dir: Path,
    adaptive: AdaptiveOptions,
    task_settings: tuple[int, int | None, int, tuple[str, ...]],
    options: dict[str, Any],
    not_run: dict[str, str],
    prices: PriceTable | None,
    published: tuple[Path, Path | None, str | None, Path | None],
    store: StoreOptions,
) -> None:
    """`run --adaptive`: the rounds through eval_set, then the leaderboard (exit 1 when a
    round did not finish: the same command resumes it)."""
    from plumbline.app.adaptive_run import BudgetError, run_adaptive
    from plumbline.suites.registry import make_tasks

    seed, limit, epochs, judges = task_settings
    output, markdown_path, json_path, html_dir = published

    def make() -> list[Any]:
        return make_tasks(resolved, seed=seed, limit=limit, epochs=epochs, judge=judges).tasks

    def run_round(round_tasks: list[Any], round_dir: Path, names: list[str]) -> Any:
        return _run_tasks(round_tasks, round_dir, tuple(names), epochs, options, json_path)

    try:
        result = run_adaptive(
            make,
            resolved.suite,
            models,
            log_dir,
            adaptive.settings(),
            seed,
            run_round,
            not_run,
            prices if prices is not None else load_price_table(None),
        )
    except BudgetError as error:
        _fail(str(error))
    _publish(result.board, result.logs, output, markdown_path, json_path, html_dir, store)
    if not result.finished:
        warn("an adaptive round did not finish; run the same command again to resume it")
        raise SystemExit(EXIT_FAILED)


def _exit_unfinished(logs: list[Any]) -> None:
    """Warn how many task runs did not finish (a rerun resumes them) and exit 1."""
    unfinished = [log for log in logs if log.status != "success"]
    warn(
        "%d task run(s) did not finish; run the same command again to resume them",
        len(unfinished),
    )
    raise SystemExit(EXIT_FAILED)


def _check_models(models: tuple[str, ...], judges: tuple[str, ...], base_url: str | None) -> None:
    """Exit 2 on a `--model` given twice or a model (or judge) that cannot be run as named."""
    duplicates = sorted({m for m in models if models.count(m) > 1})
    if duplicates:
        _fail(f"--model given more than once: {', '.join(duplicates)}")
    problems = model_problems([*models, *judges], base_url)
    if problems:
        _fail(*problems)


def _eval_set_options(
    *,
    seed: int,
    max_retries: int,
    fail_on_error: bool,
    max_tokens: int | None,
    timeout: float | None,
    concurrency: int | None,
    retry_attempts: int | None,
    display: str | None,
    json_path: str | None,
    model_base_url: str | None,
    model_args: tuple[str, ...],
) -> dict[str, Any]:
    """The keyword arguments of Inspect's `eval_set` from `run`'s options."""
    # By default a sample that errors (a model that cannot take its image, a call that failed
    # its --max-retries) is recorded in its log and counted on the leaderboard; it does not fail
    # its whole task, which eval_set would rerun from the start, up to --retry-attempts times
    # (with a sample that always fails, that is the same failure over and over).
    options: dict[str, Any] = {
        "seed": seed,
        "log_dir_allow_dirty": True,
        "max_retries": max_retries,
    }
    if not fail_on_error:
        options["fail_on_error"] = False
    if max_tokens is not None:
        options["max_tokens"] = max_tokens
    if timeout is not None:
        options["attempt_timeout"] = math.ceil(timeout)
        options["timeout"] = math.ceil(timeout) * (max_retries + 1)
    if concurrency is not None:
        options["max_connections"] = concurrency
    if retry_attempts is not None:
        options["retry_attempts"] = retry_attempts
    if display is not None:
        options["display"] = display
    elif wants_json(json_path):
        options["display"] = "none"  # Inspect's display writes to stdout, which --json owns
    if model_base_url is not None:
        options["model_base_url"] = model_base_url
    if model_args:
        options["model_args"] = parse_model_args(model_args)
    return options


def _run_tasks(
    tasks: Sequence[Any],
    log_dir: Path,
    models: tuple[str, ...],
    epochs: int,
    options: dict[str, Any],
    json_path: str | None,
) -> tuple[bool, list[Any]]:
    """Run the tasks through Inspect's `eval_set` (nothing to run: success, no logs)."""
    from inspect_ai import eval_set

    from plumbline.models.guard_hook import enable_answer_guard

    # an answer that is not a completion: a provider error keeping the provider's message
    enable_answer_guard()
    log_dir.mkdir(parents=True, exist_ok=True)
    success: bool = True
    logs: list[Any] = []
    if tasks:
        with stdout_for_json_only(json_path):
            success, logs = eval_set(
                # Inspect resolves a mixed list element by element; its type hint lists only
                # homogeneous lists.
                cast(Any, tasks),
                log_dir=str(log_dir),
                model=list(models),
                # --limit is applied by sample id in make_tasks, never as "the first N loaded".
                epochs=epochs,
                **options,
            )
    return success, logs


def _leaderboard(
    suite: Any,
    logs: list[str],
    output: Path,
    markdown_path: Path | None,
    errors: str,
    json_path: str | None,
    html_dir: Path | None = None,
    not_run: dict[str, str] | None = None,
    store: StoreOptions | None = None,
    prices: PriceTable | None = None,
) -> None:
    from plumbline.leaderboard import build_leaderboard

    board = build_leaderboard(
        logs,
        suite,
        errors="zero" if errors == "zero" else "exclude",
        not_run=not_run,
        prices=prices if prices is not None else load_price_table(None),
    )
    _publish(board, logs, output, markdown_path, json_path, html_dir, store)


def _publish(
    board: Leaderboard,
    logs: list[str],
    output: Path,
    markdown_path: Path | None,
    json_path: str | None,
    html_dir: Path | None,
    store: StoreOptions | None,
) -> None:
    """Write, show and store the leaderboard of a run: one `publish_result`."""
    from plumbline.app.publish import InvalidResultError, Outputs
    from plumbline.views.leaderboard import render_adaptive, render_markdown, render_terminal

    document = board.document()

    def show(data: dict[str, Any], site: SiteResult | None) -> None:
        index = site.index if site is not None else None

        def render(console: Console) -> None:
            render_terminal(document, console)
            if document.adaptive is not None:
                render_adaptive(document.adaptive, console)
            console.print(f"Leaderboard JSON written to {terminal(output)}")
            if markdown_path is not None:
                console.print(f"Markdown written to {terminal(markdown_path)}")
            if index is not None:
                print_site_written(console, html_dir, index)

        emit(data, json_path, render)

    sources = [Path(log) for log in logs]
    outputs = Outputs(
        dumps=dumps,
        json_path=output,
        markdown_path=markdown_path,
        markdown=render_markdown,
        html_dir=html_dir,
        page_name=output.stem,
        show=show,
        store=store_step(store, inputs=sources) if store is not None and board.models else None,
    )
    try:
        publish_result(document, sources, outputs)
    except InvalidResultError as error:
        _fail(f"the leaderboard failed its own validation and was not written:\n{error}")
