"""The site's history page: a trend plot per series (subject × metric), then every stored
result in time order.

Each plot shows every run's estimate with its published interval (a band through consecutive
runs), says on hover which result it is (id, time, labels, value, interval, n), and links each
point to that result's report page when the site has one (`HistoryEntry.report`).
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from plumbline.core import present
from plumbline.store.result import HistoryDocument, HistoryEntry, MetricValue
from plumbline.views.html import Page, render_page
from plumbline.views.svg import TrendPoint, trend_chart
from plumbline.views.table import SiteSource


@dataclass(frozen=True)
class SeriesPlot:
    """One series' plot and what its heading says."""

    subject: str
    metric: str
    runs: int
    latest: str
    svg: Markup
    alarms: int


def _tooltip(entry: HistoryEntry, value: MetricValue) -> str:
    labels = " ".join(f"{key}={text}" for key, text in entry.labels.items())
    n = f" n={present.number(value.n)}" if value.n is not None else ""
    return (
        f"result {entry.id} · {entry.created_at}" + (f" · {labels}" if labels else "") + "\n"
        f"{value.subject} · {value.metric}: {present.number(value.estimate)} "
        f"{present.interval(value)}{n}"
    )


def series_plots(document: HistoryDocument, root: str) -> list[SeriesPlot]:
    """A plot per (subject, metric), in order of first appearance."""
    runs: dict[tuple[str, str], list[tuple[HistoryEntry, MetricValue]]] = {}
    for entry in document.results:
        for value in entry.metrics:
            runs.setdefault((value.subject, value.metric), []).append((entry, value))
    plots: list[SeriesPlot] = []
    for (subject, metric), points in runs.items():
        trend = [
            TrendPoint(
                estimate=value.estimate,
                low=value.low,
                high=value.high,
                tooltip=_tooltip(entry, value),
                href=root + entry.report if entry.report else None,
                alarm=value.alarm is True,
            )
            for entry, value in points
        ]
        last = points[-1][1]
        plots.append(
            SeriesPlot(
                subject=subject,
                metric=metric,
                runs=len(points),
                latest=f"{present.number(last.estimate)} {present.interval(last)}",
                svg=trend_chart(trend, y_label=metric),
                alarms=sum(point.alarm for point in trend),
            )
        )
    return plots


def render_history_pages(site_input: SiteSource, slug: str) -> list[Page]:
    """The history page of a `plumbline history` document."""
    document = HistoryDocument.model_validate(site_input.document)
    path = f"{slug}/index.html"
    root = "../"
    return [
        render_page(
            "history.html.j2",
            path=path,
            title="History",
            document=document,
            plots=series_plots(document, root),
            slug=slug,
        )
    ]
