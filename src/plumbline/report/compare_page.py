"""The A/B page: a `plumbline compare` document (and the run records behind it) as HTML.

    pages = render_compare_pages(SiteInput("compare", "agent A/B", document, (runs,)), "ab")

`compare_view` turns the document into plain dataclasses (pure, unit-tested without a browser);
`render_compare_pages` renders them with `compare.html.j2`. The page reads top-down like the
terminal report: the decision first (the seed's exact strings), the three gates with both arms'
values and the criterion each must meet, the paired deltas with their bootstrap intervals as a
forest plot, the per-task table, the distributions of duration and tokens per arm, the tests,
the arm summaries, and every warning.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from markupsafe import Markup

from plumbline.compare.decision import MIXED, prefer
from plumbline.compare.render import _test_rows
from plumbline.report.html import MISSING_TEXT, Page, fmt_num, fmt_pct, render_page
from plumbline.report.svg import IntervalRow, distribution_chart, interval_chart


class SiteSource(Protocol):
    """What a renderer reads from `report.site.SiteInput`: the document and its sources."""

    @property
    def name(self) -> str: ...

    @property
    def document(self) -> dict[str, Any]: ...

    @property
    def sources(self) -> tuple[Path, ...]: ...


#: Runs listed in the drill-down table; beyond it the page says how many were left out.
MAX_LISTED_RUNS = 2000
#: Points drawn per arm in a distribution plot; larger arms are thinned to evenly spaced order
#: statistics, which keeps the quartiles the box shows.
MAX_POINTS = 4000

_GATE_LABELS = {
    "success_rate": ("success rate", "pct"),
    "median_duration_seconds": ("median duration (s)", "num"),
    "median_non_cache_tokens": ("median non-cache tokens", "num"),
}

#: Primary paired deltas: label, unit on the axis, and whether the value is a proportion.
_DELTA_LABELS: dict[str, tuple[str, str, bool]] = {
    "pass_delta": ("pass delta", "difference in pass rate, percentage points", True),
    "cost_delta_usd": ("cost delta", "USD per run", False),
    "duration_delta_seconds": ("duration delta", "seconds per run", False),
    "token_delta": ("total token delta", "tokens per run", False),
    "non_cache_token_delta": ("non-cache token delta", "tokens per run", False),
}

_ARM_ROWS: tuple[tuple[str, str, str], ...] = (
    ("runs", "runs", "num"),
    ("successes", "successes", "num"),
    ("success rate", "success_rate", "pct"),
    ("total cost (USD)", "total_cost_usd", "usd"),
    ("average cost (USD)", "avg_cost_usd", "usd"),
    ("median cost (USD)", "median_cost_usd", "usd"),
    ("median duration (s)", "median_duration_seconds", "num"),
    ("median total tokens", "median_total_tokens", "num"),
    ("median non-cache tokens", "median_non_cache_tokens", "num"),
    ("solved per dollar", "solved_per_dollar", "num"),
    ("tasks", "tasks", "num"),
    ("fewest repeats of a task", "min_repeats_per_task", "num"),
    ("runs without cost", "null_cost_runs", "num"),
    ("timed-out runs (failures)", "timed_out_runs", "num"),
    ("infrastructure failures (excluded)", "excluded_infra_failures", "num"),
)


@dataclass(frozen=True)
class Cell:
    """A table cell: the text shown, the key it sorts by ("" sorts last), its CSS class."""

    text: str
    sort: str = ""
    css: str = ""
    title: str = ""


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def format_value(value: Any, kind: str) -> str:
    """A value for the page: `pct` as a percentage, `usd` with a dollar sign, else a number."""
    if not _is_number(value):
        return MISSING_TEXT
    if kind == "pct":
        return fmt_pct(value)
    if kind == "usd":
        return f"${float(value):,.4f}" if abs(float(value)) < 100 else f"${float(value):,.2f}"
    return fmt_num(value)


def number_cell(value: Any, kind: str = "num", *, signed: bool = False) -> Cell:
    """A right-aligned numeric cell that sorts by the raw value; a missing value is marked."""
    if not _is_number(value):
        return Cell(MISSING_TEXT, "", "num missing", "not available")
    text = format_value(value, kind)
    if signed and float(value) > 0:
        text = "+" + text
    return Cell(text, repr(float(value)), "num")


def text_cell(text: str) -> Cell:
    return Cell(text, text)


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


@dataclass(frozen=True)
class RunRow:
    task_id: str
    arm: str
    outcome: str
    cells: list[Cell]


@dataclass(frozen=True)
class RunData:
    """Per-run values read from the run records behind the document, when they were given."""

    arms: dict[str, dict[str, list[float]]]
    rows: list[RunRow]
    total_runs: int
    files: list[str]
    problems: list[str]


@dataclass(frozen=True)
class DistributionView:
    title: str
    chart: Markup | None
    note: str


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
    runs: list[RunRow]
    runs_total: int
    run_arms: list[str]
    warnings: list[str]
    input_files: list[str]
    records_read: int
    invalid_records: int
    record_errors: list[str]
    settings: list[tuple[str, str]]
    margins: str
    forest: list[ForestView]
    level: float
    #: From `plumbline agent run --html`: the arms' names and each differing field's text per
    #: arm; None when the document does not say (records from elsewhere).
    arm_differences: dict[str, Any] | None = None


def decision_badge(decision: str, treatment: str, control: str) -> str:
    """`ok` when the treatment is preferred, `bad` for the control, `warn` for mixed."""
    if decision == prefer(treatment):
        return "ok"
    if decision == prefer(control):
        return "bad"
    return "warn" if decision == MIXED else "missing"


def _headline(decision: str, treatment: str, control: str, tie: bool, rule: str) -> str:
    if tie:
        return (
            f"All three gates are ties; the seed's order checks {treatment} first, so the "
            f"decision reads {decision!r}."
        )
    if decision == prefer(treatment):
        return f"{treatment} meets all three gates against {control} (rule: {rule})."
    if decision == prefer(control):
        return f"{control} meets all three gates against {treatment} (rule: {rule})."
    return (
        "The gates disagree: neither arm meets all three. Read the paired deltas and their "
        "intervals below."
    )


def _gate_view(gate: Mapping[str, Any], treatment: str, control: str, rule: str) -> GateView:
    name = str(gate.get("name", ""))
    label, kind = _GATE_LABELS.get(name, (name, "num"))
    verdict = str(gate.get("verdict", "neither"))
    verdict_text, badge = {
        "treatment": (f"favours {treatment}", "ok"),
        "control": (f"favours {control}", "bad"),
        "tie": ("tie (holds for both)", "warn"),
        "neither": ("holds for neither", "missing"),
    }.get(verdict, (verdict, "missing"))
    interval = gate.get("interval")
    interval_text = ""
    if rule == "ci":
        if isinstance(interval, Mapping) and _is_number(interval.get("low")):
            pct = name == "success_rate"
            low = format_value(interval["low"], "pct" if pct else "num")
            high = format_value(interval["high"], "pct" if pct else "num")
            interval_text = f"[{low}, {high}]"
        else:
            interval_text = MISSING_TEXT
    return GateView(
        name=name,
        label=label,
        treatment=format_value(gate.get("treatment"), kind),
        control=format_value(gate.get("control"), kind),
        criterion=str(gate.get("criterion", "")),
        verdict=verdict,
        verdict_text=verdict_text,
        badge=badge,
        interval=interval_text,
    )


def _delta_view(name: str, delta: Mapping[str, Any]) -> DeltaView:
    label, unit, proportion = _DELTA_LABELS.get(name, (name, "", False))
    raw_ci = delta.get("ci")
    ci: Mapping[str, Any] = raw_ci if isinstance(raw_ci, Mapping) else {}
    mean, median = delta.get("mean"), delta.get("median")
    low, high = ci.get("low"), ci.get("high")
    kind = "pct" if proportion else "num"
    bounded = _is_number(low) and _is_number(high)
    return DeltaView(
        name=name,
        label=label,
        unit=unit,
        mean=format_value(mean, kind),
        median=format_value(median, kind),
        interval=(
            f"[{format_value(low, kind)}, {format_value(high, kind)}]"
            + (" approximate" if "approximate" in str(ci.get("method", "")) else "")
            if bounded
            else MISSING_TEXT
        ),
        method=str(ci.get("method", "")) if bounded else "fewer than 2 pairs: no interval",
        pairs=int(delta.get("n") or 0),
        null_pairs=int(delta.get("null_pairs") or 0),
        estimate=float(mean) if mean is not None and _is_number(mean) else None,
        low=float(low) if low is not None and bounded else None,
        high=float(high) if high is not None and bounded else None,
    )


_TASK_COLUMNS: tuple[tuple[str, str, str, bool], ...] = (
    # header, key, kind, signed
    ("pairs", "pairs", "num", False),
    ("runs T", "runs_treatment", "num", False),
    ("runs C", "runs_control", "num", False),
    ("success T", "success_rate_treatment", "pct", False),
    ("success C", "success_rate_control", "pct", False),
    ("mean pass delta", "mean_pass_delta", "pct", True),
    ("median duration T (s)", "median_duration_seconds_treatment", "num", False),
    ("median duration C (s)", "median_duration_seconds_control", "num", False),
    ("median duration delta (s)", "median_duration_delta_seconds", "num", True),
    ("median non-cache tokens T", "median_non_cache_tokens_treatment", "num", False),
    ("median non-cache tokens C", "median_non_cache_tokens_control", "num", False),
    ("median non-cache token delta", "median_non_cache_token_delta", "num", True),
)


def task_rows(per_task: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[list[Cell]]]:
    """The per-task table: task id, then each column of `_TASK_COLUMNS` as a sortable cell."""
    ids: list[str] = []
    rows: list[list[Cell]] = []
    for entry in per_task:
        task = str(entry.get("task_id", ""))
        ids.append(task)
        rows.append(
            [
                text_cell(task),
                *[
                    number_cell(entry.get(key), kind, signed=signed)
                    for _, key, kind, signed in _TASK_COLUMNS
                ],
            ]
        )
    return ids, rows


def _comparison_view(entry: Mapping[str, Any]) -> ComparisonView:
    treatment = str(entry.get("treatment", "treatment"))
    control = str(entry.get("control", "control"))
    decision = str(entry.get("decision", ""))
    rule = str(entry.get("rule", "seed"))
    tie = bool(entry.get("tie", False))
    paired = entry.get("paired") or {}
    deltas = [
        _delta_view(name, paired[name])
        for name in _DELTA_LABELS
        if isinstance(paired.get(name), Mapping)
    ]
    diagnostics = [
        [
            text_cell(name),
            number_cell(d.get("mean"), signed=True),
            number_cell(d.get("median"), signed=True),
            number_cell(d.get("n")),
        ]
        for name, d in (entry.get("diagnostics") or {}).items()
        if isinstance(d, Mapping) and d.get("n")
    ]
    detectable = entry.get("minimum_detectable_pass_delta")
    ids, rows = task_rows(entry.get("per_task") or [])
    return ComparisonView(
        treatment=treatment,
        control=control,
        decision=decision,
        badge=decision_badge(decision, treatment, control),
        headline=_headline(decision, treatment, control, tie, rule),
        rule=rule,
        tie=tie,
        pairs=int(entry.get("pairs") or 0),
        gates=[_gate_view(g, treatment, control, rule) for g in entry.get("gates") or []],
        deltas=deltas,
        diagnostics=diagnostics,
        tests=_test_rows(entry.get("tests") or {}),
        minimum_detectable=format_value(detectable, "pct") if _is_number(detectable) else None,
        task_header=[("task", False), *[(h, True) for h, _, _, _ in _TASK_COLUMNS]],
        tasks=rows,
        task_ids=ids,
        warnings=[str(w) for w in entry.get("warnings") or []],
        caveat=str(entry["caveat"]) if entry.get("caveat") else None,
    )


def _comparisons(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    listed = document.get("comparisons")
    if isinstance(listed, list) and listed:
        return [c for c in listed if isinstance(c, Mapping)]
    # A document without the list: its top level is the (only) comparison.
    paired = dict(document.get("paired") or {})
    return [{**document, "pairs": paired.pop("pairs", 0), "paired": paired}]


def thin_points(values: list[float]) -> list[float]:
    """At most MAX_POINTS values: evenly spaced order statistics (min and max kept)."""
    if len(values) <= MAX_POINTS:
        return values
    ordered = sorted(values)
    step = (len(ordered) - 1) / (MAX_POINTS - 1)
    return [ordered[round(i * step)] for i in range(MAX_POINTS)]


def load_run_data(sources: Sequence[Path], arms: Sequence[str]) -> RunData | None:
    """Per-run duration and tokens per arm from run-record files (as `compare` derives them:
    infrastructure failures set aside, a timed-out run is a failure). None without sources."""
    if not sources:
        return None
    import polars as pl

    from plumbline.compare.metrics import prepare_runs
    from plumbline.records.run_record import read_run_records

    problems: list[str] = []
    try:
        table = read_run_records(list(sources))
    except OSError as error:
        return RunData({}, [], 0, [str(p) for p in sources], [f"run records unreadable: {error}"])
    problems += [str(e) for e in table.errors[:20]]
    runs = prepare_runs(table.frame).runs
    runs = runs.filter(pl.col("arm").is_in(list(arms))).sort("arm", "task_id", "repeat")
    metrics = ("duration_seconds", "total_tokens", "non_cache_tokens", "total_cost_usd")
    data: dict[str, dict[str, list[float]]] = {}
    for arm in arms:
        chosen = runs.filter(pl.col("arm") == arm)
        data[arm] = {m: [float(v) for v in chosen[m].drop_nulls().to_list()] for m in metrics}
    rows: list[RunRow] = []
    for row in runs.head(MAX_LISTED_RUNS).iter_rows(named=True):
        outcome = "success" if row["success"] else "failure"
        if row["timed_out"]:
            outcome = "timed out"
        rows.append(
            RunRow(
                task_id=str(row["task_id"]),
                arm=str(row["arm"]),
                outcome=outcome,
                cells=[
                    text_cell(str(row["task_id"])),
                    text_cell(str(row["arm"])),
                    number_cell(row["repeat"]),
                    Cell(outcome, outcome, "", f"{row['file']}:{row['line']}"),
                    number_cell(row["duration_seconds"]),
                    number_cell(row["total_tokens"]),
                    number_cell(row["non_cache_tokens"]),
                    number_cell(row["total_cost_usd"], "usd"),
                ],
            )
        )
    return RunData(data, rows, runs.height, [str(p) for p in sources], problems)


def _per_task_groups(
    comparisons: Sequence[Mapping[str, Any]], arms: Sequence[str], suffix: str
) -> dict[str, list[float]]:
    """Per-task medians of one metric per arm, from the document's per-task tables."""
    groups: dict[str, list[float]] = {arm: [] for arm in arms}
    seen: set[tuple[str, str]] = set()
    for comparison in comparisons:
        for side in ("treatment", "control"):
            arm = str(comparison.get(side))
            for entry in comparison.get("per_task") or []:
                key = (arm, str(entry.get("task_id")))
                value = entry.get(f"{suffix}_{side}")
                if key in seen or not _is_number(value):
                    continue
                seen.add(key)
                groups.setdefault(arm, []).append(float(value))
    return groups


def _log_scale(groups: Mapping[str, Sequence[float]]) -> bool:
    positive = [v for values in groups.values() for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) > 50


def distributions(
    document: Mapping[str, Any], arms: Sequence[str], runs: RunData | None
) -> tuple[list[DistributionView], str]:
    """Distribution plots of duration and tokens per arm, and a sentence saying what they show.

    With run records: one point per run. Without: one point per task (its median in that arm),
    taken from the document's per-task table, and the page says so.
    """
    specs = (
        ("Duration per run", "duration_seconds", "seconds"),
        ("Non-cache tokens per run (input + output)", "non_cache_tokens", "tokens"),
        ("Total tokens per run (including cache)", "total_tokens", "tokens"),
    )
    views: list[DistributionView] = []
    if runs is not None and runs.arms:
        for title, metric, unit in specs:
            groups = {arm: thin_points(runs.arms.get(arm, {}).get(metric, [])) for arm in arms}
            if not any(groups.values()):
                # Nothing to draw: say so rather than plot an empty, made-up axis.
                views.append(DistributionView(title, None, f"omitted: no run has a {metric} value"))
                continue
            counts = ", ".join(
                f"{arm}: {len(runs.arms.get(arm, {}).get(metric, []))} runs" for arm in arms
            )
            log = _log_scale(groups)
            views.append(
                DistributionView(
                    title,
                    distribution_chart(groups, x_label=unit, log_scale=log),
                    counts,
                )
            )
        source = (
            "One point per run, read from the run records behind this report "
            f"({', '.join(runs.files)}); infrastructure failures are left out, as in the "
            "analysis."
        )
        return views, source
    comparisons = _comparisons(document)
    for title, suffix, unit in (
        ("Duration: per-task medians", "median_duration_seconds", "seconds"),
        ("Non-cache tokens: per-task medians", "median_non_cache_tokens", "tokens"),
    ):
        groups = _per_task_groups(comparisons, arms, suffix)
        if any(groups.values()):
            log = _log_scale(groups)
            views.append(
                DistributionView(
                    title,
                    distribution_chart(groups, x_label=unit, log_scale=log),
                    ", ".join(f"{arm}: {len(v)} tasks" for arm, v in groups.items()),
                )
            )
        else:
            views.append(DistributionView(title, None, "no per-task values in the document"))
    source = (
        "Per-run distributions are not available: the run records behind this report were not "
        "given (pass them to `plumbline report` beside the JSON, or use `plumbline compare "
        "--html`). Each point below is one task's median in that arm, from the report's "
        "per-task table."
    )
    return views, source


def _arm_table(document: Mapping[str, Any]) -> tuple[list[str], list[list[Cell]]]:
    summaries = document.get("arm_summaries") or {}
    arms = [str(a) for a in summaries]
    rows = [
        [text_cell(label), *[number_cell(summaries[a].get(key), kind) for a in summaries]]
        for label, key, kind in _ARM_ROWS
    ]
    return arms, rows


@dataclass(frozen=True)
class ForestView:
    """One paired delta across the comparisons: a row per treatment, a reference line at 0."""

    name: str
    label: str
    unit: str
    chart: Markup


def forest_plots(comparisons: Sequence[ComparisonView], level: float) -> list[ForestView]:
    """A forest plot per primary delta (each in its own unit), one row per treatment arm."""
    plots: list[ForestView] = []
    for name, (label, unit, proportion) in _DELTA_LABELS.items():
        rows: list[IntervalRow] = []
        for comparison in comparisons:
            delta = next((d for d in comparison.deltas if d.name == name), None)
            if delta is None:
                continue
            row_label = f"{comparison.treatment} − {comparison.control}"
            interval = (
                f"{level:.0%} CI {delta.interval}" if delta.low is not None else "no interval"
            )
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
        if rows:
            chart = interval_chart(
                rows, x_label=f"{label} ({unit})", reference=0.0, percent=proportion
            )
            plots.append(ForestView(name, label, unit, chart))
    return plots


def compare_view(
    document: Mapping[str, Any], *, name: str = "", runs: RunData | None = None
) -> CompareView:
    """Everything the A/B page shows, from a `plumbline compare` JSON document."""
    settings = document.get("settings") or {}
    level = float(settings.get("level") or 0.95)
    comparisons = [_comparison_view(c) for c in _comparisons(document)]
    first = comparisons[0]
    arms = list(dict.fromkeys([*(c.treatment for c in comparisons), first.control]))
    arm_header, arm_rows = _arm_table(document)
    views, source = distributions(document, arms, runs)
    inputs = document.get("input") or {}
    margins = settings.get("margins") or {}
    setting_rows = [
        ("rule", str(settings.get("rule", first.rule))),
        ("confidence level", fmt_pct(level, 0)),
        ("bootstrap resamples", fmt_num(settings.get("n_resamples"))),
        ("bootstrap seed", str(settings.get("seed"))),
        (
            "power / alpha (detectable difference)",
            f"{settings.get('power')} / {settings.get('alpha')}",
        ),
    ]
    margin_text = ", ".join(f"{k} {v}" for k, v in margins.items()) if margins else ""
    record_errors = [str(e) for e in inputs.get("errors") or []]
    if runs is not None:
        record_errors += [p for p in runs.problems if p not in record_errors]
    return CompareView(
        title=f"A/B: {first.treatment} vs {first.control}",
        name=name,
        treatment=first.treatment,
        control=first.control,
        comparisons=comparisons,
        arm_header=arm_header,
        arm_rows=arm_rows,
        distributions=views,
        distribution_source=source,
        runs=runs.rows if runs is not None else [],
        runs_total=runs.total_runs if runs is not None else 0,
        run_arms=arms,
        warnings=[str(w) for w in document.get("warnings") or []],
        input_files=[str(f) for f in inputs.get("files") or []],
        records_read=int(inputs.get("records_read") or 0),
        invalid_records=int(inputs.get("invalid_records") or 0),
        record_errors=record_errors,
        settings=setting_rows,
        margins=margin_text,
        forest=forest_plots(comparisons, level),
        level=level,
        arm_differences=_arm_differences(document.get("arm_differences")),
    )


def _arm_differences(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict) or not isinstance(value.get("arms"), list):
        return None
    arms = [str(arm) for arm in value["arms"]]
    rows = [
        {
            "field": str(row.get("field")),
            "values": [str((row.get("values") or {}).get(a, "—")) for a in arms],
        }
        for row in value.get("rows") or []
        if isinstance(row, dict)
    ]
    return {"arms": arms, "rows": rows, "identical": str(value.get("identical") or "")}


def render_compare_pages(site_input: SiteSource, slug: str) -> list[Page]:
    """The A/B report of one compare document: `<slug>/index.html`."""
    document = site_input.document
    arms = [
        *[str(c.get("treatment")) for c in _comparisons(document)],
        str(document.get("control")),
    ]
    runs = load_run_data(site_input.sources, list(dict.fromkeys(arms)))
    view = compare_view(document, name=site_input.name, runs=runs)
    page = render_page(
        "compare.html.j2",
        path=f"{slug}/index.html",
        title=view.title,
        view=view,
        data_path=f"data/{slug}.json",
    )
    return [page]


__all__ = [
    "Cell",
    "CompareView",
    "ComparisonView",
    "DeltaView",
    "DistributionView",
    "ForestView",
    "GateView",
    "RunData",
    "compare_view",
    "decision_badge",
    "distributions",
    "forest_plots",
    "load_run_data",
    "render_compare_pages",
    "task_rows",
]
