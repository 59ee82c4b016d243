"""The document of `plumbline leaderboard check`: how a new leaderboard deviates from a
published one, and what each file says about itself."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from plumbline.core.result import ResultModel, unit_field


class Deviation(ResultModel):
    """One model found in both files."""

    model: str
    new: float = unit_field("Overall in the new file.", "proportion")
    published: float = unit_field("Overall in the published file.", "proportion")
    deviation: float = unit_field("new − published.", "proportion")
    within_tolerance: bool = Field(description="|deviation| ≤ tolerance (SA Bench's rule).")
    combined_half_width: float | None = unit_field(
        "z · √(SE_new² + SE_published²) from the standard errors the files state (None: "
        "neither states one).",
        "proportion",
    )
    within_interval: bool | None = Field(
        description="|deviation| ≤ combined_half_width: within sampling noise."
    )
    interval_basis: Literal["both", "new only", "published only"] | None = Field(
        description="Which files' standard errors the combined interval uses."
    )


class CategoryDeviation(ResultModel):
    """One category of one model found in both files."""

    model: str
    category: str
    new: float | None = unit_field("The category's value in the new file.", "proportion")
    published: float | None = unit_field(
        "The category's value in the published file.", "proportion"
    )
    deviation: float | None = unit_field("new − published (None: one is missing).", "proportion")
    within_tolerance: bool | None = Field(description="|deviation| ≤ tolerance.")


class Inconsistency(ResultModel):
    """A model whose stated overall is not Σ weight × category under its file's own weights."""

    model: str
    stated: float = unit_field("The overall the file states.", "proportion")
    recomputed: float = unit_field("Σ weight × category value.", "proportion")
    difference: float = unit_field("stated − recomputed.", "proportion")


class DocumentReview(ResultModel):
    """What validating one leaderboard file found: schema problems and self-inconsistency."""

    valid: bool = Field(description="No schema problem and no inconsistent overall.")
    problems: list[str] = Field(default_factory=list)
    weights: dict[str, float] | None = unit_field(
        "The category weights the file states (None: not all).", "proportion", default=None
    )
    inconsistent_overall: list[Inconsistency] = Field(default_factory=list)


class CheckResult(ResultModel):
    """`leaderboard check`: deviations of shared models (overall and per category), the models
    found in only one file, and what validating each file found."""

    schema_version: Literal["plumbline.leaderboard_check/1"] = Field(
        default="plumbline.leaderboard_check/1",
        description='The document kind and major version: `schema_version("leaderboard_check", '
        "1)`.",
    )
    reproducible: bool = Field(
        description="Every shared model's overall within tolerance (and at least one model "
        "shared), the new file valid and self-consistent, and no model listed twice in either "
        "file. Category deviations and a "
        "published file that disagrees with itself are reported, not part of the verdict "
        "(SA Bench's rule is about overall)."
    )
    tolerance: float = unit_field("The largest |deviation| that reproduces.", "proportion")
    level: float = unit_field("Confidence level of the combined intervals.", "probability")
    shared: int = unit_field("Models in both files.", "count")
    outside_tolerance: int = unit_field("Shared models whose overall is not within.", "count")
    deviations: list[Deviation]
    only_new: list[str] = Field(default_factory=list)
    only_published: list[str] = Field(default_factory=list)
    categories: list[CategoryDeviation] = Field(default_factory=list)
    categories_outside_tolerance: int = unit_field(
        "Category deviations not within tolerance.", "count"
    )
    new_file: DocumentReview
    published_file: DocumentReview

    @property
    def category_failures(self) -> list[CategoryDeviation]:
        return [c for c in self.categories if c.within_tolerance is False]

    @property
    def failures(self) -> list[Deviation]:
        return [d for d in self.deviations if not d.within_tolerance]
