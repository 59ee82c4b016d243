"""The site's history page: a contents list (suite, model, metric), a trend plot per series
(one kind, suite, model, metric and configuration) against the date, then every stored result
in time order.

Each plot shows every run's estimate with its published interval (a band through consecutive
runs), says on hover which result it is (id, time, labels, value, interval, n), and links each
point to that result's report page when the site has one (`HistoryEntry.report`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from plumbline.core import present
from plumbline.results.history_document import HistoryDocument, HistoryEntry, MetricValue
from plumbline.views.html import Page, render_page
from plumbline.views.site import SiteInput
from plumbline.views.svg_time import TrendPoint, trend_chart


@dataclass(frozen=True)
class SeriesPlot:
    """One series' plot and what its heading says."""

    kind: str
    suite: str | None
    configuration: str | None
    subject: str
    metric: str
    runs: int
    latest: str
    svg: Markup
    alarms: int
    checked: bool
    anchor: str

    @property
    def group(self) -> str:
        """The contents' group: the suite, or the kind of result without one."""
        return f"suite {self.suite}" if self.suite else f"{self.kind} results"


def _tooltip(entry: HistoryEntry, value: MetricValue) -> str:
    labels = " ".join(f"{key}={text}" for key, text in entry.labels.items())
    n = f" n={present.number(value.n)}" if value.n is not None else ""
    return (
        f"result {entry.id} · {entry.created_at}" + (f" · {labels}" if labels else "") + "\n"
        f"{value.subject} · {value.metric}: {present.number(value.estimate)} "
        f"{present.interval(value)}{n}"
    )


def _seconds(created_at: str) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(created_at.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError):
        return None


SeriesKey = tuple[str, str, str, str, str]


def series_runs(
    document: HistoryDocument,
) -> dict[SeriesKey, list[tuple[HistoryEntry, MetricValue]]]:
    """The runs of each series (kind, suite, subject, metric, configuration), in order of
    first appearance; a value that repeats an earlier result's (`repeat_of`) is left out."""
    runs: dict[SeriesKey, list[tuple[HistoryEntry, MetricValue]]] = {}
    for entry in document.results:
        for value in entry.metrics:
            if value.repeat_of is not None:
                continue
            key = (
                entry.kind,
                entry.suite or "",
                value.subject,
                value.metric,
                value.configuration or "",
            )
            runs.setdefault(key, []).append((entry, value))
    return runs


def series_plots(document: HistoryDocument, root: str) -> list[SeriesPlot]:
    """A plot per series, grouped by suite (or kind), then model, then metric."""
    plots: list[SeriesPlot] = []
    ordered = sorted(series_runs(document).items(), key=lambda item: (item[0][1] == "", item[0]))
    for index, ((kind, suite, subject, metric, configuration), points) in enumerate(ordered):
        trend = [
            TrendPoint(
                estimate=value.estimate,
                low=value.low,
                high=value.high,
                tooltip=_tooltip(entry, value),
                href=root + entry.report if entry.report else None,
                alarm=value.alarm is True,
                at=_seconds(entry.created_at),
            )
            for entry, value in points
        ]
        last = points[-1][1]
        plots.append(
            SeriesPlot(
                kind=kind,
                suite=suite or None,
                configuration=configuration or None,
                subject=subject,
                metric=metric,
                runs=len(points),
                latest=f"{present.number(last.estimate)} {present.interval(last)}",
                svg=trend_chart(trend, y_label=metric),
                alarms=sum(point.alarm for point in trend),
                checked=len(points) > 1 and any(v.alarm is not None for _, v in points),
                anchor=f"series-{index + 1}",
            )
        )
    return plots


def contents(plots: list[SeriesPlot]) -> list[tuple[str, list[tuple[str, list[SeriesPlot]]]]]:
    """The contents list: groups (suite or kind), each with its models and their series."""
    groups: dict[str, dict[str, list[SeriesPlot]]] = {}
    for plot in plots:
        model = f"{plot.subject} ({plot.configuration})" if plot.configuration else plot.subject
        groups.setdefault(plot.group, {}).setdefault(model, []).append(plot)
    return [(group, list(models.items())) for group, models in groups.items()]


#: The kind's name on the site's index.
TITLE = "History"
#: The index card's headline for an earlier site's history this version cannot read.
UNREADABLE = "a history this version cannot read: regenerate it"


def render_history_pages(site_input: SiteInput[HistoryDocument], slug: str) -> list[Page]:
    """The history page of a `plumbline history` document."""
    document = site_input.typed()
    path = f"{slug}/index.html"
    root = "../"
    plots = series_plots(document, root)
    return [
        render_page(
            "history.html.j2",
            path=path,
            title="History",
            document=document,
            plots=plots,
            contents=contents(plots),
            slug=slug,
        )
    ]


render = render_history_pages


def card(site_input: SiteInput[HistoryDocument]) -> dict[str, Any]:
    """The index card of a history: how many results, from when to when."""
    results = site_input.typed().results
    span = f"{results[0].created_at} to {results[-1].created_at}" if results else "no results"
    return {
        "title": "History of the results store",
        "headline": f"{len(results)} stored result(s), a trend plot per model and metric",
        "facts": [span],
    }
