"""How numbers, intervals, missing values and tables look, in every view.

Terminal, Markdown and HTML views format through these functions and nothing else, so a value
reads the same everywhere. Every function takes a value straight from a result document and
returns text; a value that is missing (None, NaN, infinite) reads `MISSING`, never a plain 0.
Escaping untrusted text is `core.escape`'s job; these functions only format numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from plumbline.core.escape import markdown

MISSING = "—"


class IntervalLike(Protocol):
    @property
    def low(self) -> float | None: ...

    @property
    def high(self) -> float | None: ...


def is_number(value: Any) -> bool:
    """A finite int or float (booleans are not numbers here)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def number(value: Any, digits: int = 3) -> str:
    """A number with `digits` significant digits; integers as integers, thousands separated.

    `0.84123` → `0.841`, `1234.5` → `1,235`, `12` → `12`, `0.00012` → `0.00012`, None → `—`.
    """
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if not is_number(value):
        return MISSING
    figure = float(value)
    if figure.is_integer() and abs(figure) < 1e15:
        return f"{int(figure):,}"
    if abs(figure) >= 1e6 or abs(figure) < 1e-3:
        return f"{figure:.{digits}g}"
    magnitude = math.floor(math.log10(abs(figure))) + 1
    decimals = max(digits - magnitude, 0)
    text = f"{figure:,.{decimals}f}"
    return text[1:] if _is_negative_zero(text) else text


def shortest(value: Any, digits: int = 6) -> str:
    """A number without trailing zeros, up to `digits` significant digits, for exact inputs
    such as weights and tolerances: `0.34` → `0.34`, `0.5` → `0.5`, `1.0` → `1`."""
    if not is_number(value):
        return MISSING
    return f"{float(value):.{digits}g}"


def fixed(value: Any, decimals: int = 3) -> str:
    """A number with a fixed count of decimals (`0.8` → `0.800`), for scores in columns."""
    if not is_number(value):
        return MISSING
    text = f"{float(value):.{decimals}f}"
    return text[1:] if _is_negative_zero(text) else text


def percent(value: Any, decimals: int = 1) -> str:
    """A proportion (0–1) as a percentage: `0.8412` → `84.1%`."""
    if not is_number(value):
        return MISSING
    text = f"{float(value) * 100:.{decimals}f}%"
    return text[1:] if _is_negative_zero(text) else text


def percent_value(value: Any, decimals: int = 1) -> str:
    """A number already in percent (CERT's `error_rate`): `4.5` → `4.5%`."""
    if not is_number(value):
        return MISSING
    return f"{float(value):.{decimals}f}%"


def points(value: Any, decimals: int = 1) -> str:
    """A difference of proportions in percentage points, signed: `0.052` → `+5.2 pts`."""
    if not is_number(value):
        return MISSING
    return f"{float(value) * 100:+.{decimals}f} pts"


def signed(value: Any, digits: int = 3) -> str:
    """A number with its sign: `0.25` → `+0.250`, `-3` → `-3`, `0` → `0`."""
    text = number(value, digits)
    if is_number(value) and float(value) > 0:
        return "+" + text
    return text


def usd(value: Any) -> str:
    """Dollars: four decimals below $100 (`$0.1159`), two above (`$1,234.56`)."""
    if not is_number(value):
        return MISSING
    figure = float(value)
    text = f"${figure:,.4f}" if abs(figure) < 100 else f"${figure:,.2f}"
    return text.replace("$-", "-$")


def seconds(value: Any, digits: int = 3) -> str:
    """A duration in seconds: `1.234` → `1.23 s`."""
    return MISSING if not is_number(value) else f"{number(value, digits)} s"


def interval(
    value: IntervalLike | None,
    *,
    as_percent: bool = False,
    in_percent: bool = False,
    digits: int = 3,
    decimals: int | None = None,
) -> str:
    """An interval as `[0.715, 0.917]`; `—` when it or a bound is missing.

    `as_percent` shows proportion bounds as percentages (`[71.5%, 91.7%]`); `in_percent` marks
    bounds that already are percentages (CERT's `error_rate`: `[2.1%, 9.8%]`); `decimals` gives
    fixed decimals instead of significant digits."""
    if value is None or not (is_number(value.low) and is_number(value.high)):
        return MISSING
    if as_percent:
        return f"[{percent(value.low)}, {percent(value.high)}]"
    if in_percent:
        return f"[{percent_value(value.low)}, {percent_value(value.high)}]"
    if decimals is not None:
        return f"[{fixed(value.low, decimals)}, {fixed(value.high, decimals)}]"
    return f"[{number(value.low, digits)}, {number(value.high, digits)}]"


def level(value: float) -> str:
    """A confidence level as people say it: `0.95` → `95%`, `0.999` → `99.9%`."""
    return f"{value * 100:.10g}%"


def markdown_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    align: str | None = None,
    cell: Callable[[str], str] = markdown,
) -> str:
    """A Markdown table; every header is escaped as literal text, every cell by `cell`
    (`core.escape.markdown` unless a view keeps some Markdown of its own in its cells).

    `align` is one letter per column, `l` or `r` (default all left)."""
    alignment = align or "l" * len(header)
    if len(alignment) != len(header):
        raise ValueError("align needs one letter per column")
    rule = "|" + "".join("---:|" if a == "r" else "---|" for a in alignment)
    lines = ["| " + " | ".join(markdown(h) for h in header) + " |", rule]
    lines += ["| " + " | ".join(cell(text) for text in row) + " |" for row in rows]
    return "\n".join(lines)


def _is_negative_zero(text: str) -> bool:
    return text.startswith("-") and not any(c in "123456789" for c in text)
