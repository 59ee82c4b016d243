"""Every interval of the reliability report, with its unit, its n and what its coverage rests on.

The prompt is the unit that varies between questions, so the model-level intervals of
consistency, agreement and performance are two-stage: trials are averaged within each prompt
(the second stage), and the interval is Student's t over the prompt values (the first stage).
Its question is "these prompts": it covers the mean of the prompts that were run (simulated
99% and more), and covers the mean over the population of prompts they were drawn from only
when the prompts are many or alike (76–86% at 3–10 prompts drawn from types of which one is
much harder). Beside it, `population_interval` answers the population question for every
population (a betting interval: wide at a few prompts, as it must be). Latency percentiles get
distribution-free order-statistic intervals
(one-sided where n is too small for two), the latency mean a log-scale interval that holds for
skewed latencies, a prompt's agreement a jackknife t interval over its responses.

`ReliabilityInterval` is the document form: an `Interval` that also states the prompts and
trials it rests on, whether its coverage is guaranteed (distribution-free, or within
93.5–97% in every simulated design of docs/statistics.md) or approximate (simulated below
93.5%, never below 80%), and, when approximate, the lowest simulated coverage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from plumbline.reliability.result import ReliabilityInterval, Sided
from plumbline.stats import t_interval
from plumbline.stats.bounded_means import betting_mean_interval
from plumbline.stats.order_statistics import quantile_interval
from plumbline.stats.skewed_means import lognormal_mean_interval

#: The lowest simulated coverage of a prompt's agreement interval (jackknife t over 5–25
#: responses; docs/statistics.md): below 93.5%, so it is labelled approximate.
PROMPT_AGREEMENT_COVERAGE = 0.90

#: The lowest simulated coverage of the t interval over prompts of CERT's consistency score
#: (docs/statistics.md: 90.7% at 10 prompts × 25 trials): per-prompt CERT scores are strongly
#: left-skewed (a few prompts answered by one repeated answer and an outlier score near 0), and
#: no interval tried (t, Johnson's skew-corrected t, bootstrap-t over prompts) reaches 93.5%
#: at 10 prompts, so it is labelled approximate.
CONSISTENCY_COVERAGE = 0.90

#: Cohen's d's cluster-robust interval rests on a variance estimated from the prompts (t with
#: prompts − 1 df): below this many prompts it is labelled approximate, with the lowest coverage
#: measured for it, 91.5% at 3 prompts × 25 trials (issue 37's independent simulation; the
#: project's own, benchmarks/bench_reliability_population.py, 96–98% at 3 prompts).
EFFECT_FEW_PROMPTS = 5
EFFECT_COVERAGE = 0.915

OVER_PROMPTS = (
    "these prompts: t over prompt means (two-stage: prompts, then trials within each prompt)"
)
POPULATION = (
    "prompt population: betting interval over prompt means (Waudby-Smith & Ramdas 2024), any "
    "population of prompts with values in range, prompts drawn at random"
)


def _bound(value: float, low: float, high: float) -> float | None:
    if not math.isfinite(value):
        return None
    return min(max(value, low), high)


def over_prompts(
    values: Sequence[float],
    trials: int,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
    level: float = 0.95,
    simulated_coverage: float | None = None,
) -> tuple[float, float | None, ReliabilityInterval]:
    """Mean over prompts, its standard error and the two-stage t interval (clipped to `bounds`).

    `values` holds one value per prompt (its trials already averaged or scored together);
    `x̄ ± t_{k−1, 1−α/2} · s/√k` over the k prompts (Student 1908; Cochran 1977, §10.3: with
    equal trials per prompt the spread of the prompt means holds both stages' variance).
    One prompt has no interval (`sided = "none"`). With `simulated_coverage` (below 93.5% in
    docs/statistics.md) the interval is labelled approximate and carries that figure.
    """
    k = len(values)
    if k == 0:
        raise ValueError("a mean over prompts needs at least 1 prompt")
    mean = float(np.mean(values))
    if k < 2:
        return (
            mean,
            None,
            ReliabilityInterval(
                low=None,
                high=None,
                level=level,
                method="none: a mean over prompts needs at least 2 prompts for an interval",
                prompts=k,
                trials=trials,
                sided="none",
                coverage="guaranteed",
            ),
        )
    result = t_interval(values, level=level)
    approximate = simulated_coverage is not None
    interval = ReliabilityInterval(
        low=_bound(result.interval.low, *bounds),
        high=_bound(result.interval.high, *bounds),
        level=level,
        method=OVER_PROMPTS + (", approximate" if approximate else ""),
        prompts=k,
        trials=trials,
        coverage="approximate" if approximate else "guaranteed",
        simulated_coverage=simulated_coverage,
    )
    standard_error = result.standard_error
    return mean, standard_error if standard_error is not None else None, interval


def population_interval(
    values: Sequence[float],
    trials: int,
    *,
    bounds: tuple[float, float] = (0.0, 1.0),
    level: float = 0.95,
) -> ReliabilityInterval | None:
    """An interval for the mean over the prompt population the prompts were drawn from.

    The t interval of `over_prompts` answers a narrower question at a few prompts: it covers the
    mean of the prompts that were run (simulated 99%), but the population's mean only 76–86% at
    3–10 prompts when one type of prompt is much harder than the rest (issue 37). This one holds
    for every population of per-prompt values within `bounds`, prompts drawn independently:
    `stats.betting_mean_interval` over the prompt values in prompt-id order. None below 2
    prompts."""
    if len(values) < 2:
        return None
    result = betting_mean_interval(values, low=bounds[0], high=bounds[1], level=level)
    return ReliabilityInterval(
        low=result.interval.low,
        high=result.interval.high,
        level=level,
        method=POPULATION,
        prompts=len(values),
        trials=trials,
        coverage="guaranteed",
    )


def percentile_interval(
    values: Sequence[float], q: float, *, prompts: int, level: float = 0.95
) -> ReliabilityInterval:
    """Distribution-free order-statistic interval of the q-th percentile of latencies.

    Trials are the unit (a latency is one call's). Where n is too small for a two-sided
    interval, only the lower bound (`sided = "lower"`).
    """
    result = quantile_interval(values, q, level=level)
    sided: Sided = result.details["sided"]
    return ReliabilityInterval(
        low=result.interval.low if math.isfinite(result.interval.low) else None,
        high=result.interval.high if math.isfinite(result.interval.high) else None,
        level=level,
        method=result.interval.method,
        prompts=prompts,
        trials=result.n,
        sided=sided,
        coverage="guaranteed",
    )


def latency_mean_interval(
    values: Sequence[float], *, prompts: int, level: float = 0.95
) -> ReliabilityInterval:
    """Log-scale (modified Cox) interval of the mean latency; t interval, approximate, when a
    latency is 0 (no log)."""
    data = np.asarray(values, dtype=np.float64)
    if np.all(data > 0):
        result = lognormal_mean_interval(data, level=level)
        return ReliabilityInterval(
            low=result.interval.low,
            high=result.interval.high,
            level=level,
            method=result.interval.method,
            prompts=prompts,
            trials=result.n,
            coverage="guaranteed",
        )
    fallback = t_interval(data, level=level)
    return ReliabilityInterval(
        low=max(0.0, fallback.interval.low),
        high=fallback.interval.high,
        level=level,
        method="t interval, approximate (a latency of 0 s rules out the log scale)",
        prompts=prompts,
        trials=fallback.n,
        coverage="approximate",
        simulated_coverage=0.85,
    )


def prompt_agreement_interval(
    low: float, high: float, responses: int, *, level: float = 0.95
) -> ReliabilityInterval:
    """The document form of one prompt's jackknife t interval of agreement (approximate)."""
    return ReliabilityInterval(
        low=max(-1.0, low),
        high=min(1.0, high),
        level=level,
        method="jackknife t over responses (one prompt), approximate",
        prompts=1,
        trials=responses,
        coverage="approximate",
        simulated_coverage=PROMPT_AGREEMENT_COVERAGE,
    )


def effect_interval(
    low: float, high: float, prompts: int, values: int, fewest: int | None = None
) -> ReliabilityInterval:
    """The document form of Cohen's d's cluster-robust interval (`cohens_d_clustered`): the
    population d (prompts as clusters); approximate when either model has fewer than
    `EFFECT_FEW_PROMPTS` prompts (`fewest`: the smaller model's prompts; `prompts` counts the
    clusters of both, which two models asked different prompts make larger than either)."""
    few = min(prompts, fewest if fewest is not None else prompts) < EFFECT_FEW_PROMPTS
    return ReliabilityInterval(
        low=low,
        high=high,
        level=0.95,
        method="prompt population: cluster-robust t over prompts (CR1, t with prompts − 1 df; "
        "delta method for the pooled SD)"
        + (f", approximate below {EFFECT_FEW_PROMPTS} prompts" if few else ""),
        prompts=prompts,
        trials=values,
        coverage="approximate" if few else "guaranteed",
        simulated_coverage=EFFECT_COVERAGE if few else None,
    )
