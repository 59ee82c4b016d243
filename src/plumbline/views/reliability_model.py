"""The reliability page's section of one model: its headline figures per CERT metric with
intervals and bands, its prompts, latency, errors and failed trials."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from plumbline.core import present
from plumbline.core.result import Interval
from plumbline.reliability.result import (
    Band,
    Estimate,
    ModelReliability,
    ReliabilityReport,
)
from plumbline.views.reliability import (
    approximate_label,
    interval_basis,
)
from plumbline.views.reliability_cost import cost_figures, priced_by
from plumbline.views.svg import (
    IntervalRow,
    grouped_bar_chart,
    interval_chart,
)
from plumbline.views.table import Cell, number_cell, text_cell

MISSING = present.MISSING


@dataclass(frozen=True)
class Metric:
    """One headline figure: value, interval, n, and CERT's interpretation band."""

    label: str
    value: str
    interval: str
    n: str
    band: str
    recommendation: str
    css: str
    basis: str = ""


@dataclass(frozen=True)
class PromptRow:
    prompt_id: str
    cells: list[Cell]
    conflict: str | None


@dataclass(frozen=True)
class FailedTrialRow:
    error_class: str
    prompt_id: str
    cells: list[Cell]
    message: str


@dataclass(frozen=True)
class ResponseSampleView:
    prompt_id: str
    prompt: str
    responses: list[tuple[str, str]]


@dataclass(frozen=True)
class ModelView:
    anchor: str
    model: str
    trials: str
    successful: str
    consistency: list[Metric]
    consistency_chart: Markup | None
    prompts: list[PromptRow]
    performance: list[Metric]
    latency_rows: list[list[Cell]]
    latency_chart: Markup | None
    latency_note: str
    errors: list[Metric]
    error_rows: list[list[Cell]]
    error_chart: Markup | None
    error_note: str
    quality: list[Metric]
    cost: list[Metric]
    warnings: list[str]
    failed: list[FailedTrialRow]
    failed_total: int
    failed_total_text: str
    error_classes: list[str]
    samples: list[ResponseSampleView]


def interval_text(interval: Interval | None, *, as_percent: bool = False) -> str:
    """`[low, high]`, `≥ low (one-sided)` when only a lower bound exists (` approximate` when
    the interval says so), or a dash."""
    if interval is not None and interval.high is None and interval.low is not None:
        low = present.percent(interval.low) if as_percent else present.number(interval.low)
        text = f"≥ {low} (one-sided)"
    else:
        text = present.interval(interval, as_percent=as_percent)
    if text != MISSING:
        text += approximate_label(interval)
    return text


def _metric(
    label: str,
    value: str,
    interval: str = "",
    n: int | None = None,
    band: Band | None = None,
    basis: Interval | None = None,
) -> Metric:
    return Metric(
        label=label,
        value=value,
        interval=interval,
        n=present.number(n) if n is not None else MISSING,
        band=band.label if band else "",
        recommendation=band.recommendation if band else "",
        css=band.tone if band else "missing",
        basis=interval_basis(basis),
    )


def _unmeasured(label: str) -> Metric:
    """A figure the report does not have: shown as missing, never as a zero."""
    return Metric(label, MISSING, MISSING, MISSING, "not measured", "", "missing")


def _estimate_metric(label: str, estimate: Estimate | None) -> Metric:
    if estimate is None:
        return _unmeasured(label)
    interval = interval_text(estimate.interval)
    if estimate.population_interval is not None:
        population = interval_text(estimate.population_interval)
        interval = f"{interval} these prompts; {population} prompt population"
    return _metric(
        label,
        present.fixed(estimate.statistic),
        interval,
        estimate.n,
        estimate.band,
        estimate.interval,
    )


def _consistency(model: ModelReliability) -> tuple[list[Metric], Markup | None, list[PromptRow]]:
    metrics = [
        _estimate_metric("consistency (CERT)", model.consistency),
        _estimate_metric("semantic agreement", model.agreement),
    ]
    rows: list[IntervalRow] = []
    prompt_rows: list[PromptRow] = []
    note = "fewer than 2 responses"
    for prompt in model.prompts:
        consistency, agreement = prompt.consistency, prompt.agreement
        c_band = consistency.band.label if consistency else MISSING
        a_band = agreement.band.label if agreement else MISSING
        score = present.fixed(consistency.score) if consistency else MISSING
        similarity = present.fixed(agreement.similarity) if agreement else MISSING
        a_interval = interval_text(agreement.interval if agreement else None)
        rows.append(
            IntervalRow(
                f"{prompt.prompt_id} · consistency",
                consistency.score if consistency else None,
                note="CERT" if consistency else note,
                tooltip=f"{prompt.prompt_id}: CERT consistency {score} ({c_band})"
                if consistency
                else "",
            )
        )
        interval = agreement.interval if agreement else None
        rows.append(
            IntervalRow(
                f"{prompt.prompt_id} · agreement",
                agreement.similarity if agreement else None,
                interval.low if interval else None,
                interval.high if interval else None,
                note="agreement" if agreement else note,
                tooltip=f"{prompt.prompt_id}: agreement {similarity} {a_interval} ({a_band})"
                if agreement
                else "",
                css_class="agreement",
            )
        )
        prompt_rows.append(
            PromptRow(
                prompt.prompt_id,
                [
                    text_cell(prompt.prompt_id),
                    number_cell(prompt.trials),
                    number_cell(prompt.valid_responses),
                    number_cell(consistency.score if consistency else None, present.fixed),
                    text_cell(c_band),
                    number_cell(agreement.similarity if agreement else None, present.fixed),
                    text_cell(a_interval),
                    text_cell(a_band),
                ],
                prompt.conflict,
            )
        )
    chart = (
        interval_chart(
            rows, x_label="score (0–1): CERT consistency vs semantic agreement", domain=(0.0, 1.0)
        )
        if rows
        else None
    )
    return metrics, chart, prompt_rows


_LATENCY_FIELDS = ("mean", "p50", "p95", "p99", "max")


def _latency(model: ModelReliability) -> tuple[list[list[Cell]], Markup | None, str]:
    latency, ttft = model.latency, model.ttft
    if latency is None:
        return [], None, "not measured: fewer than 2 successful trials with a latency"
    rows: list[list[Cell]] = []
    series: dict[str, list[float | None]] = {}
    for label, name, data in (
        ("latency (s)", "latency", latency),
        ("time to first token (s)", "time to first token", ttft),
    ):
        if data is None:
            continue
        intervals = data.percentile_intervals
        rows.append(
            [
                text_cell(label),
                number_cell(data.n),
                number_cell(data.mean),
                text_cell(interval_text(data.mean_ci_95)),
                number_cell(data.std),
                number_cell(data.min),
                number_cell(data.p50),
                text_cell(interval_text(intervals["p50"])),
                number_cell(data.p95),
                text_cell(interval_text(intervals["p95"])),
                number_cell(data.p99),
                text_cell(interval_text(intervals["p99"])),
                number_cell(data.max),
                number_cell(data.coefficient_of_variation),
                number_cell(data.tokens_per_second),
            ]
        )
        series[name] = [getattr(data, key) for key in _LATENCY_FIELDS]
    chart = grouped_bar_chart(list(_LATENCY_FIELDS), series, y_label="seconds")
    bases = "; ".join(
        f"{name}: {interval_basis(interval)}"
        for name, interval in (
            ("mean", latency.mean_ci_95),
            *((key, latency.percentile_intervals[key]) for key in ("p50", "p95", "p99")),
        )
    )
    note = (
        f"p95: {latency.p95_band.label}; coefficient of variation: {latency.variation_band.label}. "
        f"Intervals — {bases}."
    )
    return rows, chart, note


def _rate_metric(label: str, rate: float, interval: Interval, trials: int, band: Band) -> Metric:
    """A rate of all trials, in percent, with its interval (the basis shown) and band."""
    return _metric(
        label,
        present.percent_value(rate),
        present.interval(interval, in_percent=True),
        trials,
        band,
        interval,
    )


def _errors(model: ModelReliability) -> tuple[list[Metric], list[list[Cell]], Markup | None, str]:
    robust = model.robustness
    metrics = [
        _rate_metric(
            "error rate",
            robust.error_rate,
            robust.error_rate_interval,
            robust.total_trials,
            robust.band,
        ),
        _rate_metric(
            "timeout rate",
            robust.timeout_rate,
            robust.timeout_rate_interval,
            robust.total_trials,
            robust.timeout_band,
        ),
    ]
    occurred = sorted(
        (c for c in robust.error_classes if c.trials), key=lambda c: (-c.trials, c.error_class)
    )
    absent = [c for c in robust.error_classes if not c.trials]
    table = [
        [
            text_cell(c.error_class),
            number_cell(c.trials),
            number_cell(c.rate, present.percent),
            text_cell(interval_text(c.interval, as_percent=True)),
        ]
        for c in occurred
    ]
    chart = (
        interval_chart(
            [
                IntervalRow(
                    c.error_class,
                    c.rate,
                    c.interval.low,
                    c.interval.high,
                    note=f"{c.trials}/{robust.total_trials}",
                    tooltip=f"{c.error_class}: {c.trials} of {robust.total_trials} trials, "
                    f"Wilson 95% CI {interval_text(c.interval, as_percent=True)}",
                    css_class="error-class",
                )
                for c in occurred
            ],
            x_label="share of trials (Wilson 95% CI)",
            percent=True,
            reference=0.0,
        )
        if occurred
        else None
    )
    note = ""
    if absent:
        note = (
            f"No trial failed with {', '.join(c.error_class for c in absent)}: 0 of "
            f"{robust.total_trials} each, at most {present.percent(absent[0].interval.high)} "
            "(Wilson 95% upper bound)."
        )
    return metrics, table, chart, note


def _performance(model: ModelReliability) -> list[Metric]:
    performance = model.performance
    if performance is None:
        return [_unmeasured("performance")]
    metrics = [
        _metric(
            "performance heuristic: length, structure, prompt similarity (all trials; interval "
            "over prompts)",
            present.fixed(performance.score),
            interval_text(performance.ci_95),
            performance.n,
            performance.band,
            performance.ci_95,
        )
    ]
    if model.performance_by_prompt is not None:
        metrics.append(
            _estimate_metric(
                "performance heuristic (prompts as the unit)", model.performance_by_prompt
            )
        )
    for label, value in (
        ("semantic relevance (half the score)", performance.relevance),
        ("completeness (three tenths)", performance.completeness),
        ("structure (one fifth)", performance.structure),
    ):
        metrics.append(Metric(label, present.number(value), "", "", "", "", "missing"))
    return metrics


def _quality(model: ModelReliability) -> list[Metric]:
    quality = model.output_quality
    if quality is None:
        return [_unmeasured("output quality")]
    return [
        _metric("mean words", present.number(quality.mean_words), n=quality.n),
        _metric("mean tokens (≈ words × 1.3)", present.number(quality.mean_tokens), n=quality.n),
        _metric(
            "semantic diversity",
            present.number(quality.semantic_diversity),
            n=quality.n,
            band=quality.diversity_band,
        ),
        _metric(
            "repetition score",
            present.number(quality.repetition_score),
            n=quality.n,
            band=quality.repetition_band,
        ),
    ]


def _cost(model: ModelReliability) -> list[Metric]:
    cost = model.cost
    if cost is None:
        return []
    metrics = []
    for label, value, interval in cost_figures(cost):
        shown, _, bounds = value.partition(" ")
        metrics.append(
            _metric(
                f"{label} (USD; {priced_by(cost)})",
                shown,
                interval=bounds,
                n=cost.prompts_priced or cost.trials_priced,
                basis=interval,
            )
        )
    return metrics


def _failed_trials(model: ModelReliability) -> list[FailedTrialRow]:
    return [
        FailedTrialRow(
            error_class=failed.error_class,
            prompt_id=failed.prompt_id,
            cells=[
                text_cell(failed.prompt_id),
                number_cell(failed.trial),
                text_cell(failed.error_class),
                number_cell(failed.http_status, str),
                number_cell(failed.attempts),
                number_cell(failed.latency_seconds),
            ],
            message=failed.message,
        )
        for failed in model.failed_trials
    ]


def model_view(report: ReliabilityReport, model: ModelReliability, index: int) -> ModelView:
    """One model's section."""
    consistency, chart, prompts = _consistency(model)
    latency_rows, latency_chart, latency_note = _latency(model)
    errors, error_rows, error_chart, error_note = _errors(model)
    failed = _failed_trials(model)
    return ModelView(
        anchor=f"model-{index}",
        model=model.model,
        trials=present.number(model.trials),
        successful=present.number(model.successful),
        consistency=consistency,
        consistency_chart=chart,
        prompts=prompts,
        performance=_performance(model),
        latency_rows=latency_rows,
        latency_chart=latency_chart,
        latency_note=latency_note,
        errors=errors,
        error_rows=error_rows,
        error_chart=error_chart,
        error_note=error_note,
        quality=_quality(model),
        cost=_cost(model),
        warnings=report.warnings_for(model.model),
        failed=failed,
        failed_total=model.robustness.failed_trials,
        failed_total_text=present.number(model.robustness.failed_trials),
        error_classes=sorted({f.error_class for f in failed}),
        samples=[
            ResponseSampleView(
                sample.prompt_id,
                sample.prompt,
                [(present.number(r.trial), r.text) for r in sample.responses],
            )
            for sample in model.samples
        ],
    )
