"""Inline SVG plots, generated here so report pages need no script library, CDN or network.

Every function returns `markupsafe.Markup` (safe to drop into an autoescaped template); every
piece of text in it (labels, notes, tooltips) is escaped here, and every mark carries a
`<title>` so hovering it in a browser says what it is. Plots are deterministic: the same input
gives byte-identical SVG (the jitter of a distribution plot is seeded by the data).
"""

from __future__ import annotations

import itertools
import math
import zlib
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
    parts = []
    for tick in tick_values:
        tx = _num(x(tick))
        parts.append(
            f'<line x1="{tx}" y1="{top}" x2="{tx}" y2="{axis_y}" stroke="#e3e3e3"/>'
            f'<text x="{tx}" y="{axis_y + 14}" text-anchor="middle" fill="#555">'
            f"{_e(format_value(tick, percent=percent))}</text>"
        )
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
    for tick in ticks:
        ty = _num(y(tick))
        parts.append(
            f'<line x1="{left}" y1="{ty}" x2="{right}" y2="{ty}" stroke="#e3e3e3"/>'
            f'<text x="{left - 6}" y="{_num(y(tick) + 4)}" text-anchor="end" fill="#555">'
            f"{_e(format_value(tick))}</text>"
        )
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


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's default) of already sorted values."""
    position = (len(sorted_values) - 1) * q
    below = math.floor(position)
    above = min(below + 1, len(sorted_values) - 1)
    fraction = position - below
    return sorted_values[below] + (sorted_values[above] - sorted_values[below]) * fraction


def _plottable_groups(
    groups: Mapping[str, Sequence[float]], log_scale: bool
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Each group's plottable values, sorted, and how many of its values were left out."""
    cleaned: dict[str, list[float]] = {}
    dropped: dict[str, int] = {}
    for name, values in groups.items():
        finite = [float(v) for v in values if v is not None and math.isfinite(v)]
        kept = [v for v in finite if v > 0] if log_scale else finite
        cleaned[name] = sorted(kept)
        dropped[name] = len(values) - len(kept)
    return cleaned, dropped


def _distribution_domain(
    every: Sequence[float], transform: Callable[[float], float], log_scale: bool
) -> tuple[float, float]:
    """The padded axis domain (in transformed units) covering every value plotted."""
    if every:
        low, high = transform(min(every)), transform(max(every))
        pad = (high - low) * 0.05 or 0.5
        low, high = low - pad, high + pad
        if not log_scale and min(every) >= 0:
            low = max(low, 0.0)
    else:
        low, high = 0.0, 1.0
    return low, high


def _distribution_ticks(low: float, high: float, log_scale: bool) -> list[float]:
    """Tick values for the axis: powers of ten on a log scale, round steps otherwise."""
    if log_scale:
        tick_values = [10.0**k for k in range(math.floor(low), math.ceil(high) + 1)]
        return [t for t in tick_values if low <= math.log10(t) <= high]
    return nice_ticks(low, high)


@dataclass(frozen=True)
class _BoxStats:
    """The quartiles of a group and its whisker ends (most extreme points within 1.5 IQR)."""

    q1: float
    median: float
    q3: float
    low_whisker: float
    high_whisker: float

    @classmethod
    def of(cls, values: Sequence[float]) -> _BoxStats:
        """The box statistics of sorted, non-empty values."""
        q1, median, q3 = (_quantile(values, q) for q in (0.25, 0.5, 0.75))
        iqr = q3 - q1
        low_whisker = min(v for v in values if v >= q1 - 1.5 * iqr)
        high_whisker = max(v for v in values if v <= q3 + 1.5 * iqr)
        return cls(q1, median, q3, low_whisker, high_whisker)


def _box_summary(name: str, values: Sequence[float], stats: _BoxStats, dropped: int) -> str:
    """The tooltip of a box: count, median, quartiles, range, and any values left out."""
    summary = (
        f"{name}: n={len(values)}, median {format_value(stats.median)}, "
        f"IQR [{format_value(stats.q1)}, {format_value(stats.q3)}], "
        f"range [{format_value(values[0])}, {format_value(values[-1])}]"
    )
    if dropped:
        summary += f"; {dropped} value(s) not shown (not positive or not finite)"
    return summary


def _box(
    stats: _BoxStats, summary: str, cy: float, colour: str, x: Callable[[float], float]
) -> str:
    """The whisker line, the quartile box and the median line of one group."""
    return (
        f'<g class="box"><title>{_e(summary)}</title>'
        f'<line x1="{_num(x(stats.low_whisker))}" y1="{_num(cy)}" '
        f'x2="{_num(x(stats.high_whisker))}" y2="{_num(cy)}" stroke="#555"/>'
        f'<rect x="{_num(x(stats.q1))}" y="{_num(cy - 10)}" '
        f'width="{_num(max(x(stats.q3) - x(stats.q1), 1.0))}" height="20" fill="{colour}" '
        f'fill-opacity="0.18" stroke="{colour}"/>'
        f'<line class="median" x1="{_num(x(stats.median))}" y1="{_num(cy - 10)}" '
        f'x2="{_num(x(stats.median))}" y2="{_num(cy + 10)}" stroke="{colour}" stroke-width="2"/>'
        "</g>"
    )


def _jittered_points(
    name: str, values: Sequence[float], cy: float, colour: str, x: Callable[[float], float]
) -> str:
    """One dot per value, spread vertically by a jitter that the group name seeds."""
    parts = []
    # Deterministic jitter: a CRC of the group name seeds a small linear congruential walk.
    state = zlib.crc32(name.encode("utf-8"))
    for value in values:
        state = (1103515245 * state + 12345) & 0x7FFFFFFF
        offset = (state / 0x7FFFFFFF - 0.5) * 16
        parts.append(
            f'<circle class="point" cx="{_num(x(value))}" cy="{_num(cy + offset)}" r="2.2" '
            f'fill="{colour}" fill-opacity="0.7"><title>{_e(name)}: '
            f"{_e(format_value(value))}</title></circle>"
        )
    return "".join(parts)


def distribution_chart(
    groups: Mapping[str, Sequence[float]],
    *,
    x_label: str,
    log_scale: bool = False,
    width: int = 720,
) -> Markup:
    """A horizontal box plot with the individual points jittered over it, one row per group.

    The box spans the quartiles with a line at the median; whiskers reach the most extreme
    points within 1.5 IQR. With `log_scale`, non-positive values cannot be placed and are
    left out (their count is said in the row's tooltip). A group with no values is marked.
    """
    label_width = min(220, max(80, 7 * max((len(name) for name in groups), default=8) + 12))
    left, right = label_width, width - 16
    row_height, top, bottom = 44, 10, 40
    height = top + row_height * max(len(groups), 1) + bottom
    cleaned, dropped = _plottable_groups(groups, log_scale)
    every = [v for values in cleaned.values() for v in values]
    transform = math.log10 if log_scale else (lambda v: v)
    low, high = _distribution_domain(every, transform, log_scale)

    def x(value: float) -> float:
        return left + (transform(value) - low) / (high - low) * (right - left)

    parts = [_svg_open(width, height, x_label)]
    axis_y = top + row_height * max(len(groups), 1)
    label = x_label + (" (log scale)" if log_scale else "")
    ticks = _distribution_ticks(low, high, log_scale)
    parts.append(_x_axis(ticks, x, top=top, axis_y=axis_y, left=left, right=right, label=label))
    for index, (name, values) in enumerate(cleaned.items()):
        colour = PALETTE[index % len(PALETTE)]
        cy = top + row_height * index + row_height / 2
        parts.append(
            f'<g class="group"><text x="{left - 8}" y="{_num(cy + 4)}" text-anchor="end" '
            f'fill="#222"><title>{_e(name)}</title>{_e(_truncate(name, label_width // 7))}</text>'
        )
        if not values:
            parts.append(
                f'<g class="missing"><title>{_e(name)}: no values</title>'
                f'<text x="{left + 8}" y="{_num(cy + 4)}" fill="{MISSING_COLOUR}" '
                f'font-style="italic">no values</text></g></g>'
            )
            continue
        stats = _BoxStats.of(values)
        parts.append(_box(stats, _box_summary(name, values, stats, dropped[name]), cy, colour, x))
        parts.append(_jittered_points(name, values, cy, colour, x))
        parts.append("</g>")
    parts.append("</svg>")
    return Markup("".join(parts))


def _agreement_axes(
    x: Callable[[float], float],
    y: Callable[[float], float],
    top: float,
    left: float,
    span_bottom: float,
    x_label: str,
    y_label: str,
) -> str:
    """The grid, tick labels, axis titles and diagonal of the agreement chart."""
    parts: list[str] = []
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{_num(x(tick))}" y1="{top}" x2="{_num(x(tick))}" y2="{_num(span_bottom)}" '
            f'stroke="#eee"/><line x1="{left}" y1="{_num(y(tick))}" x2="{_num(x(1))}" '
            f'y2="{_num(y(tick))}" stroke="#eee"/>'
            f'<text x="{_num(x(tick))}" y="{_num(span_bottom + 14)}" text-anchor="middle" '
            f'fill="#555">{_e(format_value(tick))}</text>'
            f'<text x="{left - 6}" y="{_num(y(tick) + 4)}" text-anchor="end" fill="#555">'
            f"{_e(format_value(tick))}</text>"
        )
    parts.append(
        f'<line class="diagonal" x1="{_num(x(0))}" y1="{_num(y(0))}" x2="{_num(x(1))}" '
        f'y2="{_num(y(1))}" stroke="#999" stroke-dasharray="4 3"><title>perfect agreement'
        "</title></line>"
        f'<text x="{_num(x(0.5))}" y="{_num(span_bottom + 32)}" text-anchor="middle" '
        f'fill="#333">{_e(x_label)}</text>'
        f'<text x="14" y="{_num(y(0.5))}" text-anchor="middle" fill="#333" '
        f'transform="rotate(-90 14 {_num(y(0.5))})">{_e(y_label)}</text>'
    )
    return "".join(parts)


def agreement_chart(
    groups: Mapping[str, Sequence[Sequence[float]]],
    *,
    x_label: str = "judge score",
    y_label: str = "human label",
    size: int = 360,
) -> Markup:
    """Judge (x) against human (y) for labelled samples, one colour per group, with the line of
    perfect agreement. Points on the same spot (0/1 scores) are spread by a deterministic jitter
    so their number shows; each point's tooltip gives its exact values."""
    left, top, bottom, right_pad = 52, 12, 44, 12
    legend = 18 * len(groups)
    width, height = size, size + legend
    plot = size - left - right_pad
    span_bottom = top + plot

    def x(value: float) -> float:
        return left + value * plot

    def y(value: float) -> float:
        return span_bottom - value * plot

    parts = [_svg_open(width, height + bottom - 12, f"{x_label} against {y_label}")]
    parts.append(_agreement_axes(x, y, top, left, span_bottom, x_label, y_label))
    for index, (name, points) in enumerate(groups.items()):
        colour = PALETTE[index % len(PALETTE)]
        state = zlib.crc32(name.encode("utf-8"))
        parts.append(f'<g class="agreement" data-group="{_e(name)}">')
        for judge, human in (tuple(point) for point in points):
            state = (1103515245 * state + 12345) & 0x7FFFFFFF
            dx = (state / 0x7FFFFFFF - 0.5) * 0.12
            state = (1103515245 * state + 12345) & 0x7FFFFFFF
            dy = (state / 0x7FFFFFFF - 0.5) * 0.12
            px = min(max(judge + dx, -0.06), 1.06)
            py = min(max(human + dy, -0.06), 1.06)
            parts.append(
                f'<circle class="point" cx="{_num(x(px))}" cy="{_num(y(py))}" r="2.6" '
                f'fill="{colour}" fill-opacity="0.55"><title>{_e(name)}: judge '
                f"{_e(format_value(judge))}, human {_e(format_value(human))}</title></circle>"
            )
        legend_y = span_bottom + bottom + 18 * index
        parts.append(
            f'<circle cx="{left}" cy="{_num(legend_y - 4)}" r="4" fill="{colour}"/>'
            f'<text x="{left + 10}" y="{_num(legend_y)}" fill="#222">'
            f"{_e(_truncate(name, 40))} ({len(points)} labelled)</text></g>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


@dataclass(frozen=True)
class _Frame:
    """The plotting area of a sequence chart and its two scales."""

    left: float
    right: float
    top: float
    bottom: float
    first: float
    last: float
    low: float
    high: float

    def x(self, value: float) -> float:
        span = max(self.last - self.first, 1)
        return self.left + (value - self.first) / span * (self.right - self.left)

    def y(self, value: float) -> float:
        clamped = min(max(value, self.low), self.high)
        return self.bottom - (clamped - self.low) / (self.high - self.low) * (
            self.bottom - self.top
        )


def _sequence_axes(
    frame: _Frame, x_label: str, y_label: str, percent: bool, *, x_ticks: bool = True
) -> list[str]:
    parts = []
    for tick in nice_ticks(frame.low, frame.high):
        ty = _num(frame.y(tick))
        parts.append(
            f'<line x1="{frame.left}" y1="{ty}" x2="{frame.right}" y2="{ty}" stroke="#e3e3e3"/>'
            f'<text x="{frame.left - 6}" y="{_num(frame.y(tick) + 4)}" text-anchor="end" '
            f'fill="#555">{_e(format_value(tick, percent=percent))}</text>'
        )
    for tick in nice_ticks(frame.first, frame.last) if x_ticks else []:
        if tick != int(tick):
            continue
        tx = _num(frame.x(tick))
        parts.append(
            f'<line x1="{tx}" y1="{frame.bottom}" x2="{tx}" y2="{frame.bottom + 4}" '
            f'stroke="#888"/><text x="{tx}" y="{frame.bottom + 16}" text-anchor="middle" '
            f'fill="#555">{int(tick)}</text>'
        )
    middle = _num((frame.top + frame.bottom) / 2)
    parts.append(
        f'<line x1="{frame.left}" y1="{frame.bottom}" x2="{frame.right}" y2="{frame.bottom}" '
        f'stroke="#888"/><text x="{_num((frame.left + frame.right) / 2)}" '
        f'y="{frame.bottom + 34}" text-anchor="middle" fill="#333">{_e(x_label)}</text>'
        f'<text x="14" y="{middle}" text-anchor="middle" fill="#333" '
        f'transform="rotate(-90 14 {middle})">{_e(y_label)}</text>'
    )
    return parts


def _sequence_marks(
    frame: _Frame,
    pairs: Sequence[int],
    estimates: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    percent: bool,
) -> list[str]:
    def point(p: float, v: float) -> str:
        return f"{_num(frame.x(p))},{_num(frame.y(v))}"

    upper = " ".join(point(p, h) for p, h in zip(pairs, highs, strict=True))
    lower = " ".join(point(p, v) for p, v in zip(reversed(pairs), reversed(lows), strict=True))
    line = " ".join(point(p, e) for p, e in zip(pairs, estimates, strict=True))
    end = (
        f"after {pairs[-1]}: {format_value(estimates[-1], percent=percent)} "
        f"[{format_value(lows[-1], percent=percent)}, "
        f"{format_value(highs[-1], percent=percent)}]"
    )
    return [
        f'<polygon class="band" points="{upper} {lower}" fill="{PALETTE[0]}" '
        f'fill-opacity="0.18" stroke="none"><title>confidence sequence</title></polygon>',
        f'<polyline class="estimate" points="{line}" fill="none" stroke="{PALETTE[0]}" '
        f'stroke-width="1.5"><title>running estimate</title></polyline>',
        f'<circle class="stop" cx="{_num(frame.x(pairs[-1]))}" '
        f'cy="{_num(frame.y(estimates[-1]))}" r="4" fill="{PALETTE[0]}">'
        f"<title>{_e(end)}</title></circle>",
    ]


def _sequence_references(frame: _Frame, margin: float | None, percent: bool) -> list[str]:
    parts = []
    if frame.low <= 0 <= frame.high:
        parts.append(
            f'<line class="reference" x1="{frame.left}" y1="{_num(frame.y(0))}" '
            f'x2="{frame.right}" y2="{_num(frame.y(0))}" stroke="#444" '
            'stroke-dasharray="4 3"><title>no difference</title></line>'
        )
    for bound in () if margin is None else (margin, -margin):
        parts.append(
            f'<line class="margin" x1="{frame.left}" y1="{_num(frame.y(bound))}" '
            f'x2="{frame.right}" y2="{_num(frame.y(bound))}" stroke="{PALETTE[5]}" '
            f'stroke-dasharray="1 3"><title>margin '
            f"{_e(format_value(bound, percent=percent))}</title></line>"
        )
    return parts


def sequence_chart(
    pairs: Sequence[int],
    estimates: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    *,
    x_label: str,
    y_label: str,
    margin: float | None = None,
    percent: bool = True,
    width: int = 720,
    height: int = 280,
) -> Markup:
    """A confidence sequence over time: the band [low, high] after every look, the running
    estimate as a line, a dashed line at 0 and, with `margin`, dotted lines at ±margin."""
    values = [v for v in (*lows, *highs, *estimates, 0.0) if math.isfinite(v)]
    if margin is not None:
        values += [margin, -margin]
    low, high = _domain_of(values, None)
    frame = _Frame(
        64,
        width - 16,
        12,
        height - 44,
        pairs[0] if pairs else 0,
        pairs[-1] if pairs else 1,
        low,
        high,
    )
    parts = [_svg_open(width, height, f"{y_label} by {x_label}")]
    parts += _sequence_axes(frame, x_label, y_label, percent)
    if pairs:
        parts += _sequence_marks(frame, pairs, estimates, lows, highs, percent)
    parts += _sequence_references(frame, margin, percent)
    parts.append("</svg>")
    return Markup("".join(parts))


@dataclass(frozen=True)
class TrendPoint:
    """One run of a trend chart: its estimate and interval (either may be missing), what
    hovering it says, where clicking it goes, and whether a change alarm is up there."""

    estimate: float | None
    low: float | None
    high: float | None
    tooltip: str
    href: str | None = None
    alarm: bool = False
    #: When the run was made (seconds since the epoch): with it on every point, the x axis
    #: is time, and the nights without a run show as gaps.
    at: float | None = None


def _trend_band(
    frame: _Frame, points: Sequence[TrendPoint], xs: Sequence[float] | None = None
) -> list[str]:
    """The interval band: one polygon per stretch of consecutive runs with both bounds."""
    parts: list[str] = []
    stretch: list[tuple[float, float, float]] = []
    positions = list(xs) if xs is not None else [index + 1.0 for index in range(len(points))]
    for index, point in enumerate([*points, TrendPoint(None, None, None, "")]):
        low, high = point.low, point.high
        if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
            stretch.append((positions[index], low, high))
            continue
        if len(stretch) > 1:
            upper = " ".join(f"{_num(frame.x(i))},{_num(frame.y(h))}" for i, _, h in stretch)
            lower = " ".join(
                f"{_num(frame.x(i))},{_num(frame.y(lo))}" for i, lo, _ in reversed(stretch)
            )
            parts.append(
                f'<polygon class="band" points="{upper} {lower}" fill="{PALETTE[0]}" '
                f'fill-opacity="0.16" stroke="none"><title>published intervals</title></polygon>'
            )
        stretch = []
    return parts


def _trend_mark(frame: _Frame, index: float, point: TrendPoint) -> str:
    """A run: its interval as a whisker and its estimate as a dot (red under an alarm),
    inside a link to its report when it has one."""
    colour = PALETTE[5] if point.alarm else PALETTE[0]
    x = _num(frame.x(index))
    mark = ""
    if point.low is not None and point.high is not None:
        mark += (
            f'<line x1="{x}" y1="{_num(frame.y(point.low))}" x2="{x}" '
            f'y2="{_num(frame.y(point.high))}" stroke="{colour}" stroke-width="1.5"/>'
        )
    if point.estimate is not None and math.isfinite(point.estimate):
        mark += (
            f'<circle class="{"alarm" if point.alarm else "run"}" cx="{x}" '
            f'cy="{_num(frame.y(point.estimate))}" r="{5 if point.alarm else 4}" '
            f'fill="{colour}"/>'
        )
    else:
        mark += (
            f'<text x="{x}" y="{_num(frame.bottom - 6)}" text-anchor="middle" '
            f'fill="{MISSING_COLOUR}">–</text>'
        )
    body = f"<g><title>{_e(point.tooltip)}</title>{mark}</g>"
    if point.href:
        return f'<a href="{_e(point.href)}">{body}</a>'
    return body


def trend_domain(values: Sequence[float]) -> tuple[float, float]:
    """The y range of a trend: every estimate and bound with room around them (8% of their
    span, at least 0.02), so a band at 0 or 1 stays inside the frame, never on it."""
    if not values:
        return 0.0, 1.0
    low, high = min(values), max(values)
    pad = max((high - low) * 0.08, 0.02 if high - low < 1 else 0.0, abs(high) * 1e-9)
    return low - pad, high + pad


def _time_axis(frame: _Frame, first: float, last: float) -> list[str]:
    """Date ticks along the bottom of a time-axis trend (UTC)."""
    from datetime import UTC, datetime

    span = last - first
    fmt = "%Y-%m-%d" if span >= 2 * 86400 else "%m-%d %H:%M"
    count = 5 if span > 0 else 1
    parts = []
    for step in range(count):
        at = first + span * step / max(count - 1, 1)
        tx = _num(frame.x(at))
        label = datetime.fromtimestamp(at, UTC).strftime(fmt)
        parts.append(
            f'<line x1="{tx}" y1="{frame.bottom}" x2="{tx}" y2="{frame.bottom + 4}" '
            f'stroke="#888"/><text class="date" x="{tx}" y="{frame.bottom + 16}" '
            f'text-anchor="middle" fill="#555">{_e(label)}</text>'
        )
    return parts


def trend_chart(
    points: Sequence[TrendPoint],
    *,
    y_label: str,
    x_label: str = "run (oldest first)",
    percent: bool = False,
    width: int = 720,
    height: int = 260,
) -> Markup:
    """A metric over runs: each run's estimate with its published interval (a whisker, and a
    band through consecutive runs), its tooltip on hover, a link to its report on click; runs
    under a change alarm in red. With every point's time (`TrendPoint.at`), the x axis is the
    date (UTC), so gaps between runs show."""
    values = [
        v
        for point in points
        for v in (point.estimate, point.low, point.high)
        if v is not None and math.isfinite(v)
    ]
    low, high = trend_domain(values)
    timed = bool(points) and all(point.at is not None for point in points)
    xs = [float(p.at) if timed else i + 1.0 for i, p in enumerate(points)]  # type: ignore[arg-type]
    first, last = (min(xs), max(xs)) if timed else (1.0, float(max(len(points), 2)))
    if timed and last - first < 1:
        first, last = first - 43200, last + 43200
    pad = (last - first) * 0.03 if timed else 0.0
    frame = _Frame(64, width - 16, 12, height - 44, first - pad, last + pad, low, high)
    x_title = "date (UTC)" if timed else x_label
    parts = [_svg_open(width, height, f"{y_label} by {x_title}")]
    if timed:
        parts += _sequence_axes(frame, x_title, y_label, percent, x_ticks=False)
        parts += _time_axis(frame, first, last)
    else:
        parts += _sequence_axes(frame, x_title, y_label, percent)
    parts += _trend_band(frame, points, xs)
    estimates = [
        (xs[index], point.estimate)
        for index, point in enumerate(points)
        if point.estimate is not None and math.isfinite(point.estimate)
    ]
    if len(estimates) > 1:
        line = " ".join(f"{_num(frame.x(i))},{_num(frame.y(v))}" for i, v in estimates)
        parts.append(
            f'<polyline class="estimate" points="{line}" fill="none" stroke="{PALETTE[0]}" '
            'stroke-width="1" stroke-opacity="0.6"/>'
        )
    parts += [_trend_mark(frame, xs[index], point) for index, point in enumerate(points)]
    parts.append("</svg>")
    return Markup("".join(parts))


@dataclass(frozen=True)
class CostPoint:
    """One model on the score-against-cost plot: both estimates, their intervals (None: no
    interval) and its probability of being on the front."""

    label: str
    cost: float
    score: float
    cost_low: float | None = None
    cost_high: float | None = None
    score_low: float | None = None
    score_high: float | None = None
    on_front: bool = False
    probability: float | None = None


def _cost_axis(points: Sequence[CostPoint]) -> tuple[float, float, bool]:
    """The cost axis (low, high, logarithmic): log when the costs span more than 20×."""
    values = [v for p in points for v in (p.cost, p.cost_low, p.cost_high) if v is not None]
    positive = [v for v in values if v > 0]
    if positive and len(positive) == len(values) and max(positive) / min(positive) > 20:
        return math.log10(min(positive)) - 0.1, math.log10(max(positive)) + 0.1, True
    low, high = _domain_of(values, None)
    return max(low, 0.0), high, False


def _cost_ticks(low: float, high: float, log_scale: bool) -> list[tuple[float, float]]:
    """(position on the axis scale, value) of each tick."""
    if log_scale:
        decades = range(math.ceil(low), math.floor(high) + 1)
        return [(float(d), 10.0**d) for d in decades]
    return [(t, t) for t in nice_ticks(low, high)]


def _cost_mark(
    point: CostPoint, colour: str, x: Callable[[float], float], y: Callable[[float], float]
) -> str:
    cx, cy = x(point.cost), y(point.score)
    parts = [
        f'<g class="cost-point{" front" if point.on_front else ""}" data-model="{_e(point.label)}">'
    ]
    if point.cost_low is not None and point.cost_high is not None:
        parts.append(
            f'<line class="cost-interval" x1="{_num(x(point.cost_low))}" y1="{_num(cy)}" '
            f'x2="{_num(x(point.cost_high))}" y2="{_num(cy)}" stroke="{colour}" '
            'stroke-width="1.5"/>'
        )
    if point.score_low is not None and point.score_high is not None:
        parts.append(
            f'<line class="score-interval" x1="{_num(cx)}" y1="{_num(y(point.score_low))}" '
            f'x2="{_num(cx)}" y2="{_num(y(point.score_high))}" stroke="{colour}" '
            'stroke-width="1.5"/>'
        )
    probability = "" if point.probability is None else f", P(on front) {point.probability:.2f}"
    parts.append(
        f'<circle cx="{_num(cx)}" cy="{_num(cy)}" r="{5 if point.on_front else 4}" '
        f'fill="{colour if point.on_front else "#fff"}" stroke="{colour}" stroke-width="2">'
        f"<title>{_e(point.label)}: score {_e(format_value(point.score, percent=True))}, "
        f"${_e(format_value(point.cost))} per sample{_e(probability)}</title></circle>"
        f'<text x="{_num(cx + 7)}" y="{_num(cy - 6)}" fill="#222">'
        f"{_e(_truncate(point.label, 28))}</text></g>"
    )
    return "".join(parts)


def _front_line(
    points: Sequence[CostPoint], x: Callable[[float], float], y: Callable[[float], float]
) -> str:
    """The front as a staircase through its points, cheapest first."""
    front = sorted((p for p in points if p.on_front), key=lambda p: p.cost)
    if not front:
        return ""
    path = [f"M{_num(x(front[0].cost))},{_num(y(front[0].score))}"]
    for previous, point in itertools.pairwise(front):
        path.append(f"L{_num(x(point.cost))},{_num(y(previous.score))}")
        path.append(f"L{_num(x(point.cost))},{_num(y(point.score))}")
    return (
        f'<path class="pareto-front" d="{" ".join(path)}" fill="none" stroke="#555" '
        'stroke-dasharray="5 3"><title>cost–score Pareto front (point estimates)</title></path>'
    )


def cost_score_chart(
    points: Sequence[CostPoint], *, x_label: str = "cost per sample (USD)", width: int = 640
) -> Markup:
    """Score (y, 0–100%) against cost per sample (x; logarithmic when costs span more than
    20×), each model with both intervals as whiskers, filled when on the front of the point
    estimates, and the front drawn as a dashed staircase."""
    left, right, top, height = 56, 24, 16, 360
    axis_y = height - 48
    low, high, log_scale = _cost_axis(points)

    def x(value: float) -> float:
        scaled = math.log10(max(value, 10**low)) if log_scale else value
        return left + (scaled - low) / (high - low) * (width - left - right)

    def y(value: float) -> float:
        return axis_y - value * (axis_y - top)

    parts = [_svg_open(width, height, "score against cost per sample, with the Pareto front")]
    for position, value in _cost_ticks(low, high, log_scale):
        tx = _num(left + (position - low) / (high - low) * (width - left - right))
        parts.append(
            f'<line x1="{tx}" y1="{top}" x2="{tx}" y2="{axis_y}" stroke="#e3e3e3"/>'
            f'<text x="{tx}" y="{axis_y + 14}" text-anchor="middle" fill="#555">'
            f"${_e(format_value(value))}</text>"
        )
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<line x1="{left}" y1="{_num(y(tick))}" x2="{width - right}" y2="{_num(y(tick))}" '
            f'stroke="#eee"/><text x="{left - 6}" y="{_num(y(tick) + 4)}" text-anchor="end" '
            f'fill="#555">{_e(format_value(tick, percent=True))}</text>'
        )
    scale = " (log scale)" if log_scale else ""
    parts.append(
        f'<line x1="{left}" y1="{axis_y}" x2="{width - right}" y2="{axis_y}" stroke="#888"/>'
        f'<text x="{_num((left + width - right) / 2)}" y="{axis_y + 32}" text-anchor="middle" '
        f'fill="#333">{_e(x_label + scale)}</text>'
        f'<text x="14" y="{_num(y(0.5))}" text-anchor="middle" fill="#333" '
        f'transform="rotate(-90 14 {_num(y(0.5))})">overall score</text>'
    )
    parts.append(_front_line(points, x, y))
    for index, point in enumerate(points):
        parts.append(_cost_mark(point, PALETTE[index % len(PALETTE)], x, y))
    parts.append("</svg>")
    return Markup("".join(parts))
