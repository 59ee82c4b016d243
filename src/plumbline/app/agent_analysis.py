"""`plumbline agent run`: its typed document (`run_document`) and, with `--collect-analyze`, the
A/B analysis (`plumbline compare`) of the run records a harness run counted, planned as its
sequential design when it ran `--until-decided`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

#: The analysis's files, beside the run's records.
COMPARE_JSON = "compare.json"
COMPARE_MD = "compare.md"

if TYPE_CHECKING:
    from plumbline.agent.harness import RunResult
    from plumbline.agent.plan import Plan
    from plumbline.agent.result import AgentRunDocument
    from plumbline.agent.sequential import SequentialMonitor
    from plumbline.compare.result import CompareReport, CompareSettings


def analysis_settings(monitor: SequentialMonitor | None) -> CompareSettings:
    """The analysis's settings: the defaults, with the monitor's sequential design when the run
    stopped on a sequential verdict (so the analysis reads the pairs as the run did)."""
    from plumbline.compare.result import CompareSettings, SequentialSettings

    if monitor is None:
        return CompareSettings()
    design = monitor.plan
    assert design.baseline is not None
    return CompareSettings(
        sequential=SequentialSettings(
            effect=design.effect,
            baseline=design.baseline,
            alpha=design.alpha,
            max_pairs=monitor.max_pairs_given,
            correlation=float(design.assumptions["correlation"]),
        )
    )


def analyze_run(
    plan: Plan, result: RunResult, monitor: SequentialMonitor | None = None
) -> CompareReport:
    """The A/B analysis of the records `result` counted (one per unit of `plan`), never other
    lines of its records file. Raises `compare.analysis.CompareError` when they cannot be
    compared (an arm without runs, ...)."""
    import polars as pl

    from plumbline.compare.analysis import compare_runs
    from plumbline.records.run_record import read_run_records

    table = read_run_records([result.records_path])
    counted = {record.run_id for record in result.records}
    table.frame = table.frame.filter(pl.col("run_id").is_in(list(counted)))
    settings = analysis_settings(monitor)
    return compare_runs(table, control=plan.loaded.suite.control, settings=settings)


def run_document(
    plan: Plan,
    result: RunResult,
    monitor: SequentialMonitor | None = None,
    report: CompareReport | None = None,
) -> AgentRunDocument:
    """The typed document of `agent run`: the run's counts per arm, every difference between
    its arms, the sequential verdict (with `--until-decided`) and the analysis (when made)."""
    from plumbline.agent.result import AgentRunDocument

    return AgentRunDocument(
        **result.to_dict(),
        arm_differences=[difference.to_dict() for difference in plan.differences],
        sequential=None if monitor is None else sequential_summary(monitor, plan, result),
        compare=None if report is None else report.model_dump(mode="json"),
    )


def sequential_summary(monitor: SequentialMonitor, plan: Plan, result: RunResult) -> dict[str, Any]:
    """The monitor's sequential verdict, with the trials scheduled and recorded."""
    recorded = sum(tally.runs for tally in result.arms.values())
    return monitor.summary(trials_scheduled=len(plan.schedule), trials_recorded=recorded)


def write_analysis(
    plan: Plan,
    result: RunResult,
    monitor: SequentialMonitor | None,
    dumps: Callable[[Any], str],
) -> CompareReport:
    """The A/B analysis of the run (`analyze_run`), written beside its records as
    `compare.json` (serialised by `dumps`) and `compare.md` (with every difference between the
    arms). Raises `compare.analysis.CompareError` when the records cannot be compared."""
    from plumbline.records.io import write_atomic
    from plumbline.views.agent import differences_markdown
    from plumbline.views.compare import render_markdown

    report = analyze_run(plan, result, monitor)
    write_atomic(result.output / COMPARE_JSON, dumps(report) + "\n")
    write_atomic(result.output / COMPARE_MD, render_markdown(report) + differences_markdown(plan))
    return report
