"""From trial records to the reliability report: the five metrics per model, and comparisons.

`analyze` is pure given an `embed` function (texts → one row per text), so the whole report can
be recomputed from records without calling any model, and tested with hand-made embeddings.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from plumbline.progress import ProgressCallback, no_progress
from plumbline.records.trial_record import TrialRecord
from plumbline.reliability.config import BenchmarkConfig, sample_size_warning
from plumbline.reliability.configs import split_by_config
from plumbline.reliability.metrics import (
    AgreementResult,
    ConsistencyResult,
    LatencyResult,
    OutputQualityResult,
    PerformanceResult,
    RobustnessResult,
    agreement_conflict,
    consistency_score,
    latency_metrics,
    output_quality,
    performance_scores,
    robustness,
    semantic_agreement,
    summarize_performance,
    valid_responses,
)
from plumbline.stats import ConfidenceInterval, EstimateResult, cert_ci_95, cohens_d

Embed = Callable[[Sequence[str]], npt.NDArray[np.float64]]


@dataclass(frozen=True)
class Price:
    """USD per million input and output tokens."""

    input_per_million: float
    output_per_million: float

    def __post_init__(self) -> None:
        if self.input_per_million < 0 or self.output_per_million < 0:
            raise ValueError("prices must be non-negative")

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (
            input_tokens * self.input_per_million + output_tokens * self.output_per_million
        ) / 1e6


@dataclass(frozen=True)
class PromptReliability:
    """Consistency and agreement of one model on one prompt (responses to the same prompt)."""

    prompt_id: str
    trials: int
    valid_responses: int
    consistency: ConsistencyResult | None
    agreement: AgreementResult | None
    conflict: str | None


@dataclass(frozen=True)
class CostResult:
    mean_cost_per_trial: float
    trials_priced: int
    cost_per_quality_point: float | None


@dataclass
class ModelReliability:
    """Everything measured for one model."""

    model: str
    trials: int
    successful: int
    prompts: list[PromptReliability]
    consistency: EstimateResult | None
    agreement: EstimateResult | None
    performance: PerformanceResult | None
    performance_by_prompt: EstimateResult | None
    latency: LatencyResult | None
    ttft: LatencyResult | None
    output_quality: OutputQualityResult | None
    robustness: RobustnessResult
    cost: CostResult | None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Comparison:
    """Cohen's d between two models (positive: the first is larger)."""

    model_a: str
    model_b: str
    metric: str
    effect: EstimateResult | None
    note: str | None


@dataclass
class ReliabilityReport:
    config: BenchmarkConfig
    models: list[ModelReliability]
    comparisons: list[Comparison]
    record_errors: list[str]
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {name: _jsonable(getattr(self, name)) for name in self.__dataclass_fields__}


def _jsonable(value: Any) -> Any:
    if hasattr(value, "to_dict") and not isinstance(value, ReliabilityReport):
        return _jsonable(value.to_dict())
    if hasattr(value, "__dataclass_fields__"):
        return {name: _jsonable(getattr(value, name)) for name in value.__dataclass_fields__}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


#: Below this many prompts the seed's CI_95 (z with the population SD) covers clearly less than
#: 95% (docs/statistics.md: about 83% at 5 prompts, 93% at 30), so it is labelled approximate.
APPROXIMATE_BELOW = 100


def mean_over_prompts(values: Sequence[float], single: ConfidenceInterval | None) -> EstimateResult:
    """Mean over prompts with the seed's CI_95; one prompt keeps its own interval.

    The seed's normal interval can cross the score's bounds with few prompts; it is clipped to
    [0, 1], and the method says so.
    """
    if len(values) >= 2:
        estimate = cert_ci_95(values)
        if len(values) < APPROXIMATE_BELOW:
            estimate = replace(
                estimate,
                interval=replace(
                    estimate.interval,
                    method=f"{estimate.interval.method}, approximate (fewer than "
                    f"{APPROXIMATE_BELOW} prompts)",
                ),
            )
        bounds = estimate.interval
        low, high = max(0.0, bounds.low), min(1.0, bounds.high)
        if (low, high) != (bounds.low, bounds.high):
            clipped = ConfidenceInterval(low, high, bounds.level, f"{bounds.method}, clipped")
            return EstimateResult(
                estimate.statistic, estimate.n, clipped, estimate.standard_error, estimate.details
            )
        return estimate
    value = float(values[0])
    interval = single if single is not None else ConfidenceInterval(value, value, 0.95, "none")
    return EstimateResult(statistic=value, n=1, interval=interval)


def _analyze_model(
    model: str,
    records: list[TrialRecord],
    embed: Embed,
    config: BenchmarkConfig,
    price: Price | None,
    step: Callable[[str], None] = lambda what: None,
) -> ModelReliability:
    warnings: list[str] = []
    ok = [r for r in records if r.ok and r.response is not None]
    by_prompt: dict[str, list[TrialRecord]] = defaultdict(list)
    for record in ok:
        by_prompt[record.prompt_id].append(record)

    prompt_results: list[PromptReliability] = []
    for prompt_id in sorted({r.prompt_id for r in records}):
        group = by_prompt.get(prompt_id, [])
        texts = valid_responses(r.response for r in group)
        consistency: ConsistencyResult | None = None
        agreement: AgreementResult | None = None
        conflict: str | None = None
        if len(texts) >= 2:
            vectors = embed(texts)
            consistency = consistency_score(vectors)
            agreement = semantic_agreement(
                vectors, n_resamples=config.bootstrap_resamples, seed=config.random_seed
            )
            conflict = agreement_conflict(consistency.score, agreement.similarity)
        else:
            warnings.append(
                f"{model} / {prompt_id}: consistency needs at least 2 non-empty responses, "
                f"got {len(texts)}"
            )
        warning = sample_size_warning("consistency", len(texts), f"{model} / {prompt_id}")
        if warning and len(texts) >= 2:
            warnings.append(warning)
        if conflict:
            warnings.append(f"{model} / {prompt_id}: {conflict}")
        step(f"{model} / {prompt_id}: consistency and agreement")
        prompt_results.append(
            PromptReliability(
                prompt_id,
                sum(1 for r in records if r.prompt_id == prompt_id),
                len(texts),
                consistency,
                agreement,
                conflict,
            )
        )

    scored = [p for p in prompt_results if p.consistency is not None and p.agreement is not None]
    consistency_estimate = (
        mean_over_prompts([p.consistency.score for p in scored if p.consistency], None)
        if scored
        else None
    )
    agreement_estimate = (
        mean_over_prompts(
            [p.agreement.similarity for p in scored if p.agreement],
            scored[0].agreement.interval if len(scored) == 1 and scored[0].agreement else None,
        )
        if scored
        else None
    )

    if consistency_estimate is not None and agreement_estimate is not None:
        overall_conflict = agreement_conflict(
            consistency_estimate.statistic, agreement_estimate.statistic
        )
        if overall_conflict:
            warnings.append(f"{model} (mean over prompts): {overall_conflict}")

    performance: PerformanceResult | None = None
    performance_by_prompt: EstimateResult | None = None
    if ok:
        responses = [r.response or "" for r in ok]
        prompts = [r.prompt for r in ok]
        vectors = embed(prompts + responses)
        scores = performance_scores(vectors[: len(ok)], vectors[len(ok) :], responses)
        performance = summarize_performance(scores)
        warning = sample_size_warning("performance", len(ok), model)
        if warning:
            warnings.append(warning)
        prompt_means: dict[str, list[float]] = defaultdict(list)
        for record, score in zip(ok, scores.score, strict=True):
            prompt_means[record.prompt_id].append(float(score))
        if len(prompt_means) >= 2:
            # the prompt is the unit that varies between questions: average repeats first
            performance_by_prompt = cert_ci_95([np.mean(v) for v in prompt_means.values()])

    latency: LatencyResult | None = None
    ttft: LatencyResult | None = None
    timed = [r for r in ok if r.latency_seconds is not None]
    if len(timed) >= 2:
        latency = latency_metrics(
            [r.latency_seconds for r in timed],
            [r.output_tokens for r in timed],
            n_resamples=config.bootstrap_resamples,
            seed=config.random_seed,
        )
        warning = sample_size_warning("latency", len(timed), model)
        if warning:
            warnings.append(warning)
    elif ok:
        warnings.append(f"{model}: latency needs at least 2 successful trials, got {len(timed)}")
    streamed = [r.ttft_seconds for r in ok if r.ttft_seconds is not None]
    if len(streamed) >= 2:
        ttft = latency_metrics(
            streamed, n_resamples=config.bootstrap_resamples, seed=config.random_seed
        )

    quality: OutputQualityResult | None = None
    if ok:
        responses = [r.response or "" for r in ok]
        non_empty = valid_responses(responses)
        quality = output_quality(responses, embed(non_empty) if len(non_empty) >= 2 else None)
        warning = sample_size_warning("output_quality", len(ok), model)
        if warning:
            warnings.append(warning)

    robust = robustness([r.error_class for r in records], sum(r.attempts - 1 for r in records))
    warning = sample_size_warning("robustness", len(records), model)
    if warning:
        warnings.append(warning)
    warnings.extend(f"{model}: {note}" for note in robust.notes)

    cost: CostResult | None = None
    if price is not None:
        priced = [r for r in ok if r.input_tokens is not None and r.output_tokens is not None]
        if priced:
            mean_cost = float(
                np.mean([price.cost(r.input_tokens or 0, r.output_tokens or 0) for r in priced])
            )
            per_point = (
                mean_cost / performance.score
                if performance is not None and performance.score > 0
                else None
            )
            cost = CostResult(mean_cost, len(priced), per_point)
        else:
            warnings.append(f"{model}: a price was given but no trial reports token counts")

    step(f"{model}: performance, latency, output quality, robustness")
    return ModelReliability(
        model=model,
        trials=len(records),
        successful=len(ok),
        prompts=prompt_results,
        consistency=consistency_estimate,
        agreement=agreement_estimate,
        performance=performance,
        performance_by_prompt=performance_by_prompt,
        latency=latency,
        ttft=ttft,
        output_quality=quality,
        robustness=robust,
        cost=cost,
        warnings=warnings,
    )


def _effect(a: str, b: str, metric: str, x: Sequence[float], y: Sequence[float]) -> Comparison:
    if len(x) < 2 or len(y) < 2:
        return Comparison(a, b, metric, None, "needs at least 2 values per model")
    try:
        return Comparison(a, b, metric, cohens_d(x, y), None)
    except ValueError as error:
        return Comparison(a, b, metric, None, str(error))


def analyze(
    records: Sequence[TrialRecord],
    embed: Embed,
    *,
    config: BenchmarkConfig | None = None,
    prices: Mapping[str, Price] | None = None,
    record_errors: Sequence[str] = (),
    progress: ProgressCallback = no_progress,
) -> ReliabilityReport:
    """Compute every metric per model and Cohen's d between every pair of models.

    Duplicate (model, prompt, trial) keys keep the first record and are reported. A model run
    with several generation configurations is reported once per configuration (its name then
    carries the settings that differ), never pooled. `progress(done, total, what)` is called
    after each prompt of each model, each model's whole-model metrics, and each pair of models.
    """
    config = config if config is not None else BenchmarkConfig()
    split = split_by_config(records)
    given = dict(prices or {})
    # a price given for a model applies to each of its configurations
    prices = {
        **{name: given[model] for name, model in split.models.items() if model in given},
        **given,
    }
    warnings: list[str] = list(split.notes)
    unique: dict[tuple[str, str, int], TrialRecord] = {}
    for record in split.records:
        if record.key in unique:
            warnings.append(
                f"duplicate trial {record.key}: kept the first record, ignored the later one"
            )
            continue
        unique[record.key] = record
    by_model: dict[str, list[TrialRecord]] = defaultdict(list)
    for record in unique.values():
        by_model[record.model].append(record)
    unknown = sorted(set(prices) - set(by_model) - set(split.models.values()))
    if unknown:
        warnings.append(f"prices given for models without trials: {', '.join(unknown)}")
    total = sum(len({r.prompt_id for r in trials}) + 1 for trials in by_model.values())
    total += len(by_model) * (len(by_model) - 1) // 2
    done = 0

    def step(what: str) -> None:
        nonlocal done
        done += 1
        progress(done, total, what)

    models = [
        _analyze_model(name, by_model[name], embed, config, prices.get(name), step)
        for name in sorted(by_model)
    ]
    comparisons: list[Comparison] = []
    for first, second in itertools.combinations(models, 2):
        latencies = [
            [r.latency_seconds for r in by_model[m.model] if r.ok and r.latency_seconds is not None]
            for m in (first, second)
        ]
        comparisons.append(
            _effect(first.model, second.model, "latency_seconds", latencies[0], latencies[1])
        )
        perf: list[list[float]] = []
        for m in (first, second):
            ok = [r for r in by_model[m.model] if r.ok and r.response is not None]
            if ok:
                vectors = embed([r.prompt for r in ok] + [r.response or "" for r in ok])
                scores = performance_scores(
                    vectors[: len(ok)], vectors[len(ok) :], [r.response or "" for r in ok]
                )
                perf.append([float(s) for s in scores.score])
            else:
                perf.append([])
        comparisons.append(_effect(first.model, second.model, "performance", perf[0], perf[1]))
        step(f"{first.model} vs {second.model}: effect sizes")
    return ReliabilityReport(
        config=config,
        models=models,
        comparisons=comparisons,
        record_errors=list(record_errors),
        warnings=warnings,
    )
