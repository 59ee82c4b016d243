"""A/B decisions between agent arms from run records (the A/B schema).

`compare_runs(table, treatments=..., control=..., settings=...)` takes validated run records
(`plumbline.records.run_record.read_run_records`) and returns a `CompareReport`: the A/B
schema's arm summaries, paired deltas and three-gate decision, with cluster-bootstrap intervals,
paired tests, a per-task table and the minimum detectable pass-rate difference.
"""

from plumbline.compare.analysis import CompareError, compare_runs
from plumbline.compare.result import MIXED, ArmComparison, CompareReport, CompareSettings, Margins

__all__ = [
    "MIXED",
    "ArmComparison",
    "CompareError",
    "CompareReport",
    "CompareSettings",
    "Margins",
    "compare_runs",
]
