"""`plumbline agent run --collect-analyze`: the A/B analysis (`plumbline compare`) of the run
records a harness run counted, planned as its sequential design when it ran `--until-decided`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plumbline.agent.harness import RunResult
    from plumbline.agent.plan import Plan
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
