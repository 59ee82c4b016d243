"""A published metric as the store keeps it: one row per subject and metric (light: the
`history` command reads rows without importing the result models)."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class MetricRow:
    """One published metric of one subject (a model, a pair of arms, an arm)."""

    subject: str
    metric: str
    estimate: float | None
    low: float | None
    high: float | None
    level: float | None
    method: str | None
    n: int | None
    #: How it was measured where that varies within one kind of result (a reliability
    #: probe's prompts and trials); None where the suite and kind say it all.
    configuration: str | None = None


#: A metric row's fields in order: the store's metric columns besides the ids, and what
#: `history` lists of each metric.
METRIC_FIELDS = tuple(f.name for f in fields(MetricRow))
