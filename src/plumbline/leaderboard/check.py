"""The seed's reproducibility rule: a fresh run reproduces a published leaderboard when every
model's overall lies within ±5 points of its published value.

Beside the fixed tolerance, each deviation is set against the combined interval of the two runs,
`|new − published| ≤ z · sqrt(SE_new² + SE_published²)`: a deviation inside the tolerance can
still be larger than sampling noise explains, and one outside it can be within noise when the
runs are small.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from scipy import stats as sps

from plumbline.leaderboard.scores import LEVEL

DEFAULT_TOLERANCE = 0.05


@dataclass(frozen=True)
class Deviation:
    """One model found in both files."""

    model: str
    new: float
    published: float
    deviation: float
    within_tolerance: bool
    combined_half_width: float | None
    within_interval: bool | None
    interval_basis: str | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class CheckResult:
    """Deviations of shared models, and the models found in only one file."""

    tolerance: float
    level: float
    deviations: list[Deviation]
    only_new: list[str] = field(default_factory=list)
    only_published: list[str] = field(default_factory=list)

    @property
    def reproducible(self) -> bool:
        """Every shared model within tolerance (and at least one model shared)."""
        return bool(self.deviations) and all(d.within_tolerance for d in self.deviations)

    @property
    def failures(self) -> list[Deviation]:
        return [d for d in self.deviations if not d.within_tolerance]

    def to_dict(self) -> dict[str, Any]:
        return {
            "reproducible": self.reproducible,
            "tolerance": self.tolerance,
            "level": self.level,
            "shared": len(self.deviations),
            "outside_tolerance": len(self.failures),
            "deviations": [d.to_dict() for d in self.deviations],
            "only_new": self.only_new,
            "only_published": self.only_published,
        }


def _overall_se(model: dict[str, Any]) -> float | None:
    intervals = model.get("intervals")
    if not isinstance(intervals, dict):
        return None
    overall = intervals.get("overall")
    if not isinstance(overall, dict):
        return None
    se = overall.get("standard_error")
    if isinstance(se, int | float) and not isinstance(se, bool) and math.isfinite(se):
        return float(se)
    return None


def check_reproducibility(
    new: dict[str, Any],
    published: dict[str, Any],
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    level: float = LEVEL,
) -> CheckResult:
    """Compare the overall of every model in both leaderboard documents."""
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a non-negative number, got {tolerance!r}")
    new_models = {m["model"]: m for m in new["models"]}
    old_models = {m["model"]: m for m in published["models"]}
    z = float(sps.norm.ppf(0.5 + level / 2))
    deviations: list[Deviation] = []
    for name in sorted(new_models.keys() & old_models.keys()):
        fresh, old = new_models[name], old_models[name]
        difference = float(fresh["overall"]) - float(old["overall"])
        se_new, se_old = _overall_se(fresh), _overall_se(old)
        known = [se for se in (se_new, se_old) if se is not None]
        half_width = z * math.sqrt(math.fsum(se**2 for se in known)) if known else None
        basis = None
        if se_new is not None and se_old is not None:
            basis = "both"
        elif se_new is not None:
            basis = "new only"
        elif se_old is not None:
            basis = "published only"
        deviations.append(
            Deviation(
                model=name,
                new=float(fresh["overall"]),
                published=float(old["overall"]),
                deviation=difference,
                # A hair of slack so that 0.72 vs 0.67 (exactly 5 points) counts as within.
                within_tolerance=abs(difference) <= tolerance + 1e-9,
                combined_half_width=half_width,
                within_interval=None if half_width is None else abs(difference) <= half_width,
                interval_basis=basis,
            )
        )
    return CheckResult(
        tolerance=tolerance,
        level=level,
        deviations=deviations,
        only_new=sorted(new_models.keys() - old_models.keys()),
        only_published=sorted(old_models.keys() - new_models.keys()),
    )
