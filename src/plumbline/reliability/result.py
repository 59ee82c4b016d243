"""The reliability report (`ReliabilityReport`) and every type it holds: the CERT metrics with
their intervals, the bands that read them, and the comparison with a baseline run.

Views import these types and nothing else of `plumbline.reliability`; `reliability.analysis`,
`metrics` and `regression` build them.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Literal

from pydantic import Field

from plumbline.core.result import ResultModel, unit_field
from plumbline.reliability.config import BenchmarkConfig
from plumbline.reliability.metric_result import AgreementResult as AgreementResult
from plumbline.reliability.metric_result import Band as Band
from plumbline.reliability.metric_result import ConsistencyResult as ConsistencyResult
from plumbline.reliability.metric_result import Coverage as Coverage
from plumbline.reliability.metric_result import ErrorClassRate as ErrorClassRate
from plumbline.reliability.metric_result import LatencyResult as LatencyResult
from plumbline.reliability.metric_result import OutputQualityResult as OutputQualityResult
from plumbline.reliability.metric_result import PerformanceResult as PerformanceResult
from plumbline.reliability.metric_result import ReliabilityInterval as ReliabilityInterval
from plumbline.reliability.metric_result import RobustnessResult as RobustnessResult
from plumbline.reliability.metric_result import Sided as Sided
from plumbline.reliability.metric_result import Tone as Tone

#: The metrics `reliability --baseline` compares.
METRICS = ("consistency", "agreement", "performance", "latency_p50", "latency_p95", "error_rate")


#: `schema_version("reliability", 1)`, spelled out for the type checker.
SCHEMA_VERSION: Literal["plumbline.reliability/1"] = "plumbline.reliability/1"


#: Responses kept per prompt, failed trials kept per model, and per-trial latencies per model.
RESPONSES_PER_PROMPT = 3


MAX_FAILED_TRIALS = 500


MAX_LATENCIES = 4000


class Estimate(ResultModel):
    """A mean over prompts with its two-stage interval and CERT's band."""

    statistic: float = unit_field(
        "The estimate, 0–1 (a score of the metric it belongs to).", "score"
    )
    n: int = unit_field("Prompts averaged (the unit that varies).", "count")
    standard_error: float | None = unit_field(
        "Standard error of the mean over prompts; null for one prompt.", "score"
    )
    interval: ReliabilityInterval = Field(
        description="The mean over these prompts (the prompts run): t over prompt means "
        "(prompts, then trials within each prompt), clipped to the score's range; no bounds "
        "for one prompt."
    )
    population_interval: ReliabilityInterval | None = Field(
        default=None,
        description="The mean over the prompt population the prompts were drawn from: a "
        "betting interval over the prompt means, guaranteed for any population of values in "
        "the score's range (wide at a few prompts); null below 2 prompts.",
    )
    band: Band | None = Field(default=None, description="The reading of the estimate.")


class PromptReliability(ResultModel):
    """Consistency and agreement of one model on one prompt (responses to the same prompt)."""

    prompt_id: str = Field(description="The prompt's id.")
    trials: int = unit_field("Trials of this prompt.", "count")
    valid_responses: int = unit_field("Non-empty responses.", "count")
    consistency: ConsistencyResult | None = Field(description="Null below 2 valid responses.")
    agreement: AgreementResult | None = Field(description="Null below 2 valid responses.")
    conflict: str | None = Field(description="When consistency and agreement disagree: why.")
    performance: float | None = unit_field(
        "Mean performance heuristic of this prompt's successful responses; null without any.",
        "score",
        default=None,
    )


class CostResult(ResultModel):
    """What the model's trials cost, from the provider's usage: per trial and per prompt with
    intervals over prompts (`reliability.cost`), and per point of performance."""

    mean_cost_per_trial: float = unit_field("Mean cost of a priced trial.", "usd")
    trials_priced: int = unit_field("Successful trials that report token counts.", "count")
    cost_per_heuristic_point: float | None = unit_field(
        "mean_cost_per_trial / the performance heuristic score (CERT's length, structure and "
        "prompt-similarity heuristic, not a measured quality); null when the score is 0.",
        "usd",
    )
    per_trial_usd: float | None = unit_field(
        "Cost of a trial, trials averaged within prompt first, then over prompts.",
        "usd",
        default=None,
    )
    per_trial_interval: ReliabilityInterval | None = Field(
        default=None, description="Studentized bootstrap over prompts; null below 2 prompts."
    )
    per_prompt_usd: float | None = unit_field(
        "Cost of one prompt's trials together, mean over prompts.", "usd", default=None
    )
    per_prompt_interval: ReliabilityInterval | None = Field(
        default=None, description="Studentized bootstrap over prompts; null below 2 prompts."
    )
    prompts_priced: int = unit_field("Prompts with priced trials.", "count", default=0)
    price_table: str | None = Field(
        default=None,
        description="What priced the tokens: `--price` (the rates given per model) or the "
        "price table's version (`--prices`).",
    )
    provenance: str | None = Field(
        default=None,
        description="Where the tokens came from: `provider-reported` (the responses' usage).",
    )


class FailedTrial(ResultModel):
    """One failed trial, as its record tells it (the message already redacted)."""

    prompt_id: str = Field(description="The prompt's id.")
    trial: int = unit_field("The trial's number.", "count")
    error_class: str = Field(description="The exception class.")
    http_status: int | None = unit_field("HTTP status, when the provider sent one.", "count")
    attempts: int = unit_field("Attempts made (1 + retries).", "count")
    latency_seconds: float | None = unit_field("Time until the failure.", "seconds")
    message: str = Field(description="The error message (secrets redacted).")


class SampledResponse(ResultModel):
    trial: int = unit_field("The trial's number.", "count")
    text: str = Field(description="The response.")


class ResponseSample(ResultModel):
    """The first few successful responses to one prompt."""

    prompt_id: str = Field(description="The prompt's id.")
    prompt: str = Field(description="The prompt's text.")
    responses: list[SampledResponse] = Field(description="In trial order.")


class ModelReliability(ResultModel):
    """Everything measured for one model."""

    model: str = Field(description="The model (with its differing settings, when several).")
    trials: int = unit_field("Trials run.", "count")
    successful: int = unit_field("Trials that returned a response.", "count")
    verdict: str = Field(
        default="", description="One line: what its figures let a reader rely on, and what not."
    )
    prompts: list[PromptReliability] = Field(description="Per prompt, in prompt-id order.")
    consistency: Estimate | None = Field(description="CERT consistency, mean over prompts.")
    agreement: Estimate | None = Field(description="Semantic agreement, mean over prompts.")
    performance: PerformanceResult | None = Field(description="Null without successes.")
    performance_by_prompt: Estimate | None = Field(
        description="The performance heuristic with prompts as the unit (repeats averaged)."
    )
    latency: LatencyResult | None = Field(description="Null below 2 timed successes.")
    ttft: LatencyResult | None = Field(description="Time to first token; null unless streamed.")
    output_quality: OutputQualityResult | None = Field(description="Null without successes.")
    robustness: RobustnessResult = Field(description="CERT's error and timeout rates.")
    cost: CostResult | None = Field(description="Null without a price for this model.")
    latencies: list[float] = unit_field(
        f"Latency (seconds) of each successful trial, sorted; at most {MAX_LATENCIES:,} evenly "
        "spaced order statistics.",
        "seconds",
        default_factory=list,
    )
    failed_trials: list[FailedTrial] = Field(
        default_factory=list,
        description=f"Failed trials by prompt and trial (the first {MAX_FAILED_TRIALS}).",
    )
    samples: list[ResponseSample] = Field(
        default_factory=list,
        description=f"The first {RESPONSES_PER_PROMPT} successful responses to each prompt.",
    )


class EffectSize(ResultModel):
    """Cohen's d (CERT: trial values, pooled SD) with an interval over prompts, and Hedges' g."""

    statistic: float = unit_field("Cohen's d (pooled SD), first model minus second.", "ratio")
    n: int = unit_field("Values compared (both models).", "count")
    standard_error: float | None = unit_field(
        "Standard error of d (cluster-robust over prompts).", "ratio"
    )
    interval: ReliabilityInterval = Field(
        description="95% cluster-robust t interval of d, the prompt as the unit."
    )
    n_x: int = unit_field("Values of the first model.", "count")
    n_y: int = unit_field("Values of the second model.", "count")
    pooled_sd: float = unit_field("Pooled standard deviation (the metric's unit).", "score")
    hedges_g: float = unit_field("Hedges' small-sample corrected g.", "ratio")


class ModelPairEffect(ResultModel):
    """Cohen's d of one metric between two models (positive: the first is larger)."""

    model_a: str = Field(description="The first model.")
    model_b: str = Field(description="The second model.")
    metric: str = Field(description="`latency_seconds` or `performance`.")
    label: str = Field(description="What the metric is, in words.")
    effect: EffectSize | None = Field(description="Null when it cannot be computed (see note).")
    note: str | None = Field(description="Why there is no effect size.")


class ReliabilityWarning(ResultModel):
    """Something a reader of the figures must know (small samples, conflicts, duplicates)."""

    model: str | None = Field(description="The model it concerns; null for the whole report.")
    message: str = Field(description="The warning.")


class ReliabilityConfig(ResultModel):
    """The settings the report was computed with."""

    consistency_trials: int = unit_field("Planned consistency trials per prompt.", "count")
    performance_trials: int = unit_field("Planned performance trials.", "count")
    embedding_model_name: str = Field(description="The sentence-transformers model.")
    max_tokens: int = unit_field("Generation limit per response.", "tokens")
    temperature: float = unit_field("Sampling temperature.", "score")
    timeout: float = unit_field("Per-call timeout.", "seconds")
    random_seed: int = unit_field("Random seed of the bootstrap.", "count")
    bootstrap_resamples: int = unit_field("Bootstrap resamples.", "count")

    @classmethod
    def of(cls, config: BenchmarkConfig) -> ReliabilityConfig:
        return cls(**asdict(config))


class ReliabilityReport(ResultModel):
    """The result of `plumbline reliability`: CERT's five metrics per model, with intervals.

    Rates are proportions (0–1) except CERT's `error_rate` and `timeout_rate` (and their
    intervals), which are percentages as CERT defines them.
    """

    schema_version: Literal["plumbline.reliability/1"] = Field(
        default=SCHEMA_VERSION, description="This document's kind and major version."
    )
    config: ReliabilityConfig = Field(description="The settings of the analysis.")
    models: list[ModelReliability] = Field(description="One entry per model, by name.")
    comparisons: list[ModelPairEffect] = Field(description="Every pair of models, both metrics.")
    record_errors: list[str] = Field(description="Trial records skipped: `file:line: problem`.")
    warnings: list[ReliabilityWarning] = Field(
        description="Every warning of the report, the report's own and each model's."
    )
    baseline_comparison: BaselineComparison | None = Field(
        default=None,
        description="With --baseline: every metric's change from the baseline run, per model.",
    )

    def warnings_for(self, model: str | None) -> list[str]:
        """The messages of the warnings about `model` (None: the report's own)."""
        return [w.message for w in self.warnings if w.model == model]

    def json_document(self) -> dict[str, Any]:
        """The JSON document (`model_dump(mode="json")`)."""
        document: dict[str, Any] = self.model_dump(mode="json")
        return document


def generated_schema() -> dict[str, Any]:
    """The JSON Schema shipped as `schemas/reliability_report.schema.json`."""
    from plumbline.core.schema_files import model_schema

    return model_schema(
        ReliabilityReport,
        schema_id="https://plumbline.dev/schemas/reliability_report.schema.json",
        title="plumbline reliability report",
    )


Verdict = Literal["regressed", "improved", "unchanged", "inconclusive"]


class Difference(ResultModel):
    """`current − baseline` with its interval (at the Bonferroni level of the pair)."""

    estimate: float | None = unit_field(
        "current − baseline, in the metric's unit (seconds for latency, percentage points for "
        "the error rate); null when it cannot be computed.",
        "same as estimate",
    )
    interval: ReliabilityInterval | None = Field(description="Null when there is no interval.")


class NoChangeTest(ResultModel):
    """The test behind a metric's `regressed` or `improved`: could the current run have come
    from the baseline model? A stratified permutation test (`reliability.no_change`): each
    prompt's trials of both runs relabelled at random; Westfall–Young's step-down min-p over the
    metrics, on the same relabellings."""

    method: str = Field(description="The test, its p-value and the multiplicity correction.")
    statistic: float = unit_field(
        "T, current − baseline: the mean over prompts of each prompt's change "
        "(consistency, agreement, performance), the pooled percentile's change (latency), the "
        "failure share's change in percentage points (error rate).",
        "same as estimate",
    )
    z: float = unit_field("T / its null standard error (descriptive).", "ratio")
    null_standard_error: float = unit_field(
        "SD of T over the relabellings (its spread when nothing changed).", "same as estimate"
    )
    p_worse: float = unit_field(
        "One-sided permutation p-value of a change this far in the worse direction.",
        "probability",
    )
    p_worse_adjusted: float = unit_field(
        "p_worse adjusted by Westfall–Young's step-down min-p over the tested metrics: "
        "`regressed` when ≤ alpha.",
        "probability",
    )
    p_better: float = unit_field(
        "One-sided permutation p-value of a change this far in the better direction.",
        "probability",
    )
    p_better_adjusted: float = unit_field(
        "p_better adjusted by the same step-down on the other side: `improved` when ≤ alpha.",
        "probability",
    )
    alpha: float = unit_field(
        "The family level an adjusted p-value is compared with: 0.05 over all metrics.",
        "probability",
    )
    metrics_tested: int = unit_field("Metrics in the family (each with a test).", "count")
    critical_p: float = unit_field(
        "The largest raw p-value the adjustment's first step rejects: between alpha / "
        "metrics_tested (metrics that vary independently) and alpha (metrics that move "
        "together); the detectable change is computed at it.",
        "probability",
    )
    prompts: int = unit_field("Shared prompts whose trials were relabelled.", "count")
    resamples: int = unit_field("Random relabellings drawn.", "count")
    smallest_p: float = unit_field(
        "The smallest raw p-value this design can give: 1 / (distinct relabellings of the "
        "trials), at least 1 / (1 + resamples).",
        "probability",
    )
    attainable_p_worse: float = unit_field(
        "The smallest p_worse_adjusted any outcome could reach with these relabellings (this "
        "metric's most extreme relabelling, ranked first): above alpha the metric cannot be "
        "called regressed at this size.",
        "probability",
    )
    attainable_p_better: float = unit_field(
        "The same for p_better_adjusted: above alpha the metric cannot be called improved.",
        "probability",
    )
    coverage: Coverage = Field(
        default="guaranteed",
        description="`guaranteed`: the chance of a false `regressed` is at most alpha over all "
        "metrics whenever the trials of a prompt are exchangeable between the runs.",
    )
    block_length: int | None = unit_field(
        "Error rate: trials per block of consecutive trials (by start time) relabelled "
        "together, so that a burst of failures moves as one unit; null for the other metrics.",
        "count",
        default=None,
    )
    blocks: int | None = unit_field(
        "Error rate: blocks of both runs relabelled; null for the other metrics.",
        "count",
        default=None,
    )
    assumption: str = Field(
        default="",
        description="What the test's level rests on: trials of a prompt exchangeable between "
        "the runs (scores, latency), or failures in bursts shorter than a block (error rate).",
    )


class MetricChange(ResultModel):
    """One metric of one model pair: baseline, current, their difference and the verdict."""

    model: str = Field(description="The current run's model.")
    baseline_model: str = Field(description="The baseline run's model it is paired with.")
    metric: str = Field(
        description=f"One of {', '.join(METRICS)}; or cost (cost per trial, USD) when asked for."
    )
    label: str = Field(description="What the metric is, in words.")
    baseline: float | None = unit_field(
        "The baseline's value on the shared prompts.", "same as estimate"
    )
    current: float | None = unit_field(
        "The current run's value on the shared prompts.", "same as estimate"
    )
    difference: Difference = Field(description="current − baseline with its interval.")
    margin: float = unit_field(
        "Equivalence margin in the difference's unit (a latency or cost margin is its fraction "
        "of the baseline value, converted to seconds or USD).",
        "same as estimate",
    )
    worse_when: Literal["lower", "higher"] = Field(description="Which direction is worse.")
    verdict: Verdict = Field(description="regressed, improved, unchanged or inconclusive.")
    detectable_change: float | None = unit_field(
        "The smallest change this comparison detects with 80% power at its level (same unit "
        "as the difference); null without an interval.",
        "same as estimate",
    )
    test: NoChangeTest | None = Field(
        default=None,
        description="Consistency and agreement: the test of no change that decides `regressed` "
        "or `improved` (null for the other metrics, whose interval decides).",
    )
    note: str = Field(default="", description="Why there is no interval, when there is none.")


class ModelPairing(ResultModel):
    """Which baseline model a current model is compared with, on which prompts."""

    model: str = Field(description="The current run's model.")
    baseline_model: str = Field(description="The baseline run's model.")
    paired_by: Literal["name", "single model", "--pair"] = Field(
        description="How the pair was made."
    )
    shared_prompts: int = unit_field("Prompts in both runs (the ones compared).", "count")
    only_in_baseline: list[str] = Field(description="Prompt ids only the baseline ran.")
    only_in_current: list[str] = Field(description="Prompt ids only the current run ran.")
    verdict: Verdict = Field(
        description="regressed if any metric regressed; else improved if any improved; else "
        "unchanged if every metric is; else inconclusive."
    )
    summary: str = Field(description="One line: the pair and its verdicts by metric.")


class BaselineComparison(ResultModel):
    """`plumbline reliability CURRENT --baseline BASELINE`: every metric's change per model."""

    family_level: float = unit_field(
        "1 − the largest chance that any interval of a model pair misses (and so of any false "
        "'regressed' or 'improved'): Bonferroni over its metrics.",
        "probability",
    )
    level: float = unit_field(
        "Level of each metric's interval: 1 − 0.05/6 (1 − 0.05/7 with cost).", "probability"
    )
    multiplicity: str = Field(description="How the error rate across metrics is controlled.")
    tested_metrics: list[str] = Field(
        default_factory=lambda: list(METRICS),
        description="The metrics that may be called regressed or improved: the family the 5% "
        "chance of a false 'regressed' is spent on (`--test-metric`; default all six, and cost "
        "when `--margin cost=...` asks for it). The "
        "others are measured and judged unchanged or inconclusive only.",
    )
    margins: dict[str, float] = unit_field(
        "Equivalence margin per metric (latency and cost: fraction of the baseline value; "
        "error rate: percentage points; scores: points).",
        "same as estimate",
    )
    pairs: list[ModelPairing] = Field(description="One per compared model pair.")
    entries: list[MetricChange] = Field(description="One per pair and metric.")
    unpaired_current: list[str] = Field(description="Current models without a baseline.")
    unpaired_baseline: list[str] = Field(description="Baseline models not compared.")

    @property
    def regressed(self) -> bool:
        return any(entry.verdict == "regressed" for entry in self.entries)


# A tolerance for the ordering checks: interpolated percentiles can differ in the last ulp.


#: The compared metrics, in report order.
