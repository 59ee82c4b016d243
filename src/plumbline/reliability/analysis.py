"""From trial records to the reliability report: the five metrics per model, and comparisons.

`analyze` is pure given an `embed` function (texts → one row per text), so the whole report can
be recomputed from records without calling any model, and tested with hand-made embeddings.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from plumbline.core.prices import PriceTable
from plumbline.core.progress import ProgressCallback, no_progress
from plumbline.records.trial_record import TrialRecord
from plumbline.reliability.bands import agreement_band, consistency_band, performance_band
from plumbline.reliability.config import BenchmarkConfig, sample_size_warning
from plumbline.reliability.config_split import split_by_config
from plumbline.reliability.cost import Price as Price
from plumbline.reliability.cost import Pricing, cost_result, pricing_of
from plumbline.reliability.intervals import (
    CONSISTENCY_COVERAGE,
    effect_interval,
    over_prompts,
    population_interval,
)
from plumbline.reliability.metrics import (
    agreement_conflict,
    consistency_score,
    finite_or_none,
    latency_metrics,
    output_quality,
    performance_scores,
    prompt_means,
    robustness,
    semantic_agreement,
    summarize_performance,
    valid_responses,
)
from plumbline.reliability.result import (
    MAX_FAILED_TRIALS,
    MAX_LATENCIES,
    RESPONSES_PER_PROMPT,
    AgreementResult,
    Band,
    ConsistencyResult,
    EffectSize,
    Estimate,
    FailedTrial,
    LatencyResult,
    ModelPairEffect,
    ModelReliability,
    OutputQualityResult,
    PerformanceResult,
    PromptReliability,
    ReliabilityConfig,
    ReliabilityReport,
    ReliabilityWarning,
    ResponseSample,
    RobustnessResult,
    SampledResponse,
)
from plumbline.reliability.verdict import model_verdict
from plumbline.stats import cohens_d_clustered

Embed = Callable[[Sequence[str]], npt.NDArray[np.float64]]


#: What each compared metric is, in words.
METRIC_LABELS = {
    "latency_seconds": "latency (s)",
    "performance": "performance heuristic (length, structure, prompt similarity)",
}


def estimate_over_prompts(
    values: Sequence[float],
    trials: int,
    band: Callable[[float], Band] | None = None,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
    simulated_coverage: float | None = None,
) -> Estimate:
    """The mean of per-prompt values with its two-stage interval (`intervals.over_prompts`)."""
    mean, standard_error, interval = over_prompts(
        values, trials, bounds=bounds, simulated_coverage=simulated_coverage
    )
    return Estimate(
        statistic=mean,
        n=len(values),
        standard_error=finite_or_none(standard_error),
        interval=interval,
        population_interval=population_interval(values, trials, bounds=bounds),
        band=band(mean) if band is not None else None,
    )


def _thin(values: Sequence[float]) -> list[float]:
    """At most MAX_LATENCIES values, sorted: evenly spaced order statistics (min, max kept)."""
    ordered = sorted(float(v) for v in values)
    if len(ordered) <= MAX_LATENCIES:
        return ordered
    step = (len(ordered) - 1) / (MAX_LATENCIES - 1)
    return [ordered[round(i * step)] for i in range(MAX_LATENCIES)]


def _failed(records: Sequence[TrialRecord]) -> list[FailedTrial]:
    failed = sorted((r for r in records if r.error_class is not None), key=lambda r: r.key)
    return [
        FailedTrial(
            prompt_id=r.prompt_id,
            trial=r.trial,
            error_class=r.error_class.value if r.error_class is not None else "",
            http_status=r.http_status,
            attempts=r.attempts,
            latency_seconds=r.latency_seconds,
            message=r.error_message or "",
        )
        for r in failed[:MAX_FAILED_TRIALS]
    ]


def _samples(records: Sequence[TrialRecord]) -> list[ResponseSample]:
    by_prompt: dict[str, list[TrialRecord]] = defaultdict(list)
    for record in records:
        if record.error_class is None and record.response is not None:
            by_prompt[record.prompt_id].append(record)
    samples = []
    for prompt_id in sorted(by_prompt):
        group = sorted(by_prompt[prompt_id], key=lambda r: r.trial)
        samples.append(
            ResponseSample(
                prompt_id=prompt_id,
                prompt=group[0].prompt,
                responses=[
                    SampledResponse(trial=r.trial, text=r.response or "")
                    for r in group[:RESPONSES_PER_PROMPT]
                ],
            )
        )
    return samples


def _prompt_results(
    model: str,
    records: list[TrialRecord],
    ok: list[TrialRecord],
    embed: Embed,
    step: Callable[[str], None],
) -> tuple[list[PromptReliability], list[Any], list[str]]:
    """Consistency and agreement per prompt, the embeddings that feed output diversity, and
    the warnings met on the way."""
    warnings: list[str] = []
    by_prompt: dict[str, list[TrialRecord]] = defaultdict(list)
    for record in ok:
        by_prompt[record.prompt_id].append(record)

    prompt_results: list[PromptReliability] = []
    diversity_groups: list[Any] = []
    for prompt_id in sorted({r.prompt_id for r in records}):
        group = by_prompt.get(prompt_id, [])
        texts = valid_responses(r.response for r in group)
        consistency: ConsistencyResult | None = None
        agreement: AgreementResult | None = None
        conflict: str | None = None
        if len(texts) >= 2:
            vectors = embed(texts)
            consistency = consistency_score(vectors)
            agreement = semantic_agreement(vectors)
            diversity_groups.append(vectors)
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
                prompt_id=prompt_id,
                trials=sum(1 for r in records if r.prompt_id == prompt_id),
                valid_responses=len(texts),
                consistency=consistency,
                agreement=agreement,
                conflict=conflict,
            )
        )
    return prompt_results, diversity_groups, warnings


def _estimates_over_prompts(
    model: str, prompt_results: list[PromptReliability]
) -> tuple[Estimate | None, Estimate | None, list[str]]:
    """Consistency and agreement over the prompts scored on both, and a conflict between them."""
    warnings: list[str] = []
    scored = [p for p in prompt_results if p.consistency is not None and p.agreement is not None]
    consistency_estimate: Estimate | None = None
    agreement_estimate: Estimate | None = None
    if scored:
        responses_scored = sum(p.valid_responses for p in scored)
        consistency_estimate = estimate_over_prompts(
            [p.consistency.score for p in scored if p.consistency],
            responses_scored,
            consistency_band,
            simulated_coverage=CONSISTENCY_COVERAGE,
        )
        agreement_estimate = estimate_over_prompts(
            [p.agreement.similarity for p in scored if p.agreement],
            responses_scored,
            agreement_band,
            bounds=(-1.0, 1.0),
        )

    if consistency_estimate is not None and agreement_estimate is not None:
        overall_conflict = agreement_conflict(
            consistency_estimate.statistic, agreement_estimate.statistic
        )
        if overall_conflict:
            warnings.append(f"{model} (mean over prompts): {overall_conflict}")
    return consistency_estimate, agreement_estimate, warnings


@dataclass(frozen=True)
class _Performance:
    """The performance heuristic of one model: pooled, over prompts, and on each prompt."""

    result: PerformanceResult | None
    by_prompt: Estimate | None
    prompts: list[PromptReliability]


def _performance(
    model: str, ok: list[TrialRecord], embed: Embed, prompt_results: list[PromptReliability]
) -> tuple[_Performance, list[str]]:
    """The performance heuristic of the successful trials, with each prompt's mean."""
    warnings: list[str] = []
    performance: PerformanceResult | None = None
    performance_by_prompt: Estimate | None = None
    if ok:
        responses = [r.response or "" for r in ok]
        prompts = [r.prompt for r in ok]
        vectors = embed(prompts + responses)
        scores = performance_scores(vectors[: len(ok)], vectors[len(ok) :], responses)
        prompt_ids = [r.prompt_id for r in ok]
        performance = summarize_performance(scores, prompt_ids)
        warning = sample_size_warning("performance", len(ok), model)
        if warning:
            warnings.append(warning)
        by_prompt_means = prompt_means([float(v) for v in scores.score], prompt_ids)
        prompt_results = [
            p.model_copy(update={"performance": by_prompt_means.get(p.prompt_id)})
            for p in prompt_results
        ]
        # the prompt is the unit that varies between questions: average repeats first
        performance_by_prompt = estimate_over_prompts(
            list(by_prompt_means.values()), len(ok), performance_band
        )
    return _Performance(performance, performance_by_prompt, prompt_results), warnings


def _latencies(
    model: str, ok: list[TrialRecord]
) -> tuple[LatencyResult | None, LatencyResult | None, list[str]]:
    """Latency and time to first token over the successful trials that report them."""
    warnings: list[str] = []
    latency: LatencyResult | None = None
    ttft: LatencyResult | None = None
    timed = [r for r in ok if r.latency_seconds is not None]
    if len(timed) >= 2:
        latency = latency_metrics(
            [r.latency_seconds for r in timed],
            [r.output_tokens for r in timed],
            prompts=len({r.prompt_id for r in timed}),
        )
        warning = sample_size_warning("latency", len(timed), model)
        if warning:
            warnings.append(warning)
    elif ok:
        warnings.append(f"{model}: latency needs at least 2 successful trials, got {len(timed)}")
    streamed = [r.ttft_seconds for r in ok if r.ttft_seconds is not None]
    if len(streamed) >= 2:
        ttft = latency_metrics(
            streamed, prompts=len({r.prompt_id for r in ok if r.ttft_seconds is not None})
        )
    return latency, ttft, warnings


def _quality_and_robustness(
    model: str, records: list[TrialRecord], ok: list[TrialRecord], diversity_groups: list[Any]
) -> tuple[OutputQualityResult | None, RobustnessResult, list[str]]:
    """Output quality of the successful trials and robustness over every trial."""
    warnings: list[str] = []
    quality: OutputQualityResult | None = None
    if ok:
        responses = [r.response or "" for r in ok]
        quality = output_quality(responses, embeddings_by_prompt=diversity_groups)
        warning = sample_size_warning("output_quality", len(ok), model)
        if warning:
            warnings.append(warning)

    robust = robustness(
        [r.error_class for r in records],
        sum(r.attempts - 1 for r in records),
        prompts=len({r.prompt_id for r in records}),
    )
    warning = sample_size_warning("robustness", len(records), model)
    if warning:
        warnings.append(warning)
    warnings.extend(f"{model}: {note}" for note in robust.notes)
    return quality, robust, warnings


def _analyze_model(
    model: str,
    records: list[TrialRecord],
    embed: Embed,
    config: BenchmarkConfig,
    pricing: Pricing | None,
    step: Callable[[str], None] = lambda what: None,
) -> tuple[ModelReliability, list[str]]:
    """One model's entry and its warnings."""
    ok = [r for r in records if r.ok and r.response is not None]
    prompt_results, diversity_groups, warnings = _prompt_results(model, records, ok, embed, step)
    consistency_estimate, agreement_estimate, found = _estimates_over_prompts(model, prompt_results)
    warnings += found
    performance, found = _performance(model, ok, embed, prompt_results)
    warnings += found
    latency, ttft, found = _latencies(model, ok)
    warnings += found
    quality, robust, found = _quality_and_robustness(model, records, ok, diversity_groups)
    warnings += found
    cost, found = cost_result(model, ok, pricing, performance.result, config.random_seed)
    warnings += found

    step(f"{model}: performance, latency, output quality, robustness")
    entry = ModelReliability(
        model=model,
        trials=len(records),
        successful=len(ok),
        prompts=performance.prompts,
        consistency=consistency_estimate,
        agreement=agreement_estimate,
        performance=performance.result,
        performance_by_prompt=performance.by_prompt,
        latency=latency,
        ttft=ttft,
        output_quality=quality,
        robustness=robust,
        cost=cost,
        latencies=_thin([r.latency_seconds for r in ok if r.latency_seconds is not None]),
        failed_trials=_failed(records),
        samples=_samples(records),
    )
    return entry.model_copy(update={"verdict": model_verdict(entry)}), warnings


def _effect(a: str, b: str, metric: str, x: _Values, y: _Values) -> ModelPairEffect:
    """CERT's Cohen's d over the trial values; its interval counts prompts, not trials, as the
    unit (`cohens_d_clustered`)."""
    pair = {"model_a": a, "model_b": b, "metric": metric, "label": METRIC_LABELS[metric]}
    if len(x.values) < 2 or len(y.values) < 2:
        return ModelPairEffect(**pair, effect=None, note="needs at least 2 values per model")
    if len(set(x.prompts) | set(y.prompts)) < 2:
        return ModelPairEffect(
            **pair, effect=None, note="an interval over prompts needs at least 2 prompts"
        )
    try:
        d = cohens_d_clustered(x.values, y.values, x.prompts, y.prompts)
    except ValueError as error:
        return ModelPairEffect(**pair, effect=None, note=str(error))
    fewest = min(len(set(x.prompts)), len(set(y.prompts)))
    interval = effect_interval(d.interval.low, d.interval.high, d.details["clusters"], d.n, fewest)
    effect = EffectSize(
        statistic=d.statistic,
        n=d.n,
        standard_error=d.standard_error,
        interval=interval,
        n_x=d.details["n_x"],
        n_y=d.details["n_y"],
        pooled_sd=d.details["pooled_sd"],
        hedges_g=d.details["hedges_g"],
    )
    return ModelPairEffect(**pair, effect=effect, note=None)


def separate_prompt_texts(
    records: Sequence[TrialRecord],
) -> tuple[list[TrialRecord], list[str]]:
    """Records whose prompt id was used for more than one prompt text, each text under an id
    of its own (the first text keeps the id, the k-th becomes `<id>~k`), and a problem per such
    id: pooling different prompts would mix their answers into one consistency figure."""
    texts: dict[str, list[str]] = defaultdict(list)
    for record in records:
        if record.prompt not in texts[record.prompt_id]:
            texts[record.prompt_id].append(record.prompt)
    conflicting = {pid: found for pid, found in texts.items() if len(found) > 1}
    if not conflicting:
        return list(records), []
    separated = []
    for record in records:
        found = conflicting.get(record.prompt_id)
        index = found.index(record.prompt) if found is not None else 0
        if index:
            record = record.model_copy(update={"prompt_id": f"{record.prompt_id}~{index + 1}"})
        separated.append(record)
    problems = [
        f"prompt id {pid!r} is used for {len(found)} different prompt texts (first: "
        f"{_excerpt(found[0])!r}; second: {_excerpt(found[1])!r}); each text is analysed as a "
        f"prompt of its own ({pid!r}, {pid + '~2'!r}, ...): give every prompt its own id"
        for pid, found in sorted(conflicting.items())
    ]
    return separated, problems


def _excerpt(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _first_of_each_key(
    records: Sequence[TrialRecord],
) -> tuple[dict[tuple[str, str, int], TrialRecord], list[str]]:
    """The first record of each (model, prompt, trial) key, and a note per later duplicate."""
    notes: list[str] = []
    unique: dict[tuple[str, str, int], TrialRecord] = {}
    for record in records:
        if record.key in unique:
            notes.append(
                f"duplicate trial {record.key}: kept the first record, ignored the later one"
            )
            continue
        unique[record.key] = record
    return unique, notes


@dataclass(frozen=True)
class _Values:
    """A model's trial values of one metric and the prompt of each."""

    values: list[float]
    prompts: list[str]


def _model_comparisons(
    models: list[ModelReliability],
    by_model: Mapping[str, list[TrialRecord]],
    embed: Embed,
    step: Callable[[str], None],
) -> list[ModelPairEffect]:
    """Cohen's d on latency and on the performance heuristic for every pair of models."""
    comparisons: list[ModelPairEffect] = []
    for first, second in itertools.combinations(models, 2):
        latencies = []
        for m in (first, second):
            timed = [r for r in by_model[m.model] if r.ok and r.latency_seconds is not None]
            latencies.append(
                _Values([r.latency_seconds or 0.0 for r in timed], [r.prompt_id for r in timed])
            )
        comparisons.append(
            _effect(first.model, second.model, "latency_seconds", latencies[0], latencies[1])
        )
        perf: list[_Values] = []
        for m in (first, second):
            ok = [r for r in by_model[m.model] if r.ok and r.response is not None]
            scores: list[float] = []
            if ok:
                vectors = embed([r.prompt for r in ok] + [r.response or "" for r in ok])
                computed = performance_scores(
                    vectors[: len(ok)], vectors[len(ok) :], [r.response or "" for r in ok]
                )
                scores = [float(s) for s in computed.score]
            perf.append(_Values(scores, [r.prompt_id for r in ok]))
        comparisons.append(_effect(first.model, second.model, "performance", perf[0], perf[1]))
        step(f"{first.model} vs {second.model}: effect sizes")
    return comparisons


def analyze(
    records: Sequence[TrialRecord],
    embed: Embed,
    *,
    config: BenchmarkConfig | None = None,
    prices: Mapping[str, Price] | None = None,
    record_errors: Sequence[str] = (),
    progress: ProgressCallback = no_progress,
    price_table: PriceTable | None = None,
) -> ReliabilityReport:
    """Compute every metric per model and Cohen's d between every pair of models.

    Duplicate (model, prompt, trial) keys keep the first record and are reported; a prompt id
    used for several prompt texts is reported and each text analysed apart
    (`separate_prompt_texts`). A model run
    with several generation configurations is reported once per configuration (its name then
    carries the settings that differ), never pooled. `progress(done, total, what)` is called
    after each prompt of each model, each model's whole-model metrics, and each pair of models.
    A model is priced by its `prices` rate, else by `price_table` (`reliability.cost`).
    """
    config = config if config is not None else BenchmarkConfig()
    split = split_by_config(records)
    given = dict(prices or {})
    # a price given for a model applies to each of its configurations
    prices = {
        **{name: given[model] for name, model in split.models.items() if model in given},
        **given,
    }
    notes: list[str] = list(split.notes)
    separated, conflicts = separate_prompt_texts(split.records)
    notes += conflicts
    unique, duplicates = _first_of_each_key(separated)
    notes += duplicates
    by_model: dict[str, list[TrialRecord]] = defaultdict(list)
    for record in unique.values():
        by_model[record.model].append(record)
    unknown = sorted(set(prices) - set(by_model) - set(split.models.values()))
    if unknown:
        notes.append(f"prices given for models without trials: {', '.join(unknown)}")
    total = sum(len({r.prompt_id for r in trials}) + 1 for trials in by_model.values())
    total += len(by_model) * (len(by_model) - 1) // 2
    done = 0

    def step(what: str) -> None:
        nonlocal done
        done += 1
        progress(done, total, what)

    warnings = [ReliabilityWarning(model=None, message=note) for note in notes]
    models: list[ModelReliability] = []
    for name in sorted(by_model):
        pricing = pricing_of(name, split.models.get(name, name), prices, price_table)
        entry, model_warnings = _analyze_model(name, by_model[name], embed, config, pricing, step)
        models.append(entry)
        warnings += [ReliabilityWarning(model=name, message=w) for w in model_warnings]
    comparisons = _model_comparisons(models, by_model, embed, step)
    return ReliabilityReport(
        config=ReliabilityConfig.of(config),
        models=models,
        comparisons=comparisons,
        record_errors=list(record_errors),
        warnings=warnings,
    )
