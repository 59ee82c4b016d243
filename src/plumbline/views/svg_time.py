"""Charts over a sequence or over time (inline SVG, as `views.svg`): a sequential test's
running interval after every pair, and a metric's trend across stored results."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from plumbline.views.svg import (
    MISSING_COLOUR,
    PALETTE,
    _domain_of,
    _e,
    _num,
    _svg_open,
    format_value,
    nice_ticks,
    y_gridline,
)


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
    parts = [
        y_gridline(
            frame.y(tick),
            left=frame.left,
            right=frame.right,
            label=format_value(tick, percent=percent),
        )
        for tick in nice_ticks(frame.low, frame.high)
    ]
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
