"""`plumbline leaderboard LOGDIR ...` and `plumbline leaderboard check NEW --against OLD`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from plumbline.app.leaderboard_run import BoardSettings, build_board, local_logs, local_sources
from plumbline.cli.adaptive import AdaptiveOptions, adaptive_options
from plumbline.cli.output import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    FiniteFloatRange,
    Group,
    InputFile,
    OutputFile,
    choice_option,
    dumps,
    emit,
    error_console,
    json_option,
    log_inputs,
    markdown_option,
    output_option,
    parquet_option,
    progress_bar,
    seed_option,
    suite_option,
    warn,
)
from plumbline.cli.prices import load_price_table, price_table_option
from plumbline.cli.report import html_option, print_site_written, publish_result
from plumbline.cli.storing import StoreOptions, store_options, store_step
from plumbline.core.escape import terminal

if TYPE_CHECKING:
    from rich.console import Console

    from plumbline.app.publish import Outputs
    from plumbline.app.site import SiteResult
    from plumbline.core.prices import PriceTable
    from plumbline.leaderboard.board import Leaderboard
    from plumbline.leaderboard.result import LeaderboardDocument
    from plumbline.leaderboard.suite import Suite

BUILD = "build"

#: `--errors zero|exclude`: shared by `leaderboard` and `run`, which both build leaderboards.
errors_option = choice_option(
    "--errors",
    choices=["zero", "exclude"],
    default="zero",
    help="An errored or unscored sample counts 0, or is left out (counted either way).",
)


class _DefaultToBuild(Group):
    """A group whose first argument, unless it names a subcommand, is a log path for `build`.

    `plumbline leaderboard logs/` is `plumbline leaderboard build logs/`; a log directory that
    happens to be called `check` can still be given as `build check` or `./check`.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        help_names = set(ctx.help_option_names)
        if args and args[0] not in self.commands and args[0] not in help_names:
            args = [BUILD, *args]
        return super().parse_args(ctx, args)


@click.group(cls=_DefaultToBuild)
def leaderboard() -> None:
    """Weighted multi-category leaderboards from Inspect logs, with intervals and tie groups.

    \b
      plumbline leaderboard LOGDIR|s3://bucket/logs [--suite sa-bench|PATH] [-o board.json]
                                   [--csv F] [--markdown F] [--parquet F]
                                   [--errors zero|exclude] [--json [PATH]] [--html DIR]
      plumbline leaderboard check NEW.json --against PUBLISHED.json [--tolerance 0.05]
    """


def _fail(message: str) -> None:
    error_console.print(f"[red]error:[/red] {terminal(message)}", highlight=False)
    raise SystemExit(EXIT_USAGE)


def _read_labels(labels_path: Path | None, half_width: float | None) -> list[Any] | None:
    """The rows of `--labels` (None without it); a broken file is a usage error naming
    `file:line: field`."""
    if half_width is not None and labels_path is None:
        raise click.UsageError(
            "--half-width plans labels for a corrected leaderboard: add --labels"
        )
    if labels_path is None:
        return None
    from plumbline.leaderboard.labels import LabelFileError, read_labels

    try:
        return list(read_labels(labels_path))
    except LabelFileError as error:
        # plain echo: a `file:line:` location must never be wrapped across lines
        click.echo(f"error: {terminal(str(error))}", err=True)
        raise SystemExit(EXIT_USAGE) from None


@leaderboard.command(BUILD, directory_inputs=log_inputs)
@click.argument("logs", nargs=-1, required=True)
@suite_option
@output_option(
    type=OutputFile(path_type=Path),
    help="The leaderboard document (JSON, validated against the schema, written atomically).",
)
@click.option(
    "--csv",
    "csv_path",
    type=OutputFile(path_type=Path),
    help="Also write one CSV row per model.",
)
@markdown_option(
    help="Also write a Markdown page.",
)
@parquet_option(
    help="Also write one row per sample × epoch × category as Parquet (Inspect samples_df "
    "column names where they overlap).",
)
@errors_option
@click.option(
    "--run-id",
    help="Run identifier for _metadata.run_id (default: $GITHUB_RUN_ID or local-<timestamp>).",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Exit 1 when the input has problems (unreadable logs, duplicates, ...).",
)
@click.option(
    "--not-run",
    "not_run",
    multiple=True,
    metavar="CATEGORY=REASON",
    help="A category deliberately not run, and why (repeatable): shown as not run, with the "
    "reason, instead of an empty category (e.g. cdk_synth on a machine without bubblewrap).",
)
@click.option(
    "--labels",
    "labels_path",
    type=InputFile(),
    help="Human labels (JSONL or CSV: model, task, sample_id, epoch, value in [0, 1]) that "
    "correct each labelled judged category by prediction-powered inference (PPI++).",
)
@click.option(
    "--half-width",
    "half_width",
    type=FiniteFloatRange(min=0, max=0.5, min_open=True),
    help="With --labels: say how many more labels would bring each corrected category's "
    "interval to this half-width.",
)
@price_table_option
@adaptive_options
@click.option(
    "--replay-adaptive",
    "replays",
    type=click.IntRange(min=1, max=100_000),
    help="Replay an adaptive run (`plumbline run --adaptive`) R times in random orders over "
    "these complete logs, and report the share of calls it would have used and how often each "
    "pair's conclusion disagrees with all the data (instead of the leaderboard's own view).",
)
@seed_option("Seed of the first replay's question order (--replay-adaptive).")
@html_option
@json_option
@store_options
def build(
    logs: tuple[str, ...],
    suite: str,
    output: Path | None,
    csv_path: Path | None,
    markdown_path: Path | None,
    parquet_path: Path | None,
    errors: str,
    run_id: str | None,
    strict: bool,
    not_run: tuple[str, ...],
    labels_path: Path | None,
    half_width: float | None,
    prices: PriceTable | None,
    adaptive: AdaptiveOptions,
    replays: int | None,
    seed: int,
    html_dir: Path | None,
    json_path: str | None,
    store: StoreOptions,
) -> None:
    """Build a leaderboard from the Inspect logs (.eval, .json) in LOGS (searched recursively):
    local files and directories, or remote log directories such as s3://bucket/logs.

    Exits 1 when no model could be scored, when a category of the suite has no log at all (the
    leaderboard is still written, with the problem in it), or, with --strict, when the input
    has any problem.
    """

    from plumbline.records.log_pool import LogReader

    # Made first: its workers read the logs while the leaderboard's modules are imported.
    with LogReader(list(logs)) as reader:
        from plumbline.leaderboard import SuiteError, load_suite

        try:
            resolved = load_suite(suite)
        except SuiteError as error:
            _fail(str(error))
            return
        settings = BoardSettings(
            prices=prices if prices is not None else load_price_table(None),
            errors="zero" if errors == "zero" else "exclude",
            run_id=run_id,
            not_run=_not_run_reasons(not_run, resolved),
            labels=_read_labels(labels_path, half_width),
            half_width=half_width,
        )  # no --prices: the shipped price table
        board = build_board(logs, resolved, settings, reader, progress_bar)
    if parquet_path is not None:
        from plumbline.app.frames import leaderboard_frame, write_parquet

        write_parquet(leaderboard_frame(list(logs), resolved), parquet_path)
    if not board.models:
        warn("no scorable logs found in %s", ", ".join(str(p) for p in logs))
    document = board.document()
    files = _board_outputs(output, csv_path, markdown_path)
    if replays is not None:
        _publish_board(document, logs, files)
        _replay(board, adaptive, replays, seed, json_path)
        return

    def show(data: dict[str, Any], site: SiteResult | None) -> None:
        index = site.index if site is not None else None
        renderer = _board_renderer(
            document, output, csv_path, markdown_path, parquet_path, index, html_dir
        )
        emit(data, json_path, renderer)

    outputs = replace(
        files,
        html_dir=html_dir,
        page_name=output.stem if output is not None else "leaderboard",
        show=show,
        store=store_step(store, inputs=local_logs(logs)) if board.models else None,
    )
    _publish_board(document, logs, outputs)
    _exit_on_problems(board, strict)


def _board_outputs(
    output: Path | None, csv_path: Path | None, markdown_path: Path | None
) -> Outputs:
    """The leaderboard's files: JSON (validated first: an invalid board leaves no file), CSV
    and Markdown."""
    from plumbline.app.publish import Outputs
    from plumbline.views.leaderboard import render_csv, render_markdown

    return Outputs(
        dumps=dumps,
        json_path=output,
        csv_path=csv_path,
        csv=render_csv,
        markdown_path=markdown_path,
        markdown=render_markdown,
    )


def _publish_board(document: LeaderboardDocument, logs: tuple[str, ...], outputs: Outputs) -> None:
    """Publish the board (its page's sources: the local logs); exit 2 when it fails its own
    validation."""
    from plumbline.app.publish import InvalidResultError

    try:
        publish_result(document, local_sources(logs), outputs)
    except InvalidResultError as error:
        _fail(f"the leaderboard failed its own validation and was not written:\n{error}")


def _replay(
    board: Leaderboard, adaptive: AdaptiveOptions, replays: int, seed: int, json_path: str | None
) -> None:
    """`--replay-adaptive R`: the adaptive procedure over these logs, shown instead of the board."""
    from plumbline.leaderboard.adaptive import replay_many
    from plumbline.leaderboard.adaptive_scores import question_scores
    from plumbline.views.leaderboard import render_replay

    if adaptive.budget is not None and adaptive.budget.usd is not None:
        error_console.print(
            "[red]error:[/red] --replay-adaptive takes a budget in calls (--budget N): a "
            "replay does not call the models, so it has no dollars to count",
            highlight=False,
        )
        raise SystemExit(EXIT_USAGE)
    scores = question_scores(board.models, board.suite, board.question_labels)
    if len(scores.models) < 2 or scores.questions == 0:
        error_console.print(
            "[red]error:[/red] --replay-adaptive needs at least two scored models with "
            "questions in common",
            highlight=False,
        )
        raise SystemExit(EXIT_FAILED)
    report = replay_many(scores, replays, adaptive.settings(), seed=seed)
    emit(report.to_json(), json_path, lambda console: render_replay(report, console))


def _not_run_reasons(not_run: tuple[str, ...], resolved: Suite) -> dict[str, str]:
    """The `--not-run CATEGORY=REASON` entries by category, checked against the suite."""
    skipped: dict[str, str] = {}
    for entry in not_run:
        key, separator, reason = entry.partition("=")
        if not separator or not reason.strip() or key not in resolved.keys:
            raise click.BadParameter(
                f"{entry!r}: expected CATEGORY=REASON with a category of suite "
                f"{resolved.name!r} ({', '.join(resolved.keys)})",
                param_hint="--not-run",
            )
        skipped[key] = reason.strip()
    return skipped


def _board_renderer(
    document: LeaderboardDocument,
    output: Path | None,
    csv_path: Path | None,
    markdown_path: Path | None,
    parquet_path: Path | None,
    index: Path | None,
    html_dir: Path | None,
) -> Callable[[Console], None]:
    """The terminal view of `leaderboard`: the board, then every file written."""
    from plumbline.views.leaderboard import render_terminal

    def render(console: Console) -> None:
        render_terminal(document, console)
        for label, path in (
            ("JSON", output),
            ("CSV", csv_path),
            ("Markdown", markdown_path),
            ("Parquet", parquet_path),
        ):
            if path is not None:
                console.print(f"{label} written to {terminal(path)}")
        if index is not None:
            print_site_written(console, html_dir, index)

    return render


def _exit_on_problems(board: Leaderboard, strict: bool) -> None:
    """Warn about empty categories and failed models; exit 1 for them, no models, or with
    `--strict` any problem."""
    empty = [p.category for p in board.problems if p.kind == "category_empty" and p.category]
    if empty and board.models:
        warn(
            "incomplete leaderboard: no log feeds %s of suite %r; those categories count 0 "
            "for every model (exit 1)",
            ", ".join(map(repr, empty)),
            board.suite.name,
        )
    if board.failed:
        warn(
            "failed (not ranked, not one sample scored): %s",
            ", ".join(entry.model for entry in board.failed),
        )
    if not board.models or empty or (strict and board.problems):
        raise SystemExit(EXIT_FAILED)


@leaderboard.command("check")
@click.argument("new", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--against",
    "published",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The published leaderboard JSON to reproduce.",
)
@click.option(
    "--tolerance",
    type=FiniteFloatRange(min=0, max=1),
    default=0.05,
    show_default=True,
    help="Largest allowed |new − published| overall, in score units (0.05 = 5 points).",
)
@json_option
def check(new: Path, published: Path, tolerance: float, json_path: str | None) -> None:
    """Is NEW a reproduction of PUBLISHED? Both files are validated (and a file whose overall
    disagrees with its own weights is named, model by model); every shared model is compared
    overall and category by category. Exit 0 when every shared model's overall is within the
    tolerance (SA Bench's ±5 points) and NEW is a valid leaderboard, 1 otherwise, 2 when a file
    cannot be read."""
    from plumbline.leaderboard import (
        LeaderboardFileError,
        check_reproducibility,
        read_leaderboard,
    )
    from plumbline.views.leaderboard_check import render_check

    documents: list[dict[str, Any]] = []
    for path in (new, published):
        try:
            # A published file may predate plumbline's schema: require only models and overall.
            documents.append(read_leaderboard(path, validate=False))
        except LeaderboardFileError as error:
            _fail(str(error))
    result = check_reproducibility(documents[0], documents[1], tolerance=tolerance)
    emit(result, json_path, lambda console: render_check(result, console))
    raise SystemExit(EXIT_OK if result.reproducible else EXIT_FAILED)
