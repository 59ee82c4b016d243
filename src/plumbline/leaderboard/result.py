"""The leaderboard document: the typed result `Leaderboard.document()` builds, every view renders.

It keeps SA Bench's field names (`_metadata.generated_at`, `run_id`, `model_count`,
`categories{name, description, weight, sample_count, scoring, confidence, margin}`; model rows
`{"model", <category key>: value, "overall"}`), so a document plumbline writes stays valid under
SA Bench's own JSON Schema; plumbline's additions (intervals, counts, tie groups, adjacent pairs,
input problems) sit beside them. JSON is `model_dump(mode="json")`; the shipped JSON Schema
`schemas/leaderboard.schema.json` is generated from `LeaderboardDocument`.

`_metadata.schema_version` is `"plumbline.leaderboard/2"`. Older documents are read and upgraded
(`upgrade_document`): plumbline's version 1 (an integer `schema_version`, intervals carrying
their standard error and half-width, `seed_group`/`seed_equivalent`/`seed_equivalence`) and
SA Bench's own files (no `schema_version`, none of plumbline's fields).

The rules a schema cannot state (overall = Σ weight × category value, weights summing to 1,
`model_count` = number of rows) are checked in `leaderboard.document`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from plumbline.core.result import Interval, ResultModel, Unit, unit_field
from plumbline.core.timestamps import parse_utc
from plumbline.leaderboard.adaptive_result import AdaptiveReplay as AdaptiveReplay
from plumbline.leaderboard.adaptive_result import AdaptiveRun as AdaptiveRun
from plumbline.leaderboard.check_result import CheckResult as CheckResult
from plumbline.leaderboard.check_result import DocumentReview as DocumentReview
from plumbline.leaderboard.check_result import Inconsistency as Inconsistency
from plumbline.leaderboard.sample_result import CORRECT as CORRECT
from plumbline.leaderboard.sample_result import ERROR as ERROR
from plumbline.leaderboard.sample_result import GOOD_OUTCOMES as GOOD_OUTCOMES
from plumbline.leaderboard.sample_result import INCORRECT as INCORRECT
from plumbline.leaderboard.sample_result import NEUTRAL_OUTCOMES as NEUTRAL_OUTCOMES
from plumbline.leaderboard.sample_result import PARTIAL as PARTIAL
from plumbline.leaderboard.sample_result import UNSCORED as UNSCORED
from plumbline.leaderboard.sample_result import FailureModes as FailureModes
from plumbline.leaderboard.sample_result import LeaderboardSample as LeaderboardSample
from plumbline.leaderboard.sample_result import LeaderboardSamples as LeaderboardSamples
from plumbline.leaderboard.sample_result import OutcomeCounts as OutcomeCounts

SchemaVersion = Literal["plumbline.leaderboard/2"]
#: `plumbline.core.result.schema_version("leaderboard", 2)`, as a type the schema states as a
#: constant.
SCHEMA_VERSION: SchemaVersion = "plumbline.leaderboard/2"
#: The integer `schema_version` plumbline wrote before version 2.
LEGACY_SCHEMA_VERSION = 1

Confidence = Literal["high", "medium", "low"]
Scoring = Literal["binary", "rubric"]
ErrorPolicy = Literal["zero", "exclude"]

Score = Annotated[float, Field(ge=0, le=1)]


def _absent(value: Any) -> bool:
    return value is None


def _optional(description: str, **kwargs: Any) -> Any:
    """An optional field left out of the JSON when None (SA Bench's files do not have it)."""
    return Field(default=None, description=description, exclude_if=_absent, **kwargs)


def _optional_unit(description: str, unit: Unit, **kwargs: Any) -> Any:
    return unit_field(description, unit, default=None, exclude_if=_absent, **kwargs)


class CategoryMetadata(ResultModel):
    """One category: SA Bench's five required fields, its confidence and margin, and plumbline's
    additions (which scorer and tasks feed it, who is missing it)."""

    name: str = Field(description="Human-readable category name.")
    description: str = Field(description="What the category measures.")
    weight: float = unit_field("Weight in the overall score.", "proportion", ge=0, le=1)
    sample_count: int = unit_field(
        "Questions actually scored (union over the ranked models).", "count", ge=0
    )
    scoring: Scoring = Field(description="`binary` (0 or 1 per question) or `rubric` (0–1).")
    confidence: Confidence | None = _optional(
        "SA Bench's confidence: high when `half_width` ≤ 0.05, medium ≤ 0.10, low above or "
        "when no interval could be computed."
    )
    margin: str | None = _optional(
        "SA Bench's margin: `half_width` in percentage points, rounded up (`±7%`).",
        pattern=r"^±\d+%$",
    )
    half_width: float | None = _optional_unit(
        "The widest interval half-width among the models scored in this category: the figure "
        "`confidence` and `margin` state. None when a scored model has no interval.",
        "proportion",
        ge=0,
    )
    scorer: str | None = _optional("The category's preferred (first) scorer.")
    scorers: list[str] | None = _optional(
        "Every scorer the category accepts, in order of preference (each log contributes the "
        "first it holds); only when there are several."
    )
    scorers_read: list[str] | None = _optional(
        "The scorers actually read from this leaderboard's logs."
    )
    tasks: list[str] | None = _optional("Inspect task names (glob patterns) feeding it.")
    models_scored: int | None = _optional_unit("Ranked models scored here.", "count", ge=0)
    models_missing: list[str] | None = _optional("Ranked models with no score here.")
    not_run: str | None = _optional("Why the category was not run at all.")
    suite_weight: float | None = _optional_unit(
        "The weight the suite gives the category, when categories were not run: `weight` is "
        "then renormalised over the categories that ran (0 for one not run).",
        "proportion",
        ge=0,
        le=1,
    )


class SuiteName(ResultModel):
    name: str = Field(min_length=1, description="The suite's name (`sa-bench`).")
    title: str | None = _optional("The suite's title (`SA Bench`).")


class LeaderboardMetadata(ResultModel):
    """SA Bench's `_metadata`, with plumbline's version, suite, formula and rules."""

    generated_at: str = Field(
        description="ISO 8601 time of generation (plumbline writes it in UTC, with `Z`); a "
        "time without a zone is read as UTC."
    )
    run_id: str | None = _optional("The CI run id, or a local identifier.")
    model_count: int = unit_field("Models ranked (rows of `models`).", "count", ge=0)
    categories: dict[str, CategoryMetadata] = Field(description="Per-category metadata, by key.")
    schema_version: SchemaVersion = Field(
        default=SCHEMA_VERSION, description="The document's kind and major version."
    )
    suite: SuiteName | None = _optional("The suite the leaderboard was built from.")
    overall_formula: str | None = _optional("The overall score's formula with its weights.")
    overall_note: str | None = _optional(
        "How the overall differs from the suite's: categories not run are left out, and the "
        "weights of those that ran renormalised to sum to 1."
    )
    errors_policy: ErrorPolicy | None = _optional(
        "How errored or unscored samples were scored: `zero` (counted 0) or `exclude`."
    )
    level: float | None = _optional_unit(
        "Confidence level of every interval.", "probability", gt=0, lt=1
    )
    alpha: float | None = _optional_unit(
        "Significance level of the tie rule (Holm-corrected).", "probability", gt=0, lt=1
    )
    tie_rule: str | None = _optional("When adjacent models are tied.")
    sa_bench_equivalence: float | None = _optional_unit(
        "The overall gap within which SA Bench calls two models statistically equivalent "
        "(its 'Interpreting Close Scores').",
        "proportion",
        ge=0,
    )
    log_count: int | None = _optional_unit("Inspect logs found.", "count", ge=0)
    logs_used: int | None = _optional_unit("Inspect logs that fed a category.", "count", ge=0)
    problem_count: int | None = _optional_unit("Entries of `problems`.", "count", ge=0)

    @field_validator("generated_at")
    @classmethod
    def _date_time(cls, value: str) -> str:
        if "T" not in value:
            raise ValueError("not an ISO 8601 date-time (no 'T')")
        try:
            parse_utc(value)  # a naive time is UTC, as every reader reads one
        except ValueError:
            raise ValueError(f"not an ISO 8601 date-time: {value!r}") from None
        return value


class CategoryCounts(ResultModel):
    """What one model's score in one category rests on."""

    n: int = unit_field("Questions scored.", "count", ge=0)
    epochs: int = unit_field("Most epochs scored for a question.", "count", ge=0)
    errors: int = unit_field("Sample-epochs that errored or had no score.", "count", ge=0)
    excluded: int = unit_field(
        "Errored sample-epochs left out (errors_policy `exclude`).", "count", ge=0, default=0
    )
    missing: bool = Field(description="No score in this category (it counts 0 in overall).")
    logs: int = unit_field("Logs that fed this category.", "count", ge=0, default=0)


class JudgeCorrection(ResultModel):
    """A judged category corrected with human labels (prediction-powered inference, PPI++)."""

    model_config = ConfigDict(
        validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )

    estimate: float = unit_field("The corrected score (the category's value).", "proportion")
    judge_only: float = unit_field("The judge's mean over every judged question.", "proportion")
    judge_only_interval: Interval | None = _optional("The judge-only score's interval.")
    human_only: float = unit_field("The mean of the human labels alone.", "proportion")
    n_labelled: int = unit_field("Questions with a human label.", "count", ge=0)
    n_judged: int = unit_field("Questions the judge scored (labelled ones included).", "count")
    lambda_: float = unit_field(
        "PPI++'s power-tuning λ (0: labels only, 1: classic PPI).",
        "ratio",
        ge=0,
        le=1,
        alias="lambda",
    )
    correlation: float | None = unit_field(
        "Pearson correlation of judge and human on the labelled questions.", "ratio"
    )
    interval: Interval = Field(description="The corrected score's interval (method PPI).")
    labelled: list[list[float]] = unit_field(
        "[judge, human] per labelled question: the agreement plot's points.",
        "proportion",
        default_factory=list,
    )
    more_labels_needed: int | None = _optional_unit(
        "Labels to add to reach the requested half-width (`--half-width`).", "count", ge=0
    )
    requested_half_width: float | None = _optional_unit(
        "The half-width `more_labels_needed` aims at.", "proportion", gt=0
    )
    lambda_method: str | None = _optional(
        "How λ was chosen: cross-fitted (each label's λ from the other labels) or fixed."
    )
    judge_labelled_mean: float | None = _optional_unit(
        "The judge's mean on the labelled questions.", "proportion"
    )
    judge_unlabelled_mean: float | None = _optional_unit(
        "The judge's mean on the other questions.", "proportion"
    )
    selection_pvalue: float | None = _optional_unit(
        "Two-sided p-value of 'the labelled questions are a uniform random draw' (the judge's "
        "mean on them against the others).",
        "probability",
    )
    selection_alpha: float | None = _optional_unit("Level of that check (0.01).", "probability")
    selection_method: str | None = _optional("How that p-value was computed.")
    labels_look_chosen: bool | None = _optional(
        "True when selection_pvalue < selection_alpha: the labels look chosen, not drawn, and "
        "the corrected score may be biased."
    )
    selection_floor_pvalue: float | None = _optional_unit(
        "The p-value of the least extreme of the two most extreme labelled sets (the judge's "
        "highest or lowest scores): the check cannot reach its level when this is not below "
        "selection_alpha.",
        "probability",
    )
    selection_can_tell: bool | None = _optional(
        "False when the check cannot reach its level at this number of labels (even labels "
        "picked from the judge's yes answers would pass): shown as 'cannot tell at n labels', "
        "never as drawn at random; draw them with `plumbline judge sample`."
    )


def _category_values_schema(schema: dict[str, Any]) -> None:
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        extra["unit"] = "proportion"
        extra["description"] = "A category's score (by category key): mean over questions."


class CostInterval(ResultModel):
    """Cost per sample in USD with its interval (`estimate` None: not every sample priced)."""

    estimate: float | None = unit_field("Mean cost of one sample (question mean).", "usd")
    low: float | None = unit_field("Lower bound.", "same as estimate")
    high: float | None = unit_field("Upper bound.", "same as estimate")
    level: float = unit_field("Confidence level.", "probability", ge=0, le=1)
    method: str = Field(description="How the interval was computed.")


class CategoryCost(ResultModel):
    """One category's cost: per sample with its interval, in total, and tokens by kind."""

    per_sample_usd: CostInterval
    total_usd: float | None = unit_field(
        "Cost of every sample-epoch of the category (None: some not priced).", "usd"
    )
    tokens: dict[str, int] = unit_field("Tokens by kind, summed over its samples.", "tokens")


class ModelCost(ResultModel):
    """What a model's run cost: per sample (weighted over categories as the overall score is,
    with its interval), in total, its tokens by kind, where the tokens came from and which
    price table priced them."""

    per_sample_usd: CostInterval
    total_usd: float | None = unit_field(
        "Cost of every sample-epoch read (None: some not priced; see `note`).", "usd"
    )
    tokens: dict[str, int] = unit_field(
        "Tokens by kind (input, output, cache_read, cache_write, reasoning) over every sample "
        "of the run; output includes reasoning.",
        "tokens",
    )
    provenance: str = Field(
        description="Where the tokens came from: metered, provider-reported, agent-reported, "
        "estimated (several joined by ' + ' when mixed)."
    )
    price_table: str = Field(description="The version of the price table that priced them.")
    categories: dict[str, CategoryCost] = Field(
        default_factory=dict, description="The cost of each category, by category key."
    )
    note: str | None = _optional("Why a cost is null (e.g. no price for the model).")


class ParetoEntry(ResultModel):
    """A model's place on the cost–score Pareto front and its probability of being on it."""

    model: str
    probability_on_front: float = unit_field(
        "The posterior probability that no other model truly scores at least as high for at "
        "most the cost: a hierarchical model of the models' true scores and log costs "
        "estimated from the board (stats.front). Simulated through the leaderboard's code, it "
        "is calibrated within Monte Carlo error on average over boards drawn from that model "
        "(3–5 models, 20–500 questions, lognormal costs, one category). For one board it is "
        "not: when the models differ by more than their noise it errs toward caution (by up to "
        "about 7 points); when they are nearly equal it is much too confident (given 0.77, on "
        "the true front about half the time) (docs/statistics.md).",
        "probability",
        ge=0,
        le=1,
    )
    on_front: bool = Field(description="On the front of the point estimates.")


class LeaderboardRow(ResultModel):
    """One model: SA Bench's `{"model", <category key>: score, "overall"}` and plumbline's
    place, intervals, standard errors, half-widths and counts.

    The category scores are the row's extra keys (a missing category is absent, and listed in
    `missing`). `intervals`, `standard_errors` and `half_widths` are keyed by category and
    `overall`.
    """

    model_config = ConfigDict(extra="allow", json_schema_extra=_category_values_schema)
    __pydantic_extra__: dict[str, Score]

    model: str = Field(min_length=1, description="The model's name.")
    overall: float = unit_field("Σ weight × category score.", "proportion", ge=0, le=1)
    rank: int | None = _optional_unit("Position by overall (1 = top).", "count", ge=1)
    tie_group: int | None = _optional_unit(
        "Tie group (1 = top): neighbours the tie rule cannot separate share it.", "count", ge=1
    )
    sa_bench_group: int | None = _optional_unit(
        "Group under SA Bench's reading (neighbours within `sa_bench_equivalence` of overall).",
        "count",
        ge=1,
    )
    missing: list[str] | None = _optional("Categories with no score (each counts 0).")
    errors: int | None = _optional_unit(
        "Sample-epochs that errored or had no score, over every category.", "count", ge=0
    )
    intervals: dict[str, Interval | None] | None = _optional(
        "The interval of each category score and of `overall` (None: missing category)."
    )
    standard_errors: dict[str, float | None] | None = _optional_unit(
        "Standard error of each category score over question means, and the one the overall "
        "interval implies (half-width / z).",
        "proportion",
    )
    half_widths: dict[str, float | None] | None = _optional_unit(
        "Half-width of each interval (`(high − low) / 2`).", "proportion"
    )
    counts: dict[str, CategoryCounts] | None = _optional("What each category score rests on.")
    corrections: dict[str, JudgeCorrection] | None = _optional(
        "Judged categories corrected with human labels (`--labels`), by category key: the "
        "category's value and interval are then the corrected ones."
    )
    cost: ModelCost | None = _optional("What the run cost (`--prices`; see `ModelCost`).")

    @property
    def scores(self) -> dict[str, float]:
        """The category scores by key (missing categories absent)."""
        return dict(self.__pydantic_extra__ or {})

    def score(self, key: str) -> float | None:
        """The score of category `key`; None when missing."""
        return (self.__pydantic_extra__ or {}).get(key)

    def interval(self, key: str) -> Interval | None:
        """The interval of category `key` (or `overall`); None when missing or not recorded."""
        return (self.intervals or {}).get(key)

    def standard_error(self, key: str) -> float | None:
        """The standard error of category `key` (or `overall`), when recorded."""
        return (self.standard_errors or {}).get(key)

    def count(self, key: str) -> CategoryCounts | None:
        """What category `key`'s score rests on, when recorded."""
        return (self.counts or {}).get(key)

    @model_serializer(mode="wrap")
    def _sa_bench_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`model`, the category scores, `overall`, then plumbline's fields (SA Bench's order)."""
        data: dict[str, Any] = handler(self)
        first = {"model": data.pop("model")}
        first.update({key: data.pop(key) for key in self.scores if key in data})
        first["overall"] = data.pop("overall")
        return {**first, **data}


class AdjacentPair(ResultModel):
    """The test between two models adjacent in the ranking (`higher` ranks above `lower`)."""

    higher: str
    lower: str
    overall_difference: float = unit_field(
        "higher's overall − lower's overall (a difference of proportions).", "proportion"
    )
    difference: float = unit_field(
        "The paired difference over shared questions (−1 to 1).", "proportion", ge=-1, le=1
    )
    interval: Interval = Field(description="The interval of `difference`.")
    pvalue: float | None = unit_field(
        "p-value of no difference (the interval inverted).", "probability", ge=0, le=1
    )
    pvalue_holm: float | None = unit_field(
        "`pvalue` Holm-corrected over the adjacent pairs.", "probability", ge=0, le=1
    )
    tied: bool = Field(description="Not separated by the tie rule.")
    sa_bench_equivalent: bool = Field(
        description="Within SA Bench's `sa_bench_equivalence` of overall."
    )
    shared_questions: dict[str, int] = unit_field(
        "Questions both models were scored on, by category.", "count", default_factory=dict
    )
    unpaired: list[str] = Field(
        default_factory=list,
        description="Categories compared unpaired: the models share fewer than 2 questions.",
    )


class Problem(ResultModel):
    """Something in the input the reader of a leaderboard must know about."""

    kind: str
    message: str
    path: str | None = _optional("The file it concerns.")
    model: str | None = _optional("The model it concerns.")
    task: str | None = _optional("The task it concerns.")
    category: str | None = _optional("The category it concerns.")
    count: int | None = _optional_unit("How many samples, values or questions.", "count", ge=0)

    @property
    def where(self) -> str:
        return self.path or " / ".join(p for p in (self.model, self.category) if p) or ""

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class FailedModel(ResultModel):
    """A model with logs but not one scored sample: listed, never ranked."""

    model: str
    errors: int = unit_field("Sample-epochs that errored or had no score.", "count", ge=0)
    categories: list[str] = Field(description="Categories its logs fed.")


class TieGroup(ResultModel):
    """One tie group and its models, in rank order."""

    group: int = unit_field("Group number (1 = top).", "count", ge=1)
    size: int = unit_field("Models in the group.", "count", ge=1)
    models: list[str]


class LeaderboardDocument(ResultModel):
    """The leaderboard JSON: SA Bench's `_metadata` and `models`, and plumbline's additions."""

    model_config = ConfigDict(
        title="plumbline leaderboard",
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
    )

    metadata: LeaderboardMetadata = Field(alias="_metadata")
    models: list[LeaderboardRow] = Field(description="Ranked models, by overall.")
    tie_groups: list[TieGroup] = Field(
        default_factory=list, description="The tie groups, top first."
    )
    comparisons: list[AdjacentPair] = Field(
        default_factory=list, description="Adjacent pairs of the ranking, top first."
    )
    problems: list[Problem] = Field(
        default_factory=list, description="Everything in the input the reader must know."
    )
    failed_models: list[FailedModel] = Field(
        default_factory=list,
        description="Models with logs but not one scored sample: listed, never ranked.",
    )
    pareto: list[ParetoEntry] = Field(
        default_factory=list,
        description="The priced models' probabilities of being on the cost–score front.",
    )
    adaptive: AdaptiveRun | None = _optional(
        "How an adaptive run (`plumbline run --adaptive`) chose its questions, and the status "
        "of every pair when it stopped."
    )

    @property
    def categories(self) -> dict[str, CategoryMetadata]:
        return self.metadata.categories

    @property
    def weights(self) -> dict[str, float]:
        return {key: meta.weight for key, meta in self.metadata.categories.items()}

    def to_json(self) -> dict[str, Any]:
        """The JSON document (`model_dump(mode="json")`)."""
        return self.model_dump(mode="json")
