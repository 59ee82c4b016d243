"""The A/B cost table (cost per task and per success of each arm, and T − C), for the terminal,
Markdown and the page: every figure is a field of `CostComparison`, in dollars with its
interval, and the line below it says where the tokens came from and what priced them."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from plumbline.compare.result import AS_RECORDED, ArmComparison, CostComparison, CostFigure
from plumbline.core import present
from plumbline.core.escape import markdown, terminal

ROWS = (("cost per task", "per_task_usd"), ("cost per success", "per_success_usd"))


def figure_text(figure: CostFigure) -> str:
    """`$0.2400 [$0.1522, $0.3357]` (approximate flagged); the note when there is no figure."""
    if figure.estimate is None:
        return figure.note or present.MISSING
    text = present.usd(figure.estimate)
    interval = figure.interval
    if interval is None or interval.low is None or interval.high is None:
        return text + (f" ({figure.note})" if figure.note else "")
    bounds = f" [{present.usd(interval.low)}, {present.usd(interval.high)}]"
    return text + bounds + (" approximate" if interval.approximate else "")


def cost_headers(comparison: ArmComparison) -> list[str]:
    return ["", comparison.treatment, comparison.control, "T − C (paired)"]


def cost_rows(cost: CostComparison) -> list[list[str]]:
    """One row per figure: treatment, control, difference."""
    return [
        [
            label,
            figure_text(getattr(cost.treatment, name)),
            figure_text(getattr(cost.control, name)),
            figure_text(getattr(cost.difference, name)),
        ]
        for label, name in ROWS
    ]


def provenance_line(comparison: ArmComparison) -> str:
    """Where each arm's tokens came from and which price table priced them."""
    cost = comparison.cost
    assert cost is not None
    table = cost.treatment.price_table
    priced = (
        "costs as the records give them"
        if table == AS_RECORDED
        else f"priced again with price table {table}"
    )
    return (
        f"Tokens: {comparison.treatment} {cost.treatment.source}, {comparison.control} "
        f"{cost.control.source}; {priced}; intervals resample tasks, then repeats."
    )


def render_cost_terminal(comparison: ArmComparison, console: Console, level: str) -> None:
    """The cost table and its provenance line (nothing without a cost comparison)."""
    if comparison.cost is None:
        return
    table = Table(title=f"Cost ({level} intervals)", title_justify="left")
    for index, column in enumerate(cost_headers(comparison)):
        table.add_column(terminal(column), justify="left" if index == 0 else "right")
    for row in cost_rows(comparison.cost):
        table.add_row(*[terminal(cell) for cell in row])
    console.print(table)
    console.print(terminal(provenance_line(comparison)), highlight=False)


def cost_markdown(comparison: ArmComparison, level: str) -> list[str]:
    """The cost section in Markdown (empty without a cost comparison)."""
    if comparison.cost is None:
        return []
    table = present.markdown_table(
        cost_headers(comparison), cost_rows(comparison.cost), align="lrrr"
    )
    return [
        f"### Cost ({level} intervals)",
        "",
        table,
        "",
        markdown(provenance_line(comparison)),
        "",
    ]
