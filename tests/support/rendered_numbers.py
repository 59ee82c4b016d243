"""Check that a view shows no number its result document lacks.

    assert unexplained_numbers(page_text(html), document.model_dump(mode="json")) == []

Every string of the document (names, messages, labels) is removed from the text first, so a
number inside a model name is not counted. Each remaining number token is read with the
precision it is shown at (`84.1%` is 0.841 ± 0.0005) and must match a number of the document
within that precision, as a proportion or as a percentage.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from html.parser import HTMLParser
from typing import Any

_TOKEN = re.compile(
    r"(?<![\w.])[-+−]?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?:\s?%| pts)?"
)


class _Text(HTMLParser):
    def __init__(self, skipped: tuple[str, ...]) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipped = ("script", "style", *skipped)
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.skipped:
            self._skip += 1
        elif tag in ("td", "th", "li", "p", "div", "br", "tr", "text", "span"):
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.skipped:
            self._skip -= 1
        else:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


#: The percent axis ticks of the interval charts: a scale, not a result.
PERCENT_AXIS_TICKS = tuple(f"{tick}.0%" for tick in range(100, -1, -5))


def page_text(html: str, *, skip: tuple[str, ...] = ()) -> str:
    """The visible text of a page (scripts, styles and the elements named in `skip` left out;
    SVG text kept), whitespace collapsed."""
    parser = _Text(skip)
    parser.feed(html)
    return " ".join("".join(parser.parts).split())


def _walk(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item)
    else:
        yield value


def _numbers(document: Any) -> list[float]:
    return [
        float(value)
        for value in _walk(document)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    ]


def _strings(document: Any) -> list[str]:
    """The document's strings, each also with its whitespace collapsed as `page_text` does."""
    found = {value for value in _walk(document) if isinstance(value, str) and len(value) >= 2}
    found |= {" ".join(value.split()) for value in found}
    return sorted(found, key=len, reverse=True)


def _read(token: str) -> tuple[float, float, bool]:
    """A token's value, the half-unit of its last shown digit, and whether it is a percentage."""
    is_percent = token.endswith("%")
    is_points = token.endswith(" pts")
    text = token.replace("−", "-").replace("$", "").replace(",", "").replace(" pts", "")
    text = text.rstrip("%").strip()
    mantissa = text.lower().split("e")[0]
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    half_unit = 0.5 * 10.0**-decimals
    if "e" in text.lower():
        half_unit *= 10.0 ** int(text.lower().split("e")[1])
    return float(text), half_unit * (1 + 1e-9) + 1e-12, is_percent or is_points


def unexplained_numbers(text: str, document: Any, *, allowed: Iterable[str] = ()) -> list[str]:
    """The number tokens of `text` that match no number of `document` (with their context)."""
    for string in [*_strings(document), *allowed]:
        text = text.replace(string, " ")
    numbers = _numbers(document)
    unexplained: list[str] = []
    for match in _TOKEN.finditer(text):
        value, tolerance, is_percent = _read(match.group(0))
        candidates = [value / 100, value] if is_percent else [value]
        scale = [tolerance / 100, tolerance] if is_percent else [tolerance]
        if not any(
            abs(number - candidate) <= tol or abs(abs(number) - abs(candidate)) <= tol
            for number in numbers
            for candidate, tol in zip(candidates, scale, strict=True)
        ):
            start = max(match.start() - 30, 0)
            unexplained.append(f"{match.group(0)!r} in …{text[start : match.end() + 30]}…")
    return unexplained
