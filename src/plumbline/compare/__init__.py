"""A/B decisions between agent arms from run records (seed 002).

`compare_runs(table, treatments=..., control=..., settings=...)` takes validated run records
(`plumbline.records.run_record.read_run_records`) and returns a `CompareReport`: the seed's arm
summaries, paired deltas and three-gate decision, with cluster-bootstrap intervals, paired
tests, a per-task table and the minimum detectable pass-rate difference.
"""

from plumbline.compare.analysis import (
    DEFAULT_ARMS,
    CompareError,
    CompareReport,
    CompareSettings,
    Comparison,
    compare_runs,
)
from plumbline.compare.decision import MIXED, Margins

__all__ = [
    "DEFAULT_ARMS",
    "MIXED",
    "CompareError",
    "CompareReport",
    "CompareSettings",
    "Comparison",
    "Margins",
    "compare_runs",
]
