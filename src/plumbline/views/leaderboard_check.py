"""The terminal view of `plumbline leaderboard check`: every published figure recomputed from
the logs, and each deviation and category outside tolerance."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from plumbline.core import present
from plumbline.core.escape import terminal
from plumbline.leaderboard.result import CheckResult, DocumentReview


def _review_lines(review: DocumentReview, path_label: str, console: Console) -> None:
    for problem in review.problems:
        console.print(Text(f"{path_label}: {problem}", style="yellow"), soft_wrap=True)
    if not review.inconsistent_overall:
        return
    weights = ", ".join(
        f"{key} × {present.shortest(weight)}" for key, weight in (review.weights or {}).items()
    )
    console.print(
        Text(
            f"The {path_label} file's overall disagrees with its own weights ({weights}) for "
            f"{len(review.inconsistent_overall)} model(s):",
            style="bold yellow",
        ),
        soft_wrap=True,
    )
    for entry in review.inconsistent_overall:
        console.print(
            Text(
                f"  {entry.model}: states {present.fixed(entry.stated, 4)}, Σ weight × "
                f"category gives {present.fixed(entry.recomputed, 4)} (off by "
                f"{present.points(entry.difference, 2)})"
            ),
            soft_wrap=True,
        )


#: What both tables show of a deviation, after the names.
_DEVIATION_HEADERS = ("published", "new", "deviation", "within tolerance")


def _deviations_table(
    title: str, longest: int, names: tuple[str, ...], extra: tuple[str, ...] = ()
) -> Table:
    """A table titled on the left: the `names` columns, never wrapped (the model first,
    `longest` wide), the deviation's columns, then `extra`."""
    table = Table(title=title, title_justify="left")
    table.add_column(names[0], no_wrap=True, min_width=longest)
    for name in names[1:]:
        table.add_column(name, no_wrap=True)
    for header in (*_DEVIATION_HEADERS, *extra):
        table.add_column(header)
    return table


def _deviation_cells(
    published: float | None, new: float | None, deviation: float | None, within: bool | None
) -> list[str | Text]:
    """Published, new, their difference in points and the tolerance verdict (— when none)."""
    verdict = (
        Text("—")
        if within is None
        else Text("yes", style="green")
        if within
        else Text("no", style="red")
    )
    return [present.fixed(published), present.fixed(new), present.points(deviation), verdict]


def _deviation_table(result: CheckResult, longest: int) -> Table:
    """Each shared model's overall deviation with its tolerance and interval verdicts."""
    table = _deviations_table(
        f"Reproducibility: overall within ±{present.shortest(result.tolerance * 100)} "
        "points of published",
        longest,
        ("model",),
        (f"within combined {present.level(result.level)} CI",),
    )
    for d in result.deviations:
        if d.within_interval is None:
            inside = "unknown (no SE)"
        else:
            inside = ("yes" if d.within_interval else "no") + (
                f" (±{present.fixed(d.combined_half_width)})"
            )
        table.add_row(
            terminal(d.model),
            *_deviation_cells(d.published, d.new, d.deviation, d.within_tolerance),
            inside,
        )
    return table


def _category_table(result: CheckResult, longest: int) -> Table:
    """Each shared model's category deviations, reported beside the verdict."""
    by_category = _deviations_table(
        f"Categories (within ±{present.shortest(result.tolerance * 100)} points; "
        "reported, not part of the verdict)",
        longest,
        ("model", "category"),
    )
    for c in result.categories:
        by_category.add_row(
            Text(c.model),
            Text(c.category),
            *_deviation_cells(c.published, c.new, c.deviation, c.within_tolerance),
        )
    return by_category


def render_check(result: CheckResult, console: Console) -> None:
    """Both files' validation, the overall deviations with tolerance and interval verdicts,
    and the category deviations. Model names are never shortened: a table too wide for the
    terminal is drawn as a list (`views.terminal`)."""
    _review_lines(result.new_file, "new", console)
    _review_lines(result.published_file, "published", console)
    longest = max((len(d.model) for d in result.deviations), default=5)
    table = _deviation_table(result, longest)
    console.print(table)
    if result.categories:
        by_category = _category_table(result, longest)
        console.print(by_category)
    if result.only_new:
        console.print(
            "Only in the new file: " + ", ".join(map(terminal, result.only_new)), soft_wrap=True
        )
    if result.only_published:
        console.print(
            "Only in the published file: " + ", ".join(map(terminal, result.only_published)),
            soft_wrap=True,
        )
    if not result.new_file.valid:
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
