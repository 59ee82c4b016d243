"""History change alarms (plumbline.stats.change, plumbline.stats.cusum): edge cases, invalid
input, the closed-form threshold against simulation, and a small seeded simulation of the
guarantee through `detect_change` (the full one is benchmarks/bench_history_check.py)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy import stats as sps

from plumbline.stats.change import ChangeDetection, detect_change
from plumbline.stats.cusum import cusum_design, one_sided_alarm_chance
from plumbline.stats.proportions import proportion_bounds


def _wilson_series(successes: list[int], n: int) -> tuple[list[float], ...]:
    k = np.asarray(successes)
    low, high = proportion_bounds(k, n)
    return list(k / n), list(low), list(high), [n] * len(successes)


def test_one_run_is_never_an_alarm() -> None:
    result = detect_change([0.7], [0.6], [0.8], [100])
    assert isinstance(result, ChangeDetection)
    assert result.alarms == (False,)
    assert result.first_alarm is None and result.changed_at is None
    assert result.statistics == (0.0,) and result.scores == (0.0,)
    assert result.alpha == 0.05 and result.within == 365 and "CUSUM" in result.method
    assert 5_000 < result.average_run_length < 10_000
    assert "within 365 runs" in result.guarantee and "at most 5%" in result.guarantee


def test_a_far_jump_alarms_at_once_and_a_small_one_does_not() -> None:
    close = detect_change(*_wilson_series([70, 60], 100))
    assert close.alarms == (False, False)
    far = detect_change(*_wilson_series([70, 70, 70, 30], 100))
    assert far.alarms == (False, False, False, True)
    assert far.first_alarm == 3 and far.changed_at == 3
    assert far.shift == pytest.approx(-0.4)
    assert far.shift_z is not None and far.shift_z < -5


def test_identical_runs_never_alarm() -> None:
    result = detect_change(*_wilson_series([42] * 60, 100))
    assert not any(result.alarms)
    assert max(result.statistics) == pytest.approx(0.0, abs=1e-9)


def test_all_zero_width_intervals_are_exact_values() -> None:
    same = detect_change([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [20, 20, 20])
    assert not any(same.alarms)
    moved = detect_change([1.0, 1.0, 0.95], [1.0, 1.0, 0.95], [1.0, 1.0, 0.95], [20, 20, 20])
    assert moved.alarms == (False, False, True) and moved.changed_at == 2
    document = json.loads(json.dumps(moved.to_dict(), allow_nan=False))
    assert document["first_alarm"] == 2 and document["alarms"] == [False, False, True]
    assert document["guarantee"].startswith("with nothing changing")


def test_a_check_never_changes_when_later_runs_arrive() -> None:
    # the decision at run i uses runs <= i only: checking 30 runs or 40 gives the same first 30
    rng = np.random.default_rng(30)
    sizes = rng.integers(20, 2000, size=40)
    k = rng.binomial(sizes, 0.6)
    k[33:] = rng.binomial(sizes[33:], 0.3)
    low, high = proportion_bounds(k, sizes)
    given = {"extra_variance": 0.0}
    whole = detect_change(k / sizes, low, high, sizes, **given)
    prefix = detect_change(k[:30] / sizes[:30], low[:30], high[:30], sizes[:30], **given)
    assert whole.alarms[:30] == prefix.alarms
    assert whole.first_alarm is not None and whole.first_alarm >= 33
    assert whole.changed_at == 33


def test_the_extra_variance_is_estimated_or_given_and_said() -> None:
    rng = np.random.default_rng(7)
    n = np.full(120, 400)
    truth = 0.6 + 0.03 * rng.standard_normal(120)  # about 1.2 standard errors of one run
    k = rng.binomial(n, truth)
    low, high = proportion_bounds(k, n)
    estimated = detect_change(k / n, low, high, n)
    assert estimated.extra_variance_source == "estimated"
    assert estimated.extra_variance == pytest.approx(0.03**2, rel=0.5)
    none = detect_change(k / n, low, high, n, extra_variance=0.0)
    assert none.extra_variance_source == "given" and none.extra_variance == 0.0
    assert none.changed and not estimated.changed  # ignoring it, the noise looks like change


def test_the_family_splits_alpha_and_raises_the_threshold() -> None:
    one = detect_change(*_wilson_series([60, 61], 100))
    nine = detect_change(*_wilson_series([60, 61], 100), family=9)
    assert nine.alpha_per_series == pytest.approx(0.05 / 9)
    assert nine.threshold > one.threshold
    assert nine.average_run_length > one.average_run_length
    assert "over the 9 series checked together at most 5%" in nine.guarantee


def test_the_closed_form_threshold_matches_simulation() -> None:
    design = cusum_design(0.05, 200, 1.0)
    assert design.alarm_chance <= 0.05
    rng = np.random.default_rng(11)
    z = rng.standard_normal((20_000, 200))
    upper = np.zeros(20_000)
    lower = np.zeros(20_000)
    alarmed = np.zeros(20_000, dtype=bool)
    for t in range(200):
        upper = np.maximum(0, upper + z[:, t] - 1.0)
        lower = np.maximum(0, lower - z[:, t] - 1.0)
        alarmed |= (upper > design.threshold) | (lower > design.threshold)
    # Monte Carlo standard error 0.15 points
    assert abs(alarmed.mean() - design.alarm_chance) < 0.006
    # one run: the chance is P(z > h + k) exactly
    expected = sps.norm.sf(design.threshold + 1.0)
    assert one_sided_alarm_chance(design.threshold, 1.0, 1) == pytest.approx(expected, rel=0.05)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([], [], [], []), {}, "at least 1 run"),
        (([0.5, 0.6], [0.4], [0.6, 0.7], [10, 10]), {}, "one entry per run"),
        (([0.5], [0.6], [0.4], [10]), {}, "run 0: interval low 0.6 is above high 0.4"),
        (([float("nan")], [0.4], [0.6], [10]), {}, "estimates[0] is nan"),
        (([0.5], [0.4], [0.6], [0]), {}, "ns[0] must be >= 1"),
        (([0.5], [0.4], [0.6], [2.5]), {}, "ns[0] must be an integer"),
        (([0.5], [0.4], [0.6], [10]), {"alpha": 1.5}, "alpha must be strictly between 0 and 1"),
        (([0.5], [0.4], [0.6], [10]), {"alpha": 0.0005}, "alpha must be between 0.001 and 0.5"),
        (([0.5], [0.4], [0.6], [10]), {"within": 1}, "within must be >= 2"),
        (([0.5], [0.4], [0.6], [10]), {"within": 5000}, "within must be at most 1,000 runs"),
        (([0.5], [0.4], [0.6], [10]), {"family": 0}, "family must be >= 1"),
        (([0.5], [0.4], [0.6], [10]), {"extra_variance": -1.0}, "extra_variance must be"),
        (([0.5], [0.4], [0.6], [10]), {"confidence": 0}, "confidence must be strictly"),
        ((["a"], [0.4], [0.6], [10]), {}, "estimates must be a sequence of numbers"),
    ],
)
def test_invalid_input_is_a_clear_value_error(
    args: tuple[list[float], ...], kwargs: dict[str, float], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        detect_change(*args, **kwargs)  # type: ignore[arg-type]


def _binomial_series(
    rng: np.random.Generator, n: np.ndarray, p: float, *, shift: float = 0.0, at: int = 10**9
) -> ChangeDetection:
    truth = np.where(np.arange(n.size) >= at, p + shift * np.sqrt(p * (1 - p) / n), p)
    k = rng.binomial(n, truth)
    low, high = proportion_bounds(k, n)
    return detect_change(k / n, low, high, n)


@pytest.mark.parametrize(("n", "p"), [(20, 0.5), (200, 0.3)])
def test_no_change_rarely_alarms_over_a_year(n: int, p: float) -> None:
    rng = np.random.default_rng(n + int(100 * p))
    sizes = np.full(365, n)
    alarms = sum(_binomial_series(rng, sizes, p).changed for _ in range(150))
    # alpha 5%: 7.5 of 150 expected; 16 is beyond 3 Monte Carlo standard errors
    assert alarms <= 16


def test_a_three_standard_error_drop_is_found_within_a_few_runs() -> None:
    rng = np.random.default_rng(5)
    sizes = np.full(45, 200)
    delays = []
    for _ in range(60):
        result = _binomial_series(rng, sizes, 0.7, shift=-3.0, at=25)
        if result.first_alarm is None or result.first_alarm < 25:
            delays.append(99)
            continue
        delays.append(result.first_alarm - 25 + 1)
        assert result.shift is not None and result.shift < 0
        assert result.changed_at is not None and abs(result.changed_at - 25) <= 3
    assert np.median(delays) <= 4
