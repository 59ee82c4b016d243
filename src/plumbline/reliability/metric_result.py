"""The types of the CERT metrics' results: each metric's figures, the interval that carries its
coverage claim, and the band that reads it. Re-exported by `reliability.result`, which views
import."""

from __future__ import annotations

import itertools
from typing import Literal, Self

from pydantic import Field, model_validator

from plumbline.core.result import Interval, ResultModel, unit_field

#: A tolerance for the ordering checks: interpolated percentiles can differ in the last ulp.
_EPS = 1e-9


def _check_unit(value: float, name: str) -> None:
    if not (-_EPS <= value <= 1 + _EPS):
        raise ValueError(f"{name} must be between 0 and 1, got {value!r}")


Tone = Literal["ok", "warn", "bad"]


class Band(ResultModel):
    """How CERT reads a value: a label, what to do about it, and whether that is good news."""

    label: str = Field(description="The band's name, as CERT's interpretation table gives it.")
    recommendation: str = Field(description="What CERT recommends for a value in this band.")
    tone: Tone = Field(description="`ok`, `warn` or `bad`: how a view colours the band.")


Coverage = Literal["guaranteed", "approximate"]


Sided = Literal["two-sided", "lower", "none"]


class ReliabilityInterval(Interval):
    """A reliability interval: bounds, level, method, the n it rests on, its coverage claim."""

    prompts: int = unit_field("Prompts the interval rests on.", "count")
    trials: int = unit_field("Trials (responses or timed calls) it rests on.", "count")
    sided: Sided = Field(
        default="two-sided",
        description="`two-sided`; `lower` when only a lower bound exists at this n (the upper "
        "is null); `none` when no bound does.",
    )
    coverage: Coverage = Field(
        description="`guaranteed`: the coverage holds (distribution-free, or 93.5–97% in every "
        "simulated design); `approximate`: simulated below 93.5% (see simulated_coverage)."
    )
    simulated_coverage: float | None = unit_field(
        "When approximate: the lowest coverage simulated for this interval.",
        "probability",
        default=None,
    )

    @model_validator(mode="after")
    def _labelled(self) -> Self:
        # an interval whose simulated coverage is below its level is labelled approximate, and
        # the method (which every output prints) says so
        below = self.simulated_coverage is not None and self.simulated_coverage < self.level
        if below and (self.coverage != "approximate" or "approximate" not in self.method):
            raise ValueError(
                f"an interval simulated at {self.simulated_coverage:.1%}, below its level "
                f"{self.level:.2%}, must be labelled approximate (coverage and method)"
            )
        return self

    @property
    def approximate(self) -> bool:
        return self.coverage == "approximate"


class ConsistencyResult(ResultModel):
    """CERT's consistency score: `max(0, 1 − std/mean)` of pairwise cosine distances.

    It measures how evenly the responses are spread, not whether they agree: equidistant
    unrelated responses score 1.0, two responses always score 1.0, and 19 identical responses
    plus one outlier score 0.0. Read it beside `semantic_agreement`.
    """

    score: float = unit_field("CERT consistency score, 0–1.", "score")
    mean_distance: float = unit_field("Mean pairwise cosine distance (0–2).", "score")
    std_distance: float = unit_field("Population SD of the pairwise cosine distances.", "score")
    n_responses: int = unit_field("Valid (non-empty) responses compared.", "count")
    band: Band = Field(description="CERT's reading of the score.")

    @model_validator(mode="after")
    def _valid(self) -> Self:
        _check_unit(self.score, "consistency score")
        if self.n_responses < 2:
            raise ValueError("consistency needs at least 2 responses")
        return self


class AgreementResult(ResultModel):
    """`semantic_agreement`: mean pairwise cosine similarity of responses, with an interval.

    The interval is a jackknife t interval over responses (the unit that varies between
    trials of one prompt); it is approximate (simulated coverage in its `simulated_coverage`)
    and None below 3 responses, where leaving one out leaves no pair.
    """

    similarity: float = unit_field("Mean pairwise cosine similarity, -1–1.", "score")
    n_responses: int = unit_field("Responses compared.", "count")
    interval: ReliabilityInterval | None = Field(
        description="Jackknife t interval over responses (approximate); null below 3 responses."
    )
    band: Band = Field(description="plumbline's reading of the similarity.")


class PerformanceResult(ResultModel):
    """Mean performance heuristic, with the two-stage interval of its mean over prompts."""

    score: float = unit_field(
        "Mean CERT performance heuristic (length, structure, prompt similarity), 0–1.", "score"
    )
    n: int = unit_field("Successful responses scored.", "count")
    ci_95: ReliabilityInterval | None = Field(
        description="95% interval of the mean over these prompts (the prompts run: t over "
        "prompt means, trials averaged within each prompt first; prompts as the unit, not "
        "trials); null below 2 prompts."
    )
    population_ci_95: ReliabilityInterval | None = Field(
        default=None,
        description="95% interval of the mean over the prompt population the prompts were "
        "drawn from (betting interval, guaranteed for any population); null below 2 prompts.",
    )
    relevance: float = unit_field("Mean semantic relevance component (weight 0.5), 0–1.", "score")
    completeness: float = unit_field("Mean completeness component (weight 0.3), 0–1.", "score")
    structure: float = unit_field("Mean structure component (weight 0.2), 0–1.", "score")
    band: Band = Field(description="CERT's reading of the score (named as the heuristic).")

    @model_validator(mode="after")
    def _valid(self) -> Self:
        for name in ("score", "relevance", "completeness", "structure"):
            _check_unit(getattr(self, name), f"performance {name}")
        if self.n < 1:
            raise ValueError("performance needs at least 1 response")
        return self


class LatencyResult(ResultModel):
    """Latency statistics in seconds (population std, numpy linear percentiles)."""

    n: int = unit_field("Successful trials timed.", "count")
    mean: float = unit_field("Mean latency.", "seconds")
    std: float = unit_field("Population standard deviation of latency.", "seconds")
    min: float = unit_field("Fastest trial.", "seconds")
    max: float = unit_field("Slowest trial.", "seconds")
    p25: float = unit_field(
        "First quartile of latency (the box of the per-trial chart).", "seconds"
    )
    p50: float = unit_field("Median latency.", "seconds")
    p95: float = unit_field("95th percentile latency.", "seconds")
    p75: float = unit_field("Third quartile of latency.", "seconds")
    p99: float = unit_field("99th percentile latency.", "seconds")
    coefficient_of_variation: float = unit_field("std / mean.", "ratio")
    tokens_per_second: float | None = unit_field(
        "Output tokens over latency of the trials that report tokens; null without any.",
        "ratio",
    )
    mean_ci_95: ReliabilityInterval = Field(
        description="95% interval of the mean (seconds): log-scale (modified Cox), which holds "
        "for skewed latencies; CERT's symmetric CI_95 does not."
    )
    percentile_intervals: dict[str, ReliabilityInterval] = Field(
        description="Distribution-free order-statistic intervals of p50, p95 and p99 (seconds); "
        "only a lower bound where n is too small for two sides (p95 below 59, p99 below 299)."
    )
    p95_band: Band = Field(description="CERT's reading of the P95 latency.")
    variation_band: Band = Field(description="CERT's reading of the coefficient of variation.")

    @model_validator(mode="after")
    def _valid(self) -> Self:
        if self.n < 2:
            raise ValueError("latency needs at least 2 samples")
        ordered = (self.min, self.p25, self.p50, self.p75, self.p95, self.p99, self.max)
        if any(a > b + _EPS for a, b in itertools.pairwise(ordered)):
            raise ValueError(f"latency ordering violated: min ≤ p50 ≤ p95 ≤ p99 ≤ max, {ordered}")
        if self.min < 0:
            raise ValueError("latencies must be non-negative")
        return self


class OutputQualityResult(ResultModel):
    """Length, semantic diversity and repetition of a model's responses."""

    n: int = unit_field("Successful responses.", "count")
    mean_words: float = unit_field("Mean words per response.", "count")
    mean_tokens: float = unit_field("Mean approximate tokens per response (words × 1.3).", "tokens")
    semantic_diversity: float | None = unit_field(
        "Mean over prompts of the mean pairwise cosine distance of the responses to that prompt "
        "(0–2): how differently one prompt is answered across trials; null without a prompt "
        "of 2 or more responses.",
        "score",
    )
    diversity_prompts: int = unit_field(
        "Prompts with 2 or more responses, whose diversities are averaged.", "count", default=0
    )
    repetition_score: float = unit_field("Mean CERT repetition score, 0–1.", "score")
    diversity_band: Band | None = Field(description="CERT's reading of the diversity.")
    repetition_band: Band = Field(description="CERT's reading of the repetition score.")

    @model_validator(mode="after")
    def _valid(self) -> Self:
        _check_unit(self.repetition_score, "repetition score")
        if self.semantic_diversity is not None and not (
            -_EPS <= self.semantic_diversity <= 2 + _EPS
        ):
            raise ValueError("semantic diversity (a cosine distance) must be between 0 and 2")
        if self.n < 1:
            raise ValueError("output quality needs at least 1 response")
        return self


class ErrorClassRate(ResultModel):
    """How often one error class occurred: a proportion of all trials, with its interval."""

    error_class: str = Field(description="The exception class (CERT's names).")
    trials: int = unit_field("Trials that failed with this class.", "count")
    rate: float = unit_field("Share of all trials, 0–1.", "proportion")
    interval: ReliabilityInterval = Field(description="Wilson interval of the share (0–1).")


class RobustnessResult(ResultModel):
    """CERT's error and timeout rates in percent (0–100, as CERT defines them) with Wilson
    intervals in percent, counts by class, and each class's share of trials (0–1)."""

    total_trials: int = unit_field("Trials run.", "count")
    failed_trials: int = unit_field("Trials that failed.", "count")
    timeout_trials: int = unit_field("Trials that timed out.", "count")
    error_rate: float = unit_field("failed / total × 100 (CERT: a percentage).", "percent")
    timeout_rate: float = unit_field("timeouts / total × 100 (CERT: a percentage).", "percent")
    error_rate_interval: ReliabilityInterval = Field(
        description="Wilson interval of error_rate (percent)."
    )
    timeout_rate_interval: ReliabilityInterval = Field(
        description="Wilson interval of timeout_rate (percent)."
    )
    exceptions: dict[str, int] = unit_field("Failed trials by exception class.", "count")
    error_classes: list[ErrorClassRate] = Field(
        description="Every exception class's share of trials with its Wilson interval (0–1)."
    )
    retries: int = unit_field("Retries used across all trials.", "count")
    band: Band = Field(description="CERT's reading of the error rate.")
    timeout_band: Band = Field(description="CERT's reading of the timeout rate.")
    notes: list[str] = Field(default_factory=list, description="What the rates do not say.")

    @model_validator(mode="after")
    def _valid(self) -> Self:
        for name in ("error_rate", "timeout_rate"):
            value = getattr(self, name)
            if not 0 <= value <= 100:
                raise ValueError(f"{name} must be between 0 and 100 percent, got {value!r}")
        if self.total_trials < 1:
            raise ValueError("robustness needs at least 1 trial")
        if not 0 <= self.timeout_trials <= self.failed_trials <= self.total_trials:
            raise ValueError("trial counts must satisfy timeouts ≤ failures ≤ total")
        return self
