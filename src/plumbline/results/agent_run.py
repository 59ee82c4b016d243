"""The `agent_run` kind: what `plumbline agent run` collected (with its A/B analysis when
asked).

Its metrics: `success_rate` per arm (successes over runs without infrastructure failures,
Wilson interval), then the deltas of its comparison, when it has one.
"""

from __future__ import annotations

from typing import Any

from plumbline.agent.result import AgentRunDocument
from plumbline.compare.result import CompareReport
from plumbline.core.result import Interval
from plumbline.results.compare import compare_metrics
from plumbline.results.errors import ResultDocumentError, validated
from plumbline.results.kinds import ResultKind, result_kind
from plumbline.results.metric_rows import metric_row
from plumbline.results.rows import MetricRow
from plumbline.stats.proportions import wilson_interval


@result_kind("agent_run")
class AgentRun(ResultKind[AgentRunDocument]):
    """An agent run document."""

    model = AgentRunDocument

    def read(self, document: Any) -> AgentRunDocument:
        """Validated, its comparison (when it has one) a compare report of this version."""
        run: AgentRunDocument = validated(AgentRunDocument, document)
        problems = self.check(run)
        if problems:
            raise ResultDocumentError(problems)
        return run

    def check(self, result: AgentRunDocument) -> list[str]:
        """Its comparison (when it has one) is a compare report of this version."""
        from plumbline.compare.result import document_problems

        if result.compare is None:
            return []
        return [f"compare.{problem}" for problem in document_problems(result.compare)]

    def to_json(self, result: AgentRunDocument) -> dict[str, Any]:
        """Its JSON, `sequential` and `compare` left out when the run has none (as `agent run`
        has always written it)."""
        data: dict[str, Any] = result.model_dump(mode="json")
        for optional in ("sequential", "compare"):
            if data[optional] is None:
                del data[optional]
        return data

    def subjects(self, result: AgentRunDocument) -> tuple[str, ...]:
        return tuple(result.arms)

    def metrics(self, result: AgentRunDocument) -> list[MetricRow]:
        return agent_run_metrics(result)


def agent_run_metrics(document: AgentRunDocument) -> list[MetricRow]:
    """`success_rate` per arm (successes over runs without infrastructure failures, Wilson
    interval), then the deltas of its comparison, when it has one."""
    rows: list[MetricRow] = []
    for arm, tally in document.arms.items():
        kept = tally.kept
        if kept < 1:
            rows.append(metric_row(arm, "success_rate", None, None, 0))
            continue
        wilson = wilson_interval(min(tally.successes, kept), kept)
        rows.append(
            metric_row(arm, "success_rate", wilson.statistic, Interval.of(wilson.interval), kept)
        )
    if document.compare is not None:
        rows += compare_metrics(CompareReport.model_validate(document.compare))
    return rows
