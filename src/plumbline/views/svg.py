"""Inline SVG plots, generated here so report pages need no script library, CDN or network.

Every function returns `markupsafe.Markup` (safe to drop into an autoescaped template); every
piece of text in it (labels, notes, tooltips) is escaped here, and every mark carries a
`<title>` so hovering it in a browser says what it is. Plots are deterministic: the same input
gives byte-identical SVG (the jitter of a distribution plot is seeded by the data).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

#: Colours for series and groups (colour-blind-safe, Okabe–Ito).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
MISSING_COLOUR = "#9a9a9a"
FONT = "font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:12px"


@dataclass(frozen=True)
class IntervalRow:
    """One row of an interval chart: a point estimate with its interval (or a missing marker)."""

    label: str
    estimate: float | None
    low: float | None = None
    high: float | None = None
    note: str = ""
    tooltip: str = ""
    css_class: str = ""


def _e(text: object) -> str:
    return str(escape(str(text)))


def _num(value: float) -> str:
    """A coordinate with two decimals and no trailing zeros (stable, compact output)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def x_gridline(x: float, *, top: float, axis_y: float, label: str) -> str:
    """A vertical gridline at `x` from `top` down to the axis, its label (escaped) below."""
    tx = _num(x)
    return (
        f'<line x1="{tx}" y1="{top}" x2="{tx}" y2="{axis_y}" stroke="#e3e3e3"/>'
        f'<text x="{tx}" y="{axis_y + 14}" text-anchor="middle" fill="#555">{_e(label)}</text>'
    )


def y_gridline(y: float, *, left: float, right: float, label: str) -> str:
    """A horizontal gridline at `y` from `left` to `right`, its label (escaped) to the left."""
    ty = _num(y)
    return (
        f'<line x1="{left}" y1="{ty}" x2="{right}" y2="{ty}" stroke="#e3e3e3"/>'
        f'<text x="{left - 6}" y="{_num(y + 4)}" text-anchor="end" fill="#555">{_e(label)}</text>'
    )


def format_value(value: float, *, percent: bool = False) -> str:
    """A value as the axis and tooltips show it: `84.0%` or `0.84` (3 significant digits).

    A value that rounds to zero reads `0`, never `-0`.
    """
    if percent:
        text = f"{value * 100:.1f}%"
    elif value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
        text = f"{value:.3g}"
    else:
        text = f"{value:.3g}" if abs(value) < 1 else f"{value:,.4g}"
    return text[1:] if text.startswith("-") and not any(c in "123456789" for c in text) else text


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (1, 2, 2.5, 5 × 10^k steps)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    if high <= low:
        return [low]
    raw = (high - low) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = magnitude
    for multiple in (1, 2, 2.5, 5, 10):
        step = multiple * magnitude
        if step >= raw:
            break
    # Multiples of the step, not a running sum: no drift, and no `-0.0` at zero.
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    return [round(index * step, 12) + 0.0 for index in range(first, last + 1)]


def _svg_open(width: int, height: int, label: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'style="{FONT}" aria-label="{_e(label)}">'
        f"<title>{_e(label)}</title>"
    )


def _truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _domain_of(values: Sequence[float], domain: tuple[float, float] | None) -> tuple[float, float]:
    if domain is not None:
        low, high = domain
    elif values:
        low, high = min(values), max(values)
        pad = (high - low) * 0.05 or (abs(high) * 0.1 or 1.0)
        low, high = low - pad, high + pad
    else:
        low, high = 0.0, 1.0
    if high <= low:
        high = low + 1.0
    return low, high


def _x_axis(
    tick_values: Sequence[float],
    x: Callable[[float], float],
    *,
    top: int,
    axis_y: int,
    left: int,
    right: int,
    label: str,
    percent: bool = False,
) -> str:
    """A horizontal value axis: a gridline and label per tick, the axis line and its title."""
    parts = [
        x_gridline(x(tick), top=top, axis_y=axis_y, label=format_value(tick, percent=percent))
        for tick in tick_values
    ]
    parts.append(
        f'<line x1="{left}" y1="{axis_y}" x2="{right}" y2="{axis_y}" stroke="#888"/>'
        f'<text x="{_num((left + right) / 2)}" y="{axis_y + 32}" text-anchor="middle" '
        f'fill="#333">{_e(label)}</text>'
    )
    return "".join(parts)


@dataclass(frozen=True)
class _IntervalLayout:
    """The columns of an interval chart (labels, plot, notes) and its value-to-x scale."""

    label_width: int
    note_width: int
    left: int
    right: int
    low: float
    high: float
    percent: bool

    def x(self, value: float) -> float:
        """The x coordinate of a value, clamped into the domain so a mark never leaves the plot."""
        clamped = min(max(value, self.low), self.high)
        return self.left + (clamped - self.low) / (self.high - self.low) * (self.right - self.left)


def _interval_values(rows: Sequence[IntervalRow], reference: float | None) -> list[float]:
    """Every finite value the rows (and the reference line) put on the axis."""
    values = [
        v
        for row in rows
        for v in (row.estimate, row.low, row.high)
        if v is not None and math.isfinite(v)
    ]
    if reference is not None:
        values.append(reference)
    return values


def _reference_line(reference: float, layout: _IntervalLayout, *, top: int, axis_y: int) -> str:
    """The dashed vertical line at the reference value."""
    rx = _num(layout.x(reference))
    return (
        f'<line class="reference" x1="{rx}" y1="{top - 4}" x2="{rx}" y2="{axis_y}" '
        f'stroke="#444" stroke-dasharray="4 3"><title>reference '
        f"{_e(format_value(reference, percent=layout.percent))}</title></line>"
    )


def _missing_interval_mark(row: IntervalRow, cy: float, layout: _IntervalLayout) -> str:
    """The hollow marker and note that stand in for a row without an estimate."""
    tip = row.tooltip or f"{row.label}: missing"
    left = layout.left
    return (
        f'<g class="missing"><title>{_e(tip)}</title>'
        f'<circle cx="{_num(left + 6)}" cy="{_num(cy)}" r="5" fill="none" '
        f'stroke="{MISSING_COLOUR}" stroke-dasharray="2 2"/>'
        f'<text x="{_num(left + 16)}" y="{_num(cy + 4)}" fill="{MISSING_COLOUR}" '
        f'font-style="italic">{_e(row.note or "missing")}</text></g>'
    )


def _whisker(low: float, high: float, cy: float, layout: _IntervalLayout) -> str:
    """A horizontal whisker from low to high with a short cap at each end."""
    x1, x2 = _num(layout.x(low)), _num(layout.x(high))
    return (
        f'<line class="whisker" x1="{x1}" y1="{_num(cy)}" x2="{x2}" y2="{_num(cy)}" '
        f'stroke="{PALETTE[0]}" stroke-width="2"/>'
        f'<line x1="{x1}" y1="{_num(cy - 5)}" x2="{x1}" y2="{_num(cy + 5)}" '
        f'stroke="{PALETTE[0]}" stroke-width="2"/>'
        f'<line x1="{x2}" y1="{_num(cy - 5)}" x2="{x2}" y2="{_num(cy + 5)}" '
        f'stroke="{PALETTE[0]}" stroke-width="2"/>'
    )


def _estimate_mark(row: IntervalRow, estimate: float, cy: float, layout: _IntervalLayout) -> str:
    """A row's dot at the estimate, its whisker, and the value text in the note column."""
    percent = layout.percent
    estimate_text = format_value(estimate, percent=percent)
    interval_text = ""
    if row.low is not None and row.high is not None:
        interval_text = (
            f" [{format_value(row.low, percent=percent)}, "
            f"{format_value(row.high, percent=percent)}]"
        )
    tip = row.tooltip or f"{row.label}: {estimate_text}{interval_text}"
    parts = [f'<g class="mark"><title>{_e(tip)}</title>']
    if row.low is not None and row.high is not None:
        parts.append(_whisker(row.low, row.high, cy, layout))
    parts.append(
        f'<circle class="estimate" cx="{_num(layout.x(estimate))}" cy="{_num(cy)}" r="5" '
        f'fill="{PALETTE[0]}"/></g>'
    )
    text = estimate_text + (f" · {row.note}" if row.note else "")
    parts.append(
        f'<text x="{layout.right + 8}" y="{_num(cy + 4)}" fill="#333">'
        f"{_e(_truncate(text, layout.note_width // 6))}</text>"
    )
    return "".join(parts)


def _interval_row(row: IntervalRow, cy: float, layout: _IntervalLayout) -> str:
    """One row of an interval chart: its label, then its mark or its missing marker."""
    classes = " ".join(c for c in ("row", row.css_class) if c)
    parts = [
        f'<g class="{_e(classes)}">',
        f'<text x="{layout.left - 8}" y="{_num(cy + 4)}" text-anchor="end" fill="#222">'
        f"<title>{_e(row.label)}</title>{_e(_truncate(row.label, layout.label_width // 7))}</text>",
    ]
    if row.estimate is None or not math.isfinite(row.estimate):
        parts.append(_missing_interval_mark(row, cy, layout))
    else:
        parts.append(_estimate_mark(row, row.estimate, cy, layout))
    parts.append("</g>")
    return "".join(parts)


def interval_chart(
    rows: Sequence[IntervalRow],
    *,
    x_label: str,
    domain: tuple[float, float] | None = None,
    reference: float | None = None,
    percent: bool = False,
    width: int = 720,
) -> Markup:
    """One row per item: a dot at the estimate and a whisker from low to high.

    A row whose estimate is None gets a hollow "missing" marker and its note instead of a dot,
    so an absent value is never drawn like a score of 0. `reference` draws a dashed vertical
    line (0 for a forest plot of deltas).
    """
    longest = max((len(r.label) for r in rows), default=8)
    label_width = int(min(260, width * 0.3, max(80, 7 * longest + 12)))
    note_width = int(min(140, width * 0.22))
    row_height, top, bottom = 26, 12, 40
    height = top + row_height * max(len(rows), 1) + bottom
    low, high = _domain_of(_interval_values(rows, reference), domain)
    layout = _IntervalLayout(
        label_width=label_width,
        note_width=note_width,
        left=label_width,
        right=width - note_width,
        low=low,
        high=high,
        percent=percent,
    )
    parts = [_svg_open(width, height, x_label)]
    axis_y = top + row_height * max(len(rows), 1)
    parts.append(
        _x_axis(
            nice_ticks(low, high),
            layout.x,
            top=top,
            axis_y=axis_y,
            left=layout.left,
            right=layout.right,
            label=x_label,
            percent=percent,
        )
    )
    if reference is not None and low <= reference <= high:
        parts.append(_reference_line(reference, layout, top=top, axis_y=axis_y))
    for index, row in enumerate(rows):
        parts.append(_interval_row(row, top + row_height * index + row_height / 2, layout))
    parts.append("</svg>")
    return Markup("".join(parts))


def _check_series_lengths(
    categories: Sequence[str], series: Mapping[str, Sequence[float | None]]
) -> None:
    """Raise ValueError unless every series has one value per category."""
    for name, values in series.items():
        if len(values) != len(categories):
            raise ValueError(
                f"series {name!r} has {len(values)} values for {len(categories)} categories"
            )


def _series_legend(names: Sequence[str], left: int) -> str:
    """A row of colour swatches naming the series, along the top of a bar chart."""
    parts = []
    lx = left
    for index, name in enumerate(names):
        colour = PALETTE[index % len(PALETTE)]
        parts.append(
            f'<g class="legend"><rect x="{lx}" y="6" width="10" height="10" fill="{colour}"/>'
            f'<text x="{lx + 14}" y="15" fill="#333">{_e(_truncate(name, 24))}</text></g>'
        )
        lx += 24 + 7 * min(len(name), 24)
    return "".join(parts)


def _missing_bar(category: str, name: str, bx: float, bar_width: float, axis_y: int) -> str:
    """The hatched "n/a" marker drawn where a bar has no value."""
    return (
        f'<g class="missing"><title>{_e(category)} · {_e(name)}: no value</title>'
        f'<rect x="{_num(bx)}" y="{axis_y - 14}" width="{_num(bar_width - 1)}" '
        f'height="14" fill="none" stroke="{MISSING_COLOUR}" '
        f'stroke-dasharray="2 2"/>'
        f'<text x="{_num(bx + bar_width / 2)}" y="{axis_y - 18}" '
        f'text-anchor="middle" fill="{MISSING_COLOUR}" font-size="10">n/a</text></g>'
    )


def grouped_bar_chart(
    categories: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    y_label: str,
    width: int = 720,
) -> Markup:
    """Bars grouped by category, one colour per series (e.g. p50/p90/p95/p99 per model).

    A None value draws no bar but a hatched "n/a" marker, so an absent value is not a 0.
    """
    names = list(series)
    _check_series_lengths(categories, series)
    left, right, top = 64, width - 12, 28
    height = 300
    axis_y = height - 46
    finite: list[float] = [
        v for vs in series.values() for v in vs if v is not None and math.isfinite(v)
    ]
    high = max(finite, default=1.0)
    high = high if high > 0 else 1.0
    ticks = nice_ticks(0.0, high * 1.05)
    top_value = max(ticks[-1] if ticks else high, high)

    def y(value: float) -> float:
        return axis_y - (max(value, 0.0) / top_value) * (axis_y - top)

    parts = [_svg_open(width, height, y_label)]
    parts += [
        y_gridline(y(tick), left=left, right=right, label=format_value(tick)) for tick in ticks
    ]
    parts.append(
        f'<line x1="{left}" y1="{axis_y}" x2="{right}" y2="{axis_y}" stroke="#888"/>'
        f'<text transform="translate(14 {_num((top + axis_y) / 2)}) rotate(-90)" '
        f'text-anchor="middle" fill="#333">{_e(y_label)}</text>'
    )
    parts.append(_series_legend(names, left))
    group_width = (right - left) / max(len(categories), 1)
    bar_width = max(2.0, (group_width * 0.8) / max(len(names), 1))
    for c_index, category in enumerate(categories):
        gx = left + group_width * c_index + group_width * 0.1
        parts.append(
            f'<text x="{_num(left + group_width * (c_index + 0.5))}" y="{axis_y + 16}" '
            f'text-anchor="middle" fill="#222"><title>{_e(category)}</title>'
            f"{_e(_truncate(category, max(4, int(group_width // 7))))}</text>"
        )
        for s_index, name in enumerate(names):
            value = series[name][c_index]
            bx = gx + bar_width * s_index
            colour = PALETTE[s_index % len(PALETTE)]
            if value is None or not math.isfinite(value):
                parts.append(_missing_bar(category, name, bx, bar_width, axis_y))
                continue
            by = y(value)
            parts.append(
                f'<rect class="bar" x="{_num(bx)}" y="{_num(by)}" width="{_num(bar_width - 1)}" '
                f'height="{_num(axis_y - by)}" fill="{colour}"><title>{_e(category)} · '
                f"{_e(name)}: {_e(format_value(value))}</title></rect>"
            )
    parts.append("</svg>")
    return Markup("".join(parts))
