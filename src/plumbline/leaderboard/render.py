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
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from plumbline.leaderboard.board import Leaderboard, format_timestamp
from plumbline.leaderboard.check import CheckResult, DocumentReview
from plumbline.leaderboard.scores import CategoryScore, Interval, ModelScores
from plumbline.report.escape import markdown, terminal

MISSING = "missing"
NOT_RUN = "not run"


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
        title=f"{terminal(board.suite.title)} leaderboard ({len(board.models)} models, "
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
            f"{terminal(category.name)}\n×{category.weight:g}",
            justify="right",
            min_width=5,
            overflow="fold",
        )
    table.add_column("overall\n[95% CI]", justify="right", style="bold", overflow="fold")
    table.add_column("errors", justify="right")
    for model in board.models:
        cells = [str(model.rank), str(model.tie_group), terminal(model.model)]
        for key in keys:
            score = model.categories[key]
            if key in board.not_run:
                cells.append(f"[yellow]{NOT_RUN}[/yellow]")
            elif score.missing:
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
                terminal(c.higher),
                terminal(c.lower),
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
            console.print(f"  [yellow]{terminal(problem.kind)}[/yellow] {terminal(problem)}")


def render_markdown(board: Leaderboard) -> str:
    """A Markdown page: the table, how to read it, the pairs, and the problems."""
    keys = board.suite.keys
    lines = [
        f"# {markdown(board.suite.title)} leaderboard",
        "",
        f"Generated {format_timestamp(board.generated_at)} · run {markdown(board.run_id)} · "
        f"{len(board.models)} models · {board.log_count} logs · errors counted as "
        f"{'0' if board.errors_policy == 'zero' else 'excluded'}",
        "",
        f"`{board.suite.formula()}`; a missing category counts 0 and is shown as *missing*.",
        "",
    ]
    header = ["#", "tie group", "model"]
    header += [f"{markdown(c.name)} ({c.weight:g})" for c in board.suite.categories]
    header += ["overall [95% CI]", "errors"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "|".join(["---:", "---:", "---"] + ["---:"] * (len(keys) + 2)) + "|")
    for model in board.models:
        cells = [str(model.rank), str(model.tie_group), markdown(model.model)]
        for key in keys:
            score = model.categories[key]
            if key in board.not_run:
                cells.append(f"*{NOT_RUN}*")
            else:
                cells.append(f"*{MISSING}*" if score.missing else category_cell(score))
        cells += [f"**{overall_cell(model)}**", str(model.errors)]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "## Categories", ""]
    lines.append("| category | weight | scoring | questions scored | confidence | margin |")
    lines.append("|---|---:|---|---:|---|---:|")
    document = board.to_dict()
    for key, meta in document["_metadata"]["categories"].items():
        lines.append(
            f"| {markdown(meta['name'])} (`{key}`) | {meta['weight']:g} | "
            f"{markdown(meta['scoring'])} | {meta['sample_count']} | "
            f"{markdown(meta['confidence'])} | {markdown(meta.get('margin', '—'))} |"
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
                f"| {markdown(c.higher)} | {markdown(c.lower)} | "
                f"{c.overall_difference:+.3f} | {c.difference:+.3f} {ci} | "
                f"{_number(c.pvalue_holm, 4)} | {'yes' if c.tied else 'no'}"
                f"{' (unpaired)' if c.unpaired else ''} | "
                f"{'yes' if c.seed_equivalent else 'no'} |"
            )
    if board.problems:
        lines += ["", "## Problems with the input", ""]
        lines += [f"- **{markdown(p.kind)}**: {markdown(p)}" for p in board.problems]
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


def print_whole(table: Table, console: Console) -> None:
    """Print a table at its natural width even when the terminal is narrower: long model names
    are shown whole (the terminal wraps the line) rather than cut to `openrouter/a…`."""
    width = Measurement.get(console, console.options.update_width(10_000), table).maximum
    options = console.options.update_width(max(console.width, width))
    for line in console.render_lines(table, options, pad=False):
        text = Text()
        for segment in line:
            text.append(segment.text, segment.style)
        console.print(text, soft_wrap=True, crop=False)


def _review_lines(review: DocumentReview, path_label: str, console: Console) -> None:
    for problem in review.problems:
        console.print(Text(f"{path_label}: {problem}", style="yellow"), soft_wrap=True)
    if not review.inconsistent:
        return
    weights = ", ".join(f"{key} × {weight:g}" for key, weight in (review.weights or {}).items())
    console.print(
        Text(
            f"The {path_label} file's overall disagrees with its own weights ({weights}) for "
            f"{len(review.inconsistent)} model(s):",
            style="bold yellow",
        ),
        soft_wrap=True,
    )
    for entry in review.inconsistent:
        console.print(
            Text(
                f"  {entry.model}: states {entry.stated:.4f}, Σ weight × category gives "
                f"{entry.recomputed:.4f} (off by {entry.difference:+.4f})"
            ),
            soft_wrap=True,
        )


def render_check(result: CheckResult, console: Console) -> None:
    """Both files' validation, the overall deviations with tolerance and interval verdicts,
    and the category deviations. Model names are never shortened (long ones wrap)."""
    _review_lines(result.new_review, "new", console)
    _review_lines(result.published_review, "published", console)
    longest = max((len(d.model) for d in result.deviations), default=5)
    table = Table(
        title=f"Reproducibility: overall within ±{result.tolerance * 100:g} points of published",
        title_justify="left",
    )
    table.add_column("model", no_wrap=True, min_width=longest)
    for header in (
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
            terminal(d.model),
            f"{d.published:.3f}",
            f"{d.new:.3f}",
            f"{d.deviation:+.3f}",
            Text("yes", style="green") if d.within_tolerance else Text("no", style="red"),
            inside,
        )
    print_whole(table, console)
    if result.categories:
        by_category = Table(
            title=f"Categories (within ±{result.tolerance * 100:g} points; reported, not part "
            "of the verdict)",
            title_justify="left",
        )
        by_category.add_column("model", no_wrap=True, min_width=longest)
        by_category.add_column("category", no_wrap=True)
        for header in ("published", "new", "deviation", "within tolerance"):
            by_category.add_column(header)
        for c in result.categories:
            verdict = (
                Text("—")
                if c.within_tolerance is None
                else Text("yes", style="green")
                if c.within_tolerance
                else Text("no", style="red")
            )
            by_category.add_row(
                Text(c.model),
                Text(c.category),
                _number(c.published),
                _number(c.new),
                "—" if c.deviation is None else f"{c.deviation:+.3f}",
                verdict,
            )
        print_whole(by_category, console)
    if result.only_new:
        console.print(
            "Only in the new file: " + ", ".join(map(terminal, result.only_new)), soft_wrap=True
        )
    if result.only_published:
        console.print(
            "Only in the published file: " + ", ".join(map(terminal, result.only_published)),
            soft_wrap=True,
        )
    if not result.new_review.valid:
        console.print("[red]The new file is not a valid, self-consistent leaderboard.[/red]")
    if not result.deviations:
        console.print("[red]No model appears in both files: nothing was reproduced.[/red]")
    elif result.reproducible:
        console.print(
            f"[green]Reproducible: all {len(result.deviations)} shared models within "
            "tolerance.[/green]"
        )
    elif result.failures:
        console.print(
            f"[red]Not reproducible: {len(result.failures)} of "
            f"{len(result.deviations)} shared models outside tolerance.[/red]"
        )
    if result.category_failures:
        console.print(
            f"[yellow]{len(result.category_failures)} category value(s) outside tolerance.[/yellow]"
        )
