"""History change alarms (plumbline.stats.change): edge cases, invalid input, and a small seeded
simulation of the guarantee (the full one is benchmarks/bench_history_check.py): with nothing
changing, few 50-run series raise any alarm; a clear shift is found within a few runs."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from plumbline.stats.change import ChangeDetection, detect_change
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
        (([0.5], [0.4], [0.6], [10]), {"horizon": 1}, "horizon must be >= 2"),
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
