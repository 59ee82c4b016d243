"""SVG plots: escaped text, a tooltip on every mark, missing values marked, deterministic output."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from plumbline.views.svg import (
    IntervalRow,
    format_value,
    grouped_bar_chart,
    interval_chart,
    nice_ticks,
)
from plumbline.views.svg_distribution import agreement_chart, distribution_chart

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(1)>'


def parse(markup: str) -> ET.Element:
    """Parse as XML: fails on any unescaped `<`, `&` or quote that breaks the markup."""
    return ET.fromstring(str(markup))


def texts(root: ET.Element) -> list[str]:
    return ["".join(node.itertext()) for node in root.iter(f"{SVG}text")]


def test_interval_chart_places_estimate_and_whisker_on_the_domain() -> None:
    svg = interval_chart(
        [IntervalRow("a", 0.5, 0.25, 0.75)], x_label="score", domain=(0.0, 1.0), width=720
    )
    root = parse(svg)
    dot = next(c for c in root.iter(f"{SVG}circle") if c.get("class") == "estimate")
    whisker = next(line for line in root.iter(f"{SVG}line") if line.get("class") == "whisker")
    left, right = float(whisker.get("x1", "nan")), float(whisker.get("x2", "nan"))
    # The estimate sits in the middle of its symmetric interval.
    assert float(dot.get("cx", "nan")) == pytest.approx((left + right) / 2, abs=0.01)
    assert right > left


def test_interval_chart_marks_missing_rows_with_their_note_not_a_zero() -> None:
    svg = interval_chart(
        [IntervalRow("present", 0.0, 0.0, 0.1), IntervalRow("absent", None, note="not run")],
        x_label="score",
        domain=(0.0, 1.0),
    )
    root = parse(svg)
    missing = [g for g in root.iter(f"{SVG}g") if g.get("class") == "missing"]
    assert len(missing) == 1
    assert "not run" in "".join(missing[0].itertext())
    estimates = [c for c in root.iter(f"{SVG}circle") if c.get("class") == "estimate"]
    assert len(estimates) == 1  # only the real 0 gets a dot


def test_every_mark_has_a_title_tooltip() -> None:
    svg = interval_chart(
        [IntervalRow("a", 0.4, 0.3, 0.5, tooltip="a: 40%"), IntervalRow("b", None)],
        x_label="x",
    )
    root = parse(svg)
    for group in root.iter(f"{SVG}g"):
        if group.get("class") in ("mark", "missing"):
            assert group.find(f"{SVG}title") is not None
    assert "a: 40%" in "".join(t.text or "" for t in root.iter(f"{SVG}title"))


def test_reference_line_drawn_for_forest_plots() -> None:
    root = parse(
        interval_chart([IntervalRow("delta", -0.1, -0.3, 0.1)], x_label="Δ", reference=0.0)
    )
    reference = [line for line in root.iter(f"{SVG}line") if line.get("class") == "reference"]
    assert len(reference) == 1


@pytest.mark.parametrize(
    "make",
    [
        lambda: interval_chart(
            [IntervalRow(HOSTILE, 0.5, 0.4, 0.6, note=HOSTILE)], x_label=HOSTILE
        ),
        lambda: interval_chart([IntervalRow(HOSTILE, None, note=HOSTILE)], x_label=HOSTILE),
        lambda: grouped_bar_chart([HOSTILE], {HOSTILE: [1.0]}, y_label=HOSTILE),
        lambda: distribution_chart({HOSTILE: [1.0, 2.0, 3.0]}, x_label=HOSTILE),
    ],
)
def test_hostile_text_is_escaped(make: object) -> None:
    svg = str(make())  # type: ignore[operator]
    assert "<script" not in svg and "<img" not in svg
    root = parse(svg)
    assert not list(root.iter("script")) and not list(root.iter(f"{SVG}script"))
    all_text = "".join(root.itertext())
    assert "<script>" in all_text  # visible as text, once unescaped by the parser


def test_grouped_bar_chart_marks_none_as_no_value() -> None:
    svg = grouped_bar_chart(
        ["p50", "p99"], {"m1": [1.0, 2.0], "m2": [0.5, None]}, y_label="seconds"
    )
    root = parse(svg)
    bars = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "bar"]
    assert len(bars) == 3
    heights = {(b.find(f"{SVG}title").text or ""): float(b.get("height", "0")) for b in bars}  # type: ignore[union-attr]
    assert heights["p99 · m1: 2"] == pytest.approx(2 * heights["p50 · m1: 1"], rel=1e-3)
    missing = [g for g in root.iter(f"{SVG}g") if g.get("class") == "missing"]
    assert len(missing) == 1 and "no value" in "".join(missing[0].itertext())


def test_grouped_bar_chart_rejects_ragged_series() -> None:
    with pytest.raises(ValueError, match="2 categories"):
        grouped_bar_chart(["a", "b"], {"m": [1.0]}, y_label="y")


def test_distribution_chart_draws_every_point_and_is_deterministic() -> None:
    groups = {"control": [1.0, 2.0, 3.0, 4.0, 100.0], "treatment": [2.0, 2.5]}
    first = distribution_chart(groups, x_label="seconds")
    assert first == distribution_chart(groups, x_label="seconds")
    root = parse(first)
    points = [c for c in root.iter(f"{SVG}circle") if c.get("class") == "point"]
    assert len(points) == 7
    medians = [line for line in root.iter(f"{SVG}line") if line.get("class") == "median"]
    assert len(medians) == 2
    box_titles = [
        "".join(g.find(f"{SVG}title").itertext())  # type: ignore[union-attr]
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "box"
    ]
    assert "control: n=5, median 3" in box_titles[0]


def test_distribution_chart_log_scale_says_what_it_leaves_out() -> None:
    chart = distribution_chart({"a": [0.0, 10.0, 100.0], "b": []}, x_label="t", log_scale=True)
    root = parse(chart)
    titles = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}title"))
    assert "1 value(s) not shown" in titles
    assert "b: no values" in titles
    assert any("log scale" in text for text in texts(root))


def test_nice_ticks_cover_the_range_with_round_steps() -> None:
    assert nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    ticks = nice_ticks(-0.13, 0.27)
    assert ticks[0] >= -0.13 and ticks[-1] <= 0.27 and len(ticks) >= 3


@pytest.mark.parametrize(("low", "high"), [(-0.07, 0.05), (-0.3, 0.1), (-1.0, 1.0), (-0.0123, 0.0)])
def test_ticks_through_zero_never_read_minus_zero(low: float, high: float) -> None:
    ticks = nice_ticks(low, high)
    assert 0.0 in ticks
    assert all(low - 1e-12 <= tick <= high + 1e-12 for tick in ticks)
    labels = [format_value(tick) for tick in ticks] + [format_value(-0.0004, percent=True)]
    assert not any(label.startswith("-0") and label.strip("-0.%") == "" for label in labels)
    assert "0" in labels


def test_agreement_chart_plots_every_labelled_pair_with_its_exact_values() -> None:
    groups = {"model a": [[1.0, 1.0], [1.0, 0.0], [0.25, 0.0]], HOSTILE: [[0.5, 1.0]]}
    first = agreement_chart(groups)
    assert first == agreement_chart(groups)  # deterministic jitter
    root = parse(first)
    points = [c for c in root.iter(f"{SVG}circle") if c.get("class") == "point"]
    assert len(points) == 4
    titles = ["".join(c.find(f"{SVG}title").itertext()) for c in points]  # type: ignore[union-attr]
    assert titles[1] == "model a: judge 1, human 0"
    assert titles[2] == "model a: judge 0.25, human 0"
    diagonal = [line for line in root.iter(f"{SVG}line") if line.get("class") == "diagonal"]
    assert len(diagonal) == 1
    assert "model a (3 labelled)" in texts(root)
    # a point stays near its value: judge 0.25 is left of the middle of the plot
    assert float(points[2].get("cx", "0")) < float(points[3].get("cx", "0"))
