"""Building metric rows: an estimate with the interval a document publishes for it."""

from __future__ import annotations

import math

from plumbline.core.result import Interval
from plumbline.results.rows import MetricRow


def finite(value: float | None) -> float | None:
    """`value`, or None when it is missing or not finite."""
    return value if value is not None and math.isfinite(value) else None


def metric_row(
    subject: str, metric: str, estimate: float | None, interval: Interval | None, n: int | None
) -> MetricRow:
    """One row: the estimate, its interval's bounds, level and method, and its sample size."""
    return MetricRow(
        subject=subject,
        metric=metric,
        estimate=finite(estimate),
        low=None if interval is None else finite(interval.low),
        high=None if interval is None else finite(interval.high),
        level=None if interval is None else interval.level,
        method=None if interval is None else interval.method,
        n=n,
    )
