"""The one formatting module: every view's numbers, intervals and missing values."""

from __future__ import annotations

import pytest

from plumbline.core import present
from plumbline.core.result import Interval


def test_missing_values_read_as_a_dash_never_zero() -> None:
    for value in (None, float("nan"), float("inf"), "text"):
        assert present.number(value) == present.MISSING
        assert present.percent(value) == present.MISSING
        assert present.fixed(value) == present.MISSING
        assert present.usd(value) == present.MISSING
    assert present.percent(0.0) == "0.0%"


def test_numbers() -> None:
    assert present.number(1234) == "1,234"
    assert present.number(0.123456) == "0.123"
    assert present.number(12.3456) == "12.3"
    assert present.number(3.0) == "3"
    assert present.number(0.0001234) == "0.000123"
    assert present.number(-0.0001) == "-0.0001"
    assert present.fixed(0.8, 3) == "0.800"
    assert present.fixed(-0.0001, 2) == "0.00"
    assert present.percent(0.8412) == "84.1%"
    assert present.percent_value(4.5) == "4.5%"
    assert present.points(0.052) == "+5.2 pts"
    assert present.signed(0.25) == "+0.250"
    assert present.usd(0.115915) == "$0.1159"
    assert present.usd(-1234.5) == "-$1,234.50"
    assert present.level(0.95) == "95%"


def test_intervals() -> None:
    interval = Interval(low=0.715, high=0.917, level=0.95, method="Wilson")
    assert present.interval(interval) == "[0.715, 0.917]"
    assert present.interval(interval, as_percent=True) == "[71.5%, 91.7%]"
    assert present.interval(interval, decimals=2) == "[0.71, 0.92]"
    assert present.interval(interval, in_percent=True) == "[0.7%, 0.9%]"
    assert present.interval(None) == "—"
    assert present.interval(Interval(low=None, high=0.2, level=0.95, method="x")) == "—"


def test_markdown_table_escapes_cells() -> None:
    table = present.markdown_table(["model", "score"], [["a|b", "0.5"]], align="lr")
    assert table.splitlines() == ["| model | score |", "|---|---:|", "| a\\|b | 0.5 |"]
    with pytest.raises(ValueError, match="one letter per column"):
        present.markdown_table(["a"], [], align="lr")
