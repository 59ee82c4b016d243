"""History change alarms (plumbline.stats.change): edge cases, invalid input, and a small seeded
simulation of the guarantee (the full one is benchmarks/bench_history_check.py): with nothing
changing, few 50-run series raise any alarm; a clear shift is found within a few runs."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from scipy import stats as sps

from plumbline.stats.change import PATHS, ChangeDetection, detect_change
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
    assert result.statistics == (0.0,) and result.thresholds == (math.inf,)
    assert result.alpha == 0.05 and "GLR" in result.method


def test_two_runs_alarm_only_beyond_the_first_threshold() -> None:
    # run 1 vs run 0: a two-sample z test at the first check's share of alpha (z about 3.3)
    close = detect_change(*_wilson_series([70, 60], 100))
    assert close.alarms == (False, False)
    far = detect_change(*_wilson_series([70, 30], 100))
    assert far.alarms == (False, True)
    assert far.first_alarm == 1 and far.changed_at == 1
    assert far.shift == pytest.approx(-0.4)
    assert far.shift_z is not None and far.shift_z < -3.3
    assert 3.2 < far.thresholds[1] < 3.4


def test_identical_runs_never_alarm() -> None:
    result = detect_change(*_wilson_series([42] * 60, 100))
    assert not any(result.alarms)
    assert max(result.statistics) == pytest.approx(0.0, abs=1e-9)
    assert len(result.alarms) == 60


def test_zero_width_intervals_take_the_spread_of_the_others() -> None:
    # Wald intervals at 0% are zero-width; the pooled spread comes from the other runs
    estimates = [0.0, 0.05, 0.0, 0.05, 0.0, 0.6]
    lows = [0.0, 0.0, 0.0, 0.0, 0.0, 0.5]
    highs = [0.0, 0.14, 0.0, 0.14, 0.0, 0.7]
    result = detect_change(estimates, lows, highs, [20] * 6)
    assert result.spread > 0
    assert result.alarms == (False, False, False, False, False, True)
    assert result.changed_at == 5


def test_all_zero_width_intervals_are_exact_values() -> None:
    same = detect_change([1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [20, 20, 20])
    assert not any(same.alarms)
    moved = detect_change([1.0, 1.0, 0.95], [1.0, 1.0, 0.95], [1.0, 1.0, 0.95], [20, 20, 20])
    assert moved.alarms == (False, False, True) and moved.changed_at == 2
    # strict JSON has no infinity: the first run's threshold and the exact statistic are null
    document = json.loads(json.dumps(moved.to_dict(), allow_nan=False))
    assert document["thresholds"][0] is None and document["statistics"][2] is None
    assert document["first_alarm"] == 2 and document["alarms"] == [False, False, True]


def test_a_check_never_changes_when_later_runs_arrive() -> None:
    # the decision at run i uses runs <= i only: checking 30 runs or 40 gives the same first 30
    rng = np.random.default_rng(30)
    sizes = rng.integers(20, 2000, size=40)
    k = rng.binomial(sizes, 0.6)
    k[33:] = rng.binomial(sizes[33:], 0.3)
    low, high = proportion_bounds(k, sizes)
    whole = detect_change(k / sizes, low, high, sizes)
    prefix = detect_change(k[:30] / sizes[:30], low[:30], high[:30], sizes[:30])
    assert whole.alarms[:30] == prefix.alarms
    assert whole.thresholds[:30] == prefix.thresholds
    assert whole.statistics[:30] == pytest.approx(prefix.statistics)
    assert whole.first_alarm is not None and whole.first_alarm >= 33
    assert whole.changed_at == 33


def test_the_boundary_is_calibrated_for_the_series_sample_sizes() -> None:
    equal = detect_change(*_wilson_series([60] * 10, 100))
    varying = detect_change([0.6] * 10, [0.5] * 10, [0.7] * 10, [20, 2000] * 5)
    # one split: a z test at the first check's share of alpha (Monte Carlo quantiles of it)
    z = float(sps.norm.isf((0.05 - 2 * np.sqrt(0.05 * 0.95 / PATHS)) / 49 / 2))
    assert equal.thresholds[1] == pytest.approx(z, abs=0.1)
    assert varying.thresholds[1] == pytest.approx(z, abs=0.1)
    assert equal.thresholds[2:] != varying.thresholds[2:]
    # the same run repeated: the spread, not the sample size, is what a run's width tells
    assert all(3.2 < c < 4.0 for c in varying.thresholds[1:])


def test_only_the_width_of_an_interval_counts() -> None:
    symmetric = detect_change([0.1, 0.1, 0.3], [0.05, 0.05, 0.25], [0.15, 0.15, 0.35], [50] * 3)
    skewed = detect_change([0.1, 0.1, 0.3], [0.08, 0.08, 0.2], [0.18, 0.18, 0.3], [50] * 3)
    assert symmetric.statistics == pytest.approx(skewed.statistics)


def test_beyond_the_horizon_the_last_horizon_runs_are_checked() -> None:
    successes = [60] * 70 + [30] * 5
    result = detect_change(*_wilson_series(successes, 100), horizon=20)
    assert len(result.alarms) == 75
    assert not any(result.alarms[:70])
    assert result.first_alarm == 70 and result.changed_at == 70
    # every check beyond the horizon uses the horizon's last boundary (equal n: one value)
    assert len(set(result.thresholds[19:])) == 1
    # the window forgets runs older than the horizon: a step long ago no longer alarms
    old_step = detect_change(*_wilson_series([60] * 10 + [30] * 40, 100), horizon=20)
    assert old_step.alarms[10] or old_step.alarms[11]
    assert not any(old_step.alarms[30:])


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
        (([0.5], [0.4], [0.6], [10]), {"alpha": 0.001}, "alpha must be at least 0.01"),
        (([0.5], [0.4], [0.6], [10]), {"horizon": 1}, "horizon must be >= 2"),
        (([0.5], [0.4], [0.6], [10]), {"horizon": 500}, "horizon must be at most 200 runs"),
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
    rng: np.random.Generator, n: np.ndarray, p: float, *, shift: float = 0.0, at: int = 50
) -> ChangeDetection:
    truth = np.where(np.arange(n.size) >= at, p + shift * np.sqrt(p * (1 - p) / n), p)
    k = rng.binomial(n, truth)
    low, high = proportion_bounds(k, n)
    return detect_change(k / n, low, high, n)


@pytest.mark.parametrize(("n", "p"), [(20, 0.5), (20, 0.05), (200, 0.3), (2000, 0.9)])
def test_no_change_rarely_alarms_over_fifty_runs(n: int, p: float) -> None:
    rng = np.random.default_rng(n + int(100 * p))
    sizes = np.full(50, n)
    alarms = sum(_binomial_series(rng, sizes, p).changed for _ in range(300))
    # alpha 5%: at most 15 of 300 expected; 27 is beyond 3.5 Monte Carlo standard errors
    assert alarms <= 27


def test_the_level_holds_at_twenty_questions_and_p_one_half() -> None:
    # the hardest cell for the spread recovered from a Wilson interval (without Bessel's and
    # Wilson's corrections: 6.6% of series alarm); 3,000 series, allowance 2 Monte Carlo SEs
    rng = np.random.default_rng(2020)
    sizes = np.full(50, 20)
    runs = 3000
    alarms = sum(_binomial_series(rng, sizes, 0.5).changed for _ in range(runs))
    assert alarms / runs <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / runs)


def test_small_skewed_runs_between_large_ones_keep_the_level() -> None:
    # 20 questions at p = 0.02 between runs of 2,000: far from normal. With the pooled spread
    # alone 19% of these series alarm; the run's own (wider) interval keeps them near 1%.
    rng = np.random.default_rng(2002)
    sizes = np.array([20, 2000] * 25)
    runs = 1000
    alarms = sum(_binomial_series(rng, sizes, 0.02).changed for _ in range(runs))
    assert alarms / runs <= 0.05


def test_a_five_standard_error_drop_is_found_within_two_runs() -> None:
    rng = np.random.default_rng(5)
    sizes = np.full(40, 200)
    delays = []
    early = 0
    for _ in range(100):
        result = _binomial_series(rng, sizes, 0.7, shift=-5.0, at=25)
        assert result.first_alarm is not None
        if result.first_alarm < 25:  # a false alarm before the change (within alpha)
            early += 1
            continue
        delays.append(result.first_alarm - 25 + 1)
        assert result.shift is not None and result.shift < 0
        assert result.changed_at is not None and abs(result.changed_at - 25) <= 2
    assert early <= 10
    assert np.median(delays) <= 2
