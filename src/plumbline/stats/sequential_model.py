"""The sequential A/B test's plan and result types, and the exact random walk its boundary is
calibrated on (binary outcomes): `stats.sequential` plans and runs the test."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from plumbline.stats.arrays import FloatArray, IntArray
from plumbline.stats.result import ConfidenceInterval

Verdict = Literal["better", "worse", "equivalent", "undecided"]
Outcome = Literal["binary", "continuous"]


@dataclass(frozen=True)
class SequentialPlan:
    """A sequential design, fixed before any outcome is seen.

    `fixed_pairs` is what the fixed design needs for the same question (`plumbline power`);
    `max_pairs` is the cap; `mixture` (ρ) and `level_constant` (L) define the boundary
    `b(V) = √((V + ρ)(ln((V + ρ)/ρ) + L))`; `planned_power` is the power at the planned effect
    with this cap (exact for binary outcomes).
    """

    outcome: Outcome
    baseline: float | None
    effect: float
    alpha: float
    power: float
    margin: float | None
    fixed_pairs: int
    max_pairs: int
    mixture: float
    level_constant: float
    planned_power: float
    method: str
    assumptions: dict[str, Any] = field(default_factory=dict)

    def boundary(self, variance: float | FloatArray) -> Any:
        """`b(V)`: reject 'no difference' once `|S_n| > b(V_n)`."""
        v = np.asarray(variance, dtype=np.float64) + self.mixture
        return np.sqrt(v * (np.log(v / self.mixture) + self.level_constant))

    @property
    def cap_ratio(self) -> float:
        return self.max_pairs / self.fixed_pairs

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cap_ratio": self.cap_ratio}


@dataclass(frozen=True)
class SequentialStep:
    """The confidence sequence after `pairs` pairs."""

    pairs: int
    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class SequentialResult:
    """Where a sequential comparison stopped, and why.

    `stopped_at` is the pairs used; `interval` the confidence sequence there; `reason` one of
    `boundary` (better/worse), `equivalence`, `cap` (undecided at the cap) or `data` (the data
    ran out first: `complete` is False and more pairs may still decide); `path` the sequence at
    every look up to the stop (for plots).
    """

    verdict: Verdict
    stopped_at: int
    pairs_available: int
    estimate: float
    interval: ConfidenceInterval
    reason: str
    complete: bool
    plan: SequentialPlan
    path: list[SequentialStep] = field(default_factory=list)

    @property
    def decided(self) -> bool:
        return self.verdict != "undecided"

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "stopped_at": self.stopped_at,
            "pairs_available": self.pairs_available,
            "estimate": self.estimate,
            "interval": self.interval.to_dict(),
            "reason": self.reason,
            "complete": self.complete,
            "plan": self.plan.to_dict(),
            "path": [asdict(step) for step in self.path],
        }


# ---------------------------------------------------------------------------------------------
# Exact random-walk calculations (binary outcomes)


def _thresholds(mixture: float, level_constant: float, steps: int) -> IntArray:
    """Smallest rejecting |S| after k = 0..steps discordant pairs (|S| > b(k))."""
    k = np.arange(steps + 1, dtype=np.float64) + mixture
    bound = np.sqrt(k * (np.log(k / mixture) + level_constant))
    return (np.floor(bound) + 1).astype(np.int64)


def _walk_crossings(thresholds: IntArray, up: float) -> tuple[FloatArray, FloatArray]:
    """Cumulative probabilities that a ±1 walk (P(+1) = `up`) has crossed the upper / lower
    threshold by step k = 0..len−1 (absorbing at the first crossing)."""
    steps = len(thresholds) - 1
    width = int(thresholds.max())
    # positions −width..width; crossed mass is removed.
    probs = np.zeros(2 * width + 1)
    probs[width] = 1.0
    upper = np.zeros(steps + 1)
    lower = np.zeros(steps + 1)
    for k in range(1, steps + 1):
        moved = np.zeros_like(probs)
        moved[1:] += probs[:-1] * up
        moved[:-1] += probs[1:] * (1 - up)
        # mass that would leave the grid has already crossed (grid covers every threshold).
        c = int(thresholds[k])
        top = moved[width + c :].sum()
        bottom = moved[: width - c + 1].sum()
        moved[width + c :] = 0
        moved[: width - c + 1] = 0
        upper[k] = upper[k - 1] + top
        lower[k] = lower[k - 1] + bottom
        probs = moved
    return upper, lower


def _null_crossing(mixture: float, level_constant: float, steps: int) -> float:
    upper, lower = _walk_crossings(_thresholds(mixture, level_constant, steps), 0.5)
    return float(upper[-1] + lower[-1])
