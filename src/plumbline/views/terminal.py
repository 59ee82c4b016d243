"""The console every command's terminal view is drawn on: tables never lose a column.

rich fits a table into the terminal by shrinking its columns; below the width the table needs
(every column as wide as its longest word), it folds words in two and, narrower still, shrinks
columns to nothing: at 80 columns (a CI log, `| head`) a leaderboard lost its overall and
errors columns, silently. `TerminalConsole` gives every column at least its longest word and
wraps cells at spaces (`layout`); a table that cannot fit so is drawn as a list, one block per
row, each cell under its column's name, and the view says so. Every table of every command
goes through here (`cli.output.console`), nested ones too, so no view measures its own.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Column, Table
from rich.text import Text

#: Width to measure a table's natural size at (wider than any terminal).
_UNBOUNDED = 1_000_000


def _column_range(console: Console, options: ConsoleOptions, table: Table, column: Column) -> Range:
    """(narrowest, widest) a column can be drawn, padding included: its longest word (its
    whole text when it does not wrap), and its longest line. Measured as a table of that one
    column without rules, through rich's own measurement."""
    single = Table(
        box=None,
        show_header=table.show_header,
        show_footer=table.show_footer,
        show_edge=False,
        padding=table.padding,
        pad_edge=True,
        collapse_padding=False,
    )
    single.add_column(
        column.header,
        column.footer,
        justify=column.justify,
        overflow=column.overflow,
        no_wrap=column.no_wrap,
        min_width=column.min_width,
        max_width=column.max_width,
        width=column.width,
    )
    for cell in column.cells:
        single.add_row(cell)
    measured = Measurement.get(console, options.update_width(_UNBOUNDED), single)
    return Range(measured.minimum, measured.maximum)


@dataclass(frozen=True)
class Range:
    minimum: int
    maximum: int


@dataclass(frozen=True)
class Layout:
    """How a table is drawn in `available` columns: as it is, with column widths that keep
    every word whole (`widths`), or as a list (`needed` is what a table would take)."""

    kind: Literal["table", "narrowed", "list"]
    needed: int
    available: int
    widths: tuple[int, ...] = ()


def layout(console: Console, options: ConsoleOptions, table: Table) -> Layout:
    """Fit `table` into `options.max_width` without cutting a word or dropping a column.

    rich shrinks the widest columns first, below their longest word (`Architectu|re`), and
    then every column towards nothing; here a column is never narrower than its longest word:
    the widest columns give up width first, down to that bound, and a table that still does
    not fit is drawn as a list.
    """
    available = options.max_width
    natural = Measurement.get(console, options.update_width(_UNBOUNDED), table)
    if table.width is not None or table.expand or natural.maximum <= available:
        return Layout("table", natural.maximum, available)
    ranges = [_column_range(console, options, table, column) for column in table.columns]
    rules = natural.maximum - sum(r.maximum for r in ranges)  # borders, padding differences
    needed = sum(r.minimum for r in ranges) + rules
    if needed > available:
        return Layout("list", needed, available)
    widths = [r.maximum for r in ranges]
    excess = sum(widths) + rules - available
    while excess > 0:  # take one column off the widest column still above its bound
        shrinkable = [
            i
            for i, r in enumerate(ranges)
            if widths[i] > r.minimum and not table.columns[i].no_wrap
        ]
        if not shrinkable:
            return Layout("list", needed, available)
        widest = max(shrinkable, key=lambda i: widths[i])
        step = min(excess, widths[widest] - ranges[widest].minimum, 1 + excess // 8)
        widths[widest] -= step
        excess -= step
    return Layout("narrowed", needed, available, tuple(widths))


def narrowed(table: Table, widths: tuple[int, ...]) -> Table:
    """A copy of `table` whose columns are `widths` wide (padding included)."""
    left, right = table.padding[3], table.padding[1]
    narrow = copy.copy(table)
    narrow.columns = [
        dataclasses.replace(column, width=max(1, width - left - right))
        for column, width in zip(table.columns, widths, strict=True)
    ]
    return narrow


def _as_text(console: Console, cell: RenderableType, options: ConsoleOptions) -> Text:
    """A cell as one line of text: lines of a multi-line cell joined by spaces."""
    if isinstance(cell, str):
        text = console.render_str(cell)
    elif isinstance(cell, Text):
        text = cell.copy()
    else:  # another renderable: drawn at the width available, its lines joined
        text = Text(" ").join(
            _line_text(line) for line in console.render_lines(cell, options, pad=False)
        )
    parts = [part for part in text.split("\n") if part.plain.strip()]
    return Text(" ").join(parts) if parts else Text("")


def _line_text(line: list[Segment]) -> Text:
    text = Text()
    for segment in line:
        text.append(segment.text, segment.style)
    return text


def as_list(console: Console, options: ConsoleOptions, table: Table, needed: int) -> Group:
    """`table` as a list: its title, a note saying why, then per row `column: value` lines
    (a value wraps at spaces under the terminal's width; nothing is cut)."""
    width = options.max_width
    blocks: list[RenderableType] = []
    if table.title:
        title = _as_text(console, table.title, options)
        title.stylize("italic")
        blocks.append(title)
    blocks.append(
        Text(
            f"(shown as a list: this table needs {needed} columns, the terminal has {width}; "
            "widen it, or set COLUMNS, for a table)",
            style="dim",
        )
    )
    headers = [_as_text(console, column.header, options) for column in table.columns]
    cells = [list(column.cells) for column in table.columns]
    for row in range(table.row_count):
        block = Text()
        for index, (header, column) in enumerate(zip(headers, table.columns, strict=True)):
            value = cells[index][row] if row < len(cells[index]) else ""
            line = Text.assemble((header.plain or f"column {index + 1}", "bold"), ": ")
            shown = _as_text(console, value, options)
            if column.style:
                shown.stylize(column.style)
            line.append_text(shown)
            if index:
                block.append("\n")
            block.append_text(line)
        block.overflow = "fold"
        blocks.append(Text("─" * min(width, 3), style="dim") if row else Text(""))
        blocks.append(block)
    if table.caption:
        blocks.append(_as_text(console, table.caption, options))
    return Group(*blocks)


class TerminalConsole(Console):
    """A rich Console on which a table narrower than it needs is drawn as a list (`as_list`)."""

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        if isinstance(renderable, Table) and renderable.columns:
            given = options or self.options
            plan = layout(self, given, renderable)
            if plan.kind == "list":
                renderable = as_list(self, given, renderable, plan.needed)
            elif plan.kind == "narrowed":
                renderable = narrowed(renderable, plan.widths)
        return super().render(renderable, options)


__all__ = ["Layout", "TerminalConsole", "as_list", "layout", "narrowed"]
