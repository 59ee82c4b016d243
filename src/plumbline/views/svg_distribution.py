"""Charts of many values per group (inline SVG, as `views.svg`): distributions as boxes with
their points, and the agreement of two measurements."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from plumbline.views.svg import (
    MISSING_COLOUR,
    PALETTE,
    _e,
    _num,
    _svg_open,
    _truncate,
    _x_axis,
    format_value,
    nice_ticks,
)


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
