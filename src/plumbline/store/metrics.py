"""The published metrics of each kind of result, as rows: one extractor per kind.

A metric's name is the document's own: `overall`, the category keys and, for a priced model,
`cost.per_sample_usd` and `cost.total_usd` of a leaderboard (per model); the paired delta names
of a comparison (`pass_delta`, `cost_delta_usd`, ..., per `TREATMENT vs CONTROL`); CERT's
`consistency`, `agreement`, `performance`, `latency.mean`, `latency.p95` and `error_rate` of a
reliability report (per model); `success_rate` per arm of
an agent run (its comparison's deltas too, when it has one). Each row carries the estimate,
the interval the document publishes for it (bounds, level, method) and the sample size that
interval rests on.
"""

from __future__ import annotations

import math

from plumbline.agent.result import AgentRunDocument
from plumbline.compare.result import PRIMARY_DELTAS, CompareReport
from plumbline.core.result import Interval
from plumbline.leaderboard.result import LeaderboardDocument, LeaderboardRow
from plumbline.reliability.result import Estimate, ModelReliability, ReliabilityReport
from plumbline.stats.proportions import wilson_interval
from plumbline.store.rows import MetricRow

#: The metrics a reliability report publishes, in report order.
RELIABILITY_METRICS = (
    "consistency",
    "agreement",
    "performance",
    "latency.mean",
    "latency.p95",
    "error_rate",
)


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _row(
    subject: str, metric: str, estimate: float | None, interval: Interval | None, n: int | None
) -> MetricRow:
    return MetricRow(
        subject=subject,
        metric=metric,
        estimate=_finite(estimate),
        low=None if interval is None else _finite(interval.low),
        high=None if interval is None else _finite(interval.high),
        level=None if interval is None else interval.level,
        method=None if interval is None else interval.method,
        n=n,
    )


def leaderboard_metrics(document: LeaderboardDocument) -> list[MetricRow]:
    """`overall` and every category of every ranked model; a category's n is its questions
    scored, overall's the sum over categories."""
    rows: list[MetricRow] = []
    for model in document.models:
        overall = model.interval("overall")
        rows.append(
            _row(model.model, "overall", model.overall, overall, _overall_n(document, model))
        )
        for key in document.categories:
            counts = model.count(key)
            rows.append(
                _row(
                    model.model,
                    key,
                    model.score(key),
                    model.interval(key),
                    None if counts is None else counts.n,
                )
            )
        rows.extend(_cost_rows(model, _overall_n(document, model)))
    return rows


def _cost_rows(model: LeaderboardRow, n: int | None) -> list[MetricRow]:
    """A priced model's `cost.per_sample_usd` (with its interval) and `cost.total_usd`."""
    cost = model.cost
    if cost is None or cost.per_sample_usd.estimate is None:
        return []
    per_sample = cost.per_sample_usd
    return [
        MetricRow(
            subject=model.model,
            metric="cost.per_sample_usd",
            estimate=_finite(per_sample.estimate),
            low=_finite(per_sample.low),
            high=_finite(per_sample.high),
            level=per_sample.level,
            method=per_sample.method,
            n=n,
        ),
        _row(model.model, "cost.total_usd", cost.total_usd, None, n),
    ]


def _overall_n(document: LeaderboardDocument, model: LeaderboardRow) -> int | None:
    counts = [model.count(key) for key in document.categories]
    known = [c.n for c in counts if c is not None]
    return sum(known) if known else None


def compare_subject(treatment: str, control: str) -> str:
    """The subject of a comparison's metrics: `TREATMENT vs CONTROL`."""
    return f"{treatment} vs {control}"


def compare_metrics(report: CompareReport) -> list[MetricRow]:
    """Every primary paired delta (mean, its bootstrap interval, pairs) of every comparison."""
    rows: list[MetricRow] = []
    for comparison in report.comparisons:
        subject = compare_subject(comparison.treatment, comparison.control)
        for name in PRIMARY_DELTAS:
            delta = getattr(comparison.paired, name)
            rows.append(_row(subject, name, delta.mean, delta.ci, delta.n))
    return rows


def _estimate_row(subject: str, metric: str, estimate: Estimate | None) -> MetricRow:
    if estimate is None:
        return _row(subject, metric, None, None, None)
    return _row(subject, metric, estimate.statistic, estimate.interval, estimate.n)


def probe_configuration(prompt_trials: list[tuple[str, int]], embedding_model: str) -> str:
    """A reliability probe's configuration as one line: its prompts (a digest of their ids),
    the trials per prompt and the embedding model, e.g.
    `2 prompts (9f86d081) × 3 trials, all-MiniLM-L6-v2`. Two reports of the same model are
    one series only when this agrees."""
    import hashlib

    ids = sorted(prompt for prompt, _ in prompt_trials)
    digest = hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()[:8]
    trials = max((count for _, count in prompt_trials), default=0)
    return f"{len(ids)} prompts ({digest}) × {trials} trials, {embedding_model}"


def _model_reliability(model: ModelReliability, embedding_model: str) -> list[MetricRow]:
    import dataclasses

    configuration = probe_configuration(
        [(prompt.prompt_id, prompt.trials) for prompt in model.prompts], embedding_model
    )
    return [
        dataclasses.replace(row, configuration=configuration) for row in _reliability_rows(model)
    ]


def _reliability_rows(model: ModelReliability) -> list[MetricRow]:
    subject = model.model
    rows = [
        _estimate_row(subject, "consistency", model.consistency),
        _estimate_row(subject, "agreement", model.agreement),
    ]
    performance = model.performance
    if performance is None:
        rows.append(_row(subject, "performance", None, None, None))
    else:
        interval = performance.ci_95
        n = performance.n if interval is None else interval.prompts
        rows.append(_row(subject, "performance", performance.score, interval, n))
    latency = model.latency
    if latency is None:
        rows += [_row(subject, name, None, None, None) for name in ("latency.mean", "latency.p95")]
    else:
        rows.append(_row(subject, "latency.mean", latency.mean, latency.mean_ci_95, latency.n))
        p95 = latency.percentile_intervals.get("p95")
        rows.append(_row(subject, "latency.p95", latency.p95, p95, latency.n))
    robustness = model.robustness
    rows.append(
        _row(
            subject,
            "error_rate",
            robustness.error_rate,
            robustness.error_rate_interval,
            robustness.total_trials,
        )
    )
    return rows


def reliability_metrics(report: ReliabilityReport) -> list[MetricRow]:
    """CERT's six published metrics of every model (`RELIABILITY_METRICS`)."""
    embedding = report.config.embedding_model_name
    return [row for model in report.models for row in _model_reliability(model, embedding)]


def agent_run_metrics(document: AgentRunDocument) -> list[MetricRow]:
    """`success_rate` per arm (successes over runs without infrastructure failures, Wilson
    interval), then the deltas of its comparison, when it has one."""
    rows: list[MetricRow] = []
    for arm, tally in document.arms.items():
        kept = tally.kept
        if kept < 1:
            rows.append(_row(arm, "success_rate", None, None, 0))
            continue
        wilson = wilson_interval(min(tally.successes, kept), kept)
        rows.append(_row(arm, "success_rate", wilson.statistic, Interval.of(wilson.interval), kept))
    if document.compare is not None:
        rows += compare_metrics(CompareReport.model_validate(document.compare))
    return rows
