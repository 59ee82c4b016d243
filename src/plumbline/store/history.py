"""`history` and `history check` from a store: the documents of `store.result`.

    document = build_history(store, Query(model="gpt-4o"))
    report = check_changes(store, Query(metric="overall"), alpha=0.05)

A series is one thing measured the same way: one kind of result, one suite, one subject
(model), one metric and one configuration (a reliability probe's prompts and trials), one run
per stored result, in time order; a run whose result repeats an earlier run of the series from
the same inputs (the same model's leaderboard rebuilt beside other models from the same logs)
is counted once. `check_changes` hands every series to the change detector
(`plumbline.stats.change.detect_change`) with each run's estimate, published interval and
sample size, so a run's own uncertainty decides what counts as noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from plumbline.store.result import (
    ChangeReport,
    HistoryDocument,
    HistoryEntry,
    HistoryFilters,
    MetricValue,
    RunPoint,
    SeriesChange,
)
from plumbline.store.rows import MetricRow
from plumbline.store.store import Query, Store, StoredResult

#: Runs per series the false-alarm bound of `history check` covers.
HORIZON = 50


def iso(moment: datetime) -> str:
    """A stored time as ISO 8601 in UTC (`2026-01-02T03:04:05Z`)."""
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def filters_of(query: Query) -> HistoryFilters:
    return HistoryFilters(
        kind=query.kind,
        suite=query.suite,
        model=query.model,
        metric=query.metric,
        labels=dict(query.labels),
        since=None if query.since is None else iso(query.since),
    )


def _value(row: MetricRow, repeat_of: int | None = None) -> MetricValue:
    return MetricValue(
        repeat_of=repeat_of,
        subject=row.subject,
        metric=row.metric,
        estimate=row.estimate,
        low=row.low,
        high=row.high,
        level=row.level,
        method=row.method,
        n=row.n,
        configuration=row.configuration,
    )


def history_entry(
    result: StoredResult, report: str | None = None, repeats: dict[int, int] | None = None
) -> HistoryEntry:
    """`result` as history lists it; `repeats`: the result an equal value of its metric
    `i` repeats (by the metric's index)."""
    repeats = repeats or {}
    return HistoryEntry(
        id=result.id,
        kind=result.kind,
        schema_version=result.schema_version,
        suite=result.suite,
        subjects=list(result.subjects),
        created_at=iso(result.created_at),
        labels=dict(result.labels),
        source=result.source,
        digest=result.digest,
        metrics=[_value(row, repeats.get(i)) for i, row in enumerate(result.metrics)],
        report=report,
    )


def build_history(
    store: Store, query: Query, results: Sequence[StoredResult] | None = None
) -> HistoryDocument:
    """Every stored result `query` selects, in time order, with its metrics."""
    found = store.query(query) if results is None else results
    seen: Series = {}
    entries = []
    for result in found:
        repeats: dict[int, int] = {}
        for index, row in enumerate(result.metrics):
            runs = seen.setdefault(series_key(result, row), [])
            earlier = next((run for run in runs if _same_run(run, (result, row))), None)
            if earlier is None:
                runs.append((result, row))
            else:
                repeats[index] = earlier[0].id
        entries.append(history_entry(result, repeats=repeats))
    return HistoryDocument(store=store.shown, filters=filters_of(query), results=entries)


#: A series' key: kind, suite, subject, metric, configuration ("" where there is none).
SeriesKey = tuple[str, str, str, str, str]
Series = dict[SeriesKey, list[tuple[StoredResult, MetricRow]]]


def series_key(result: StoredResult, row: MetricRow) -> SeriesKey:
    """What makes two runs one series (see the module)."""
    return (result.kind, result.suite or "", row.subject, row.metric, row.configuration or "")


def _same_run(a: tuple[StoredResult, MetricRow], b: tuple[StoredResult, MetricRow]) -> bool:
    """The same published value from results sharing an input file: one measurement."""
    (first, x), (second, y) = a, b
    same = (x.estimate, x.low, x.high, x.level, x.method, x.n) == (
        y.estimate,
        y.low,
        y.high,
        y.level,
        y.method,
        y.n,
    )
    return same and bool(first.inputs & second.inputs)


def series_of(results: Sequence[StoredResult]) -> Series:
    """The runs of every series (`series_key`), in the results' (time) order, each
    measurement once."""
    series: Series = {}
    for result in results:
        for row in result.metrics:
            runs = series.setdefault(series_key(result, row), [])
            if not any(_same_run(run, (result, row)) for run in runs):
                runs.append((result, row))
    return series


def check_changes(
    store: Store,
    query: Query,
    *,
    alpha: float = 0.05,
    horizon: int = HORIZON,
    results: Sequence[StoredResult] | None = None,
) -> ChangeReport:
    """Whether and when each series changed beyond noise (see the module)."""
    found = store.query(query) if results is None else results
    series = [
        check_series(subject, metric, runs, alpha=alpha, horizon=horizon).model_copy(
            update={"kind": kind, "suite": suite or None, "configuration": configuration or None}
        )
        for (kind, suite, subject, metric, configuration), runs in sorted(series_of(found).items())
    ]
    return ChangeReport(
        store=store.shown,
        filters=filters_of(query),
        alpha=alpha,
        horizon=horizon,
        changed=any(item.first_alarm is not None for item in series),
        series=series,
    )


def check_series(
    subject: str,
    metric: str,
    runs: Sequence[tuple[StoredResult, MetricRow]],
    *,
    alpha: float,
    horizon: int,
) -> SeriesChange:
    """One series through the change detector. Runs without an estimate or a two-sided
    interval and sample size cannot be weighed and are left out (counted in `left_out`)."""
    from plumbline.stats.change import detect_change

    usable: list[tuple[StoredResult, int, float, float, float, float | None]] = [
        (result, row.n, row.estimate, row.low, row.high, row.level)
        for result, row in runs
        if row.estimate is not None
        and row.low is not None
        and row.high is not None
        and row.low <= row.high
        and row.n is not None
        and row.n >= 1
    ]
    left_out = len(runs) - len(usable)
    if not usable:
        return SeriesChange(
            model=subject,
            metric=metric,
            runs=[],
            first_alarm=None,
            changed_at=None,
            method="not checked: no run has an estimate, a two-sided interval and a sample size",
            alpha=alpha,
            left_out=left_out,
        )
    levels = [level for *_, level in usable if level is not None]
    try:
        detection = detect_change(
            [estimate for _, _, estimate, _, _, _ in usable],
            [low for _, _, _, low, _, _ in usable],
            [high for _, _, _, _, high, _ in usable],
            [n for _, n, _, _, _, _ in usable],
            alpha=alpha,
            horizon=horizon,
            confidence=max(set(levels), key=levels.count) if levels else 0.95,
        )
    except ValueError as error:  # runs the detector cannot weigh (e.g. all zero-width)
        return SeriesChange(
            model=subject,
            metric=metric,
            runs=[],
            first_alarm=None,
            changed_at=None,
            method=f"not checked: {error}",
            alpha=alpha,
            left_out=len(runs),
        )
    points = [
        RunPoint(
            id=result.id,
            created_at=iso(result.created_at),
            labels=dict(result.labels),
            estimate=estimate,
            low=low,
            high=high,
            n=n,
            alarm=bool(alarm),
        )
        for (result, n, estimate, low, high, _), alarm in zip(usable, detection.alarms, strict=True)
    ]
    changed_at = detection.changed_at
    return SeriesChange(
        model=subject,
        metric=metric,
        runs=points,
        first_alarm=detection.first_alarm,
        changed_at=None if changed_at is None else points[changed_at].id,
        method=detection.method,
        alpha=detection.alpha,
        left_out=left_out,
    )
