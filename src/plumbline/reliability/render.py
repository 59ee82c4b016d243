"""Terminal and Markdown renderings of a reliability report (every number with n and a CI).

Both only render the typed `ReliabilityReport`: every figure is a field of it, formatted through
`plumbline.report.present`.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from plumbline.reliability.analysis import ModelPairEffect, ModelReliability, ReliabilityReport
from plumbline.report import present
from plumbline.report.escape import markdown, terminal
from plumbline.result import Interval

NOT_MEASURED = "n/a"


def _ci(interval: Interval | None, *, percent_value: bool = False) -> str:
    """`[low, high]`, with ` approximate` when the method says so; `n/a` without bounds."""
    if interval is None or interval.low is None or interval.high is None:
        return NOT_MEASURED
    if percent_value:
        text = present.interval(interval, in_percent=True)
    else:
        text = present.interval(interval, decimals=3)
    return text + (" approximate" if interval.approximate else "")


def _estimate(statistic: float, interval: Interval | None, decimals: int = 3) -> str:
    shown = (
        present.interval(interval, decimals=decimals)
        if interval is not None and interval.low is not None
        else NOT_MEASURED
    )
    approximate = " approximate" if interval is not None and interval.approximate else ""
    return f"{present.fixed(statistic, decimals)} {shown}{approximate}"


def model_rows(model: ModelReliability) -> list[tuple[str, str, str]]:
    """(metric, value with interval, interpretation) rows for one model."""
    rows: list[tuple[str, str, str]] = []
    if model.consistency is not None:
        rows.append(
            (
                "consistency (CERT)",
                _estimate(model.consistency.statistic, model.consistency.interval),
                model.consistency.band.label if model.consistency.band else "",
            )
        )
    if model.agreement is not None:
        rows.append(
            (
                "semantic_agreement",
                _estimate(model.agreement.statistic, model.agreement.interval),
                model.agreement.band.label if model.agreement.band else "",
            )
        )
    if model.performance is not None:
        perf = model.performance
        rows.append(
            (
                "performance heuristic (length, structure, prompt similarity)",
                f"{present.fixed(perf.score)} {_ci(perf.ci_95)} (n={perf.n})",
                perf.band.label,
            )
        )
    if model.latency is not None:
        lat = model.latency
        rows.append(
            (
                "latency mean (s)",
                f"{present.fixed(lat.mean)} {_ci(lat.mean_ci_95)} (n={lat.n})",
                "",
            )
        )
        rows.append(
            (
                "latency p50 / p95 / p99 (s)",
                f"{present.fixed(lat.p50)} / {present.fixed(lat.p95)} "
                f"{_ci(lat.percentile_intervals['p95'])} / {present.fixed(lat.p99)}",
                lat.p95_band.label,
            )
        )
        rows.append(
            (
                "latency std / min / max (s)",
                f"{present.fixed(lat.std)} / {present.fixed(lat.min)} / {present.fixed(lat.max)}",
                "",
            )
        )
        rows.append(
            (
                "coefficient of variation",
                present.fixed(lat.coefficient_of_variation),
                lat.variation_band.label,
            )
        )
        if lat.tokens_per_second is not None:
            rows.append(("tokens per second", present.fixed(lat.tokens_per_second, 1), ""))
    if model.ttft is not None:
        rows.append(
            (
                "time to first token p50 / p95 (s)",
                f"{present.fixed(model.ttft.p50)} / {present.fixed(model.ttft.p95)} "
                f"(n={model.ttft.n})",
                "",
            )
        )
    if model.output_quality is not None:
        quality = model.output_quality
        rows.append(
            (
                "length (words / ~tokens)",
                f"{present.fixed(quality.mean_words, 1)} / {present.fixed(quality.mean_tokens, 1)}",
                "",
            )
        )
        if quality.semantic_diversity is not None and quality.diversity_band is not None:
            rows.append(
                (
                    "semantic diversity",
                    present.fixed(quality.semantic_diversity),
                    quality.diversity_band.label,
                )
            )
        rows.append(
            (
                "repetition score",
                present.fixed(quality.repetition_score),
                quality.repetition_band.label,
            )
        )
    robust = model.robustness
    rows.append(
        (
            "error rate",
            f"{present.percent_value(robust.error_rate)} "
            f"{_ci(robust.error_rate_interval, percent_value=True)} "
            f"({robust.failed_trials}/{robust.total_trials})",
            robust.band.label,
        )
    )
    rows.append(
        (
            "timeout rate",
            f"{present.percent_value(robust.timeout_rate)} "
            f"{_ci(robust.timeout_rate_interval, percent_value=True)} "
            f"({robust.timeout_trials}/{robust.total_trials})",
            robust.timeout_band.label,
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
            )
        )
    if robust.retries:
        rows.append(("retries used", str(robust.retries), ""))
    if model.cost is not None:
        cost = model.cost
        rows.append(
            (
                "cost per trial / per performance-heuristic point",
                f"{present.usd(cost.mean_cost_per_trial)} / "
                f"{present.usd(cost.cost_per_heuristic_point)}",
                "",
            )
        )
    return rows


def _effect(comparison: ModelPairEffect) -> str:
    effect = comparison.effect
    if effect is None:
        return f"{NOT_MEASURED} ({comparison.note})"
    return _estimate(effect.statistic, effect.interval, 2)


def render_terminal(report: ReliabilityReport, console: Console) -> None:
    for model in report.models:
        console.print(terminal(model.verdict), highlight=False)
    for model in report.models:
        table = Table(
            title=f"{terminal(model.model)}: {model.trials} trials, {model.successful} successful",
            title_justify="left",
        )
        table.add_column("metric")
        table.add_column("value [95% CI]")
        table.add_column("interpretation")
        for metric, value, label in model_rows(model):
            table.add_row(terminal(metric), terminal(value), terminal(label))
        console.print(table)
    if report.comparisons:
        table = Table(
            title="Model comparison (Cohen's d, first minus second)", title_justify="left"
        )
        table.add_column("models")
        table.add_column("metric")
        table.add_column("d [95% CI]")
        for comparison in report.comparisons:
            table.add_row(
                f"{terminal(comparison.model_a)} vs {terminal(comparison.model_b)}",
                terminal(comparison.metric),
                terminal(_effect(comparison)),
            )
        console.print(table)
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {terminal(warning.message)}")
    for problem in report.record_errors[:20]:
        console.print(f"[red]skipped:[/red] {terminal(problem)}")


def render_markdown(report: ReliabilityReport) -> str:
    lines = ["# Reliability report", ""]
    lines += [f"- **{markdown(model.verdict)}**" for model in report.models]
    lines.append("")
    config = report.config
    lines.append(
        f"Embedding model {markdown(config.embedding_model_name)}, random seed "
        f"{config.random_seed}, {config.bootstrap_resamples} bootstrap resamples. Intervals are "
        "95%: CERT's CI_95 = mean ± 1.96·std/√n for means, Wilson for rates, bootstrap for "
        "percentiles and agreement."
    )
    lines.append("")
    for model in report.models:
        lines += [f"## {markdown(model.model)}", ""]
        lines += [f"{model.trials} trials, {model.successful} successful.", ""]
        lines.append(
            present.markdown_table(
                ["metric", "value [95% CI]", "interpretation"], model_rows(model)
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
                present.markdown_table(
                    ["prompt", "valid responses", "consistency", "agreement"], rows
                ),
            ]
        own = report.warnings_for(model.model)
        if own:
            lines.append("")
            lines += [f"- warning: {markdown(w)}" for w in own]
        lines.append("")
    if report.comparisons:
        lines += [
            "## Model comparison",
            "",
            "Cohen's d (pooled SD), first model minus second.",
            "",
            present.markdown_table(
                ["models", "metric", "d [95% CI]"],
                [[f"{c.model_a} vs {c.model_b}", c.metric, _effect(c)] for c in report.comparisons],
            ),
            "",
        ]
    general = report.warnings_for(None)
    if general or report.record_errors:
        lines += ["## Notes", ""]
        lines += [f"- warning: {markdown(w)}" for w in general]
        lines += [f"- skipped record: {markdown(e)}" for e in report.record_errors]
        lines.append("")
    return "\n".join(lines)
