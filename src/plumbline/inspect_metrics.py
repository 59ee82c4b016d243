"""plumbline's interval and paired statistics as Inspect metrics, for any Inspect task.

    from inspect_ai.scorer import accuracy, scorer
    from plumbline.inspect_metrics import wilson_interval, t_interval

    @scorer(metrics=[accuracy(), wilson_interval(), t_interval()])
    def my_scorer(): ...

Inspect reduces a sample's epochs to one score before metrics run, so every metric here works
over questions (samples), the right resampling unit. Interval metrics report a group of values
(`proportion`, `wilson_low`, `wilson_high`; `mean`, `t_low`, `t_high`, `n`); paired metrics
read a score whose value is a dict with one entry per arm (e.g. `{"baseline": 1,
"candidate": 0}`) and compare two named entries over the same samples. The statistics are
plumbline's (`plumbline.stats`), imported only when a metric runs, so registering them
(through the `inspect_ai` entry point) costs nothing.

Registered names: `plumbline/wilson_interval`, `plumbline/t_interval`,
`plumbline/paired_difference`, `plumbline/mcnemar`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Value, metric, value_to_float

_to_float = value_to_float()


def _values(scores: Sequence[SampleScore]) -> list[float]:
    values = [float(_to_float(item.score.value)) for item in scores]
    return [value for value in values if math.isfinite(value)]


def _arm(item: SampleScore, arm: str) -> float:
    value = item.score.value
    if not isinstance(value, dict) or arm not in value:
        raise ValueError(
            f"sample {item.sample_id!r}: a paired metric needs a dict score value with an "
            f"entry {arm!r} (one entry per arm), got {value!r}"
        )
    return float(_to_float(value[arm]))


def _bounds(low: float | None, high: float | None, prefix: str = "") -> dict[str, float]:
    return {
        f"{prefix}low": math.nan if low is None else float(low),
        f"{prefix}high": math.nan if high is None else float(high),
    }


def _t_summary(values: list[float], level: float, estimate: str, prefix: str = "") -> Value:
    """`{estimate: mean, low, high, n}` with the Student-t interval (NaN bounds below 2 values)."""
    from plumbline.stats import t_interval as interval

    if len(values) < 2:
        mean = values[0] if values else math.nan
        return {
            estimate: mean,
            f"{prefix}low": math.nan,
            f"{prefix}high": math.nan,
            "n": len(values),
        }
    result = interval(values, level=level)
    return {
        estimate: result.statistic,
        **_bounds(result.interval.low, result.interval.high, prefix),
        "n": len(values),
    }


@metric(name="wilson_interval")
def wilson_interval(level: float = 0.95) -> Metric:
    """Wilson score interval of the proportion of correct samples (scores 0/1, "C"/"I").

    `p̃ ± z/(1 + z²/n) · sqrt(p(1−p)/n + z²/4n²)` centred at `(p + z²/2n)/(1 + z²/n)`; stays in
    [0, 1] and keeps width at p = 0 or 1. Wilson (1927), JASA 22:209–212.
    """

    def compute(scores: list[SampleScore]) -> Value:
        from plumbline.stats import proportion_interval

        values = _values(scores)
        if not values:
            return {"proportion": math.nan, "wilson_low": math.nan, "wilson_high": math.nan}
        if any(value not in (0.0, 1.0) for value in values):
            raise ValueError("wilson_interval needs binary scores (0/1, C/I); use t_interval")
        successes = int(sum(values))
        result = proportion_interval(successes, len(values), method="wilson", level=level)
        return {
            "proportion": result.statistic,
            **_bounds(result.interval.low, result.interval.high, "wilson_"),
        }

    return compute


@metric(name="t_interval")
def t_interval(level: float = 0.95) -> Metric:
    """Student-t interval of the mean score over samples: `mean ± t(n−1) · sd/√n`
    (Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640)."""

    def compute(scores: list[SampleScore]) -> Value:
        return _t_summary(_values(scores), level, "mean", "t_")

    return compute


@metric(name="paired_difference")
def paired_difference(first: str, second: str, level: float = 0.95) -> Metric:
    """Mean paired difference `first − second` over samples with a paired t interval (each
    sample is its own control: `mean(d) ± t(n−1) · sd(d)/√n`, d the per-sample differences)."""

    def compute(scores: list[SampleScore]) -> Value:
        differences = [_arm(item, first) - _arm(item, second) for item in scores]
        return _t_summary(differences, level, "difference")

    return compute


@metric(name="mcnemar")
def mcnemar(first: str, second: str, mid_p: bool = False) -> Metric:
    """McNemar's exact test of paired binary outcomes: `b` (first right, second wrong), `c`
    (the reverse) and the two-sided p-value `min(1, 2·P(B ≤ min(b, c)))`, B ~ Bin(b + c, ½)
    (McNemar 1947; mid-p per Fagerland et al. 2013)."""

    def compute(scores: list[SampleScore]) -> Value:
        from plumbline.stats import mcnemar_exact

        x = [_arm(item, first) for item in scores]
        y = [_arm(item, second) for item in scores]
        if not x:
            return {"pvalue": math.nan, "b": 0, "c": 0}
        result = mcnemar_exact(x, y, mid_p=mid_p)
        details: dict[str, Any] = result.details
        return {"pvalue": result.pvalue, "b": int(details["b"]), "c": int(details["c"])}

    return compute


__all__ = ["mcnemar", "paired_difference", "t_interval", "wilson_interval"]
