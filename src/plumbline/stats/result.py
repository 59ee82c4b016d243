"""Result objects shared by every statistic: named fields, `confidence_interval()`, `to_dict()`."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class ConfidenceInterval:
    """A two-sided interval `[low, high]` at confidence `level`, computed by `method`."""

    low: float
    high: float
    level: float = 0.95
    method: str = ""

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EstimateResult:
    """A point estimate with its sample size, standard error (when defined) and interval."""

    statistic: float
    n: int
    interval: ConfidenceInterval
    standard_error: float | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def confidence_interval(self) -> ConfidenceInterval:
        return self.interval

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "n": self.n,
            "standard_error": self.standard_error,
            "interval": self.interval.to_dict(),
            **self.details,
        }


@dataclass(frozen=True)
class TestResult:
    """A hypothesis test: statistic, p-value, and the test's own named details."""

    statistic: float
    pvalue: float
    method: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "pvalue": self.pvalue,
            "method": self.method,
            **self.details,
        }


def check_level(level: float, name: str = "level") -> float:
    """Validate a confidence level in (0, 1)."""
    if not (isinstance(level, int | float) and 0 < level < 1 and math.isfinite(level)):
        raise ValueError(f"{name} must be strictly between 0 and 1, got {level!r}")
    return float(level)
