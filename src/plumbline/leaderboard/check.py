"""SA Bench's reproducibility rule: a fresh run reproduces a published leaderboard when every
model's overall lies within ±5 points of its published value.

Beside the fixed tolerance, each deviation is set against the combined interval of the two runs,
`|new − published| ≤ z · sqrt(SE_new² + SE_published²)`: a deviation inside the tolerance can
still be larger than sampling noise explains, and one outside it can be within noise when the
runs are small.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import ConfigDict, Field
from scipy import stats as sps

from plumbline.core.result import ResultModel, schema_version
from plumbline.leaderboard.check_result import (
    CategoryDeviation,
    CheckResult,
    Deviation,
    DocumentReview,
    Inconsistency,
)
from plumbline.leaderboard.scores import LEVEL
from plumbline.leaderboard.upgrade import upgrade_document

DEFAULT_TOLERANCE = 0.05

#: How far a stated overall may lie from Σ weight × category before the file is said to disagree
#: with its own weights: 0.1 point, so values rounded to three decimals never trigger it.
CONSISTENCY_TOLERANCE = 1e-3


SCHEMA_VERSION = schema_version("leaderboard_check", 1)
assert SCHEMA_VERSION == "plumbline.leaderboard_check/1"  # `CheckResult.schema_version`


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


class _Metadata(ResultModel):
    model_config = ConfigDict(extra="allow")

    categories: Any = None


class PublishedRow(ResultModel):
    """A model row as the reproducibility check reads it from any leaderboard file."""

    model_config = ConfigDict(extra="allow")

    model: str
    overall: float
    standard_errors: dict[str, float | None] | None = None

    def value(self, key: str) -> float | None:
        """The row's value of category `key` (None when absent or not a number)."""
        extra = self.model_extra or {}
        return _number(extra[key]) if key in extra else None

    @property
    def overall_standard_error(self) -> float | None:
        errors = self.standard_errors or {}
        return _number(errors["overall"]) if "overall" in errors else None


class PublishedLeaderboard(ResultModel):
    """A leaderboard file read only as far as the reproducibility check needs: rows with a
    name and an overall, and the category weights when stated (a published file may predate
    plumbline's schema, or be SA Bench's own). Older plumbline versions are upgraded first."""

    model_config = ConfigDict(extra="allow", validate_by_alias=True, validate_by_name=True)

    metadata: _Metadata | None = Field(default=None, alias="_metadata")
    models: list[PublishedRow]

    @classmethod
    def parse(cls, document: Any) -> PublishedLeaderboard:
        return cls.model_validate(upgrade_document(document))

    @property
    def weights(self) -> dict[str, float] | None:
        """The category weights the file states (`_metadata.categories.*.weight`), if it does."""
        categories = self.metadata.categories if self.metadata is not None else None
        if not isinstance(categories, dict) or not categories:
            return None
        weights: dict[str, float] = {}
        for key, meta in categories.items():
            weight = (
                _number(meta["weight"]) if isinstance(meta, dict) and "weight" in meta else None
            )
            if weight is None:
                return None
            weights[key] = weight
        return weights


def duplicated_models(leaderboard: PublishedLeaderboard) -> dict[str, list[int]]:
    """Models listed on more than one row, each with its row indexes (`models[i]`)."""
    rows: dict[str, list[int]] = {}
    for index, row in enumerate(leaderboard.models):
        rows.setdefault(row.model, []).append(index)
    return {name: found for name, found in rows.items() if len(found) > 1}


def duplicate_problems(leaderboard: PublishedLeaderboard) -> list[str]:
    """One problem per model listed twice or more, naming it and its rows."""
    return [
        f"models: {name!r} is listed {len(found)} times (rows "
        f"{', '.join(f'models[{index}]' for index in found)}); a leaderboard lists each model "
        "once, and which row to compare is ambiguous"
        for name, found in duplicated_models(leaderboard).items()
    ]


def review_document(document: Any) -> DocumentReview:
    """Validate a leaderboard document against plumbline's schema and check, model by model,
    that its overall is Σ weight × category value under its own stated weights, and that no
    model is listed twice."""
    from plumbline.leaderboard.document import document_problems

    published = PublishedLeaderboard.parse(document)
    weights = published.weights
    problems = duplicate_problems(published) + document_problems(document, check_overall=False)
    inconsistent: list[Inconsistency] = []
    if weights is not None:
        for model in published.models:
            recomputed = math.fsum(
                weight * (model.value(key) or 0.0) for key, weight in weights.items()
            )
            if abs(recomputed - model.overall) > CONSISTENCY_TOLERANCE:
                inconsistent.append(
                    Inconsistency(
                        model=model.model,
                        stated=model.overall,
                        recomputed=recomputed,
                        difference=model.overall - recomputed,
                    )
                )
    return DocumentReview(
        valid=not problems and not inconsistent,
        problems=problems,
        weights=weights,
        inconsistent_overall=inconsistent,
    )


def _overall_deviation(
    name: str, fresh: PublishedRow, old: PublishedRow, z: float, tolerance: float
) -> Deviation:
    """How far one model's new overall lies from its published one, against tolerance and noise."""
    difference = fresh.overall - old.overall
    se_new, se_old = fresh.overall_standard_error, old.overall_standard_error
    known = [se for se in (se_new, se_old) if se is not None]
    half_width = z * math.sqrt(math.fsum(se**2 for se in known)) if known else None
    basis: Literal["both", "new only", "published only"] | None = None
    if se_new is not None and se_old is not None:
        basis = "both"
    elif se_new is not None:
        basis = "new only"
    elif se_old is not None:
        basis = "published only"
    return Deviation(
        model=name,
        new=fresh.overall,
        published=old.overall,
        deviation=difference,
        # A hair of slack so that 0.72 vs 0.67 (exactly 5 points) counts as within.
        within_tolerance=abs(difference) <= tolerance + 1e-9,
        combined_half_width=half_width,
        within_interval=None if half_width is None else abs(difference) <= half_width,
        interval_basis=basis,
    )


def _category_deviations(
    new_models: dict[str, PublishedRow],
    old_models: dict[str, PublishedRow],
    keys: list[str],
    tolerance: float,
) -> list[CategoryDeviation]:
    """Each shared model's deviation in every category either file states."""
    categories: list[CategoryDeviation] = []
    for name in sorted(new_models.keys() & old_models.keys()):
        for key in keys:
            fresh_value = new_models[name].value(key)
            old_value = old_models[name].value(key)
            if fresh_value is None and old_value is None:
                continue
            gap: float | None = (
                None if fresh_value is None or old_value is None else fresh_value - old_value
            )
            categories.append(
                CategoryDeviation(
                    model=name,
                    category=key,
                    new=fresh_value,
                    published=old_value,
                    deviation=gap,
                    within_tolerance=None if gap is None else abs(gap) <= tolerance + 1e-9,
                )
            )
    return categories


def check_reproducibility(
    new: Any,
    published: Any,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    level: float = LEVEL,
) -> CheckResult:
    """Compare every model in both leaderboard documents, overall and category by category,
    after validating each document (schema, overall = Σ weight × category under its own
    weights, each model listed once). A model listed twice in either file is named in that
    file's review, compared on its first row, and makes the verdict not reproducible."""
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a non-negative number, got {tolerance!r}")
    fresh_file, old_file = PublishedLeaderboard.parse(new), PublishedLeaderboard.parse(published)
    # the first row of a model listed twice (named as a problem by `review_document`)
    new_models = {m.model: m for m in reversed(fresh_file.models)}
    old_models = {m.model: m for m in reversed(old_file.models)}
    duplicated = duplicated_models(fresh_file).keys() | duplicated_models(old_file).keys()
    z = float(sps.norm.ppf(0.5 + level / 2))
    deviations: list[Deviation] = []
    for name in sorted(new_models.keys() & old_models.keys()):
        deviations.append(
            _overall_deviation(name, new_models[name], old_models[name], z, tolerance)
        )
    new_weights, old_weights = fresh_file.weights, old_file.weights
    keys = list(dict.fromkeys([*(new_weights or {}), *(old_weights or {})]))
    categories = _category_deviations(new_models, old_models, keys, tolerance)
    new_file = review_document(new)
    return CheckResult(
        reproducible=(
            bool(deviations)
            and all(d.within_tolerance for d in deviations)
            and new_file.valid
            and not duplicated
        ),
        tolerance=tolerance,
        level=level,
        shared=len(deviations),
        outside_tolerance=sum(not d.within_tolerance for d in deviations),
        deviations=deviations,
        only_new=sorted(new_models.keys() - old_models.keys()),
        only_published=sorted(old_models.keys() - new_models.keys()),
        categories=categories,
        categories_outside_tolerance=sum(c.within_tolerance is False for c in categories),
        new_file=new_file,
        published_file=review_document(published),
    )


def generated_schema() -> dict[str, Any]:
    """The `leaderboard check` result's JSON Schema, as shipped
    (`schemas/leaderboard_check.schema.json`)."""
    from plumbline.core.schema_files import model_schema

    return model_schema(
        CheckResult,
        schema_id="https://plumbline.dev/schemas/leaderboard_check/1/leaderboard_check.schema.json",
        title="plumbline leaderboard check",
    )
