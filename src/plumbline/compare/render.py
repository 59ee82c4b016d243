"""Terminal and Markdown renderings of a `CompareReport`: the decision first, then the gates,
the paired deltas with their intervals, the tests, and the warnings."""

from __future__ import annotations

import math
import re
from typing import Any

from rich.console import Console
from rich.table import Table

from plumbline.compare.analysis import CompareReport, Comparison
from plumbline.compare.decision import Gate
from plumbline.compare.metrics import ArmSummary
from plumbline.report.escape import markdown, terminal

_ARM_FIELDS = (
    ("runs", "runs"),
    ("successes", "successes"),
    ("success_rate", "success_rate"),
    ("total_cost_usd", "total_cost_usd"),
    ("avg_cost_usd", "avg_cost_usd"),
    ("median_cost_usd", "median_cost_usd"),
    ("median_duration_seconds", "median_duration_seconds"),
    ("median_total_tokens", "median_total_tokens"),
    ("median_non_cache_tokens", "median_non_cache_tokens"),
    ("solved_per_dollar", "solved_per_dollar"),
    ("null cost runs", "null_cost_runs"),
    ("timed-out runs (failures)", "timed_out_runs"),
    ("infra failures (excluded)", "excluded_infra_failures"),
)

_TEST_LABELS = (
    ("mcnemar_success", "McNemar exact, paired success"),
    ("wilcoxon_duration_seconds", "Wilcoxon signed-rank, duration"),
    ("wilcoxon_non_cache_tokens", "Wilcoxon signed-rank, non-cache tokens"),
    ("hodges_lehmann_duration_seconds", "Hodges–Lehmann shift, duration (s)"),
    ("hodges_lehmann_non_cache_tokens", "Hodges–Lehmann shift, non-cache tokens"),
    ("geometric_mean_ratio_total_tokens", "Geometric-mean ratio T/C, total tokens"),
    ("geometric_mean_ratio_non_cache_tokens", "Geometric-mean ratio T/C, non-cache tokens"),
    ("geometric_mean_ratio_cost_usd", "Geometric-mean ratio T/C, cost"),
)


def fmt(value: Any) -> str:
    """A number for people: integers as integers, others to 4 significant digits."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "—"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) >= 100:
            return f"{value:.1f}"
        return f"{value:.4g}"
    return str(value)


def _interval(ci: Any) -> str:
    if ci is None:
        return "—"
    approximate = " approximate" if "approximate" in getattr(ci, "method", "") else ""
    return f"[{fmt(ci.low)}, {fmt(ci.high)}]{approximate}"


def _gate_line(gate: Gate, comparison: Comparison) -> list[str]:
    """A gate's row as plain text (escape it for the format it reaches)."""
    verdict = {
        "treatment": f"favours {comparison.treatment}",
        "control": f"favours {comparison.control}",
        "tie": "tie",
        "neither": "favours neither",
    }[gate.verdict]
    interval = [_interval(gate.interval)] if comparison.decision.rule == "ci" else []
    return [gate.name, fmt(gate.treatment_value), fmt(gate.control_value), *interval, verdict]


_TOO_FEW = re.compile(r"needs at least (\d+) (?:values?|observations?|pairs?)\S*,? got (\d+)")


def skipped_reason(message: str) -> str:
    """Why a test was not computed, in words for the reader (not the statistic's argument
    names): "needs at least 2 values, got 0" reads "too few paired runs with a value"."""
    match = _TOO_FEW.search(message)
    if match:
        need, got = match.groups()
        return f"not computed: {got} paired runs have a value here ({need} needed)"
    if "at least one pair" in message:
        return "not computed: no paired runs have a value here"
    if "zero" in message or "identical" in message or "all differences" in message:
        return "not computed: every paired difference is zero"
    return "not computed: these data do not allow it"


def _test_rows(tests: dict[str, dict[str, Any]]) -> list[tuple[str, str, str]]:
    rows = []
    for key, label in _TEST_LABELS:
        entry = tests.get(key)
        if entry is None:
            continue
        if "skipped" in entry:
            rows.append((label, "—", skipped_reason(str(entry["skipped"]))))
            continue
        if "pvalue" in entry:
            detail = f"p = {fmt(entry['pvalue'])}"
            if "pvalue_holm" in entry:
                detail += f", Holm p = {fmt(entry['pvalue_holm'])}"
            if "b" in entry and "c" in entry:
                detail += f"; discordant pairs b = {fmt(entry['b'])}, c = {fmt(entry['c'])}"
            rows.append((label, fmt(entry.get("statistic")), detail))
        else:
            interval = entry.get("interval") or {}
            rows.append(
                (
                    label,
                    fmt(entry.get("statistic")),
                    f"[{fmt(interval.get('low'))}, {fmt(interval.get('high'))}], n = "
                    f"{fmt(entry.get('n'))}",
                )
            )
    return rows


def render_terminal(report: CompareReport, console: Console) -> None:
    """Decision first, then gates, deltas with intervals, tests, arm summaries, warnings."""
    for comparison in report.comparisons:
        decision = comparison.decision
        colour = (
            "green"
            if decision.decision.endswith(comparison.treatment)
            else "yellow"
            if decision.decision.startswith("mixed")
            else "red"
        )
        tie = " (three-way tie)" if decision.tie else ""
        console.print(
            f"[bold {colour}]{terminal(decision.decision)}[/]{tie}   "
            f"{terminal(comparison.treatment)} vs {terminal(comparison.control)}, "
            f"rule: {decision.rule}, "
            f"{comparison.pairs:,} pairs"
        )
        if comparison.caveat:
            console.print(f"[bold yellow]{comparison.caveat}[/]", highlight=False)
        gates = Table(title="Gates", title_justify="left")
        for column in ("gate", comparison.treatment, comparison.control):
            gates.add_column(terminal(column), justify="left" if column == "gate" else "right")
        if decision.rule == "ci":
            gates.add_column("interval (T − C, T / C)", justify="right")
        gates.add_column("verdict")
        for gate in decision.gates:
            gates.add_row(*[terminal(cell) for cell in _gate_line(gate, comparison)])
        console.print(gates)

        level = report.settings.level
        deltas = Table(
            title=f"Paired deltas ({terminal(comparison.treatment)} − "
            f"{terminal(comparison.control)})",
            title_justify="left",
        )
        for column in ("delta", "mean", f"{level:.0%} CI of mean", "median", "pairs"):
            deltas.add_column(column, justify="left" if column == "delta" else "right")
        for name, delta in comparison.paired.items():
            deltas.add_row(
                name,
                fmt(delta.summary.mean),
                _interval(delta.interval),
                fmt(delta.summary.median),
                fmt(delta.summary.n),
            )
        for name, summary in comparison.diagnostics.items():
            if summary.n:
                deltas.add_row(
                    f"{name} (diagnostic)",
                    fmt(summary.mean),
                    "",
                    fmt(summary.median),
                    fmt(summary.n),
                )
        console.print(deltas)

        tests = Table(title="Tests and effect sizes", title_justify="left")
        for column in ("", "estimate", "detail"):
            tests.add_column(column)
        for row in _test_rows(comparison.tests):
            tests.add_row(*row)
        console.print(tests)
        if comparison.minimum_detectable_pass_delta is not None:
            console.print(
                "Minimum detectable pass-rate difference with these pairs "
                f"(power {report.settings.power:.0%}, α {report.settings.alpha:g}): "
                f"{comparison.minimum_detectable_pass_delta:.3f}"
            )

    arms = Table(title="Arm summaries", title_justify="left")
    arms.add_column("")
    for arm in report.arm_summaries:
        arms.add_column(terminal(arm), justify="right")
    for label, attribute in _ARM_FIELDS:
        arms.add_row(label, *[fmt(getattr(s, attribute)) for s in report.arm_summaries.values()])
    console.print(arms)

    if report.warnings:
        console.print("[bold yellow]Warnings[/]")
        for warning in report.warnings:
            console.print(f"  • {terminal(warning)}")


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table; every header and cell is escaped as literal text."""
    lines = ["| " + " | ".join(markdown(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(markdown(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _arm_rows(summaries: dict[str, ArmSummary]) -> list[list[str]]:
    return [
        [label, *[fmt(getattr(s, attribute)) for s in summaries.values()]]
        for label, attribute in _ARM_FIELDS
    ]


def render_markdown(report: CompareReport) -> str:
    """A Markdown report with the same content and order as the terminal view."""
    parts = ["# A/B comparison", ""]
    for comparison in report.comparisons:
        decision = comparison.decision
        tie = " (three-way tie: the seed's order prefers the treatment)" if decision.tie else ""
        parts += [
            f"## {markdown(comparison.treatment)} vs {markdown(comparison.control)}",
            "",
            f"**Decision: {markdown(decision.decision)}**{tie} — rule `{decision.rule}`, "
            f"{comparison.pairs:,} pairs.",
            "",
            *([f"**{comparison.caveat}**", ""] if comparison.caveat else []),
            "### Gates",
            "",
            _md_table(
                [
                    "gate",
                    comparison.treatment,
                    comparison.control,
                    *(["interval"] if decision.rule == "ci" else []),
                    "verdict",
                ],
                [_gate_line(g, comparison) for g in decision.gates],
            ),
            "",
            "### Paired deltas",
            "",
            _md_table(
                ["delta", "mean", f"{report.settings.level:.0%} CI of mean", "median", "pairs"],
                [
                    [
                        name,
                        fmt(d.summary.mean),
                        _interval(d.interval),
                        fmt(d.summary.median),
                        fmt(d.summary.n),
                    ]
                    for name, d in comparison.paired.items()
                ]
                + [
                    [f"{name} (diagnostic)", fmt(s.mean), "", fmt(s.median), fmt(s.n)]
                    for name, s in comparison.diagnostics.items()
                    if s.n
                ],
            ),
            "",
            "### Tests and effect sizes",
            "",
            _md_table(["", "estimate", "detail"], [list(r) for r in _test_rows(comparison.tests)]),
            "",
        ]
        if comparison.minimum_detectable_pass_delta is not None:
            parts += [
                "Minimum detectable pass-rate difference: "
                f"{comparison.minimum_detectable_pass_delta:.3f} (power "
                f"{report.settings.power:.0%}, α {report.settings.alpha:g}).",
                "",
            ]
        parts += [
            "### Per task",
            "",
            _md_table(
                [
                    "task",
                    "pairs",
                    "success T",
                    "success C",
                    "mean pass_delta",
                    "median duration T",
                    "median duration C",
                ],
                [
                    [
                        str(row["task_id"]),
                        fmt(row["pairs"]),
                        fmt(row["success_rate_treatment"]),
                        fmt(row["success_rate_control"]),
                        fmt(row["mean_pass_delta"]),
                        fmt(row["median_duration_seconds_treatment"]),
                        fmt(row["median_duration_seconds_control"]),
                    ]
                    for row in comparison.per_task
                ],
            ),
            "",
        ]
    parts += [
        "## Arm summaries",
        "",
        _md_table(["", *report.arm_summaries], _arm_rows(report.arm_summaries)),
        "",
    ]
    if report.warnings:
        parts += ["## Warnings", "", *[f"- {markdown(w)}" for w in report.warnings], ""]
    return "\n".join(parts)
