"""`history` and `history check` from a store: the documents of `results.history_document`.

    document = build_history(store, Query(model="gpt-4o"))
    report = check_changes(store, Query(metric="overall"), alpha=0.05)

A series is one thing measured the same way: one kind of result, one suite, one subject
(model), one metric and one configuration (a reliability probe's prompts and trials), one run
per stored result, in time order; a run whose result repeats an earlier run of the series from
the same inputs (the same model's leaderboard rebuilt beside other models from the same logs)
is counted once. `check_changes` hands every series to the change detector
(`plumbline.stats.change.detect_change`) with each run's estimate, published interval and
sample size, so a run's own uncertainty decides what counts as noise; the series checked
together are one family (α split among them), and a series restarts at its acknowledged
change (`store.acks`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime

from plumbline.results.history_document import (
    ChangeReport,
    HistoryDocument,
    HistoryEntry,
    HistoryFilters,
    MetricValue,
    RunPoint,
    SeriesChange,
)
from plumbline.results.rows import MetricRow
from plumbline.stats.change import DEFAULT_ALPHA, DEFAULT_WITHIN
from plumbline.store.acks import Acknowledgement, restarts
from plumbline.store.store import Query, Store, StoredResult

#: The confidence of a run's interval when its document does not say.
CONFIDENCE = 0.95


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
    return MetricValue(repeat_of=repeat_of, **asdict(row))


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
    alpha: float = DEFAULT_ALPHA,
    within: int = DEFAULT_WITHIN,
    extra_variance: float | None = None,
    results: Sequence[StoredResult] | None = None,
) -> ChangeReport:
    """Whether and when each series changed beyond noise (see the module). The series checked
    together are one family: α is split evenly among those with runs to check, so the chance
    that any of them raises a false alarm within `within` runs is at most α. A series with an
    acknowledged change (`history ack`) is checked from that run on."""
    from plumbline.stats.change import REFERENCE, check_alpha, guarantee_text
    from plumbline.stats.cusum import cusum_design

    alpha = check_alpha(alpha)
    found = store.query(query) if results is None else results
    acknowledged = restarts(store)
    keyed = sorted(series_of(found).items())
    prepared = [
        _prepare(subject, metric, runs, acknowledged.get((subject, metric)))
        for (_, _, subject, metric, _), runs in keyed
    ]
    family = max(1, sum(1 for item in prepared if item.usable))
    design = cusum_design(alpha / family, within, REFERENCE)
    series = [
        check_series(
            item, alpha=alpha, within=within, family=family, extra=extra_variance
        ).model_copy(update={"kind": kind, "suite": suite or None, "configuration": setup or None})
        for ((kind, suite, _, _, setup), _), item in zip(keyed, prepared, strict=True)
    ]
    checked = any(item.runs for item in series)
    return ChangeReport(
        store=store.shown,
        filters=filters_of(query),
        alpha=alpha,
        within=within,
        family=family,
        average_run_length=design.average_run_length if checked else None,
        threshold=design.threshold if checked else None,
        extra_variance=extra_variance,
        guarantee=guarantee_text(alpha, family, within, design.average_run_length, CONFIDENCE),
        changed=any(item.first_alarm is not None for item in series),
        series=series,
    )


Usable = tuple[StoredResult, int, float, float, float, float | None]


@dataclass(frozen=True)
class PreparedSeries:
    """One series' runs ready for the detector: the usable ones from its restart on."""

    subject: str
    metric: str
    usable: list[Usable]
    left_out: int
    restarted_at: int | None
    before_restart: int


def _prepare(
    subject: str,
    metric: str,
    runs: Sequence[tuple[StoredResult, MetricRow]],
    restart: Acknowledgement | None,
) -> PreparedSeries:
    """Runs before an acknowledged change are set aside; runs without an estimate or a
    two-sided interval and sample size cannot be weighed and are left out."""
    kept = runs
    if restart is not None:
        mark = (restart.restart_at, restart.result_id)
        kept = [(r, row) for r, row in runs if (r.created_at, r.id) >= mark]
    usable: list[Usable] = [
        (result, row.n, row.estimate, row.low, row.high, row.level)
        for result, row in kept
        if row.estimate is not None
        and row.low is not None
        and row.high is not None
        and row.low <= row.high
        and row.n is not None
        and row.n >= 1
    ]
    return PreparedSeries(
        subject=subject,
        metric=metric,
        usable=usable,
        left_out=len(kept) - len(usable),
        restarted_at=None if restart is None else restart.result_id,
        before_restart=len(runs) - len(kept),
    )


def _unchecked(item: PreparedSeries, alpha: float, method: str, left_out: int) -> SeriesChange:
    return SeriesChange(
        model=item.subject,
        metric=item.metric,
        runs=[],
        first_alarm=None,
        changed_at=None,
        method=method,
        alpha=alpha,
        left_out=left_out,
        restarted_at=item.restarted_at,
        before_restart=item.before_restart,
    )


def check_series(
    item: PreparedSeries, *, alpha: float, within: int, family: int, extra: float | None
) -> SeriesChange:
    """One series through the change detector (`plumbline.stats.change.detect_change`)."""
    from plumbline.stats.change import detect_change

    usable = item.usable
    if not usable:
        method = "not checked: no run has an estimate, a two-sided interval and a sample size"
        return _unchecked(item, alpha / family, method, item.left_out)
    levels = [level for *_, level in usable if level is not None]
    try:
        detection = detect_change(
            [estimate for _, _, estimate, _, _, _ in usable],
            [low for _, _, _, low, _, _ in usable],
            [high for _, _, _, _, high, _ in usable],
            [n for _, n, _, _, _, _ in usable],
            alpha=alpha,
            within=within,
            family=family,
            confidence=max(set(levels), key=levels.count) if levels else CONFIDENCE,
            extra_variance=extra,
        )
    except ValueError as error:  # runs the detector cannot weigh
        return _unchecked(item, alpha / family, f"not checked: {error}", len(usable))
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
        model=item.subject,
        metric=item.metric,
        runs=points,
        first_alarm=detection.first_alarm,
        changed_at=None if changed_at is None else points[changed_at].id,
        method=detection.method,
        alpha=detection.alpha_per_series,
        left_out=item.left_out,
        restarted_at=item.restarted_at,
        before_restart=item.before_restart,
        extra_variance=detection.extra_variance,
        extra_variance_source=detection.extra_variance_source,
    )
