"""The reliability page: a `plumbline reliability` document (and its trial records) as HTML.

    pages = render_reliability_pages(SiteInput("reliability", "probe", document, (trials,)), "rel")

`reliability_view` turns the document into plain dataclasses (pure, unit-tested without a
browser); `render_reliability_pages` renders them with `reliability.html.j2`. Per model: the
seed's consistency score beside semantic agreement (they can disagree, and the page shows both),
latency percentiles, error classes with rates and Wilson intervals, output quality and
performance; then a model comparison (a sortable table, charts, Cohen's d). With the trial
records given, each model also lists its failed trials (class, HTTP status, message) and a few
responses per prompt.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from plumbline.report.compare_page import (
    Cell,
    SiteSource,
    format_value,
    number_cell,
    text_cell,
    thin_points,
)
from plumbline.report.html import MISSING_TEXT, Page, fmt_num, render_page
from plumbline.report.svg import (
    IntervalRow,
    distribution_chart,
    grouped_bar_chart,
    interval_chart,
)
from plumbline.stats import proportion_interval

if TYPE_CHECKING:
    from plumbline.records.trial_record import TrialRecord

#: Responses shown per prompt in a model's drill-down, and failed trials listed per model.
RESPONSES_PER_PROMPT = 3
MAX_FAILED_TRIALS = 500

_METRIC_LABELS = {
    "latency_seconds": "latency (s)",
    "performance": "performance heuristic (length, structure, prompt similarity)",
}


@dataclass(frozen=True)
class Metric:
    """One headline figure: value, interval, n, and the seed's interpretation band."""

    label: str
    value: str
    interval: str
    n: str
    band: str
    recommendation: str
    css: str


@dataclass(frozen=True)
class PromptRow:
    prompt_id: str
    cells: list[Cell]
    conflict: str | None


@dataclass(frozen=True)
class FailedTrial:
    error_class: str
    prompt_id: str
    cells: list[Cell]
    message: str


@dataclass(frozen=True)
class ResponseSample:
    prompt_id: str
    prompt: str
    responses: list[tuple[int, str]]


@dataclass(frozen=True)
class ModelView:
    anchor: str
    model: str
    trials: int
    successful: int
    consistency: list[Metric]
    consistency_chart: Markup | None
    prompts: list[PromptRow]
    performance: list[Metric]
    latency_rows: list[list[Cell]]
    latency_chart: Markup | None
    latency_note: str
    errors: list[Metric]
    error_rows: list[list[Cell]]
    error_chart: Markup
    error_note: str
    quality: list[Metric]
    cost: list[Metric]
    warnings: list[str]
    failed: list[FailedTrial] | None
    failed_total: int
    error_classes: list[str]
    samples: list[ResponseSample] | None


@dataclass(frozen=True)
class ChartView:
    title: str
    note: str
    chart: Markup


@dataclass(frozen=True)
class ReliabilityView:
    title: str
    name: str
    models: list[ModelView]
    verdicts: list[str]
    table_header: list[tuple[str, bool]]
    table_rows: list[list[Cell]]
    charts: list[ChartView]
    effect_rows: list[list[Cell]]
    effect_charts: list[ChartView]
    config: list[tuple[str, str]]
    warnings: list[str]
    record_errors: list[str]
    sources: list[str]


def _section(entry: Any, key: str) -> Mapping[str, Any]:
    """`entry[key]` when it is a mapping, else an empty one (a metric the model lacks)."""
    value = entry.get(key) if isinstance(entry, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None


def _interval(data: Any) -> tuple[float | None, float | None]:
    if not isinstance(data, Mapping):
        return None, None
    return _num(data.get("low")), _num(data.get("high"))


def _interval_text(data: Any, kind: str = "num") -> str:
    low, high = _interval(data)
    if low is None or high is None:
        return MISSING_TEXT
    method = str(data.get("method", "")) if isinstance(data, Mapping) else ""
    approximate = " approximate" if "approximate" in method else ""
    return f"[{format_value(low, kind)}, {format_value(high, kind)}]{approximate}"


#: Badge colour of each seed interpretation band (seed 003's tables), by its label.
_BAND_CSS = {
    **dict.fromkeys(
        (
            "Highly deterministic",
            "Reliably consistent",
            "High heuristic score",
            "Fair heuristic score",
            "Excellent for interactive use",
            "Acceptable for chatbots",
            "Predictable latency",
            "High diversity (creative responses)",
            "Moderate diversity (consistent themes)",
            "Minimal repetition (good)",
            "Excellent",
            "Good",
            "Within target",
            "Responses agree closely",
            "Responses mostly agree",
        ),
        "ok",
    ),
    **dict.fromkeys(
        (
            "Moderate variance",
            "Middling heuristic score",
            "Suitable for batch processing",
            "Low diversity (repetitive across prompts)",
            "Some repetition (acceptable)",
            "Concerning",
            "Responses partly agree",
        ),
        "warn",
    ),
    **dict.fromkeys(
        (
            "High variance",
            "Low heuristic score",
            "May impact user experience",
            "High variance (investigate)",
            "Significant repetition (investigate)",
            "Critical",
            "Above target",
            "Responses disagree",
        ),
        "bad",
    ),
}


def band_css(label: str) -> str:
    """The badge class of a seed interpretation band: `ok`, `warn`, `bad`, else `missing`."""
    return _BAND_CSS.get(label, "missing")


def _band(data: Any) -> tuple[str, str]:
    if not isinstance(data, Mapping):
        return "", ""
    return str(data.get("label", "")), str(data.get("recommendation", ""))


def _metric(label: str, value: Any, interval: Any, n: Any, band: Any, kind: str = "num") -> Metric:
    band_label, recommendation = _band(band)
    return Metric(
        label=label,
        value=format_value(value, kind),
        interval=_interval_text(interval, kind),
        n=fmt_num(n) if _num(n) is not None else MISSING_TEXT,
        band=band_label,
        recommendation=recommendation,
        css=band_css(band_label) if band_label else "missing",
    )


def _unmeasured(label: str) -> Metric:
    """A figure the report does not have: shown as missing, never as a zero."""
    return Metric(label, MISSING_TEXT, MISSING_TEXT, MISSING_TEXT, "not measured", "", "missing")


def _estimate_metric(label: str, estimate: Any, band: Any = None) -> Metric:
    if not isinstance(estimate, Mapping):
        return _unmeasured(label)
    return _metric(
        label, estimate.get("statistic"), estimate.get("interval"), estimate.get("n"), band
    )


def _band_of(kind: str, value: float | None) -> dict[str, str] | None:
    """The seed band of an aggregate the document stores without one (mean over prompts)."""
    from plumbline.reliability.bands import agreement_band, consistency_band

    if value is None:
        return None
    band = (consistency_band if kind == "consistency" else agreement_band)(value)
    return {"label": band.label, "recommendation": band.recommendation}


def _consistency(entry: Mapping[str, Any]) -> tuple[list[Metric], Markup | None, list[PromptRow]]:
    consistency, agreement = entry.get("consistency"), entry.get("agreement")
    c_value = _num(consistency.get("statistic")) if isinstance(consistency, Mapping) else None
    a_value = _num(agreement.get("statistic")) if isinstance(agreement, Mapping) else None
    metrics = [
        _estimate_metric("consistency (seed)", consistency, _band_of("consistency", c_value)),
        _estimate_metric("semantic agreement", agreement, _band_of("agreement", a_value)),
    ]
    rows: list[IntervalRow] = []
    prompt_rows: list[PromptRow] = []
    for prompt in entry.get("prompts") or []:
        if not isinstance(prompt, Mapping):
            continue
        prompt_id = str(prompt.get("prompt_id", ""))
        pc, pa = _section(prompt, "consistency"), _section(prompt, "agreement")
        score, similarity = _num(pc.get("score")), _num(pa.get("similarity"))
        low, high = _interval(pa.get("interval"))
        c_band, _ = _band(pc.get("band"))
        a_band, _ = _band(pa.get("band"))
        note = "fewer than 2 responses"
        rows.append(
            IntervalRow(
                f"{prompt_id} · consistency",
                score,
                note=note if score is None else "seed",
                tooltip=f"{prompt_id}: seed consistency {format_value(score, 'num')} ({c_band})"
                if score is not None
                else "",
            )
        )
        rows.append(
            IntervalRow(
                f"{prompt_id} · agreement",
                similarity,
                low,
                high,
                note=note if similarity is None else "agreement",
                tooltip=f"{prompt_id}: agreement {format_value(similarity, 'num')} "
                f"{_interval_text(pa.get('interval'))} ({a_band})"
                if similarity is not None
                else "",
                css_class="agreement",
            )
        )
        prompt_rows.append(
            PromptRow(
                prompt_id,
                [
                    text_cell(prompt_id),
                    number_cell(prompt.get("trials")),
                    number_cell(prompt.get("valid_responses")),
                    number_cell(score),
                    text_cell(c_band or MISSING_TEXT),
                    number_cell(similarity),
                    text_cell(_interval_text(pa.get("interval"))),
                    text_cell(a_band or MISSING_TEXT),
                ],
                str(prompt["conflict"]) if prompt.get("conflict") else None,
            )
        )
    chart = (
        interval_chart(
            rows, x_label="score (0–1): seed consistency vs semantic agreement", domain=(0.0, 1.0)
        )
        if rows
        else None
    )
    return metrics, chart, prompt_rows


_LATENCY_FIELDS = (("mean", "mean"), ("p50", "p50"), ("p95", "p95"), ("p99", "p99"), ("max", "max"))


def _latency(entry: Mapping[str, Any]) -> tuple[list[list[Cell]], Markup | None, str]:
    latency = entry.get("latency") if isinstance(entry.get("latency"), Mapping) else None
    ttft = entry.get("ttft") if isinstance(entry.get("ttft"), Mapping) else None
    if latency is None:
        return [], None, "not measured: fewer than 2 successful trials with a latency"
    rows: list[list[Cell]] = []
    for label, data in (("latency (s)", latency), ("time to first token (s)", ttft)):
        if data is None:
            continue
        intervals = data.get("percentile_intervals") or {}
        rows.append(
            [
                text_cell(label),
                number_cell(data.get("n")),
                number_cell(data.get("mean")),
                text_cell(_interval_text(data.get("mean_ci_95"))),
                number_cell(data.get("std")),
                number_cell(data.get("min")),
                number_cell(data.get("p50")),
                text_cell(_interval_text(intervals.get("p50"))),
                number_cell(data.get("p95")),
                text_cell(_interval_text(intervals.get("p95"))),
                number_cell(data.get("p99")),
                text_cell(_interval_text(intervals.get("p99"))),
                number_cell(data.get("max")),
                number_cell(data.get("coefficient_of_variation")),
                number_cell(data.get("tokens_per_second")),
            ]
        )
    series: dict[str, list[float | None]] = {
        "latency": [_num(latency.get(key)) for _, key in _LATENCY_FIELDS]
    }
    if ttft is not None:
        series["time to first token"] = [_num(ttft.get(key)) for _, key in _LATENCY_FIELDS]
    chart = grouped_bar_chart([label for label, _ in _LATENCY_FIELDS], series, y_label="seconds")
    p95_band, _ = _band(latency.get("p95_band"))
    cv_band, _ = _band(latency.get("variation_band"))
    note = f"p95: {p95_band or MISSING_TEXT}; coefficient of variation: {cv_band or MISSING_TEXT}"
    return rows, chart, note


def _errors(entry: Mapping[str, Any]) -> tuple[list[Metric], list[list[Cell]], Markup, str]:
    robust = _section(entry, "robustness")
    total = int(_num(robust.get("total_trials")) or 0)
    failed = int(_num(robust.get("failed_trials")) or 0)
    timeouts = int(_num(robust.get("timeout_trials")) or 0)
    error_rate, timeout_rate = _num(robust.get("error_rate")), _num(robust.get("timeout_rate"))
    e_low, e_high = _interval(robust.get("error_rate_interval"))
    t_low, t_high = _interval(robust.get("timeout_rate_interval"))

    def fraction(value: float | None) -> float | None:
        return None if value is None else value / 100

    metrics = [
        _metric(
            "error rate",
            fraction(error_rate),
            {"low": fraction(e_low), "high": fraction(e_high)},
            total,
            robust.get("band"),
            "pct",
        ),
        _metric(
            "timeout rate",
            fraction(timeout_rate),
            {"low": fraction(t_low), "high": fraction(t_high)},
            total,
            robust.get("timeout_band"),
            "pct",
        ),
    ]
    chart_rows = [
        IntervalRow(
            "all errors",
            fraction(error_rate),
            fraction(e_low),
            fraction(e_high),
            note=f"{failed}/{total}",
            tooltip=f"all errors: {failed} of {total} trials, Wilson 95% CI "
            f"{_interval_text({'low': fraction(e_low), 'high': fraction(e_high)}, 'pct')}",
        ),
        IntervalRow(
            "timeouts",
            fraction(timeout_rate),
            fraction(t_low),
            fraction(t_high),
            note=f"{timeouts}/{total}",
        ),
    ]
    table: list[list[Cell]] = []
    absent: list[str] = []
    exceptions = robust.get("exceptions") or {}
    for name, raw in exceptions.items():
        count = int(_num(raw) or 0)
        if not count or not total:
            absent.append(str(name))
            continue
        estimate = proportion_interval(count, total, method="wilson")
        rate, low, high = estimate.statistic, estimate.interval.low, estimate.interval.high
        table.append(
            [
                text_cell(str(name)),
                number_cell(count),
                number_cell(rate, "pct"),
                text_cell(_interval_text({"low": low, "high": high}, "pct")),
            ]
        )
        if name != "TimeoutError":
            chart_rows.append(
                IntervalRow(
                    str(name), rate, low, high, note=f"{count}/{total}", css_class="error-class"
                )
            )
    table.sort(key=lambda row: -float(row[1].sort or 0))
    chart = interval_chart(
        chart_rows, x_label="share of trials (Wilson 95% CI)", percent=True, reference=0.0
    )
    note = ""
    if absent and total:
        upper = proportion_interval(0, total, method="wilson").interval.high
        note = (
            f"No trial failed with {', '.join(absent)}: 0 of {total} each, at most "
            f"{format_value(upper, 'pct')} (Wilson 95% upper bound)."
        )
    return metrics, table, chart, note


def _performance(entry: Mapping[str, Any]) -> list[Metric]:
    performance = entry.get("performance")
    if not isinstance(performance, Mapping):
        return [_unmeasured("performance")]
    metrics = [
        _metric(
            "performance heuristic: length, structure, prompt similarity (trials)",
            performance.get("score"),
            performance.get("ci_95"),
            performance.get("n"),
            performance.get("band"),
        )
    ]
    by_prompt = entry.get("performance_by_prompt")
    if isinstance(by_prompt, Mapping):
        metrics.append(_estimate_metric("performance heuristic (prompts as the unit)", by_prompt))
    for label, key, weight in (
        ("semantic relevance", "relevance", "50%"),
        ("completeness", "completeness", "30%"),
        ("structure", "structure", "20%"),
    ):
        metrics.append(
            Metric(
                f"{label} (weight {weight})",
                format_value(performance.get(key), "num"),
                "",
                "",
                "",
                "",
                "missing",
            )
        )
    return metrics


def _quality(entry: Mapping[str, Any]) -> list[Metric]:
    quality = entry.get("output_quality")
    if not isinstance(quality, Mapping):
        return [_unmeasured("output quality")]
    n = quality.get("n")
    return [
        _metric("mean words", quality.get("mean_words"), None, n, None),
        _metric("mean tokens (≈ words × 1.3)", quality.get("mean_tokens"), None, n, None),
        _metric(
            "semantic diversity",
            quality.get("semantic_diversity"),
            None,
            n,
            quality.get("diversity_band"),
        ),
        _metric(
            "repetition score",
            quality.get("repetition_score"),
            None,
            n,
            quality.get("repetition_band"),
        ),
    ]


def _cost(entry: Mapping[str, Any]) -> list[Metric]:
    cost = entry.get("cost")
    if not isinstance(cost, Mapping):
        return []
    n = cost.get("trials_priced")
    return [
        _metric("mean cost per trial (USD)", cost.get("mean_cost_per_trial"), None, n, None, "usd"),
        _metric(
            "cost per quality point (USD)", cost.get("cost_per_quality_point"), None, n, None, "usd"
        ),
    ]


def _failed_trials(records: Sequence[TrialRecord]) -> list[FailedTrial]:
    failed = [r for r in records if r.error_class is not None]
    failed.sort(key=lambda r: (r.prompt_id, r.trial))
    views = []
    for record in failed[:MAX_FAILED_TRIALS]:
        error_class = record.error_class.value if record.error_class is not None else ""
        message = record.error_message or ""
        views.append(
            FailedTrial(
                error_class=error_class,
                prompt_id=record.prompt_id,
                cells=[
                    text_cell(record.prompt_id),
                    number_cell(record.trial),
                    text_cell(error_class),
                    number_cell(record.http_status),
                    number_cell(record.attempts),
                    number_cell(record.latency_seconds),
                ],
                message=message,
            )
        )
    return views


def _samples(records: Sequence[TrialRecord]) -> list[ResponseSample]:
    by_prompt: dict[str, list[TrialRecord]] = defaultdict(list)
    for record in records:
        if record.error_class is None and record.response is not None:
            by_prompt[record.prompt_id].append(record)
    samples = []
    for prompt_id in sorted(by_prompt):
        group = sorted(by_prompt[prompt_id], key=lambda r: r.trial)
        samples.append(
            ResponseSample(
                prompt_id,
                group[0].prompt,
                [(r.trial, r.response or "") for r in group[:RESPONSES_PER_PROMPT]],
            )
        )
    return samples


def model_view(
    entry: Mapping[str, Any], index: int, records: Sequence[TrialRecord] | None = None
) -> ModelView:
    """One model's section; `records` (its trial records) add failed trials and responses."""
    consistency, chart, prompts = _consistency(entry)
    latency_rows, latency_chart, latency_note = _latency(entry)
    errors, error_rows, error_chart, error_note = _errors(entry)
    failed = _failed_trials(records) if records is not None else None
    failed_total = sum(1 for r in records or [] if r.error_class is not None)
    return ModelView(
        anchor=f"model-{index}",
        model=str(entry.get("model", "")),
        trials=int(_num(entry.get("trials")) or 0),
        successful=int(_num(entry.get("successful")) or 0),
        consistency=consistency,
        consistency_chart=chart,
        prompts=prompts,
        performance=_performance(entry),
        latency_rows=latency_rows,
        latency_chart=latency_chart,
        latency_note=latency_note,
        errors=errors,
        error_rows=error_rows,
        error_chart=error_chart,
        error_note=error_note,
        quality=_quality(entry),
        cost=_cost(entry),
        warnings=[str(w) for w in entry.get("warnings") or []],
        failed=failed,
        failed_total=failed_total,
        error_classes=sorted({f.error_class for f in failed or []}),
        samples=_samples(records) if records is not None else None,
    )


def _get(entry: Mapping[str, Any], *path: str) -> Any:
    value: Any = entry
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


_TABLE_COLUMNS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("trials", ("trials",), "num"),
    ("successful", ("successful",), "num"),
    ("consistency (seed)", ("consistency", "statistic"), "num"),
    ("agreement", ("agreement", "statistic"), "num"),
    ("performance", ("performance", "score"), "num"),
    ("latency p50 (s)", ("latency", "p50"), "num"),
    ("latency p95 (s)", ("latency", "p95"), "num"),
    ("latency p99 (s)", ("latency", "p99"), "num"),
    ("tokens / s", ("latency", "tokens_per_second"), "num"),
    ("diversity", ("output_quality", "semantic_diversity"), "num"),
    ("repetition", ("output_quality", "repetition_score"), "num"),
    ("cost / trial (USD)", ("cost", "mean_cost_per_trial"), "usd"),
)


def comparison_table(
    models: Sequence[Mapping[str, Any]],
) -> tuple[list[tuple[str, bool]], list[list[Cell]]]:
    """The model comparison table: one sortable row per model."""
    header = [("model", False), ("error rate", True)] + [
        (label, True) for label, _, _ in _TABLE_COLUMNS
    ]
    rows = []
    for entry in models:
        rate = _num(_get(entry, "robustness", "error_rate"))
        rows.append(
            [
                text_cell(str(entry.get("model", ""))),
                number_cell(None if rate is None else rate / 100, "pct"),
                *[number_cell(_get(entry, *path), kind) for _, path, kind in _TABLE_COLUMNS],
            ]
        )
    return header, rows


def _estimate_row(label: str, estimate: Any, *, percent_of_100: bool = False) -> IntervalRow:
    if not isinstance(estimate, Mapping):
        return IntervalRow(label, None, note="not measured")
    value = _num(estimate.get("statistic"))
    low, high = _interval(estimate.get("interval"))
    n = estimate.get("n")
    return IntervalRow(label, value, low, high, note=f"n = {fmt_num(n)}" if n is not None else "")


def comparison_charts(models: Sequence[Mapping[str, Any]]) -> list[ChartView]:
    """Consistency, agreement, performance, error rate and latency of every model, side by side."""
    names = [str(m.get("model", "")) for m in models]
    charts = [
        ChartView(
            "Consistency (seed score)",
            "Mean over prompts with the seed's CI_95 (clipped to [0, 1]); n = prompts.",
            interval_chart(
                [
                    _estimate_row(n, m.get("consistency"))
                    for n, m in zip(names, models, strict=True)
                ],
                x_label="consistency score",
                domain=(0.0, 1.0),
            ),
        ),
        ChartView(
            "Semantic agreement",
            "Mean pairwise cosine similarity of responses to the same prompt; n = prompts.",
            interval_chart(
                [_estimate_row(n, m.get("agreement")) for n, m in zip(names, models, strict=True)],
                x_label="agreement",
                domain=(0.0, 1.0),
            ),
        ),
    ]
    perf_rows = []
    error_rows = []
    for name, entry in zip(names, models, strict=True):
        performance = entry.get("performance")
        if isinstance(performance, Mapping):
            low, high = _interval(performance.get("ci_95"))
            perf_rows.append(
                IntervalRow(
                    name,
                    _num(performance.get("score")),
                    low,
                    high,
                    note=f"n = {fmt_num(performance.get('n'))}",
                )
            )
        else:
            perf_rows.append(IntervalRow(name, None, note="not measured"))
        robust = entry.get("robustness") or {}
        rate = _num(robust.get("error_rate"))
        low, high = _interval(robust.get("error_rate_interval"))
        error_rows.append(
            IntervalRow(
                name,
                None if rate is None else rate / 100,
                None if low is None else low / 100,
                None if high is None else high / 100,
                note=f"{robust.get('failed_trials', '?')}/{robust.get('total_trials', '?')}",
            )
        )
    charts.append(
        ChartView(
            "Performance heuristic",
            "CERT's length, structure and prompt-similarity heuristic (not correctness); trials "
            "as the unit, seed CI_95.",
            interval_chart(perf_rows, x_label="performance heuristic", domain=(0.0, 1.0)),
        )
    )
    charts.append(
        ChartView(
            "Error rate",
            "Failed trials over all trials, Wilson 95% interval.",
            interval_chart(error_rows, x_label="error rate", percent=True, reference=0.0),
        )
    )
    series: dict[str, list[float | None]] = {
        label: [_num(_get(m, "latency", key)) for m in models]
        for label, key in (("p50", "p50"), ("p95", "p95"), ("p99", "p99"))
    }
    charts.append(
        ChartView(
            "Latency percentiles",
            "Successful trials; a marked gap is a model without latency data.",
            grouped_bar_chart(names, series, y_label="seconds"),
        )
    )
    p95_rows = []
    for name, entry in zip(names, models, strict=True):
        p95 = _num(_get(entry, "latency", "p95"))
        low, high = _interval(_get(entry, "latency", "percentile_intervals", "p95"))
        p95_rows.append(
            IntervalRow(
                name,
                p95,
                low,
                high,
                note="no latency" if p95 is None else f"n = {fmt_num(_get(entry, 'latency', 'n'))}",
            )
        )
    charts.append(
        ChartView(
            "Latency p95 with its interval",
            "Percentile bootstrap over trials.",
            interval_chart(p95_rows, x_label="p95 latency (s)"),
        )
    )
    return charts


def effects(comparisons: Sequence[Mapping[str, Any]]) -> tuple[list[list[Cell]], list[ChartView]]:
    """Cohen's d between every pair of models: a table and a forest plot per metric."""
    rows: list[list[Cell]] = []
    by_metric: dict[str, list[IntervalRow]] = defaultdict(list)
    for comparison in comparisons:
        a, b = (
            str(comparison.get("model_a", "")),
            str(comparison.get("model_b", "")),
        )
        metric = str(comparison.get("metric", ""))
        effect = comparison.get("effect")
        label = f"{a} vs {b}"
        if isinstance(effect, Mapping):
            d = _num(effect.get("statistic"))
            low, high = _interval(effect.get("interval"))
            rows.append(
                [
                    text_cell(a),
                    text_cell(b),
                    text_cell(_METRIC_LABELS.get(metric, metric)),
                    number_cell(d, signed=True),
                    text_cell(_interval_text(effect.get("interval"))),
                    number_cell(effect.get("hedges_g"), signed=True),
                    text_cell(""),
                ]
            )
            by_metric[metric].append(
                IntervalRow(label, d, low, high, note=f"d = {format_value(d, 'num')}")
            )
        else:
            note = str(comparison.get("note") or "not computed")
            rows.append(
                [
                    text_cell(a),
                    text_cell(b),
                    text_cell(_METRIC_LABELS.get(metric, metric)),
                    number_cell(None),
                    text_cell(MISSING_TEXT),
                    number_cell(None),
                    text_cell(note),
                ]
            )
            by_metric[metric].append(IntervalRow(label, None, note=note))
    charts = [
        ChartView(
            f"Cohen's d: {_METRIC_LABELS.get(metric, metric)}",
            "Positive: the first model's values are larger. Normal-approximation 95% interval.",
            interval_chart(entries, x_label="Cohen's d (pooled SD)", reference=0.0),
        )
        for metric, entries in by_metric.items()
    ]
    return rows, charts


def _config(config: Mapping[str, Any]) -> list[tuple[str, str]]:
    labels = (
        ("embedding model", "embedding_model_name"),
        ("random seed", "random_seed"),
        ("bootstrap resamples", "bootstrap_resamples"),
        ("temperature", "temperature"),
        ("max tokens", "max_tokens"),
        ("timeout (s)", "timeout"),
    )
    return [(label, str(config[key])) for label, key in labels if key in config]


def latency_distribution(
    names: Sequence[str], by_model: Mapping[str, Sequence[TrialRecord]]
) -> ChartView:
    """Every successful trial's latency per model (box plot and points), from the records."""
    groups = {
        name: thin_points(
            [
                r.latency_seconds
                for r in by_model.get(name, [])
                if r.error_class is None and r.latency_seconds is not None
            ]
        )
        for name in names
    }
    values = [v for group in groups.values() for v in group if v > 0]
    log = bool(values) and max(values) / min(values) > 50
    return ChartView(
        "Latency per trial",
        "One point per successful trial, from the trial records behind this report.",
        distribution_chart(groups, x_label="seconds", log_scale=log),
    )


def reliability_view(
    document: Mapping[str, Any],
    *,
    name: str = "",
    records: Sequence[TrialRecord] | None = None,
    sources: Sequence[str] = (),
) -> ReliabilityView:
    """Everything the reliability page shows, from a `plumbline reliability` JSON document.

    With `records` (the trial records behind it) each model also lists failed trials and
    sample responses.
    """
    from plumbline.reliability.verdict import model_verdict

    models = [m for m in document.get("models") or [] if isinstance(m, Mapping)]
    by_model: dict[str, list[TrialRecord]] | None = None
    if records is not None:
        by_model = defaultdict(list)
        for record in records:
            by_model[record.model].append(record)
    views = [
        model_view(
            entry, index, None if by_model is None else by_model.get(str(entry.get("model")), [])
        )
        for index, entry in enumerate(models, start=1)
    ]
    header, rows = comparison_table(models)
    effect_rows, effect_charts = effects(
        [c for c in document.get("comparisons") or [] if isinstance(c, Mapping)]
    )
    names = [v.model for v in views]
    charts = comparison_charts(models) if models else []
    if by_model is not None and models:
        charts.append(latency_distribution(names, by_model))
    return ReliabilityView(
        title="Reliability: "
        + (", ".join(names[:3]) + (" …" if len(names) > 3 else "") if names else "no models"),
        name=name,
        models=views,
        verdicts=[model_verdict(entry) for entry in models],
        table_header=header,
        table_rows=rows,
        charts=charts,
        effect_rows=effect_rows,
        effect_charts=effect_charts,
        config=_config(document.get("config") or {}),
        warnings=[str(w) for w in document.get("warnings") or []],
        record_errors=[str(e) for e in document.get("record_errors") or []],
        sources=list(sources),
    )


def load_trial_records(sources: Sequence[Path]) -> tuple[list[TrialRecord] | None, list[str]]:
    """The trial records behind a report (None without sources) and any problems reading them."""
    if not sources:
        return None, []
    from plumbline.records.trial_record import read_trial_records

    try:
        result = read_trial_records(sources)
    except OSError as error:
        return None, [f"trial records unreadable: {error}"]
    return list(result.records), [str(e) for e in result.errors[:20]]


def render_reliability_pages(site_input: SiteSource, slug: str) -> list[Page]:
    """The reliability report of one document: `<slug>/index.html`."""
    records, problems = load_trial_records(site_input.sources)
    view = reliability_view(
        site_input.document,
        name=site_input.name,
        records=records,
        sources=[str(p) for p in site_input.sources],
    )
    if problems:
        view.record_errors.extend(problems)
    page = render_page(
        "reliability.html.j2",
        path=f"{slug}/index.html",
        title=view.title,
        view=view,
        data_path=f"data/{slug}.json",
    )
    return [page]


__all__ = [
    "Metric",
    "ModelView",
    "ReliabilityView",
    "band_css",
    "comparison_charts",
    "comparison_table",
    "effects",
    "load_trial_records",
    "model_view",
    "reliability_view",
    "render_reliability_pages",
]
