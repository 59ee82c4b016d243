"""The reliability page's views across models: the comparison table, the score and latency
charts, and the effect sizes between every pair of models."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from plumbline.core import present
from plumbline.reliability.result import (
    Estimate,
    ModelPairEffect,
    ModelReliability,
)
from plumbline.views.reliability import (
    interval_basis,
)
from plumbline.views.reliability_model import (
    MISSING,
    interval_text,
)
from plumbline.views.svg import (
    IntervalRow,
    grouped_bar_chart,
    interval_chart,
)
from plumbline.views.svg_distribution import distribution_chart
from plumbline.views.table import Cell, number_cell, text_cell


@dataclass(frozen=True)
class ChartView:
    title: str
    note: str
    chart: Markup


def comparison_table(
    models: Sequence[ModelReliability],
) -> tuple[list[tuple[str, bool]], list[list[Cell]]]:
    """The model comparison table: one sortable row per model."""
    header = [
        ("model", False),
        ("error rate", True),
        ("trials", True),
        ("successful", True),
        ("consistency (CERT)", True),
        ("agreement", True),
        ("performance", True),
        ("latency p50 (s)", True),
        ("latency p95 (s)", True),
        ("latency p99 (s)", True),
        ("tokens / s", True),
        ("diversity", True),
        ("repetition", True),
        ("cost / trial (USD)", True),
    ]
    rows = []
    for m in models:
        latency, quality = m.latency, m.output_quality
        rows.append(
            [
                text_cell(m.model),
                number_cell(m.robustness.error_rate, present.percent_value),
                number_cell(m.trials),
                number_cell(m.successful),
                number_cell(m.consistency.statistic if m.consistency else None),
                number_cell(m.agreement.statistic if m.agreement else None),
                number_cell(m.performance.score if m.performance else None),
                number_cell(latency.p50 if latency else None),
                number_cell(latency.p95 if latency else None),
                number_cell(latency.p99 if latency else None),
                number_cell(latency.tokens_per_second if latency else None),
                number_cell(quality.semantic_diversity if quality else None),
                number_cell(quality.repetition_score if quality else None),
                number_cell(m.cost.mean_cost_per_trial if m.cost else None, present.usd),
            ]
        )
    return header, rows


def _estimate_row(label: str, estimate: Estimate | None) -> IntervalRow:
    if estimate is None:
        return IntervalRow(label, None, note="not measured")
    return IntervalRow(
        label,
        estimate.statistic,
        estimate.interval.low,
        estimate.interval.high,
        note=f"n = {present.number(estimate.n)}",
    )


def _estimate_chart(
    title: str, note: str, estimates: list[tuple[str, Estimate | None]], x_label: str
) -> ChartView:
    """A score in [0, 1] of every model, each with its interval over prompts."""
    return ChartView(
        title,
        note,
        interval_chart(
            [_estimate_row(model, estimate) for model, estimate in estimates],
            x_label=x_label,
            domain=(0.0, 1.0),
        ),
    )


def _score_charts(models: Sequence[ModelReliability]) -> list[ChartView]:
    """Consistency, agreement, performance and error rate of every model, each with its interval."""
    return [
        _estimate_chart(
            "Consistency (CERT score)",
            "Mean over prompts with the t interval over prompts (approximate: CERT scores are "
            "skewed); n = prompts.",
            [(m.model, m.consistency) for m in models],
            "consistency score",
        ),
        _estimate_chart(
            "Semantic agreement",
            "Mean pairwise cosine similarity of responses to the same prompt; n = prompts.",
            [(m.model, m.agreement) for m in models],
            "agreement",
        ),
        ChartView(
            "Performance heuristic",
            "CERT's length, structure and prompt-similarity heuristic (not correctness); the "
            "interval is t over prompt means (prompts as the unit).",
            interval_chart(
                [
                    IntervalRow(
                        m.model,
                        m.performance.score,
                        m.performance.ci_95.low if m.performance.ci_95 else None,
                        m.performance.ci_95.high if m.performance.ci_95 else None,
                        note=f"n = {present.number(m.performance.n)}",
                    )
                    if m.performance
                    else IntervalRow(m.model, None, note="not measured")
                    for m in models
                ],
                x_label="performance heuristic",
                domain=(0.0, 1.0),
            ),
        ),
        ChartView(
            "Error rate",
            "Failed trials over all trials (percent, as CERT defines it), Wilson 95% interval.",
            interval_chart(
                [
                    IntervalRow(
                        m.model,
                        m.robustness.error_rate,
                        m.robustness.error_rate_interval.low,
                        m.robustness.error_rate_interval.high,
                        note=f"{m.robustness.failed_trials}/{m.robustness.total_trials}",
                    )
                    for m in models
                ],
                x_label="error rate (%)",
                reference=0.0,
            ),
        ),
    ]


def _latency_charts(models: Sequence[ModelReliability]) -> list[ChartView]:
    """Every model's latency percentiles, its p95 interval and, when kept, each trial's latency."""
    names = [m.model for m in models]
    charts = [
        ChartView(
            "Latency percentiles",
            "Successful trials; a marked gap is a model without latency data.",
            grouped_bar_chart(
                names,
                {
                    key: [getattr(m.latency, key) if m.latency else None for m in models]
                    for key in ("p50", "p95", "p99")
                },
                y_label="seconds",
            ),
        ),
        ChartView(
            "Latency p95 with its interval",
            "Percentile bootstrap over trials.",
            interval_chart(
                [
                    IntervalRow(
                        m.model,
                        m.latency.p95,
                        m.latency.percentile_intervals["p95"].low,
                        m.latency.percentile_intervals["p95"].high,
                        note=f"n = {present.number(m.latency.n)}",
                    )
                    if m.latency
                    else IntervalRow(m.model, None, note="no latency")
                    for m in models
                ],
                x_label="p95 latency (s)",
            ),
        ),
    ]
    if any(m.latencies for m in models):
        charts.append(
            ChartView(
                "Latency per trial",
                "One point per successful trial (sorted latencies kept in the report).",
                distribution_chart(
                    {m.model: m.latencies for m in models},
                    x_label="seconds",
                    log_scale=_log_scale(models),
                ),
            )
        )
    return charts


def comparison_charts(models: Sequence[ModelReliability]) -> list[ChartView]:
    """Consistency, agreement, performance, error rate and latency of every model, side by side."""
    return [*_score_charts(models), *_latency_charts(models)]


def _log_scale(models: Sequence[ModelReliability]) -> bool:
    """A log axis when the positive latencies span more than a factor of 50."""
    values = [v for m in models for v in m.latencies if v > 0]
    return bool(values) and max(values) / min(values) > 50


def effects(comparisons: Sequence[ModelPairEffect]) -> tuple[list[list[Cell]], list[ChartView]]:
    """Cohen's d between every pair of models: a table and a forest plot per metric."""
    rows: list[list[Cell]] = []
    by_metric: dict[str, list[IntervalRow]] = defaultdict(list)
    labels: dict[str, str] = {}
    for comparison in comparisons:
        a, b, effect = comparison.model_a, comparison.model_b, comparison.effect
        labels[comparison.metric] = comparison.label
        pair = f"{a} vs {b}"
        if effect is not None:
            rows.append(
                [
                    text_cell(a),
                    text_cell(b),
                    text_cell(comparison.label),
                    number_cell(effect.statistic, present.signed),
                    text_cell(interval_text(effect.interval)),
                    number_cell(effect.hedges_g, present.signed),
                    text_cell(interval_basis(effect.interval)),
                ]
            )
            by_metric[comparison.metric].append(
                IntervalRow(
                    pair,
                    effect.statistic,
                    effect.interval.low,
                    effect.interval.high,
                    note=f"d = {present.number(effect.statistic)}",
                )
            )
        else:
            note = comparison.note or "not computed"
            rows.append(
                [
                    text_cell(a),
                    text_cell(b),
                    text_cell(comparison.label),
                    number_cell(None),
                    text_cell(MISSING),
                    number_cell(None),
                    text_cell(note),
                ]
            )
            by_metric[comparison.metric].append(IntervalRow(pair, None, note=note))
    charts = [
        ChartView(
            f"Cohen's d: {labels[metric]}",
            "Positive: the first model's values are larger. Normal-approximation 95% interval.",
            interval_chart(entries, x_label="Cohen's d (pooled SD)", reference=0.0),
        )
        for metric, entries in by_metric.items()
    ]
    return rows, charts
