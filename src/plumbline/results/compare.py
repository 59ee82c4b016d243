"""The `compare` kind: an A/B decision (the A/B schema), fed by run records.

Its metrics: every primary paired delta (mean, bootstrap interval, pairs) of every
comparison, and its cost figures (`COST_METRICS`: each arm's cost per task and per success and
their difference, with intervals and n), with the subject `TREATMENT vs CONTROL`.
"""

from __future__ import annotations

from typing import Any

from plumbline.compare.result import PRIMARY_DELTAS, CompareReport, CostComparison, CostFigure
from plumbline.results.errors import ResultDocumentError, validated
from plumbline.results.kinds import ResultKind, result_kind
from plumbline.results.metric_rows import metric_row
from plumbline.results.rows import MetricRow


@result_kind("compare")
class Compare(ResultKind[CompareReport]):
    """A compare report."""

    model = CompareReport
    sources = ("run_records",)
    made_by = "plumbline compare RECORDS --json compare.json"

    def read(self, document: Any) -> CompareReport:
        """A report of this version (an older one is named, with how to remake it)."""
        from plumbline.compare.result import SCHEMA_VERSION

        version = (
            document["schema_version"]
            if isinstance(document, dict) and "schema_version" in document
            else None
        )
        if version == "plumbline.compare/1":
            raise ResultDocumentError(
                [
                    "schema_version: a plumbline.compare/1 report from an earlier plumbline; "
                    "rerun `plumbline compare RECORDS --treatment ARM --control ARM --json "
                    f"compare.json` to make a {SCHEMA_VERSION} report"
                ]
            )
        if version != SCHEMA_VERSION:
            raise ResultDocumentError([f"schema_version: {version!r} is not {SCHEMA_VERSION!r}"])
        report: CompareReport = validated(CompareReport, document)
        return report

    def subjects(self, result: CompareReport) -> tuple[str, ...]:
        return tuple(compare_subject(c.treatment, c.control) for c in result.comparisons)

    def metrics(self, result: CompareReport) -> list[MetricRow]:
        return compare_metrics(result)


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
            rows.append(metric_row(subject, name, delta.mean, delta.ci, delta.n))
        if comparison.cost is not None:
            rows += _cost_rows(subject, comparison.cost)
    return rows


#: The cost metrics of a comparison: each arm's cost per task and per success (USD), and the
#: treatment − control difference of each over the pairs where both runs have a cost.
COST_METRICS = (
    "cost.treatment.per_task_usd",
    "cost.treatment.per_success_usd",
    "cost.control.per_task_usd",
    "cost.control.per_success_usd",
    "cost.per_task_delta_usd",
    "cost.per_success_delta_usd",
)


def _cost_rows(subject: str, cost: CostComparison) -> list[MetricRow]:
    """`COST_METRICS`, in that order (a figure without an estimate is a row without one)."""
    figures: list[CostFigure] = [
        cost.treatment.per_task_usd,
        cost.treatment.per_success_usd,
        cost.control.per_task_usd,
        cost.control.per_success_usd,
        cost.difference.per_task_usd,
        cost.difference.per_success_usd,
    ]
    return [
        metric_row(subject, name, figure.estimate, figure.interval, figure.n)
        for name, figure in zip(COST_METRICS, figures, strict=True)
    ]
