"""What the pages' tables share: table cells."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from plumbline.core import present


@dataclass(frozen=True)
class Cell:
    """A table cell: the text shown, the key it sorts by ("" sorts last), its CSS class."""

    text: str
    sort: str = ""
    css: str = ""
    title: str = ""


def number_cell(
    value: Any, shown: Callable[[Any], str] = present.number, *, signed: bool = False
) -> Cell:
    """A right-aligned numeric cell that sorts by the raw value; a missing value is marked.

    `shown` is the `core.present` formatter of the value."""
    if not present.is_number(value):
        return Cell(present.MISSING, "", "num missing", "not available")
    text = shown(value)
    if signed and float(value) > 0 and not text.startswith("+"):
        text = "+" + text
    return Cell(text, repr(float(value)), "num")


def text_cell(text: str) -> Cell:
    return Cell(text, text)
