"""The score-against-cost plot of a leaderboard (inline SVG, as `views.svg`): each model's score and
cost with their intervals, and the front of models no other beats on both."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from plumbline.views.svg import (
    PALETTE,
    _domain_of,
    _e,
    _num,
    _svg_open,
    _truncate,
    format_value,
    nice_ticks,
    x_gridline,
)


@dataclass(frozen=True)
class CostPoint:
    """One model on the score-against-cost plot: both estimates, their intervals (None: no
    interval) and its posterior probability of being on the front."""

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
    probability = (
        "" if point.probability is None else f", probability on the front {point.probability:.2f}"
    )
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
        tx = left + (position - low) / (high - low) * (width - left - right)
        parts.append(x_gridline(tx, top=top, axis_y=axis_y, label=f"${format_value(value)}"))
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
