"""Terminal and Markdown renderings of a `CompareReport`: the decision first, then the gates,
the paired deltas with their intervals, the tests, and the warnings.

Both only render the typed report: every number is a field of it, formatted by
`plumbline.core.present`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from plumbline.compare.result import ArmComparison, ArmSummary, CompareReport, Gate, PairedTest
from plumbline.core import present
from plumbline.core.escape import markdown, terminal
from plumbline.views.compare_cost import cost_markdown, render_cost_terminal

#: label, arm-summary field, formatter
ARM_FIELDS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("runs", "runs", present.number),
    ("successes", "successes", present.number),
    ("success_rate", "success_rate", present.percent),
    ("total_cost_usd", "total_cost_usd", present.usd),
    ("avg_cost_usd", "avg_cost_usd", present.usd),
    ("median_cost_usd", "median_cost_usd", present.usd),
    ("median_duration_seconds", "median_duration_seconds", present.number),
    ("median_total_tokens", "median_total_tokens", present.number),
    ("median_non_cache_tokens", "median_non_cache_tokens", present.number),
    ("solved_per_dollar", "solved_per_dollar", present.number),
    ("null cost runs", "null_cost_runs", present.number),
    ("timed-out runs (failures)", "timed_out_runs", present.number),
    ("infra failures (excluded)", "excluded_infra_failures", present.number),
)

TEST_LABELS = (
    ("mcnemar_success", "McNemar exact, paired success"),
    ("wilcoxon_duration_seconds", "Wilcoxon signed-rank, duration"),
    ("wilcoxon_non_cache_tokens", "Wilcoxon signed-rank, non-cache tokens"),
    ("hodges_lehmann_duration_seconds", "Hodges–Lehmann shift, duration (s)"),
    ("hodges_lehmann_non_cache_tokens", "Hodges–Lehmann shift, non-cache tokens"),
    ("geometric_mean_ratio_total_tokens", "Geometric-mean ratio T/C, total tokens"),
    ("geometric_mean_ratio_non_cache_tokens", "Geometric-mean ratio T/C, non-cache tokens"),
    ("geometric_mean_ratio_cost_usd", "Geometric-mean ratio T/C, cost"),
)


def gate_format(name: str) -> Callable[[Any], str]:
    """How a gate's values read (gate names are arm-summary fields): rates as percentages."""
    return present.percent if name == "success_rate" else present.number


def delta_format(name: str) -> Callable[[Any], str]:
    """How a paired delta reads: the pass delta in percentage points, dollars, else a number."""
    if name == "pass_delta":
        return present.points
    if name.endswith("_usd"):
        return present.usd
    return present.signed


def delta_interval(name: str, interval: Any) -> str:
    """A delta's interval in the delta's own shape, flagged when its coverage is approximate."""
    if interval is None:
        return present.MISSING
    text = present.interval(interval, as_percent=name == "pass_delta")
    return text + (" approximate" if interval.approximate else "")


def gate_interval(gate: Gate) -> str:
    """Under `--rule ci`: the interval a gate reads (percent for the success gate)."""
    if gate.interval is None:
        return present.MISSING
    return present.interval(gate.interval, as_percent=gate.name == "success_rate") + (
        " approximate" if gate.interval.approximate else ""
    )


def verdict_text(gate: Gate, comparison: ArmComparison) -> str:
    return {
        "treatment": f"favours {comparison.treatment}",
        "control": f"favours {comparison.control}",
        "tie": "tie",
        "neither": "favours neither",
    }[gate.verdict]


def _gate_line(gate: Gate, comparison: ArmComparison) -> list[str]:
    """A gate's row as plain text (escape it for the format it reaches)."""
    shown = gate_format(gate.name)
    interval = [gate_interval(gate)] if comparison.rule == "ci" else []
    return [
        gate.name,
        shown(gate.treatment),
        shown(gate.control),
        *interval,
        verdict_text(gate, comparison),
    ]


def test_row(test: PairedTest) -> tuple[str, str]:
    """A test's estimate and detail as plain text."""
    if test.skipped is not None:
        return present.MISSING, test.skipped_reason or test.skipped
    if test.pvalue is not None:
        detail = f"p = {present.number(test.pvalue)}"
        if test.pvalue_holm is not None:
            detail += f", Holm p = {present.number(test.pvalue_holm)}"
        if test.b is not None and test.c is not None:
            detail += (
                f"; discordant pairs b = {present.number(test.b)}, c = {present.number(test.c)}"
            )
        return present.number(test.statistic), detail
    return (
        present.number(test.statistic),
        f"{present.interval(test.interval)}, n = {present.number(test.n)}",
    )


def test_rows(tests: dict[str, PairedTest]) -> list[tuple[str, str, str]]:
    """(label, estimate, detail) per test, in a fixed order."""
    rows = []
    for key, label in TEST_LABELS:
        if key in tests:
            rows.append((label, *test_row(tests[key])))
    return rows


def _delta_rows(comparison: ArmComparison) -> list[list[str]]:
    rows = [
        [
            name,
            delta_format(name)(delta.mean),
            delta_interval(name, delta.ci),
            delta_format(name)(delta.median),
            present.number(delta.n),
        ]
        for name, delta in comparison.paired.deltas()
    ]
    rows += [
        [
            f"{name} (diagnostic)",
            present.signed(summary.mean),
            "",
            present.signed(summary.median),
            present.number(summary.n),
        ]
        for name, summary in comparison.diagnostics.items()
        if summary.n
    ]
    return rows


def _held_back(pairs: int) -> str:
    if not pairs:
        return ""
    return f", {present.number(pairs)} of them held back until their round completes"


def sequential_lines(comparison: ArmComparison) -> list[str]:
    """The sequential verdict (`--sequential`) as plain text lines; empty without it."""
    sequential = comparison.sequential
    if sequential is None:
        return []
    level = present.level(sequential.interval.level)
    return [
        f"Sequential verdict: {sequential.summary}.",
        f"Pairs used {present.number(sequential.pairs_used)} of "
        f"{present.number(sequential.pairs_available)} available"
        f"{_held_back(sequential.pairs_held_back)} (cap "
        f"{present.number(sequential.max_pairs)}, fixed design "
        f"{present.number(sequential.fixed_pairs)}); pass-rate difference "
        f"{present.points(sequential.estimate)}, {level} confidence sequence "
        f"{present.interval(sequential.interval, as_percent=True)} ({sequential.method}"
        f"{'; ' + sequential.interval_guarantee if sequential.interval_guarantee else ''}).",
    ]


def _sequential_markdown(comparison: ArmComparison) -> list[str]:
    """The `### Sequential` section (`--sequential`); nothing without it."""
    lines = sequential_lines(comparison)
    if not lines:
        return []
    return ["### Sequential", "", *[part for line in lines for part in (markdown(line), "")]]


def _detectable(report: CompareReport, comparison: ArmComparison) -> str | None:
    if comparison.minimum_detectable_pass_delta is None:
        return None
    return (
        f"{present.percent(comparison.minimum_detectable_pass_delta)} (power "
        f"{present.level(report.settings.power)}, α {present.fixed(report.settings.alpha, 2)})"
    )


def render_terminal(report: CompareReport, console: Console) -> None:
    """Decision first, then gates, deltas with intervals, tests, arm summaries, warnings."""
    level = present.level(report.settings.level)
    for comparison in report.comparisons:
        colour = {"treatment": "green", "mixed": "yellow", "control": "red"}[
            comparison.decision_role
        ]
        tie = " (three-way tie)" if comparison.tie else ""
        console.print(
            f"[bold {colour}]{terminal(comparison.decision)}[/]{tie}   "
            f"{terminal(comparison.treatment)} vs {terminal(comparison.control)}, "
            f"rule: {comparison.rule}, "
            f"{present.number(comparison.pairs)} pairs",
            highlight=False,
        )
        if comparison.caveat:
            console.print(f"[bold yellow]{terminal(comparison.caveat)}[/]", highlight=False)
        gates = Table(title="Gates", title_justify="left")
        for column in ("gate", comparison.treatment, comparison.control):
            gates.add_column(terminal(column), justify="left" if column == "gate" else "right")
        if comparison.rule == "ci":
            gates.add_column("interval (T − C, T / C)", justify="right")
        gates.add_column("verdict")
        for gate in comparison.gates:
            gates.add_row(*[terminal(cell) for cell in _gate_line(gate, comparison)])
        console.print(gates)
        for line in sequential_lines(comparison):
            console.print(terminal(line), highlight=False)

        deltas = Table(
            title=f"Paired deltas ({terminal(comparison.treatment)} − "
            f"{terminal(comparison.control)})",
            title_justify="left",
        )
        for column in ("delta", "mean", f"{level} CI of mean", "median", "pairs"):
            deltas.add_column(column, justify="left" if column == "delta" else "right")
        for row in _delta_rows(comparison):
            deltas.add_row(*row)
        console.print(deltas)

        tests = Table(title="Tests and effect sizes", title_justify="left")
        for column in ("", "estimate", "detail"):
            tests.add_column(column)
        for test in test_rows(comparison.tests):
            tests.add_row(*test)
        console.print(tests)
        render_cost_terminal(comparison, console, level)
        detectable = _detectable(report, comparison)
        if detectable is not None:
            console.print(
                f"Minimum detectable pass-rate difference with these pairs: {detectable}",
                highlight=False,
            )

    arms = Table(title="Arm summaries", title_justify="left")
    arms.add_column("")
    for arm in report.arm_summaries:
        arms.add_column(terminal(arm), justify="right")
    for row in _arm_rows(report.arm_summaries):
        arms.add_row(*row)
    console.print(arms)

    if report.warnings:
        console.print("[bold yellow]Warnings[/]")
        for warning in report.warnings:
            console.print(f"  • {terminal(warning)}", highlight=False)


def _arm_rows(summaries: dict[str, ArmSummary]) -> list[list[str]]:
    return [
        [label, *[shown(getattr(s, attribute)) for s in summaries.values()]]
        for label, attribute, shown in ARM_FIELDS
    ]


def _comparison_head_markdown(comparison: ArmComparison, level: str) -> list[str]:
    """A comparison's heading, decision, gates, sequential verdict, deltas and tests."""
    table = present.markdown_table
    tie = " (three-way tie: the A/B schema's order prefers the treatment)" if comparison.tie else ""
    return [
        f"## {markdown(comparison.treatment)} vs {markdown(comparison.control)}",
        "",
        f"**Decision: {markdown(comparison.decision)}**{tie} — rule `{comparison.rule}`, "
        f"{present.number(comparison.pairs)} pairs.",
        "",
        *([f"**{markdown(comparison.caveat)}**", ""] if comparison.caveat else []),
        "### Gates",
        "",
        table(
            [
                "gate",
                comparison.treatment,
                comparison.control,
                *(["interval"] if comparison.rule == "ci" else []),
                "verdict",
            ],
            [_gate_line(g, comparison) for g in comparison.gates],
        ),
        "",
        *_sequential_markdown(comparison),
        "### Paired deltas",
        "",
        table(
            ["delta", "mean", f"{level} CI of mean", "median", "pairs"],
            _delta_rows(comparison),
            align="lrrrr",
        ),
        "",
        "### Tests and effect sizes",
        "",
        table(["", "estimate", "detail"], [list(r) for r in test_rows(comparison.tests)]),
        "",
    ]


def _per_task_markdown(comparison: ArmComparison) -> list[str]:
    """A comparison's per-task table, under its heading."""
    table = present.markdown_table
    return [
        "### Per task",
        "",
        table(
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
                    row.task_id,
                    present.number(row.pairs),
                    present.percent(row.success_rate_treatment),
                    present.percent(row.success_rate_control),
                    present.points(row.mean_pass_delta),
                    present.seconds(row.median_duration_seconds_treatment),
                    present.seconds(row.median_duration_seconds_control),
                ]
                for row in comparison.per_task
            ],
            align="lrrrrrr",
        ),
        "",
    ]


def render_markdown(report: CompareReport) -> str:
    """A Markdown report with the same content and order as the terminal view."""
    table = present.markdown_table
    level = present.level(report.settings.level)
    parts = ["# A/B comparison", ""]
    for comparison in report.comparisons:
        parts += _comparison_head_markdown(comparison, level)
        parts += cost_markdown(comparison, level)
        detectable = _detectable(report, comparison)
        if detectable is not None:
            parts += [f"Minimum detectable pass-rate difference: {detectable}.", ""]
        parts += _per_task_markdown(comparison)
    parts += [
        "## Arm summaries",
        "",
        table(
            ["", *report.arm_summaries],
            _arm_rows(report.arm_summaries),
            align="l" + "r" * len(report.arm_summaries),
        ),
        "",
    ]
    if report.warnings:
        parts += ["## Warnings", "", *[f"- {markdown(w)}" for w in report.warnings], ""]
    return "\n".join(parts)
