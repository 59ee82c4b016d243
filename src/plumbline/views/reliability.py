"""Terminal and Markdown renderings of a reliability report (every number with n and a CI).

Both only render the typed `ReliabilityReport`: every figure is a field of it, formatted through
`plumbline.core.present`.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from plumbline.core import present
from plumbline.core.escape import markdown, terminal
from plumbline.core.result import Interval
from plumbline.reliability.result import (
    BaselineComparison,
    Estimate,
    MetricChange,
    ModelPairEffect,
    ModelReliability,
    ReliabilityInterval,
    ReliabilityReport,
)
from plumbline.views.reliability_cost import cost_figures, priced_by, usd_interval

NOT_MEASURED = "n/a"


def approximate_label(interval: Interval | None) -> str:
    """` approximate (simulated 92%)` beside an interval whose simulated coverage is below its
    level (` approximate` when no figure is known), else nothing: the label goes wherever the
    interval is shown."""
    if interval is None or not interval.approximate:
        return ""
    simulated = getattr(interval, "simulated_coverage", None)
    if simulated is None:
        return " approximate"
    return f" approximate (simulated {present.percent(simulated, 0)})"


def _ci(interval: Interval | None, *, percent_value: bool = False) -> str:
    """`[low, high]`, `≥ low (one-sided)` when only a lower bound exists, with ` approximate`
    when the interval says so; `n/a` without bounds."""
    if interval is None or (interval.low is None and interval.high is None):
        return NOT_MEASURED
    if interval.high is None and interval.low is not None:
        low = present.percent_value(interval.low) if percent_value else present.fixed(interval.low)
        text = f"≥ {low} (one-sided)"
    elif interval.low is None or interval.high is None:
        return NOT_MEASURED
    elif percent_value:
        text = present.interval(interval, in_percent=True)
    else:
        text = present.interval(interval, decimals=3)
    return text + approximate_label(interval)


def interval_basis(interval: Interval | None) -> str:
    """What an interval rests on, in words: method; prompts and trials; its coverage claim."""
    if interval is None:
        return ""
    if not isinstance(interval, ReliabilityInterval):
        return interval.method
    claim: str = interval.coverage
    if interval.simulated_coverage is not None:
        claim += f" (simulated {present.percent(interval.simulated_coverage, 0)})"
    prompts = f"{interval.prompts} prompt{'s' if interval.prompts != 1 else ''}"
    method = interval.method.removesuffix(", approximate")  # the claim says it once
    return f"{method}; {prompts}, {interval.trials} trials; {claim}"


def _estimate(
    statistic: float,
    interval: Interval | None,
    decimals: int = 3,
    population: Interval | None = None,
) -> str:
    """`0.620 [0.550, 0.690]`; with a population interval, which prompts each is about:
    `0.620 [0.550, 0.690] these prompts; [0.120, 0.980] prompt population`."""
    text = f"{present.fixed(statistic, decimals)} {_ci(interval)}"
    if population is None:
        return text
    return f"{text} these prompts; {_ci(population)} prompt population"


def _mean_text(estimate: Estimate) -> str:
    """A mean over prompts with its interval over these prompts and, when there is one, over
    the prompt population."""
    return _estimate(estimate.statistic, estimate.interval, population=estimate.population_interval)


Row = tuple[str, str, str, str]


def _mean_row(label: str, estimate: Estimate) -> Row:
    """A mean over prompts: its intervals, its band and what its interval rests on."""
    return (
        label,
        _mean_text(estimate),
        estimate.band.label if estimate.band else "",
        interval_basis(estimate.interval),
    )


def _score_rows(model: ModelReliability) -> list[Row]:
    """Consistency, semantic agreement and the performance heuristic, each as measured."""
    rows = [
        _mean_row(label, estimate)
        for label, estimate in (
            ("consistency (CERT)", model.consistency),
            ("semantic_agreement", model.agreement),
        )
        if estimate is not None
    ]
    if model.performance is not None:
        perf = model.performance
        by_prompt = model.performance_by_prompt
        value = _mean_text(by_prompt) if by_prompt is not None else present.fixed(perf.score)
        rows.append(
            (
                "performance heuristic (length, structure, prompt similarity), mean over prompts",
                f"{value} (n={perf.n})",
                perf.band.label,
                interval_basis(by_prompt.interval if by_prompt is not None else None),
            )
        )
    return rows


def _latency_rows(model: ModelReliability) -> list[Row]:
    """Latency with its percentiles and spread, and time to first token."""
    rows: list[Row] = []
    if model.latency is not None:
        lat = model.latency
        rows.append(
            (
                "latency mean (s)",
                f"{present.fixed(lat.mean)} {_ci(lat.mean_ci_95)} (n={lat.n})",
                "",
                interval_basis(lat.mean_ci_95),
            )
        )
        for name in ("p50", "p95", "p99"):
            interval = lat.percentile_intervals[name]
            rows.append(
                (
                    f"latency {name} (s)",
                    f"{present.fixed(getattr(lat, name))} {_ci(interval)}",
                    lat.p95_band.label if name == "p95" else "",
                    interval_basis(interval),
                )
            )
        rows.append(
            (
                "latency std / min / max (s)",
                f"{present.fixed(lat.std)} / {present.fixed(lat.min)} / {present.fixed(lat.max)}",
                "",
                "",
            )
        )
        rows.append(
            (
                "coefficient of variation",
                present.fixed(lat.coefficient_of_variation),
                lat.variation_band.label,
                "",
            )
        )
        if lat.tokens_per_second is not None:
            rows.append(("tokens per second", present.fixed(lat.tokens_per_second, 1), "", ""))
    if model.ttft is not None:
        rows.append(
            (
                "time to first token p50 / p95 (s)",
                f"{present.fixed(model.ttft.p50)} / {present.fixed(model.ttft.p95)} "
                f"(n={model.ttft.n})",
                "",
                "",
            )
        )
    return rows


def _quality_rows(model: ModelReliability) -> list[Row]:
    """Response length, semantic diversity and repetition."""
    rows: list[Row] = []
    if model.output_quality is not None:
        quality = model.output_quality
        rows.append(
            (
                "length (words / ~tokens)",
                f"{present.fixed(quality.mean_words, 1)} / {present.fixed(quality.mean_tokens, 1)}",
                "",
                "",
            )
        )
        if quality.semantic_diversity is not None and quality.diversity_band is not None:
            rows.append(
                (
                    "semantic diversity (per prompt, averaged)",
                    f"{present.fixed(quality.semantic_diversity)} "
                    f"({quality.diversity_prompts} prompts)",
                    quality.diversity_band.label,
                    "",
                )
            )
        rows.append(
            (
                "repetition score",
                present.fixed(quality.repetition_score),
                quality.repetition_band.label,
                "",
            )
        )
    return rows


def _robustness_rows(model: ModelReliability) -> list[Row]:
    """Error and timeout rates, the exceptions met and the retries used."""
    rows: list[Row] = []
    robust = model.robustness
    rows.append(
        (
            "error rate",
            f"{present.percent_value(robust.error_rate)} "
            f"{_ci(robust.error_rate_interval, percent_value=True)} "
            f"({robust.failed_trials}/{robust.total_trials})",
            robust.band.label,
            interval_basis(robust.error_rate_interval),
        )
    )
    rows.append(
        (
            "timeout rate",
            f"{present.percent_value(robust.timeout_rate)} "
            f"{_ci(robust.timeout_rate_interval, percent_value=True)} "
            f"({robust.timeout_trials}/{robust.total_trials})",
            robust.timeout_band.label,
            interval_basis(robust.timeout_rate_interval),
        )
    )
    failures = [c for c in robust.error_classes if c.trials]
    if failures:
        rows.append(
            (
                "exceptions",
                ", ".join(
                    f"{c.error_class} {c.trials} ({present.percent(c.rate)} "
                    f"{present.interval(c.interval, as_percent=True)})"
                    for c in failures
                ),
                "",
                "Wilson (trials as the unit)",
            )
        )
    if robust.retries:
        rows.append(("retries used", str(robust.retries), "", ""))
    return rows


def model_rows(model: ModelReliability) -> list[Row]:
    """(metric, value with interval, interpretation, what the interval rests on) per figure."""
    rows: list[Row] = []
    rows += _score_rows(model)
    rows += _latency_rows(model)
    rows += _quality_rows(model)
    rows += _robustness_rows(model)
    if model.cost is not None:
        for label, value, interval in cost_figures(model.cost):
            basis = interval_basis(interval) if interval is not None else ""
            rows.append((label, value, "", basis or priced_by(model.cost)))
    return rows


def warning_line(model: str | None, messages: list[str]) -> str:
    """One terminal line for all the warnings about `model` (None: the report's own)."""
    subject = model if model is not None else "report"
    first = messages[0]
    more = len(messages) - 1
    tail = f" (+{more} more)" if more else ""
    return (
        f"{subject}: {len(messages)} warning{'s' if len(messages) != 1 else ''}: {first}{tail}; "
        "details in --markdown, --json and the page"
    )


def _change(entry: MetricChange) -> str:
    difference = entry.difference
    unit = (
        " s"
        if entry.metric.startswith("latency")
        else " pts"
        if entry.metric == "error_rate"
        else ""
    )
    if difference.estimate is None:
        return NOT_MEASURED
    if entry.metric == "cost":
        sign = "+" if difference.estimate >= 0 else ""
        return f"{sign}{present.usd(difference.estimate)} {usd_interval(difference.interval)}"
    text = f"{difference.estimate:+.3f}{unit} {_ci(difference.interval)}"
    return text


def _figure(entry: MetricChange, value: float | None) -> str:
    """A baseline, current or margin figure in the metric's unit (dollars for cost)."""
    return present.usd(value) if entry.metric == "cost" else present.fixed(value)


def baseline_rows(comparison: BaselineComparison) -> list[list[str]]:
    """(model, metric, baseline, current, change [CI], margin, verdict) per entry."""
    rows = []
    for entry in comparison.entries:
        verdict: str = entry.verdict
        details = []
        if entry.test is not None and verdict != "unchanged":
            test = entry.test
            worse = test.p_worse_adjusted if verdict != "improved" else test.p_better_adjusted
            kind = (
                f"block permutation ({test.block_length} trials a block)"
                if test.block_length
                else "permutation"
            )
            details.append(f"{kind} p {worse:.2g} adjusted over the metrics")
        if entry.note:
            details.append(entry.note)
        elif verdict == "inconclusive" and entry.detectable_change is not None:
            details.append(f"could detect ±{_figure(entry, entry.detectable_change)}")
        if details:
            verdict += f" ({'; '.join(details)})"
        rows.append(
            [
                entry.model,
                entry.metric,
                _figure(entry, entry.baseline),
                _figure(entry, entry.current),
                _change(entry),
                f"±{_figure(entry, entry.margin)}",
                verdict,
            ]
        )
    return rows


BASELINE_HEADER = ["model", "metric", "baseline", "current", "change [CI]", "margin", "verdict"]


def baseline_notes(comparison: BaselineComparison) -> list[str]:
    """What a reader must know about the comparison: multiplicity, prompts left out, unpaired."""
    notes = [
        f"Intervals at {present.level(comparison.level)} each; {comparison.multiplicity}.",
        "A verdict: unchanged when the whole interval lies within ±margin; otherwise "
        "regressed or improved when a permutation test of no change (each prompt's trials "
        "relabelled at random between the two runs; exact whatever the prompts and the latency "
        "tails; for the error rate, blocks of consecutive trials in the order of their start "
        "times, so that a burst of failures from a provider incident moves as one and does not "
        "pass for a change) rejects on that side at 0.05 over the tested metrics ("
        + ("all six and cost" if "cost" in comparison.margins else "all six")
        + " unless --test-metric chose some; Westfall–Young's step-down over "
        "the same relabellings; its p-value beside the verdict); otherwise inconclusive (with "
        "the smallest change the data could have detected, 80% power, or why no test is "
        "possible at this size).",
    ]
    for pair in comparison.pairs:
        if pair.only_in_baseline or pair.only_in_current:
            notes.append(
                f"{pair.model}: compared on {pair.shared_prompts} shared prompts; only in the "
                f"baseline: {', '.join(pair.only_in_baseline) or 'none'}; only in the current "
                f"run: {', '.join(pair.only_in_current) or 'none'}."
            )
    if comparison.unpaired_current:
        notes.append(f"No baseline for: {', '.join(comparison.unpaired_current)}.")
    if comparison.unpaired_baseline:
        notes.append(f"Baseline models not compared: {', '.join(comparison.unpaired_baseline)}.")
    return notes


def _effect(comparison: ModelPairEffect) -> str:
    effect = comparison.effect
    if effect is None:
        return f"{NOT_MEASURED} ({comparison.note})"
    return _estimate(effect.statistic, effect.interval, 2)


def _effect_basis(comparison: ModelPairEffect) -> str:
    return interval_basis(comparison.effect.interval) if comparison.effect is not None else ""


def render_terminal(report: ReliabilityReport, console: Console) -> None:
    for model in report.models:
        console.print(terminal(model.verdict), highlight=False)
    comparison = report.baseline_comparison
    if comparison is not None:
        for pair in comparison.pairs:
            console.print(f"baseline: {terminal(pair.summary)}", highlight=False)
    for model in report.models:
        table = Table(
            title=f"{terminal(model.model)}: {model.trials} trials, {model.successful} successful",
            title_justify="left",
        )
        table.add_column("metric")
        table.add_column("value [95% CI]")
        table.add_column("interpretation")
        table.add_column("interval: method; n; coverage")
        for metric, value, label, basis in model_rows(model):
            table.add_row(terminal(metric), terminal(value), terminal(label), terminal(basis))
        console.print(table)
    if report.comparisons:
        table = Table(
            title="Model comparison (Cohen's d, first minus second)", title_justify="left"
        )
        table.add_column("models")
        table.add_column("metric")
        table.add_column("d [95% CI]")
        table.add_column("interval: method; n; coverage")
        for comparison_row in report.comparisons:
            table.add_row(
                f"{terminal(comparison_row.model_a)} vs {terminal(comparison_row.model_b)}",
                terminal(comparison_row.metric),
                terminal(_effect(comparison_row)),
                terminal(_effect_basis(comparison_row)),
            )
        console.print(table)
    if comparison is not None:
        table = Table(title="Change from the baseline (current − baseline)", title_justify="left")
        for column in BASELINE_HEADER:
            table.add_column(column)
        for row in baseline_rows(comparison):
            table.add_row(*(terminal(cell) for cell in row))
        console.print(table)
        for note in baseline_notes(comparison):
            console.print(terminal(note), highlight=False)
    subjects = [None, *(m.model for m in report.models)]
    for subject in subjects:
        messages = report.warnings_for(subject)
        if messages:
            console.print(
                f"[yellow]warning:[/yellow] {terminal(warning_line(subject, messages))}",
                highlight=False,
            )
    for problem in report.record_errors[:20]:
        console.print(f"[red]skipped:[/red] {terminal(problem)}")


def _model_markdown(report: ReliabilityReport, model: ModelReliability) -> list[str]:
    """One model's section: its metrics, its prompts (when several), its warnings."""
    lines = [f"## {markdown(model.model)}", ""]
    lines += [f"{model.trials} trials, {model.successful} successful.", ""]
    lines.append(
        present.markdown_table(
            ["metric", "value [95% CI]", "interpretation", "interval: method; n; coverage"],
            model_rows(model),
        )
    )
    if len(model.prompts) > 1:
        rows = [
            [
                prompt.prompt_id,
                str(prompt.valid_responses),
                present.fixed(prompt.consistency.score) if prompt.consistency else NOT_MEASURED,
                f"{present.fixed(prompt.agreement.similarity)} {_ci(prompt.agreement.interval)}"
                if prompt.agreement
                else NOT_MEASURED,
            ]
            for prompt in model.prompts
        ]
        lines += [
            "",
            present.markdown_table(["prompt", "valid responses", "consistency", "agreement"], rows),
        ]
    own = report.warnings_for(model.model)
    if own:
        lines.append("")
        lines += [f"- warning: {markdown(w)}" for w in own]
    lines.append("")
    return lines


def render_markdown(report: ReliabilityReport) -> str:
    lines = ["# Reliability report", ""]
    lines += [f"- **{markdown(model.verdict)}**" for model in report.models]
    lines.append("")
    config = report.config
    lines.append(
        f"Embedding model {markdown(config.embedding_model_name)}, random seed "
        f"{config.random_seed}. Intervals are 95%, each with its method, the prompts and trials "
        "it rests on, and whether its coverage is guaranteed or approximate: t over prompt "
        "means for consistency, agreement and performance (the prompt is the unit), "
        "order statistics for latency percentiles (one-sided where n is too small), a "
        "log-scale interval for the mean latency, Wilson for rates."
    )
    lines.append("")
    for model in report.models:
        lines += _model_markdown(report, model)
    if report.comparisons:
        lines += [
            "## Model comparison",
            "",
            "Cohen's d (pooled SD), first model minus second.",
            "",
            present.markdown_table(
                ["models", "metric", "d [95% CI]", "interval: method; n; coverage"],
                [
                    [f"{c.model_a} vs {c.model_b}", c.metric, _effect(c), _effect_basis(c)]
                    for c in report.comparisons
                ],
            ),
            "",
        ]
    comparison = report.baseline_comparison
    if comparison is not None:
        lines += ["## Change from the baseline", ""]
        lines += [f"- **{markdown(pair.summary)}**" for pair in comparison.pairs]
        lines += [
            "",
            present.markdown_table(BASELINE_HEADER, baseline_rows(comparison)),
            "",
        ]
        lines += [f"- {markdown(note)}" for note in baseline_notes(comparison)]
        lines.append("")
    general = report.warnings_for(None)
    if general or report.record_errors:
        lines += ["## Notes", ""]
        lines += [f"- warning: {markdown(w)}" for w in general]
        lines += [f"- skipped record: {markdown(e)}" for e in report.record_errors]
        lines.append("")
    return "\n".join(lines)
