"""The A/B page: a `plumbline compare` report (`CompareReport`) as HTML.

    pages = render_compare_pages(read_site_input("compare", "agent A/B", document), "ab")

The report comes typed (`app.site` reads a JSON document once, through `plumbline.results`);
`compare_view` turns the typed report into plain display dataclasses (pure,
unit-tested without a browser), formatting every number through `plumbline.core.present`
and computing none; `render_compare_pages` renders them with `compare.html.j2`. The page reads
top-down like the terminal report: the decision first (the A/B schema's exact strings), the
three gates with both arms' values and the criterion each must meet, the paired deltas with
their bootstrap intervals as a forest plot, the per-task table, the distributions of duration
and tokens per arm, every run, the tests, the arm summaries, and every warning. Everything it
shows is in the report: it never reads the run records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from plumbline.compare.result import (
    MIXED,
    ArmComparison,
    ArmDifferences,
    CompareReport,
    Gate,
    PairedDelta,
    PerTaskRow,
    RunRow,
    prefer,
)
from plumbline.core import present
from plumbline.views import svg_time
from plumbline.views.compare import (
    ARM_FIELDS,
    delta_format,
    delta_interval,
    gate_format,
    sequential_lines,
    test_rows,
)
from plumbline.views.compare_cost import cost_headers, cost_rows, provenance_line
from plumbline.views.html import Page, render_page
from plumbline.views.site import SiteInput
from plumbline.views.svg import IntervalRow, interval_chart
from plumbline.views.svg_distribution import distribution_chart
from plumbline.views.table import Cell, number_cell, text_cell

#: label, unit on the axis, and whether the value is a proportion, per primary paired delta
_DELTA_LABELS: dict[str, tuple[str, str, bool]] = {
    "pass_delta": ("pass delta", "difference in pass rate, percentage points", True),
    "cost_delta_usd": ("cost delta", "USD per run", False),
    "duration_delta_seconds": ("duration delta", "seconds per run", False),
    "token_delta": ("total token delta", "tokens per run", False),
    "non_cache_token_delta": ("non-cache token delta", "tokens per run", False),
}

_GATE_LABELS = {
    "success_rate": "success rate",
    "median_duration_seconds": "median duration (s)",
    "median_non_cache_tokens": "median non-cache tokens",
}

_ARM_LABELS = {
    "success_rate": "success rate",
    "total_cost_usd": "total cost (USD)",
    "avg_cost_usd": "average cost (USD)",
    "median_cost_usd": "median cost (USD)",
    "median_duration_seconds": "median duration (s)",
    "median_total_tokens": "median total tokens",
    "median_non_cache_tokens": "median non-cache tokens",
    "solved_per_dollar": "solved per dollar",
    "null_cost_runs": "runs without cost",
    "excluded_infra_failures": "infrastructure failures (excluded)",
}
_EXTRA_ARM_ROWS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("tasks", "tasks", present.number),
    ("fewest repeats of a task", "min_repeats_per_task", present.number),
)


@dataclass(frozen=True)
class GateView:
    name: str
    label: str
    treatment: str
    control: str
    criterion: str
    verdict: str
    verdict_text: str
    badge: str
    interval: str


@dataclass(frozen=True)
class DeltaView:
    name: str
    label: str
    unit: str
    mean: str
    median: str
    interval: str
    method: str
    pairs: int
    null_pairs: int
    estimate: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True)
class ComparisonView:
    treatment: str
    control: str
    decision: str
    badge: str
    headline: str
    rule: str
    tie: bool
    pairs: int
    gates: list[GateView]
    deltas: list[DeltaView]
    diagnostics: list[list[Cell]]
    tests: list[tuple[str, str, str]]
    minimum_detectable: str | None
    task_header: list[tuple[str, bool]]
    tasks: list[list[Cell]]
    task_ids: list[str]
    warnings: list[str]
    caveat: str | None = None
    #: With `--sequential`: the verdict in words and the confidence sequence over the pairs.
    sequential: list[str] = field(default_factory=list)
    sequential_chart: Markup | None = None
    #: Cost per task and per success of each arm and T − C (`views.compare_cost`).
    cost_header: list[str] = field(default_factory=list)
    cost_rows: list[list[str]] = field(default_factory=list)
    cost_note: str | None = None


@dataclass(frozen=True)
class RunView:
    task_id: str
    arm: str
    outcome: str
    cells: list[Cell]


@dataclass(frozen=True)
class DistributionView:
    title: str
    chart: Markup | None
    note: str


@dataclass(frozen=True)
class ForestView:
    """One paired delta across the comparisons: a row per treatment, a reference line at 0."""

    name: str
    label: str
    unit: str
    chart: Markup


@dataclass(frozen=True)
class CompareView:
    title: str
    name: str
    treatment: str
    control: str
    comparisons: list[ComparisonView]
    arm_header: list[str]
    arm_rows: list[list[Cell]]
    distributions: list[DistributionView]
    distribution_source: str
    runs: list[RunView]
    runs_total: int
    runs_listed: int
    run_arms: list[str]
    warnings: list[str]
    input_files: list[str]
    records_read: int
    invalid_records: int
    record_errors: list[str]
    settings: list[tuple[str, str]]
    margins: str
    forest: list[ForestView]
    level: str
    #: From `plumbline agent run --html`: every field in which the arms differ, as text per arm.
    arm_differences: ArmDifferences | None = None


def decision_badge(decision: str, treatment: str, control: str) -> str:
    """`ok` when the treatment is preferred, `bad` for the control, `warn` for mixed."""
    if decision == prefer(treatment):
        return "ok"
    if decision == prefer(control):
        return "bad"
    return "warn" if decision == MIXED else "missing"


def _headline(comparison: ArmComparison) -> str:
    treatment, control = comparison.treatment, comparison.control
    if comparison.tie:
        return (
            f"All three gates are ties; the A/B schema's order checks {treatment} first, so "
            f"the decision reads {comparison.decision!r}."
        )
    if comparison.decision_role == "treatment":
        return f"{treatment} meets all three gates against {control} (rule: {comparison.rule})."
    if comparison.decision_role == "control":
        return f"{control} meets all three gates against {treatment} (rule: {comparison.rule})."
    return (
        "The gates disagree: neither arm meets all three. Read the paired deltas and their "
        "intervals below."
    )


def _gate_view(gate: Gate, comparison: ArmComparison) -> GateView:
    shown = gate_format(gate.name)
    verdict_text, badge = {
        "treatment": (f"favours {comparison.treatment}", "ok"),
        "control": (f"favours {comparison.control}", "bad"),
        "tie": ("tie (holds for both)", "warn"),
        "neither": ("holds for neither", "missing"),
    }[gate.verdict]
    return GateView(
        name=gate.name,
        label=_GATE_LABELS.get(gate.name, gate.name),
        treatment=shown(gate.treatment),
        control=shown(gate.control),
        criterion=gate.criterion,
        verdict=gate.verdict,
        verdict_text=verdict_text,
        badge=badge,
        interval=(
            present.interval(gate.interval, as_percent=gate.name == "success_rate")
            if comparison.rule == "ci"
            else ""
        ),
    )


def _delta_view(name: str, delta: PairedDelta) -> DeltaView:
    label, unit, _ = _DELTA_LABELS[name]
    shown = delta_format(name)
    ci = delta.ci
    bounded = ci is not None and ci.low is not None and ci.high is not None
    return DeltaView(
        name=name,
        label=label,
        unit=unit,
        mean=shown(delta.mean),
        median=shown(delta.median),
        interval=delta_interval(name, ci) if bounded else present.MISSING,
        method=ci.method if ci is not None and bounded else "fewer than 2 pairs: no interval",
        pairs=delta.n,
        null_pairs=delta.null_pairs,
        estimate=delta.mean,
        low=ci.low if ci is not None and bounded else None,
        high=ci.high if ci is not None and bounded else None,
    )


#: A per-task column: header, per-task field, formatter, signed.
_TaskColumn = tuple[str, str, Callable[[Any], str], bool]


def _per_arm(
    header: str, field: str, shown: Callable[[Any], str], unit: str = ""
) -> tuple[_TaskColumn, _TaskColumn]:
    """The treatment's (`T`) and the control's (`C`) column of one per-task figure."""
    return (
        (f"{header} T{unit}", f"{field}_treatment", shown, False),
        (f"{header} C{unit}", f"{field}_control", shown, False),
    )


_TASK_COLUMNS: tuple[_TaskColumn, ...] = (
    ("pairs", "pairs", present.number, False),
    *_per_arm("runs", "runs", present.number),
    *_per_arm("success", "success_rate", present.percent),
    ("mean pass delta", "mean_pass_delta", present.points, True),
    *_per_arm("median duration", "median_duration_seconds", present.number, " (s)"),
    ("median duration delta (s)", "median_duration_delta_seconds", present.signed, True),
    *_per_arm("median non-cache tokens", "median_non_cache_tokens", present.number),
    ("median non-cache token delta", "median_non_cache_token_delta", present.signed, True),
)


def task_rows(per_task: Sequence[PerTaskRow]) -> tuple[list[str], list[list[Cell]]]:
    """The per-task table: task id, then each column of `_TASK_COLUMNS` as a sortable cell."""
    ids = [row.task_id for row in per_task]
    rows = [
        [
            text_cell(row.task_id),
            *[
                number_cell(getattr(row, key), shown, signed=signed)
                for _, key, shown, signed in _TASK_COLUMNS
            ],
        ]
        for row in per_task
    ]
    return ids, rows


def _detectable(comparison: ArmComparison) -> str | None:
    value = comparison.minimum_detectable_pass_delta
    return None if value is None else present.percent(value)


def _comparison_view(comparison: ArmComparison) -> ComparisonView:
    ids, rows = task_rows(comparison.per_task)
    return ComparisonView(
        treatment=comparison.treatment,
        control=comparison.control,
        decision=comparison.decision,
        badge=decision_badge(comparison.decision, comparison.treatment, comparison.control),
        headline=_headline(comparison),
        rule=comparison.rule,
        tie=comparison.tie,
        pairs=comparison.pairs,
        gates=[_gate_view(g, comparison) for g in comparison.gates],
        deltas=[_delta_view(name, delta) for name, delta in comparison.paired.deltas()],
        diagnostics=[
            [
                text_cell(name),
                number_cell(d.mean, present.signed),
                number_cell(d.median, present.signed),
                number_cell(d.n),
            ]
            for name, d in comparison.diagnostics.items()
            if d.n
        ],
        tests=test_rows(comparison.tests),
        minimum_detectable=_detectable(comparison),
        task_header=[("task", False), *[(h, True) for h, _, _, _ in _TASK_COLUMNS]],
        tasks=rows,
        task_ids=ids,
        warnings=comparison.warnings,
        caveat=comparison.caveat,
        sequential=sequential_lines(comparison),
        sequential_chart=_sequence_chart(comparison),
        cost_header=cost_headers(comparison) if comparison.cost else [],
        cost_rows=cost_rows(comparison.cost) if comparison.cost else [],
        cost_note=provenance_line(comparison) if comparison.cost else None,
    )


def _sequence_chart(comparison: ArmComparison) -> Markup | None:
    sequential = comparison.sequential
    if sequential is None or not sequential.path:
        return None
    steps = sequential.path
    return svg_time.sequence_chart(
        [s.pairs for s in steps],
        [s.estimate for s in steps],
        [s.low for s in steps],
        [s.high for s in steps],
        x_label="pairs, in the order they completed",
        y_label=f"pass rate {comparison.treatment} − {comparison.control}",
        margin=sequential.settings.margin,
    )


def _run_view(row: RunRow) -> RunView:
    return RunView(
        task_id=row.task_id,
        arm=row.arm,
        outcome=row.outcome,
        cells=[
            text_cell(row.task_id),
            text_cell(row.arm),
            number_cell(row.repeat),
            Cell(row.outcome, row.outcome, "", row.location),
            number_cell(row.duration_seconds),
            number_cell(row.total_tokens),
            number_cell(row.non_cache_tokens),
            number_cell(row.total_cost_usd, present.usd),
        ],
    )


def _log_scale(groups: dict[str, list[float]]) -> bool:
    positive = [v for values in groups.values() for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) > 50


_DISTRIBUTIONS = (
    ("Duration per run", "duration_seconds", "seconds"),
    ("Non-cache tokens per run (input + output)", "non_cache_tokens", "tokens"),
    ("Total tokens per run (including cache)", "total_tokens", "tokens"),
)


def distributions(report: CompareReport) -> list[DistributionView]:
    """Distribution plots of duration and tokens per arm: one point per run (the report's
    values, thinned in the analysis beyond its limit)."""
    views: list[DistributionView] = []
    for title, metric, unit in _DISTRIBUTIONS:
        samples = {arm: getattr(d, metric) for arm, d in report.distributions.items()}
        groups = {arm: sample.values for arm, sample in samples.items()}
        if not any(groups.values()):
            # Nothing to draw: say so rather than plot an empty, made-up axis.
            views.append(DistributionView(title, None, f"omitted: no run has a {metric} value"))
            continue
        counts = ", ".join(
            f"{arm}: {present.number(sample.n)} runs"
            + (" (thinned to evenly spaced order statistics)" if sample.thinned else "")
            for arm, sample in samples.items()
        )
        chart = distribution_chart(groups, x_label=unit, log_scale=_log_scale(groups))
        views.append(DistributionView(title, chart, counts))
    return views


def _arm_table(report: CompareReport) -> tuple[list[str], list[list[Cell]]]:
    summaries = report.arm_summaries
    fields = [
        (_ARM_LABELS.get(attribute, label), attribute, shown)
        for label, attribute, shown in ARM_FIELDS
    ]
    rows = [
        [text_cell(label), *[number_cell(getattr(s, key), shown) for s in summaries.values()]]
        for label, key, shown in [*fields[:10], *_EXTRA_ARM_ROWS, *fields[10:]]
    ]
    return list(summaries), rows


def forest_plots(report: CompareReport, comparisons: Sequence[ComparisonView]) -> list[ForestView]:
    """A forest plot per primary delta (each in its own unit), one row per treatment arm."""
    level = present.level(report.settings.level)
    plots: list[ForestView] = []
    for name, (label, unit, proportion) in _DELTA_LABELS.items():
        rows: list[IntervalRow] = []
        for comparison in comparisons:
            delta = next(d for d in comparison.deltas if d.name == name)
            row_label = f"{comparison.treatment} − {comparison.control}"
            interval = f"{level} CI {delta.interval}" if delta.low is not None else "no interval"
            rows.append(
                IntervalRow(
                    label=row_label,
                    estimate=delta.estimate,
                    low=delta.low,
                    high=delta.high,
                    note="no pairs" if delta.estimate is None else f"n = {delta.pairs}",
                    tooltip=f"{row_label}: mean {label} {delta.mean}, {interval}, "
                    f"{delta.pairs} pairs",
                )
            )
        chart = interval_chart(rows, x_label=f"{label} ({unit})", reference=0.0, percent=proportion)
        plots.append(ForestView(name, label, unit, chart))
    return plots


def _settings(report: CompareReport) -> tuple[list[tuple[str, str]], str]:
    settings = report.settings
    rows = [
        ("rule", settings.rule),
        ("confidence level", present.level(settings.level)),
        ("bootstrap resamples", present.number(settings.n_resamples)),
        ("bootstrap seed", present.number(settings.seed)),
        (
            "power / alpha (detectable difference)",
            f"{present.level(settings.power)} / {present.fixed(settings.alpha, 2)}",
        ),
    ]
    margins = settings.margins
    margin_text = (
        f"success {present.number(margins.success)}, duration "
        f"{present.number(margins.duration)}, tokens {present.number(margins.tokens)}"
    )
    return rows, margin_text


def compare_view(report: CompareReport, *, name: str = "") -> CompareView:
    """Everything the A/B page shows, from a typed compare report."""
    comparisons = [_comparison_view(c) for c in report.comparisons]
    arm_header, arm_rows = _arm_table(report)
    setting_rows, margins = _settings(report)
    return CompareView(
        title=f"A/B: {report.treatment} vs {report.control}",
        name=name,
        treatment=report.treatment,
        control=report.control,
        comparisons=comparisons,
        arm_header=arm_header,
        arm_rows=arm_rows,
        distributions=distributions(report),
        distribution_source=(
            "One point per run of the compared arms, from the report (infrastructure failures "
            "are left out, as in the analysis)."
        ),
        runs=[_run_view(row) for row in report.runs.rows],
        runs_total=report.runs.total,
        runs_listed=report.runs.listed,
        run_arms=report.arms,
        warnings=report.warnings,
        input_files=report.input.files,
        records_read=report.input.records_read,
        invalid_records=report.input.invalid_records,
        record_errors=report.input.errors,
        settings=setting_rows,
        margins=margins if report.rule == "ci" else "",
        forest=forest_plots(report, comparisons),
        level=present.level(report.settings.level),
        arm_differences=report.arm_differences,
    )


#: The kind's name on the site's index.
TITLE = "A/B comparison"
#: None: an unreadable earlier report's card says the first problem found.
UNREADABLE = None


def render_compare_pages(site_input: SiteInput[CompareReport], slug: str) -> list[Page]:
    """The A/B report of one compare document: `<slug>/index.html`."""
    view = compare_view(site_input.typed(), name=site_input.name)
    page = render_page(
        "compare.html.j2",
        path=f"{slug}/index.html",
        title=view.title,
        view=view,
        number=present.number,
        data_path=f"data/{slug}.json",
    )
    return [page]


render = render_compare_pages


def card(site_input: SiteInput[CompareReport]) -> dict[str, Any]:
    """The index card of a comparison: its arms, decision, pairs, records and warnings."""
    report = site_input.typed()
    return {
        "title": f"{', '.join(report.treatments)} vs {report.control}",
        "headline": report.decision,
        "facts": [
            f"{present.number(report.paired.pairs)} paired runs",
            f"{present.number(report.input.records_read)} records read",
            f"{'a warning' if len(report.warnings) == 1 else 'warnings'}"
            if report.warnings
            else "no warnings",
        ],
    }


__all__ = [
    "TITLE",
    "UNREADABLE",
    "CompareView",
    "ComparisonView",
    "DeltaView",
    "DistributionView",
    "ForestView",
    "GateView",
    "RunView",
    "card",
    "compare_view",
    "decision_badge",
    "distributions",
    "forest_plots",
    "render",
    "render_compare_pages",
    "task_rows",
]
