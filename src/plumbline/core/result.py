"""What every job's result document shares: the base model, the one interval type, units and
`schema_version`.

Each job ends in one pydantic document, built by its analysis and nothing else
(`LeaderboardDocument`, `CompareReport`, `ReliabilityReport`); every view renders it and computes
nothing. A document names its kind and major version in one string field,
`schema_version = "plumbline.<kind>/<major>"` (the leaderboard keeps it in `_metadata`, where
SA Bench keeps its metadata), and the site knows a document's kind from that field alone.

Every number field states its unit in the generated JSON Schema (`"unit"`, one of `Unit`):
rates are proportions in 0–1, except fields a methodology defines otherwise (CERT's
`error_rate` and `timeout_rate` are percentages).
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from plumbline.stats.result import ConfidenceInterval

Unit = Literal[
    "proportion",  # 0–1
    "percent",  # 0–100
    "seconds",
    "tokens",
    "usd",
    "count",
    "ratio",  # a quotient of two like quantities (e.g. treatment / control)
    "score",  # a score in the unit of the measurement it belongs to (see the description)
    "points",  # percentage points
    "probability",  # a p-value or confidence level, 0–1
    "same as estimate",  # an interval bound: the unit of the estimate it bounds
]

SCHEMA_VERSION_PATTERN = re.compile(r"^plumbline\.([a-z_]+)/([0-9]+)$")


def schema_version(kind: str, major: int) -> str:
    """The `schema_version` string of a document kind: `schema_version("compare", 2)` →
    `"plumbline.compare/2"`."""
    version = f"plumbline.{kind}/{major}"
    if not SCHEMA_VERSION_PATTERN.match(version):
        raise ValueError(f"not a document kind: {kind!r}")
    return version


def document_kind(document: Any) -> str | None:
    """The kind named by a document's `schema_version` (top level, or `_metadata` for a
    leaderboard), or None when it has none of plumbline's."""
    if not isinstance(document, dict):
        return None
    version = document.get("schema_version")
    metadata = document.get("_metadata")
    if version is None and isinstance(metadata, dict):
        version = metadata.get("schema_version")
    if not isinstance(version, str):
        return None
    match = SCHEMA_VERSION_PATTERN.match(version)
    return match.group(1) if match else None


def unit_field(description: str, unit: Unit, **kwargs: Any) -> Any:
    """A pydantic `Field` whose JSON Schema states `description` and `unit`."""
    return Field(description=description, json_schema_extra={"unit": unit}, **kwargs)


class ResultModel(BaseModel):
    """Base of every result document and its parts: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Interval(ResultModel):
    """A two-sided confidence interval `[low, high]` at confidence `level`, by `method`.

    The bounds are in the unit of the estimate they bound; either is None when it cannot be
    computed (no data), never a made-up 0.
    """

    low: float | None = unit_field("Lower bound.", "same as estimate")
    high: float | None = unit_field("Upper bound.", "same as estimate")
    level: float = unit_field("Confidence level.", "probability", gt=0, lt=1)
    method: str = Field(description="How the interval was computed (e.g. `Wilson`).")

    @property
    def half_width(self) -> float | None:
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2

    @property
    def approximate(self) -> bool:
        """True when the method says its coverage is approximate (small samples)."""
        return "approximate" in self.method

    @classmethod
    def of(cls, interval: ConfidenceInterval) -> Interval:
        """The document form of a `stats` interval (non-finite bounds become None)."""
        return cls(
            low=_finite(interval.low),
            high=_finite(interval.high),
            level=interval.level,
            method=interval.method,
        )


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None
