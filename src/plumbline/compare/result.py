"""The A/B comparison's result document (`CompareReport`) and every type it holds.

Views import these types and nothing else of `plumbline.compare`; `compare.analysis` builds them.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, ValidationError

from plumbline.compare.cost_result import AS_RECORDED as AS_RECORDED
from plumbline.compare.cost_result import ArmCost as ArmCost
from plumbline.compare.cost_result import CostComparison as CostComparison
from plumbline.compare.cost_result import CostDifference as CostDifference
from plumbline.compare.cost_result import CostFigure as CostFigure
from plumbline.compare.sequential_result import SequentialComparison as SequentialComparison
from plumbline.compare.sequential_result import SequentialSettings as SequentialSettings
from plumbline.compare.sequential_result import SequentialStep as SequentialStep
from plumbline.compare.sequential_result import SequentialVerdict as SequentialVerdict
from plumbline.core.result import Interval, ResultModel, schema_version, unit_field


class Duplicate(ResultModel):
    """A `(task_id, arm, repeat)` that occurs more than once, with where each copy is."""

    task_id: str
    arm: str
    repeat: int = unit_field("The repeat index.", "count")
    locations: list[str] = Field(description="`file:line` of each copy.")


class ArmSummary(ResultModel):
    """The A/B schema's per-arm fields, plus the counts it left out."""

    runs: int = unit_field("Runs kept (infrastructure failures excluded).", "count")
    successes: int = unit_field("Successful runs (a timed-out run is a failure).", "count")
    success_rate: float | None = unit_field("successes / runs.", "proportion")
    total_cost_usd: float | None = unit_field("Sum of the known costs.", "usd")
    avg_cost_usd: float | None = unit_field("Mean cost of the runs with a cost.", "usd")
    median_cost_usd: float | None = unit_field("Median cost of the runs with a cost.", "usd")
    median_duration_seconds: float | None = unit_field("Median run duration.", "seconds")
    median_total_tokens: float | None = unit_field(
        "Median of input + output + cache read + cache write tokens.", "tokens"
    )
    median_non_cache_tokens: float | None = unit_field("Median of input + output tokens.", "tokens")
    solved_per_dollar: float | None = unit_field(
        "Successes per dollar, over the runs whose cost is known.", "ratio"
    )
    runs_with_cost: int = unit_field("Runs with a known cost.", "count")
    null_cost_runs: int = unit_field("Runs without a cost.", "count")
    null_total_tokens_runs: int = unit_field("Runs lacking a token count of any kind.", "count")
    null_non_cache_tokens_runs: int = unit_field(
        "Runs lacking an input or output token count.", "count"
    )
    timed_out_runs: int = unit_field("Runs that timed out (counted as failures).", "count")
    excluded_infra_failures: int = unit_field("Infrastructure failures left out.", "count")
    tasks: int = unit_field("Distinct tasks with runs in this arm.", "count")
    min_repeats_per_task: int = unit_field("Fewest runs of any task in this arm.", "count")


class DeltaSummary(ResultModel):
    """Mean and median of one paired delta (treatment − control, in the unit its name says:
    `pass_delta` a difference of proportions, `*_usd` dollars, `*_seconds` seconds, the others
    counts) over the pairs where it is defined."""

    mean: float | None = unit_field("Mean of the delta over its pairs.", "score")
    median: float | None = unit_field("Median of the delta over its pairs.", "score")
    n: int = unit_field("Pairs where both sides have a value.", "count")
    null_pairs: int = unit_field("Pairs where a side has no value.", "count")


Rule = Literal["schema", "ci"]


Verdict = Literal["treatment", "control", "tie", "neither"]


Role = Literal["treatment", "control", "mixed"]


MIXED = "mixed results - inspect paired deltas"


GATE_NAMES = ("success_rate", "median_duration_seconds", "median_non_cache_tokens")


def prefer(arm: str) -> str:
    return f"prefer {arm}"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


class Margins(ResultModel):
    """Non-inferiority margins for `--rule ci`: absolute for success, relative otherwise."""

    success: float = unit_field(
        "Absolute margin on the pass-rate difference.", "proportion", default=0.05
    )
    duration: float = unit_field(
        "Relative margin on the duration ratio.", "proportion", default=0.10
    )
    tokens: float = unit_field(
        "Relative margin on the non-cache token ratio.", "proportion", default=0.10
    )

    @classmethod
    def parse(cls, text: str) -> Margins:
        """Parse `success=0.05,duration=0.10,tokens=0.10` (any subset; the rest default); a bare
        number is the success margin."""
        values: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, raw = part.partition("=")
            key = key.strip()
            if not sep and _is_number(part):
                key, sep, raw = "success", "=", part
            if not sep or key not in ("success", "duration", "tokens"):
                raise ValueError(
                    f"margin {part!r}: use name=value with names success, duration, tokens"
                )
            try:
                value = float(raw)
            except ValueError:
                raise ValueError(f"margin {key}: {raw.strip()!r} is not a number") from None
            if not (math.isfinite(value) and 0 <= value < 1):
                raise ValueError(f"margin {key}: must be in [0, 1), got {value}")
            values[key] = value
        return cls.model_validate(values)


class Gate(ResultModel):
    """One gate: both arms' values, whether it holds for each arm, and the verdict."""

    name: str = Field(description="The arm-summary field the gate compares.")
    treatment: float | None = unit_field(
        "The treatment's value of that field (its unit: see the arm summary).", "score"
    )
    control: float | None = unit_field("The control's value of that field.", "score")
    holds_for_treatment: bool
    holds_for_control: bool
    verdict: Verdict = Field(description="Which arm the gate favours.")
    criterion: str = Field(description="What must hold for the treatment, in words.")
    interval: Interval | None = Field(
        default=None,
        description="Under `--rule ci`: the interval the gate reads (the pass-rate difference "
        "T − C, or the geometric-mean ratio T / C).",
    )


SCHEMA_VERSION = schema_version("compare", 2)


class CompareSettings(ResultModel):
    """How the comparison was computed."""

    rule: Rule = Field(
        default="schema",
        description="`schema`: the A/B schema's three gates on point values; `ci`: each gate's "
        "interval must exclude a regression beyond the margins.",
    )
    margins: Margins = Field(default_factory=Margins)
    n_resamples: int = unit_field("Bootstrap resamples.", "count", default=10_000)
    level: float = unit_field("Confidence level of every interval.", "probability", default=0.95)
    seed: int | None = unit_field(
        "Random seed of the bootstrap (a label, not a quantity; None: unseeded).",
        "count",
        default=0,
    )
    power: float = unit_field(
        "Power of the minimum detectable difference.", "probability", default=0.8
    )
    alpha: float = unit_field(
        "Significance level of the minimum detectable difference.", "probability", default=0.05
    )
    sequential: SequentialSettings | None = Field(
        default=None,
        description="With `--sequential`: the sequential plan's inputs (the success gate then "
        "reads the sequential verdict).",
    )
    price_table: str | None = Field(
        default=None,
        description="With `--prices`: the version of the price table every run was priced "
        "again with, from its per-model usage (None: the costs the records carry).",
    )


class PairedDelta(DeltaSummary):
    """A paired delta's mean and median (the A/B schema), with the bootstrap interval on its
    mean (`ci`, None with fewer than 2 pairs)."""

    ci: Interval | None = None


class PairedDeltas(ResultModel):
    """The A/B schema's paired deltas (treatment − control per `(task_id, repeat)`)."""

    pairs: int = unit_field("`(task_id, repeat)` present once in both arms.", "count")
    pass_delta: PairedDelta = Field(description="Success (1/0) difference: a proportion.")
    cost_delta_usd: PairedDelta = Field(description="Cost difference in USD.")
    duration_delta_seconds: PairedDelta = Field(description="Duration difference in seconds.")
    token_delta: PairedDelta = Field(description="Total-token difference.")
    non_cache_token_delta: PairedDelta = Field(description="Non-cache-token difference.")

    def deltas(self) -> list[tuple[str, PairedDelta]]:
        """(name, delta) in the A/B schema's order."""
        return [(name, getattr(self, name)) for name in PRIMARY_DELTAS]


class PairedTest(ResultModel):
    """A paired test or effect size; `skipped` (and `skipped_reason`, in words for the reader)
    when these data do not allow it. Which fields are set depends on the test."""

    method: str | None = None
    statistic: float | None = unit_field(
        "The test statistic or the estimate (a shift in the metric's unit, or a ratio T / C).",
        "score",
        default=None,
    )
    pvalue: float | None = unit_field("Two-sided p-value.", "probability", default=None)
    pvalue_holm: float | None = unit_field(
        "Holm-adjusted p-value across the treatments.", "probability", default=None
    )
    n: int | None = unit_field("Pairs used.", "count", default=None)
    b: int | None = unit_field("Pairs where only the treatment succeeded.", "count", default=None)
    c: int | None = unit_field("Pairs where only the control succeeded.", "count", default=None)
    n_discordant: int | None = unit_field("Pairs whose outcomes differ.", "count", default=None)
    n_nonzero: int | None = unit_field("Pairs with a non-zero difference.", "count", default=None)
    zero_method: str | None = None
    standard_error: float | None = unit_field(
        "Standard error of the estimate.", "score", default=None
    )
    interval: Interval | None = None
    n_walsh_averages: int | None = unit_field("Walsh averages.", "count", default=None)
    critical_rank: int | None = unit_field("Rank of the interval bounds.", "count", default=None)
    paired: bool | None = None
    log_ratio: float | None = unit_field("Mean log ratio.", "score", default=None)
    log_standard_error: float | None = unit_field(
        "Standard error of the mean log ratio.", "score", default=None
    )
    df: float | None = unit_field("Degrees of freedom.", "count", default=None)
    geometric_mean_x: float | None = unit_field(
        "Geometric mean of the treatment.", "score", default=None
    )
    geometric_mean_y: float | None = unit_field(
        "Geometric mean of the control.", "score", default=None
    )
    skipped: str | None = Field(default=None, description="Why the test was not computed.")
    skipped_reason: str | None = Field(
        default=None, description="`skipped` in words for the reader."
    )


class PowerAnalysis(ResultModel):
    """The smallest pass-rate difference these pairs can detect, and what it rests on."""

    minimum_detectable_pass_delta: float | None = unit_field(
        "Smallest detectable difference of pass rates.", "proportion", default=None
    )
    method: str | None = None
    reason: str | None = Field(default=None, description="Why it cannot be computed.")
    tasks: int | None = unit_field("Paired tasks (the unit).", "count", default=None)
    epochs: int | None = unit_field("Median pairs per task.", "count", default=None)
    within_share: float | None = unit_field(
        "Within-task share of the pass-delta variance.", "proportion", default=None
    )
    discordant: float | None = unit_field(
        "Share of pairs whose outcomes differ.", "proportion", default=None
    )
    baseline: float | None = unit_field("The control's pass rate.", "proportion", default=None)
    alpha: float | None = unit_field("Significance level.", "probability", default=None)
    power: float | None = unit_field("Power.", "probability", default=None)


class PerTaskRow(ResultModel):
    """One task: runs, success rate and medians in each arm, and its paired deltas."""

    task_id: str
    runs_treatment: int = unit_field("Runs of the treatment.", "count")
    success_rate_treatment: float | None = unit_field("Treatment pass rate.", "proportion")
    median_duration_seconds_treatment: float | None = unit_field(
        "Treatment median duration.", "seconds"
    )
    median_non_cache_tokens_treatment: float | None = unit_field(
        "Treatment median non-cache tokens.", "tokens"
    )
    runs_control: int = unit_field("Runs of the control.", "count")
    success_rate_control: float | None = unit_field("Control pass rate.", "proportion")
    median_duration_seconds_control: float | None = unit_field(
        "Control median duration.", "seconds"
    )
    median_non_cache_tokens_control: float | None = unit_field(
        "Control median non-cache tokens.", "tokens"
    )
    pairs: int = unit_field("Pairs of this task.", "count")
    mean_pass_delta: float | None = unit_field("Mean pass delta.", "proportion")
    median_duration_delta_seconds: float | None = unit_field("Median duration delta.", "seconds")
    median_non_cache_token_delta: float | None = unit_field(
        "Median non-cache token delta.", "tokens"
    )


class ArmComparison(ResultModel):
    """One treatment against the control."""

    treatment: str
    control: str
    decision: str = Field(description="The A/B schema's decision string.")
    decision_role: Role = Field(
        description="Which side the decision prefers (`treatment`, `control`) or `mixed`."
    )
    caveat: str | None = Field(
        description="One plain sentence when these data cannot support the decision."
    )
    rule: Rule
    tie: bool = Field(description="All three gates hold for both arms.")
    gates: list[Gate]
    pairs: int = unit_field("Pairs (as `paired.pairs`).", "count")
    paired: PairedDeltas
    diagnostics: dict[str, DeltaSummary] = Field(
        description="Secondary paired deltas (non-blocking)."
    )
    tests: dict[str, PairedTest]
    minimum_detectable_pass_delta: float | None = unit_field(
        "As `power_analysis.minimum_detectable_pass_delta`.", "proportion"
    )
    power_analysis: PowerAnalysis
    per_task: list[PerTaskRow]
    warnings: list[str]
    sequential: SequentialComparison | None = Field(
        default=None, description="With `--sequential`: the sequential verdict on success."
    )
    cost: CostComparison | None = Field(
        default=None,
        description="Cost per task and per success of both arms and their difference.",
    )

    @property
    def prefers_treatment(self) -> bool:
        return self.decision_role == "treatment"


class InputSummary(ResultModel):
    """What was read, and what was set aside."""

    files: list[str]
    records_read: int = unit_field("Records read.", "count")
    invalid_records: int = unit_field("Records refused as invalid.", "count")
    errors: list[str] = Field(description="One `file:line: field: problem` per invalid record.")
    duplicates: list[Duplicate]
    infra_failures: dict[str, int] = unit_field(
        "Infrastructure failures excluded, per arm.", "count"
    )


class RunRow(ResultModel):
    """One run of a compared arm, as listed on the page."""

    task_id: str
    arm: str
    repeat: int = unit_field("Repeat index.", "count")
    outcome: Outcome
    duration_seconds: float | None = unit_field("Duration.", "seconds")
    total_tokens: float | None = unit_field("Total tokens.", "tokens")
    non_cache_tokens: float | None = unit_field("Input + output tokens.", "tokens")
    total_cost_usd: float | None = unit_field("Cost.", "usd")
    location: str = Field(description="`file:line` of the record.")


class RunListing(ResultModel):
    """The compared arms' runs (infrastructure failures left out), sorted by arm, task, repeat;
    the first `MAX_LISTED_RUNS` are listed."""

    total: int = unit_field("Runs of the compared arms.", "count")
    listed: int = unit_field("Runs listed in `rows`.", "count")
    rows: list[RunRow]


class Sample(ResultModel):
    """One metric's values in one arm, for a distribution plot: every run's value, thinned to
    evenly spaced order statistics beyond `MAX_POINTS`."""

    n: int = unit_field("Runs with a value.", "count")
    values: list[float] = unit_field("The values drawn (in the metric's unit).", "score")

    @property
    def thinned(self) -> bool:
        return len(self.values) < self.n


class ArmDistribution(ResultModel):
    """Per-run values of one arm."""

    duration_seconds: Sample
    non_cache_tokens: Sample
    total_tokens: Sample


class ArmDifferenceRow(ResultModel):
    field: str
    values: dict[str, str] = Field(description="The field's text per arm.")


class ArmDifferences(ResultModel):
    """Every difference between the arms of a suite (from `plumbline agent run`)."""

    arms: list[str]
    rows: list[ArmDifferenceRow]
    identical: str = Field(description="What is the same in every arm.")


class CompareReport(ResultModel):
    """Everything `plumbline compare` reports. The first comparison is also at the top level
    under the A/B schema's field names (`arm_summaries`, `paired`, `decision`)."""

    schema_version: Literal["plumbline.compare/2"] = Field(
        default="plumbline.compare/2",
        description='The document kind and major version: `schema_version("compare", 2)`.',
    )
    treatment: str
    control: str
    decision: str = Field(description="The A/B schema's decision string (first treatment).")
    decision_role: Role
    caveat: str | None
    rule: Rule
    tie: bool
    gates: list[Gate]
    arm_summaries: dict[str, ArmSummary]
    paired: PairedDeltas
    diagnostics: dict[str, DeltaSummary]
    tests: dict[str, PairedTest]
    minimum_detectable_pass_delta: float | None = unit_field(
        "Smallest detectable pass-rate difference (first treatment).", "proportion"
    )
    power_analysis: PowerAnalysis
    per_task: list[PerTaskRow]
    comparisons: list[ArmComparison] = Field(min_length=1)
    warnings: list[str]
    input: InputSummary
    settings: CompareSettings
    runs: RunListing
    distributions: dict[str, ArmDistribution] = Field(
        description="Per-run values per compared arm, for the distribution plots."
    )
    arm_differences: ArmDifferences | None = None
    sequential: SequentialComparison | None = Field(
        default=None,
        description="With `--sequential`: the sequential verdict on success (first treatment).",
    )
    cost: CostComparison | None = Field(
        default=None,
        description="Cost per task and per success of both arms and their difference "
        "(first treatment).",
    )

    @property
    def primary(self) -> ArmComparison:
        return self.comparisons[0]

    @property
    def treatments(self) -> list[str]:
        return [c.treatment for c in self.comparisons]

    @property
    def arms(self) -> list[str]:
        """The compared arms: the treatments, then the control."""
        return list(dict.fromkeys([*self.treatments, self.control]))

    def all_prefer_treatment(self) -> bool:
        return all(c.decision == prefer(c.treatment) for c in self.comparisons)


def generated_schema() -> dict[str, Any]:
    """The JSON Schema of `CompareReport` (shipped as `schemas/compare_report.schema.json`)."""
    from plumbline.core.schema_files import model_schema

    return model_schema(
        CompareReport,
        schema_id="https://plumbline.dev/schemas/compare/2/compare_report.schema.json",
        title="plumbline compare report",
    )


Outcome = Literal["success", "failure", "timed out"]


# delta name -> the per-run column it is computed from
PRIMARY_DELTAS: dict[str, str] = {
    "pass_delta": "success_int",
    "cost_delta_usd": "total_cost_usd",
    "duration_delta_seconds": "duration_seconds",
    "token_delta": "total_tokens",
    "non_cache_token_delta": "non_cache_tokens",
}


SECONDARY_DELTAS: dict[str, str] = {
    "cache_read_token_delta": "cache_read_tokens",
    "cache_write_token_delta": "cache_write_tokens",
    "step_count_delta": "step_count",
    "tool_call_count_delta": "tool_call_count",
    "acceptance_cmd_count_delta": "acceptance_cmd_count",
}


class CompareDocumentError(ValueError):
    """A JSON document that is not a compare report this version can show."""


def document_problems(document: Any) -> list[str]:
    """Why `document` cannot be shown as a compare report (empty when it can)."""
    version = (
        document["schema_version"]
        if isinstance(document, dict) and "schema_version" in document
        else None
    )
    if version == "plumbline.compare/1":
        return [
            "schema_version: a plumbline.compare/1 report from an earlier plumbline; rerun "
            "`plumbline compare RECORDS --treatment ARM --control ARM --json compare.json` "
            f"to make a {SCHEMA_VERSION} report"
        ]
    if version != SCHEMA_VERSION:
        return [f"schema_version: {version!r} is not {SCHEMA_VERSION!r}"]
    try:
        CompareReport.model_validate(document)
    except ValidationError as error:
        return [
            f"{'.'.join(str(part) for part in problem['loc']) or 'document'}: {problem['msg']}"
            for problem in error.errors()[:20]
        ]
    return []


def read_report(document: Any) -> CompareReport:
    """The typed report of a compare JSON document; `CompareDocumentError` when it is none."""
    problems = document_problems(document)
    if problems:
        raise CompareDocumentError("; ".join(problems))
    return CompareReport.model_validate(document)
