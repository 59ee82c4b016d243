"""`plumbline history`: every stored result in time order; `plumbline history check`: which
series changed beyond noise.

    plumbline history --store results.db --model gpt-4o --metric overall --html site/
    plumbline history check --store results.db --alpha 0.05 --fail-on-change
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from plumbline.cli.output import (
    EXIT_FAILED,
    EXIT_OK,
    FiniteFloatRange,
    Group,
    emit,
    json_option,
    wants_json,
)
from plumbline.cli.report import html_option, site_url
from plumbline.cli.storing import labels_callback, opened_store, store_url_option
from plumbline.core.escape import terminal

if TYPE_CHECKING:
    from rich.console import Console

    from plumbline.store.result import HistoryDocument
    from plumbline.store.store import Query, Store, StoredResult
    from plumbline.views.site import Kind

F = TypeVar("F", bound=Callable[..., Any])

SHOW = "show"
#: The most result pages `history --html` adds to the site (the newest results'): each is a
#: whole report, and a plot's points beyond them link nowhere.
MAX_LINKED_REPORTS = 500
#: The kinds of result that have a report page in the site, and that page's kind.
PAGED_KINDS: dict[str, Kind] = {
    "leaderboard": "leaderboard",
    "compare": "compare",
    "reliability": "reliability",
}


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
      plumbline history check [--model M] [--metric NAME] [--alpha 0.05] [--fail-on-change]
                              [--json [PATH]]
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


def _query_options(function: F) -> F:
    for option in reversed(
        (
            store_url_option("The results store: a path or sqlite:///PATH, or postgresql://..."),
            click.option(
                "--kind",
                type=click.Choice(["leaderboard", "compare", "reliability", "agent_run"]),
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
        function = option(function)
    return function


def _query(
    kind: str | None,
    suite: str | None,
    model: str | None,
    metric: str | None,
    labels: tuple[tuple[str, str], ...],
    since: datetime | None,
) -> Query:
    from plumbline.store.store import Query

    return Query(kind=kind, suite=suite, model=model, metric=metric, labels=labels, since=since)


@history.command(SHOW)
@_query_options
@json_option
@html_option
def show(
    store_url: str | None,
    kind: str | None,
    suite: str | None,
    model: str | None,
    metric: str | None,
    labels: tuple[tuple[str, str], ...],
    since: datetime | None,
    json_path: str | None,
    html_dir: Path | None,
) -> None:
    """One row per stored result, oldest first, each metric with its interval and sample size.

    --html DIR adds a history page to the site in DIR: a trend plot per model and metric
    (interval bands; hover a point for its run, click it for its report).
    """
    from plumbline.store.history import build_history
    from plumbline.views.history import render_history

    query = _query(kind, suite, model, metric, labels, since)
    with opened_store(store_url, create=False) as store:
        found = store.query(query)
        document = build_history(store, query, found)
        index = None
        if html_dir is not None:
            index = _write_site(store, with_alarms(store, query, document, found), html_dir)

    def render(console: Console) -> None:
        render_history(document, console)
        if index is not None:
            console.print(
                f"HTML site written to {terminal(html_dir)}: open {terminal(site_url(index))}",
                soft_wrap=True,
            )

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
            ]
        }
    )


def _write_site(store: Store, document: HistoryDocument, html_dir: Path) -> Path:
    """Add the history page, and a report page for each of the newest results it plots, to
    the site in `html_dir`; return the site's index."""
    from plumbline.app.site import SiteInputError, site_input, write_site
    from plumbline.views.site import slugify

    linked = [e for e in document.results if e.kind in PAGED_KINDS][-MAX_LINKED_REPORTS:]
    inputs = []
    reports: dict[int, str] = {}
    for entry in linked:
        stored = store.document(entry.id)
        if stored is None:
            continue
        name = f"result-{entry.id}"
        inputs.append(site_input(PAGED_KINDS[entry.kind], name, stored, ()))
        reports[entry.id] = f"{slugify(name)}/index.html"
    paged = document.model_copy(
        update={
            "results": [
                entry.model_copy(update={"report": reports.get(entry.id)})
                for entry in document.results
            ]
        }
    )
    history_input = site_input("history", "history", paged.model_dump(mode="json"), ())
    try:
        result = write_site([history_input, *inputs], html_dir, keep_other_reports=True)
    except SiteInputError as error:
        raise click.UsageError("; ".join(error.problems)) from None
    return result.index


@history.command("check")
@_query_options
@click.option(
    "--alpha",
    type=FiniteFloatRange(0, 0.5, min_open=True),
    default=0.05,
    show_default=True,
    help="The chance of any false alarm in a series of up to 50 runs with nothing changing.",
)
@click.option(
    "--fail-on-change",
    is_flag=True,
    help="Exit 1 when any series changed beyond noise (for CI and cron).",
)
@json_option
def check(
    store_url: str | None,
    kind: str | None,
    suite: str | None,
    model: str | None,
    metric: str | None,
    labels: tuple[tuple[str, str], ...],
    since: datetime | None,
    alpha: float,
    fail_on_change: bool,
    json_path: str | None,
) -> None:
    """Whether and when each series (model × metric) changed beyond noise.

    Each run weighs in with its own published interval and sample size. With nothing
    changing, the chance that a series of up to 50 runs raises any alarm is at most --alpha,
    however often it is checked (docs/statistics.md states the guarantee and its simulation).
    Exits 1 with --fail-on-change when a series changed.
    """
    from plumbline.store.history import check_changes
    from plumbline.views.history import render_check

    query = _query(kind, suite, model, metric, labels, since)
    with opened_store(store_url, create=False) as store:
        report = check_changes(store, query, alpha=alpha)
    emit(report, json_path, lambda console: render_check(report, console))
    raise SystemExit(EXIT_FAILED if fail_on_change and report.changed else EXIT_OK)
