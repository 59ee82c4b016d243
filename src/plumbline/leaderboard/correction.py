"""What human labels did to one judged category: the inputs and result of its PPI estimate.

Kept apart from `labels` (which reads and matches labels) so that `scores.CategoryScore` can
carry a correction without an import circle.
"""

from __future__ import annotations

from dataclasses import dataclass

from plumbline.core.result import Interval
from plumbline.stats import EstimateResult, SelectionCheck, ppi_mean
from plumbline.stats.arrays import FloatArray, IntArray


@dataclass(frozen=True)
class Correction:
    """One model's labels in one category and the PPI estimate they give."""

    labelled: IntArray
    """Question codes with a human label (ascending)."""
    human: FloatArray
    judge_labelled: FloatArray
    judge_unlabelled: FloatArray
    unlabelled: IntArray
    result: EstimateResult
    judge_value: float
    judge_interval: Interval | None
    selection: SelectionCheck
    """Does the labelled set look drawn at random (the judge's mean on it vs on the rest)?"""

    def estimate(self, level: float) -> EstimateResult:
        return ppi_mean(self.human, self.judge_labelled, self.judge_unlabelled, level=level)
