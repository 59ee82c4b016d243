"""Terminal views of `plumbline history` and `plumbline history check`.

Every number goes through `core.present` and every text from the store (model names, labels,
sources) through `core.escape.terminal`.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from plumbline.core import present
from plumbline.core.escape import terminal, visible_controls
from plumbline.results.history_document import (
    ChangeReport,
    HistoryDocument,
    MetricValue,
    SeriesChange,
)


def metric_text(value: MetricValue) -> str:
    """`0.841 [0.715, 0.917] n=50` (`—` for what is missing)."""
    text = f"{present.number(value.estimate)} {present.interval(value)}"
    return text + (f" n={present.number(value.n)}" if value.n is not None else "")


def labels_text(labels: dict[str, str]) -> str:
    return " ".join(f"{key}={value}" for key, value in labels.items())


def _filters_line(document: HistoryDocument | ChangeReport) -> str:
    filters = document.filters
    given = [
        f"{name} {value}"
        for name, value in (
            ("kind", filters.kind),
            ("suite", filters.suite),
            ("model", filters.model),
            ("metric", filters.metric),
            ("since", filters.since),
        )
        if value is not None
    ]
    given += [f"label {key}={value}" for key, value in filters.labels.items()]
    return ", ".join(given) if given else "everything"


def _say(console: Console, text: str) -> None:
    """One line of the report (console markup allowed), wrapped under itself, not highlighted."""
    console.print(text, highlight=False, soft_wrap=True)


def render_history(document: HistoryDocument, console: Console) -> None:
    """Every stored result, oldest first: a line saying when, what and its labels, then one
    line per metric with its interval and sample size (at any width: a long line wraps
    under itself, never into the next metric)."""
    _say(
        console,
        f"[bold]History[/] of {terminal(document.store)}: {len(document.results)} result(s) "
        f"({terminal(_filters_line(document))})",
    )
    if not document.results:
        console.print("No stored result matches.", highlight=False)
        return
    console.print("metrics: estimate [interval] n", style="dim", highlight=False, markup=False)
    for entry in document.results:
        head = [
            f"[bold]result {entry.id}[/]",
            entry.created_at.replace("T", " ").removesuffix("Z") + " UTC",
            (terminal(entry.kind)),
        ]
        if entry.suite:
            head.append(f"suite {(terminal(entry.suite))}")
        if entry.labels:
            head.append(terminal(labels_text(entry.labels)))
        console.print(" · ".join(head), highlight=False)
        for value in entry.metrics:
            console.print(_metric_line(value), highlight=False, overflow="fold")


def _metric_line(value: MetricValue) -> Text:
    """`  subject · metric: 0.841 [0.715, 0.917] n=50`, wrapping under itself."""
    text = f"{value.subject} · {value.metric}: {metric_text(value)}"
    if value.configuration:
        text += f" ({value.configuration})"
    if value.repeat_of is not None:
        text += f" (same as result {value.repeat_of}: counted once)"
    line = Text("  ")
    line.append(visible_controls(text))
    return line


def series_verdict(series: SeriesChange) -> str:
    """`changed at result 12 (alarm at run 9 of 14)` or `no change beyond noise (14 runs)`."""
    runs = len(series.runs)
    if not series.runs:
        return f"not checked: {series.left_out} run(s) without a two-sided interval"
    if runs == 1 and series.first_alarm is None:
        return "not enough runs to check yet (1 run)"
    if series.first_alarm is None:
        plural = "s" if runs != 1 else ""
        return f"no change beyond noise ({runs} run{plural}){restart_text(series)}"
    start = f" at result {series.changed_at}" if series.changed_at is not None else ""
    return (
        f"changed{start} (alarm at run {series.first_alarm + 1} of {runs}){restart_text(series)}"
        "; accept it with `plumbline history ack`"
    )


def extra_variance_text(report: ChangeReport) -> str:
    """Which assumption about night-to-night variance beyond the intervals the check used."""
    if report.extra_variance is not None:
        sd = present.number(report.extra_variance**0.5)
        return f"given (--extra-variance {report.extra_variance:g}: a standard deviation of {sd})"
    return (
        "estimated from each series' successive differences (--extra-variance auto; "
        "--extra-variance 0 assumes none)"
    )


def restart_text(series: SeriesChange) -> str:
    """`; restarted at result 12 (8 earlier runs not checked)` or nothing."""
    if series.restarted_at is None:
        return ""
    return (
        f"; restarted at result {series.restarted_at} "
        f"({series.before_restart} earlier run(s) not checked)"
    )


def series_name(series: SeriesChange) -> str:
    """The series' model, with its suite and configuration when it has them."""
    parts = [series.model]
    if series.suite:
        parts.append(f"suite {series.suite}")
    if series.configuration:
        parts.append(series.configuration)
    return "\n".join(parts)


def render_check(report: ChangeReport, console: Console) -> None:
    """Every series with its latest value and verdict; the changed ones first."""
    changed = [series for series in report.series if series.first_alarm is not None]
    _say(
        console,
        f"[bold]History check[/] of {terminal(report.store)} "
        f"({terminal(_filters_line(report))}): {len(report.series)} series, "
        f"{len(changed)} changed beyond noise",
    )
    _say(console, f"guarantee: {terminal(report.guarantee)}")
    _say(
        console,
        f"extra night-to-night variance: {terminal(extra_variance_text(report))}",
    )
    if not report.series:
        console.print("No stored series matches.", highlight=False)
        return
    table = Table()
    for column in ("model", "metric", "runs", "latest: estimate [interval]", "verdict"):
        table.add_column(
            terminal(column), justify="right" if column == "runs" else "left", overflow="fold"
        )
    ordered = sorted(report.series, key=lambda s: (s.first_alarm is None, s.model, s.metric))
    for series in ordered:
        latest = series.runs[-1] if series.runs else None
        shown = (
            present.MISSING
            if latest is None
            else f"{present.number(latest.estimate)} {present.interval(latest)}"
        )
        colour = "red" if series.first_alarm is not None else "green"
        table.add_row(
            terminal(series_name(series)),
            terminal(series.metric),
            str(len(series.runs)),
            shown,
            f"[{colour}]{terminal(series_verdict(series))}[/]",
        )
    console.print(table)
    methods = sorted({series.method for series in report.series})
    for method in methods:
        _say(console, f"method: {terminal(method)}")
