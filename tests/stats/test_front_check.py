"""The front probabilities' calibration check (`validation.front_check`): the board is the unit of
its SE, Holm over the bins keeps the family-wise level, a calibrated forecaster passes and a
miscalibrated one is flagged. The check's false-alarm rate on the benchmark's boards is
simulated by `benchmarks/bench_cost.py --check-size`."""

from __future__ import annotations

import math

import numpy as np
import pytest

from validation.front_check import calibration_bins, calibration_check


def _forecasts(
    rng: np.random.Generator, boards: int, models: int, bend: float = 1.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Probabilities q ~ U(0, 1); outcomes Bernoulli(q^bend) (calibrated when bend = 1)."""
    q = rng.random(boards * models)
    y = (rng.random(q.size) < q**bend).astype(np.float64)
    return q, y, np.repeat(np.arange(boards), models)


def test_the_board_is_the_unit_of_the_se() -> None:
    rng = np.random.default_rng(1)
    # every model of a board shares its probability and its outcome: 4 copies of one forecast
    q = np.repeat(rng.uniform(0.3, 0.5, 400), 4)
    y = np.repeat((rng.random(400) < 0.4).astype(np.float64), 4)
    boards = np.repeat(np.arange(400), 4)
    (row,) = calibration_bins(q, y, boards)
    assert row.models == 1600 and row.boards == 400
    # the binomial SE counts 1,600 independent models, the clustered one 400 boards: about 2×
    assert row.clustered_se / row.binomial_se == pytest.approx(2.0, rel=0.1)
    residual = y - q
    centred = residual - residual.mean()
    sums = np.bincount(boards, centred)
    deff = 400 / 399 * (sums @ sums) / (centred @ centred)
    assert row.design_effect == pytest.approx(deff) and deff == pytest.approx(4 * 400 / 399)
    assert row.clustered_se == pytest.approx(math.sqrt(deff * np.sum(q * (1 - q))) / 1600)


def test_a_rare_event_bin_is_tested_with_the_null_variance() -> None:
    # 1,000 independent models given 0.04, 20 on the front (2.0%): the observed residuals
    # would put the SE at √(0.02 · 0.98 / 1000); under calibration it is √(0.04 · 0.96 / 1000)
    q = np.full(1000, 0.04)
    y = np.zeros(1000)
    y[:20] = 1.0
    (row,) = calibration_bins(q, y, np.arange(1000))
    assert row.design_effect == pytest.approx(1000 / 999)
    assert row.clustered_se == pytest.approx(math.sqrt(1000 / 999 * 0.04 * 0.96 / 1000))
    assert row.pvalue is not None and row.pvalue > 0.001


def test_a_calibrated_forecaster_passes_and_a_miscalibrated_one_fails() -> None:
    rng = np.random.default_rng(2)
    calibrated = [calibration_bins(*_forecasts(rng, 1000, 3)) for _ in range(4)]
    check = calibration_check(calibrated)
    assert check.passed
    assert all(a is not None and 0 <= a <= 1 for cell in check.adjusted for a in cell)
    # outcomes with probability q^1.3: up to 0.10 below the forecast (too confident)
    bent = [*calibrated[:3], calibration_bins(*_forecasts(rng, 1000, 3, bend=1.3))]
    flagged = calibration_check(bent)
    assert not flagged.passed
    assert min(a for a in flagged.adjusted[3] if a is not None) <= 0.05


def test_holm_adjusts_over_every_bin_and_skips_small_ones() -> None:
    rng = np.random.default_rng(3)
    q, y, boards = _forecasts(rng, 100, 3)  # 300 models: the end bins under 50
    bins = calibration_bins(q, y, boards)
    assert sum(b.models for b in bins) == 300
    assert any(b.pvalue is None for b in bins)
    assert all(b.pvalue is not None for b in bins if b.models >= 50)
    check = calibration_check([bins, bins])
    tested = [b.pvalue for b in bins if b.pvalue is not None]
    for row, adjusted in zip(bins, check.adjusted[0], strict=True):
        assert (adjusted is None) == (row.pvalue is None)
        if row.pvalue is not None and adjusted is not None:
            # Holm multiplies the smallest p-value by the number of tests (here 2 × tested)
            assert adjusted >= row.pvalue
    assert min(a for a in check.adjusted[0] if a is not None) == pytest.approx(
        min(1.0, 2 * len(tested) * min(tested))
    )
