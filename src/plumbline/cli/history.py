"""`plumbline history`: every stored result in time order; `plumbline history check`: which
series changed beyond noise.

    plumbline history --store results.db --model gpt-4o --metric overall --html site/
    plumbline history check --store results.db --alpha 0.05 --fail-on-change
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from plumbline.cli.output import (
    EXIT_FAILED,
    EXIT_OK,
    FINITE,
    Group,
    emit,
    json_option,
    wants_json,
)
from plumbline.cli.report import html_option, print_site_written, site_url
from plumbline.cli.storing import labels_callback, opened_store, store_url_option
from plumbline.core.escape import terminal
from plumbline.results.kinds import STORED_KINDS

if TYPE_CHECKING:
    from rich.console import Console

    from plumbline.results.history_document import HistoryDocument
    from plumbline.store.store import Query, Store, StoredResult

F = TypeVar("F", bound=Callable[..., Any])

SHOW = "show"
#: The most result pages `history --html` adds to the site (the newest results'): each is a
#: whole report, and a plot's points beyond them link nowhere.
MAX_LINKED_REPORTS = 500


class _DefaultToShow(Group):
    """`plumbline history [OPTIONS]` is `plumbline history show [OPTIONS]`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        help_names = set(ctx.help_option_names)
        if not args or (args[0] not in self.commands and args[0] not in help_names):
            args = [SHOW, *args]
        return super().parse_args(ctx, args)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """After the group's own help: each subcommand's options (`history --help` is where a
        reader looks first)."""
        super().format_epilog(ctx, formatter)
        for name in (SHOW, "check"):
            command = self.commands.get(name)
            if command is None:
                continue
            with click.Context(command, info_name=name, parent=ctx) as sub:
                rows = [
                    record
                    for param in command.get_params(sub)
                    if (record := param.get_help_record(sub)) is not None
                ]
            title = "history [show]" if name == SHOW else f"history {name}"
            with formatter.section(f"Options of `{title}`"):
                formatter.write_dl(rows)


@click.group(cls=_DefaultToShow)
def history() -> None:
    """Every result recorded in a results store, in time order, and whether any metric changed.

    \b
      plumbline history [--store URL] [--kind K] [--suite S] [--model M] [--metric NAME]
                        [--label k=v] [--since DATE] [--json [PATH]] [--html DIR]
      plumbline history check [--model M] [--metric NAME] [--alpha 0.05] [--within 365]
                              [--extra-variance auto|V] [--fail-on-change] [--json [PATH]]
      plumbline history ack --model M --metric NAME [--at RESULT] [--note TEXT]
    """


def _since(ctx: click.Context, param: click.Parameter, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(
            f"{value!r}: give a date or time in ISO 8601 (2026-01-31 or 2026-01-31T08:00Z)",
            ctx,
            param,
        ) from None
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    try:
        moment.astimezone(UTC)
    except OverflowError:
        raise click.BadParameter(
            f"{value!r}: outside the times a store keeps (0001-01-01 to 9999-12-31 in UTC)",
            ctx,
            param,
        ) from None
    return moment


#: The options of `_query_options` that filter, by their `Query` field names.
QUERY_FILTERS = ("kind", "suite", "model", "metric", "labels", "since")


def _query_options(function: F) -> F:
    """`--store` and the filters of a query, given to the command as `store_url` and one
    `query: Query` argument (in the style of `cli.storing.store_options`)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from plumbline.store.store import Query

        filters = {name: kwargs.pop(name) for name in QUERY_FILTERS}
        return function(*args, query=Query(**filters), **kwargs)

    decorated: Any = wrapper
    for option in reversed(
        (
            store_url_option("The results store: a path or sqlite:///PATH, or postgresql://..."),
            click.option(
                "--kind",
                type=click.Choice(STORED_KINDS),
                help="Only this kind.",
            ),
            click.option("--suite", help="Only results of this suite (e.g. sa-bench)."),
            click.option(
                "--model",
                help="Only this model's metrics (an arm, or `TREATMENT vs CONTROL` for a "
                "comparison's deltas).",
            ),
            click.option("--metric", help="Only this metric (e.g. overall, error_rate)."),
            click.option(
                "--label",
                "labels",
                multiple=True,
                metavar="KEY=VALUE",
                callback=labels_callback,
                help="Only results stored with this label (repeatable: every one given).",
            ),
            click.option(
                "--since",
                callback=_since,
                metavar="DATE",
                help="Only results made at or after DATE (ISO 8601; UTC unless it says).",
            ),
        )
    ):
        decorated = option(decorated)
    return cast(F, decorated)


@history.command(SHOW)
@_query_options
@json_option
@html_option
def show(
    store_url: str | None,
    query: Query,
    json_path: str | None,
    html_dir: Path | None,
) -> None:
    """One row per stored result, oldest first, each metric with its interval and sample size.

    --html DIR adds a history page to the site in DIR: a trend plot per model and metric
    (interval bands; hover a point for its run, click it for its report).
    """
    from plumbline.store.history import build_history
    from plumbline.views.history import render_history

    with opened_store(store_url, create=False) as store:
        found = store.query(query)
        document = build_history(store, query, found)
        index = None
        if html_dir is not None:
            index = _write_site(store, with_alarms(store, query, document, found), html_dir)

    def render(console: Console) -> None:
        render_history(document, console)
        if index is not None:
            print_site_written(console, html_dir, index)

    emit(document, json_path, render)
    if index is not None and wants_json(json_path):
        click.echo(f"HTML site: {site_url(index)}", err=True)


def with_alarms(
    store: Store, query: Query, document: HistoryDocument, found: Sequence[StoredResult]
) -> HistoryDocument:
    """The history with each metric's alarm as `history check` has it (for the page)."""
    from plumbline.store.history import check_changes

    report = check_changes(store, query, results=found)
    checked = {(s.model, s.metric, run.id): run.alarm for s in report.series for run in s.runs}
    return document.model_copy(
        update={
            "alarm_guarantee": f"{report.guarantee} (--alpha {report.alpha:g}, --within "
            f"{report.within}, extra variance estimated from each series)",
            "results": [
                entry.model_copy(
                    update={
                        "metrics": [
                            value.model_copy(
                                update={
                                    "alarm": checked.get((value.subject, value.metric, entry.id))
                                }
                            )
                            for value in entry.metrics
                        ]
                    }
                )
                for entry in document.results
            ],
        }
    )


def _write_site(store: Store, document: HistoryDocument, html_dir: Path) -> Path:
    """Add the history page, and a report page for each of the newest results it plots (those
    of a kind with pages: `views.site.PAGES`), to the site in `html_dir`; return the site's
    index."""
    from plumbline.app.site import SiteInputError, site_input, write_site
    from plumbline.results.errors import ResultDocumentError
    from plumbline.results.kinds import kind
    from plumbline.views.site import PAGES, slugify

    linked = [e for e in document.results if e.kind in PAGES][-MAX_LINKED_REPORTS:]
    inputs = []
    reports: dict[int, str] = {}
    try:
        for entry in linked:
            stored = store.document(entry.id)
            if stored is None:
                continue
            name = f"result-{entry.id}"
            try:
                typed = kind(entry.kind).read(stored)
            except ResultDocumentError as error:
                raise SiteInputError([f"{name}: {problem}" for problem in error.problems]) from None
            inputs.append(site_input(name, typed, (), document=stored))
            reports[entry.id] = f"{slugify(name)}/index.html"
        paged = document.model_copy(
            update={
                "results": [
                    entry.model_copy(update={"report": reports.get(entry.id)})
                    for entry in document.results
                ]
            }
        )
        history_input = site_input("history", paged, ())
        result = write_site([history_input, *inputs], html_dir, keep_other_reports=True)
    except SiteInputError as error:
        raise click.UsageError("; ".join(error.problems)) from None
    return result.index


def _alpha(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """--alpha within the range the detector honours, else a usage error (exit 2)."""
    from plumbline.stats.change import check_alpha

    try:
        return check_alpha(value)
    except ValueError as error:
        raise click.BadParameter(str(error), ctx, param) from None


def _extra_variance(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """`auto` (estimate it from each series) or a variance >= 0."""
    if value is None or value.strip().lower() == "auto":
        return None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number < 0:
        raise click.BadParameter(
            f"{value!r}: give `auto` (estimate it from each series) or a variance >= 0 in the "
            "metric's units squared (0.0001 for a standard deviation of 0.01)",
            ctx,
            param,
        )
    return number


@history.command("check")
@_query_options
@click.option(
    "--alpha",
    type=FINITE,
    callback=_alpha,
    default=0.05,
    show_default=True,
    help="With nothing changing, the chance that any series checked raises a false alarm "
    "within --within runs of its start (split evenly among the series). From 0.001 to 0.5.",
)
@click.option(
    "--within",
    type=click.IntRange(2, 1000),
    default=365,
    show_default=True,
    metavar="RUNS",
    help="The runs from a series' start (or its acknowledged change) that --alpha covers.",
)
@click.option(
    "--extra-variance",
    callback=_extra_variance,
    default="auto",
    show_default=True,
    metavar="auto|VARIANCE",
    help="Night-to-night variance beyond the runs' intervals (a judge or a provider that "
    "varies): estimated from each series (auto), or given in the metric's units squared.",
)
@click.option(
    "--fail-on-change",
    is_flag=True,
    help="Exit 1 when any series changed beyond noise (for CI and cron).",
)
@json_option
def check(
    store_url: str | None,
    query: Query,
    alpha: float,
    within: int,
    extra_variance: float | None,
    fail_on_change: bool,
    json_path: str | None,
) -> None:
    """Whether and when each series (model × metric) changed beyond noise.

    Each run weighs in with its own published interval and sample size. With nothing
    changing, the chance that any series checked raises a false alarm within --within runs
    (365) of its start is at most --alpha, however often it is checked; the output states the
    guarantee, the mean runs to a false alarm and the extra variance assumed
    (docs/statistics.md gives the simulations). A series restarts at an acknowledged change
    (`plumbline history ack`) or at --since. Exits 1 with --fail-on-change when a series
    changed.
    """
    from plumbline.store.history import check_changes
    from plumbline.views.history import render_check

    with opened_store(store_url, create=False) as store:
        report = check_changes(
            store, query, alpha=alpha, within=within, extra_variance=extra_variance
        )
    emit(report, json_path, lambda console: render_check(report, console))
    raise SystemExit(EXIT_FAILED if fail_on_change and report.changed else EXIT_OK)


@history.command("ack")
@store_url_option("The results store: a path or sqlite:///PATH, or postgresql://...")
@click.option("--model", required=True, help="The series' model (its subject).")
@click.option("--metric", required=True, help="The series' metric.")
@click.option(
    "--at",
    "result_id",
    type=click.IntRange(min=1),
    help="The run (result id) the series restarts from. Default: where `history check` "
    "estimates its change started.",
)
@click.option("--note", help="Why the change is accepted (stored with the acknowledgement).")
def ack(
    store_url: str | None,
    model: str,
    metric: str,
    result_id: int | None,
    note: str | None,
) -> None:
    """Accept a series' change: `history check` restarts it from that run.

    \b
      plumbline history ack --store results.db --model gpt-4o --metric overall \\
          --note "new judge prompt"
    """
    from plumbline.store.acks import acknowledge
    from plumbline.store.history import check_changes
    from plumbline.store.store import Query

    with opened_store(store_url, create=False) as store:
        if result_id is None:
            report = check_changes(store, Query(model=model, metric=metric))
            found = [s for s in report.series if s.model == model and s.metric == metric]
            if not found:
                raise click.UsageError(f"no stored series {model!r} × {metric!r}")
            if found[0].changed_at is None:
                raise click.UsageError(
                    f"{model} × {metric} has no change to acknowledge; give the run with --at"
                )
            result_id = found[0].changed_at
        try:
            acknowledge(store, model, metric, result_id, note)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--at") from None
    click.echo(
        f"{terminal(model)} × {terminal(metric)}: restarts at result {result_id}; "
        "`plumbline history check` counts its runs from there"
    )
