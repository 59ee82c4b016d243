"""Terminal and Markdown renderings of a reliability report (every number with n and a CI)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from plumbline.reliability.analysis import ModelReliability, ReliabilityReport
from plumbline.reliability.bands import agreement_band, consistency_band
from plumbline.reliability.verdict import model_verdict
from plumbline.report.escape import markdown, terminal
from plumbline.stats import ConfidenceInterval, EstimateResult


def _ci(interval: ConfidenceInterval | None, digits: int = 3, unit: str = "") -> str:
    if interval is None:
        return "n/a"
    approximate = " approximate" if "approximate" in interval.method else ""
    return f"[{interval.low:.{digits}f}{unit}, {interval.high:.{digits}f}{unit}]{approximate}"


def _estimate(estimate: EstimateResult | None, digits: int = 3) -> str:
    if estimate is None:
        return "n/a"
    return f"{estimate.statistic:.{digits}f} {_ci(estimate.interval, digits)}"


def model_rows(model: ModelReliability) -> list[tuple[str, str, str]]:
    """(metric, value with interval, interpretation) rows for one model."""
    rows: list[tuple[str, str, str]] = []
    if model.consistency is not None:
        rows.append(
            (
                "consistency (seed)",
                _estimate(model.consistency),
                consistency_band(model.consistency.statistic).label,
            )
        )
    if model.agreement is not None:
        rows.append(
            (
                "semantic_agreement",
                _estimate(model.agreement),
                agreement_band(model.agreement.statistic).label,
            )
        )
    if model.performance is not None:
        perf = model.performance
        rows.append(
            (
                "performance heuristic (length, structure, prompt similarity)",
                f"{perf.score:.3f} {_ci(perf.ci_95)} (n={perf.n})",
                perf.band.label,
            )
        )
    if model.latency is not None:
        lat = model.latency
        rows.append(("latency mean (s)", f"{lat.mean:.3f} {_ci(lat.mean_ci_95)} (n={lat.n})", ""))
        rows.append(
            (
                "latency p50 / p95 / p99 (s)",
                f"{lat.p50:.3f} / {lat.p95:.3f} {_ci(lat.percentile_intervals['p95'])} "
                f"/ {lat.p99:.3f}",
                lat.p95_band.label,
            )
        )
        rows.append(
            (
                "latency std / min / max (s)",
                f"{lat.std:.3f} / {lat.min:.3f} / {lat.max:.3f}",
                "",
            )
        )
        rows.append(
            (
                "coefficient of variation",
                f"{lat.coefficient_of_variation:.3f}",
                lat.variation_band.label,
            )
        )
        if lat.tokens_per_second is not None:
            rows.append(("tokens per second", f"{lat.tokens_per_second:.1f}", ""))
    if model.ttft is not None:
        rows.append(
            (
                "time to first token p50 / p95 (s)",
                f"{model.ttft.p50:.3f} / {model.ttft.p95:.3f} (n={model.ttft.n})",
                "",
            )
        )
    if model.output_quality is not None:
        quality = model.output_quality
        rows.append(
            (
                "length (words / ~tokens)",
                f"{quality.mean_words:.1f} / {quality.mean_tokens:.1f}",
                "",
            )
        )
        if quality.semantic_diversity is not None and quality.diversity_band is not None:
            rows.append(
                (
                    "semantic diversity",
                    f"{quality.semantic_diversity:.3f}",
                    quality.diversity_band.label,
                )
            )
        rows.append(
            ("repetition score", f"{quality.repetition_score:.3f}", quality.repetition_band.label)
        )
    robust = model.robustness
    rows.append(
        (
            "error rate",
            f"{robust.error_rate:.1f}% {_ci(robust.error_rate_interval, 1, '%')} "
            f"({robust.failed_trials}/{robust.total_trials})",
            robust.band.label,
        )
    )
    rows.append(
        (
            "timeout rate",
            f"{robust.timeout_rate:.1f}% {_ci(robust.timeout_rate_interval, 1, '%')} "
            f"({robust.timeout_trials}/{robust.total_trials})",
            robust.timeout_band.label,
        )
    )
    failures = {name: count for name, count in robust.exceptions.items() if count}
    if failures:
        rows.append(
            ("exceptions", ", ".join(f"{name} {count}" for name, count in failures.items()), "")
        )
    if robust.retries:
        rows.append(("retries used", str(robust.retries), ""))
    if model.cost is not None:
        cost = model.cost
        per_point = (
            f"${cost.cost_per_quality_point:.6f}"
            if cost.cost_per_quality_point is not None
            else "n/a"
        )
        rows.append(
            (
                "cost per trial / per quality point",
                f"${cost.mean_cost_per_trial:.6f} / {per_point}",
                "",
            )
        )
    return rows


def verdicts(report: ReliabilityReport) -> list[str]:
    """One line per model: what can and cannot be relied on, with n (`verdict.model_verdict`)."""
    return [model_verdict(entry) for entry in report.to_dict().get("models", [])]


def render_terminal(report: ReliabilityReport, console: Console) -> None:
    for line in verdicts(report):
        console.print(terminal(line), highlight=False)
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
            value = (
                _estimate(comparison.effect, 2)
                if comparison.effect is not None
                else f"n/a ({comparison.note})"
            )
            table.add_row(
                f"{terminal(comparison.model_a)} vs {terminal(comparison.model_b)}",
                terminal(comparison.metric),
                terminal(value),
            )
        console.print(table)
    notes = [*report.warnings, *(w for m in report.models for w in m.warnings)]
    for note in notes:
        console.print(f"[yellow]warning:[/yellow] {terminal(note)}")
    for problem in report.record_errors[:20]:
        console.print(f"[red]skipped:[/red] {terminal(problem)}")


def render_markdown(report: ReliabilityReport) -> str:
    lines = ["# Reliability report", ""]
    lines += [f"- **{markdown(line)}**" for line in verdicts(report)]
    lines.append("")
    config = report.config
    lines.append(
        f"Embedding model {markdown(config.embedding_model_name)}, seed {config.random_seed}, "
        f"{config.bootstrap_resamples} bootstrap resamples. Intervals are 95%: the seed's "
        "CI_95 = mean ± 1.96·std/√n for means, Wilson for rates, bootstrap for percentiles "
        "and agreement."
    )
    lines.append("")
    for model in report.models:
        lines += [
            f"## {markdown(model.model)}",
            "",
            f"{model.trials} trials, {model.successful} successful.",
            "",
            "| metric | value [95% CI] | interpretation |",
            "|---|---|---|",
        ]
        lines += [
            f"| {markdown(metric)} | {markdown(value)} | {markdown(label)} |"
            for metric, value, label in model_rows(model)
        ]
        if len(model.prompts) > 1:
            lines += [
                "",
                "| prompt | valid responses | consistency | agreement |",
                "|---|---|---|---|",
            ]
            for prompt in model.prompts:
                consistency = f"{prompt.consistency.score:.3f}" if prompt.consistency else "n/a"
                agreement = (
                    f"{prompt.agreement.similarity:.3f} {_ci(prompt.agreement.interval)}"
                    if prompt.agreement
                    else "n/a"
                )
                lines.append(
                    f"| {markdown(prompt.prompt_id)} | {prompt.valid_responses} | {consistency} "
                    f"| {agreement} |"
                )
        if model.warnings:
            lines.append("")
            lines += [f"- warning: {markdown(w)}" for w in model.warnings]
        lines.append("")
    if report.comparisons:
        lines += [
            "## Model comparison",
            "",
            "Cohen's d (pooled SD), first model minus second.",
            "",
            "| models | metric | d [95% CI] |",
            "|---|---|---|",
        ]
        for comparison in report.comparisons:
            value = (
                _estimate(comparison.effect, 2)
                if comparison.effect is not None
                else f"n/a ({comparison.note})"
            )
            lines.append(
                f"| {markdown(comparison.model_a)} vs {markdown(comparison.model_b)} "
                f"| {markdown(comparison.metric)} | {markdown(value)} |"
            )
        lines.append("")
    if report.warnings or report.record_errors:
        lines += ["## Notes", ""]
        lines += [f"- warning: {markdown(w)}" for w in report.warnings]
        lines += [f"- skipped record: {markdown(e)}" for e in report.record_errors]
        lines.append("")
    return "\n".join(lines)
