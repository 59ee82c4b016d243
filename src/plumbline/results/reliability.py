"""The `reliability` kind: CERT's metrics over repeated trials, fed by trial records.

Its metrics: CERT's six published metrics of every model (`RELIABILITY_METRICS`), and, for a
model whose trials were priced (`--price`, `--prices`), its cost per trial and per prompt
(`COST_METRICS`), each with the probe's configuration (`probe_configuration`): two reports of
one model are one series only when it agrees.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from plumbline.reliability.result import Estimate, ModelReliability, ReliabilityReport
from plumbline.results.kinds import ResultKind, result_kind
from plumbline.results.metric_rows import metric_row
from plumbline.results.rows import MetricRow

#: The metrics a reliability report publishes, in report order.
RELIABILITY_METRICS = (
    "consistency",
    "agreement",
    "performance",
    "latency.mean",
    "latency.p95",
    "error_rate",
)
#: The cost metrics of a priced model (USD, with their bootstrap intervals over prompts).
COST_METRICS = ("cost.per_trial_usd", "cost.per_prompt_usd")


@result_kind("reliability")
class Reliability(ResultKind[ReliabilityReport]):
    """A reliability report."""

    model = ReliabilityReport
    sources = ("trial_records",)
    made_by = "plumbline reliability TRIALS --json reliability.json"

    def to_json(self, result: ReliabilityReport) -> dict[str, Any]:
        return result.json_document()

    def subjects(self, result: ReliabilityReport) -> tuple[str, ...]:
        return tuple(model.model for model in result.models)

    def metrics(self, result: ReliabilityReport) -> list[MetricRow]:
        return reliability_metrics(result)


def probe_configuration(prompt_trials: list[tuple[str, int]], embedding_model: str) -> str:
    """A reliability probe's configuration as one line: its prompts (a digest of their ids),
    the trials per prompt and the embedding model, e.g.
    `2 prompts (9f86d081) × 3 trials, all-MiniLM-L6-v2`. Two reports of the same model are
    one series only when this agrees."""
    ids = sorted(prompt for prompt, _ in prompt_trials)
    digest = hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()[:8]
    trials = max((count for _, count in prompt_trials), default=0)
    return f"{len(ids)} prompts ({digest}) × {trials} trials, {embedding_model}"


def reliability_metrics(report: ReliabilityReport) -> list[MetricRow]:
    """CERT's six published metrics of every model (`RELIABILITY_METRICS`) and the cost of
    every priced one (`COST_METRICS`)."""
    embedding = report.config.embedding_model_name
    return [row for model in report.models for row in _model_reliability(model, embedding)]


def _model_reliability(model: ModelReliability, embedding_model: str) -> list[MetricRow]:
    configuration = probe_configuration(
        [(prompt.prompt_id, prompt.trials) for prompt in model.prompts], embedding_model
    )
    return [
        dataclasses.replace(row, configuration=configuration) for row in _reliability_rows(model)
    ]


def _estimate_row(subject: str, metric: str, estimate: Estimate | None) -> MetricRow:
    if estimate is None:
        return metric_row(subject, metric, None, None, None)
    return metric_row(subject, metric, estimate.statistic, estimate.interval, estimate.n)


def _reliability_rows(model: ModelReliability) -> list[MetricRow]:
    subject = model.model
    rows = [
        _estimate_row(subject, "consistency", model.consistency),
        _estimate_row(subject, "agreement", model.agreement),
    ]
    performance = model.performance
    if performance is None:
        rows.append(metric_row(subject, "performance", None, None, None))
    else:
        interval = performance.ci_95
        n = performance.n if interval is None else interval.prompts
        rows.append(metric_row(subject, "performance", performance.score, interval, n))
    latency = model.latency
    if latency is None:
        rows += [
            metric_row(subject, name, None, None, None) for name in ("latency.mean", "latency.p95")
        ]
    else:
        rows.append(
            metric_row(subject, "latency.mean", latency.mean, latency.mean_ci_95, latency.n)
        )
        p95 = latency.percentile_intervals.get("p95")
        rows.append(metric_row(subject, "latency.p95", latency.p95, p95, latency.n))
    robustness = model.robustness
    rows.append(
        metric_row(
            subject,
            "error_rate",
            robustness.error_rate,
            robustness.error_rate_interval,
            robustness.total_trials,
        )
    )
    cost = model.cost
    if cost is not None:
        rows += [
            metric_row(
                subject,
                "cost.per_trial_usd",
                cost.per_trial_usd,
                cost.per_trial_interval,
                cost.prompts_priced,
            ),
            metric_row(
                subject,
                "cost.per_prompt_usd",
                cost.per_prompt_usd,
                cost.per_prompt_interval,
                cost.prompts_priced,
            ),
        ]
    return rows
