"""Renderings of a leaderboard: a terminal table, Markdown, and CSV.

A missing category is written "missing", never "0": it counts 0 in the overall, and the
reader must see that it was not measured.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from plumbline.leaderboard.board import Leaderboard, format_timestamp
from plumbline.leaderboard.check import CheckResult
from plumbline.leaderboard.scores import CategoryScore, Interval, ModelScores

MISSING = "missing"


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _interval_text(interval: Interval | None, compact: bool = False) -> str:
    if interval is None or interval.low is None or interval.high is None:
        return "—" if compact else "[—]"
    if compact:
        return f"{interval.low:.2f}–{interval.high:.2f}"
    return f"[{interval.low:.2f}, {interval.high:.2f}]"


def category_cell(score: CategoryScore) -> str:
    if score.missing:
        return MISSING if not score.errors else f"{MISSING} ({score.errors} errors excluded)"
    return f"{score.value:.3f} {_interval_text(score.interval)}"


def overall_cell(model: ModelScores) -> str:
    return f"{model.overall:.3f} {_interval_text(model.overall_interval)}"


def render_terminal(board: Leaderboard, console: Console) -> None:
    """The leaderboard table, the adjacent comparisons, and the input problems."""
    keys = board.suite.keys
    table = Table(
        title=f"{board.suite.title} leaderboard ({len(board.models)} models, "
        f"{board.log_count} logs, errors={board.errors_policy})",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("#", justify="right")
    table.add_column("tie", justify="right")
    longest = max((len(model.model) for model in board.models), default=5)
    table.add_column("model", no_wrap=True, min_width=min(longest, 40))
    for category in board.suite.categories:
        table.add_column(
            f"{category.name}\n×{category.weight:g}", justify="right", min_width=5, overflow="fold"
        )
    table.add_column("overall\n[95% CI]", justify="right", style="bold", overflow="fold")
    table.add_column("errors", justify="right")
    for model in board.models:
        cells = [str(model.rank), str(model.tie_group), model.model]
        for key in keys:
            score = model.categories[key]
            if score.missing:
                cells.append(f"[yellow]{category_cell(score)}[/yellow]")
            else:
                detail = f"n={score.n}" + (f"×{score.epochs}" if score.epochs > 1 else "")
                interval = _interval_text(score.interval, compact=True)
                cells.append(f"{score.value:.3f}\n{interval}\n[dim]{detail}[/dim]")
        cells += [
            f"{model.overall:.3f}\n{_interval_text(model.overall_interval, compact=True)}",
            str(model.errors),
        ]
        table.add_row(*cells)
    console.print(table)
    console.print(
        "tie: models sharing a number are not significantly different (paired MOVER interval "
        "over shared questions, Holm-corrected, α = 0.05). A missing category counts 0 in overall."
    )
    if board.comparisons:
        pairs = Table(
            title="Adjacent pairs",
            title_justify="left",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            collapse_padding=True,
        )
        pairs.add_column("higher", no_wrap=True)
        pairs.add_column("lower", no_wrap=True)
        for header in ("Δ overall", "paired Δ\n[95% CI]", "p\n(Holm)", "tied", "seed:\n≤5 pts"):
            pairs.add_column(header, justify="right", overflow="fold")
        for c in board.comparisons:
            ci = "—" if c.low is None or c.high is None else f"{c.low:+.2f}–{c.high:+.2f}"
            pairs.add_row(
                c.higher,
                c.lower,
                f"{c.overall_difference:+.3f}",
                f"{c.difference:+.3f}\n{ci}",
                _number(c.pvalue_holm, 4),
                ("yes" if c.tied else "no") + (" (unpaired)" if c.unpaired else ""),
                "yes" if c.seed_equivalent else "no",
            )
        console.print(pairs)
    if board.problems:
        console.print(
            f"[bold yellow]{len(board.problems)} problem(s) with the input:[/bold yellow]"
        )
        for problem in board.problems:
            console.print(f"  [yellow]{problem.kind}[/yellow] {problem}", markup=True)


def _markdown_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(board: Leaderboard) -> str:
    """A Markdown page: the table, how to read it, the pairs, and the problems."""
    keys = board.suite.keys
    lines = [
        f"# {board.suite.title} leaderboard",
        "",
        f"Generated {format_timestamp(board.generated_at)} · run `{board.run_id}` · "
        f"{len(board.models)} models · {board.log_count} logs · errors counted as "
        f"{'0' if board.errors_policy == 'zero' else 'excluded'}",
        "",
        f"`{board.suite.formula()}`; a missing category counts 0 and is shown as *missing*.",
        "",
    ]
    header = ["#", "tie group", "model"]
    header += [f"{c.name} ({c.weight:g})" for c in board.suite.categories]
    header += ["overall [95% CI]", "errors"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---:", "---:", "---"] + ["---:"] * (len(keys) + 2)) + "|")
    for model in board.models:
        cells = [str(model.rank), str(model.tie_group), _markdown_escape(model.model)]
        for key in keys:
            score = model.categories[key]
            cells.append(f"*{MISSING}*" if score.missing else category_cell(score))
        cells += [f"**{overall_cell(model)}**", str(model.errors)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Categories", ""]
    lines.append("| category | weight | scoring | questions scored | confidence | margin |")
    lines.append("|---|---:|---|---:|---|---:|")
    document = board.to_dict()
    for key, meta in document["_metadata"]["categories"].items():
        lines.append(
            f"| {_markdown_escape(meta['name'])} (`{key}`) | {meta['weight']:g} | "
            f"{meta['scoring']} | {meta['sample_count']} | {meta['confidence']} | "
            f"{meta.get('margin', '—')} |"
        )
    if board.comparisons:
        lines += ["", "## Adjacent pairs", ""]
        lines.append(
            "| higher | lower | Δ overall | paired Δ [95% CI] | p (Holm) | tied | "
            "within 5 pts (seed) |"
        )
        lines.append("|---|---|---:|---:|---:|---|---|")
        for c in board.comparisons:
            ci = "[—]" if c.low is None or c.high is None else f"[{c.low:+.3f}, {c.high:+.3f}]"
            lines.append(
                f"| {_markdown_escape(c.higher)} | {_markdown_escape(c.lower)} | "
                f"{c.overall_difference:+.3f} | {c.difference:+.3f} {ci} | "
                f"{_number(c.pvalue_holm, 4)} | {'yes' if c.tied else 'no'}"
                f"{' (unpaired)' if c.unpaired else ''} | "
                f"{'yes' if c.seed_equivalent else 'no'} |"
            )
    if board.problems:
        lines += ["", "## Problems with the input", ""]
        lines += [f"- **{p.kind}**: {_markdown_escape(str(p))}" for p in board.problems]
    return "\n".join(lines) + "\n"


def csv_rows(board: Leaderboard) -> list[dict[str, Any]]:
    """One row per model; a missing category has an empty value and `<key>_missing` true."""
    rows: list[dict[str, Any]] = []
    for model in board.models:
        row: dict[str, Any] = {
            "rank": model.rank,
            "tie_group": model.tie_group,
            "seed_group": model.seed_group,
            "model": model.model,
            "overall": model.overall,
            "overall_low": model.overall_interval.low,
            "overall_high": model.overall_interval.high,
            "overall_se": model.overall_interval.standard_error,
        }
        for key in board.suite.keys:
            score = model.categories[key]
            interval = score.interval
            row[key] = score.value
            row[f"{key}_low"] = None if interval is None else interval.low
            row[f"{key}_high"] = None if interval is None else interval.high
            row[f"{key}_se"] = None if interval is None else interval.standard_error
            row[f"{key}_n"] = score.n
            row[f"{key}_epochs"] = score.epochs
            row[f"{key}_errors"] = score.errors
            row[f"{key}_missing"] = score.missing
        rows.append(row)
    return rows


def render_csv(board: Leaderboard) -> str:
    rows = csv_rows(board)
    buffer = io.StringIO()
    if not rows:
        return ""
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return buffer.getvalue()


def render_check(result: CheckResult, console: Console) -> None:
    """The reproducibility table: deviations, tolerance verdict, interval verdict."""
    table = Table(
        title=f"Reproducibility: overall within ±{result.tolerance * 100:g} points of published",
        title_justify="left",
    )
    for header in (
        "model",
        "published",
        "new",
        "deviation",
        "within tolerance",
        f"within combined {result.level * 100:g}% CI",
    ):
        table.add_column(header)
    for d in result.deviations:
        if d.within_interval is None:
            inside = "unknown (no SE)"
        else:
            inside = ("yes" if d.within_interval else "no") + f" (±{d.combined_half_width:.3f})"
        table.add_row(
            d.model,
            f"{d.published:.3f}",
            f"{d.new:.3f}",
            f"{d.deviation:+.3f}",
            "[green]yes[/green]" if d.within_tolerance else "[red]no[/red]",
            inside,
        )
    console.print(table)
    if result.only_new:
        console.print("Only in the new file: " + ", ".join(result.only_new))
    if result.only_published:
        console.print("Only in the published file: " + ", ".join(result.only_published))
    if not result.deviations:
        console.print("[red]No model appears in both files: nothing was reproduced.[/red]")
    elif result.reproducible:
        console.print(
            f"[green]Reproducible: all {len(result.deviations)} shared models within "
            "tolerance.[/green]"
        )
    else:
        console.print(
            f"[red]Not reproducible: {len(result.failures)} of "
            f"{len(result.deviations)} shared models outside tolerance.[/red]"
        )
