"""The per-sample leaderboard document (`leaderboard --samples`): each sample's outcome, the
outcome counts and failure modes per model and category."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from plumbline.core.result import ResultModel, unit_field

#: Outcome names for samples without a scorer-given outcome.
ERROR = "error"


UNSCORED = "unscored"


CORRECT = "correct"


INCORRECT = "incorrect"


PARTIAL = "partial"


#: Outcomes that are not a failure of the model, listed first in a failure-mode table.
GOOD_OUTCOMES = frozenset({"passed", CORRECT})


#: Outcomes that are neither a success nor the model's fault.
NEUTRAL_OUTCOMES = frozenset({PARTIAL, "infra_error", UNSCORED})


class LeaderboardSample(ResultModel):
    """One sample × epoch of one model in one category, as its log holds it."""

    model: str
    category: str = Field(description="Key of the leaderboard category the sample counts in.")
    task: str
    sample_id: str
    epoch: int = unit_field("Inspect epoch of this sample (from 1).", "count")
    question: str = Field(description="The input as text, with lettered choices if any.")
    response: str = Field(description="The model's final completion.")
    target: str
    value: float | None = unit_field(
        "The category scorer's value as a number (None: errored or unscored).", "score"
    )
    answer: str | None = None
    explanation: str | None = None
    outcome: str = Field(
        description="The scorer's own outcome (e.g. a CDK failure mode), else error, unscored, "
        "correct, incorrect or partial."
    )
    error: str | None = Field(default=None, description="The sample's error message, if any.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="The score's metadata.")
    highlights: list[tuple[str, str]] = Field(
        default_factory=list,
        description="(label, text) pairs of the metadata a reader looks for first.",
    )
    log: str = Field(default="", description="The log file the sample was read from.")


class OutcomeCounts(ResultModel):
    """How the samples of one model in one category ended."""

    model: str
    total: int = unit_field("Sample-epochs of this model in the category.", "count")
    counts: list[int] = unit_field("Sample-epochs per outcome, in the table's order.", "count")
    shares: list[float | None] = unit_field(
        "Each count over `total` (None when the model has no samples here).", "proportion"
    )


class FailureModes(ResultModel):
    """Outcome counts per model for one category whose scorer reports outcomes (CDK)."""

    category: str
    name: str
    outcomes: list[str] = Field(
        description="The outcomes, successes first, then by how often they occur."
    )
    rows: list[OutcomeCounts] = Field(description="One row per model of the leaderboard.")

    def row(self, model: str) -> OutcomeCounts:
        return next(row for row in self.rows if row.model == model)


class LeaderboardSamples(ResultModel):
    """The samples found for a leaderboard, their failure modes, and the logs not used."""

    schema_version: Literal["plumbline.leaderboard_samples/1"] = Field(
        default="plumbline.leaderboard_samples/1",
        description="The document kind and major version: "
        '`schema_version("leaderboard_samples", 1)`.',
    )
    samples: list[LeaderboardSample] = Field(default_factory=list)
    failure_modes: list[FailureModes] = Field(default_factory=list)
    problems: list[str] = Field(
        default_factory=list,
        description="`file: problem` for each log that could not be read, and a problem for "
        "each (model, category) whose logs disagree with the leaderboard (its samples left "
        "out).",
    )
    logs_read: int = unit_field("Logs whose samples were read.", "count", default=0)

    def for_model(self, model: str) -> list[LeaderboardSample]:
        return [sample for sample in self.samples if sample.model == model]
