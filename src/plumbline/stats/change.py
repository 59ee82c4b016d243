"""History change alarms: did a metric change beyond noise across a series of runs?

**The question.** Runs arrive one at a time (a nightly leaderboard); each brings an estimate,
its published interval `[low, high]` at `confidence` and its sample size `n`. After every new
run the check asks "has the metric moved since the series began?". Testing each new run
against the earlier ones at 5% would raise a false alarm in most 50-run series; this check
keeps the chance of *any* false alarm over a series of up to `horizon` runs at most α, however
often it is checked, because the decision at run `t` uses only runs `≤ t` and the thresholds
spend α over the horizon.

**Each run's noise.** A run's interval gives its standard error `sᵢ = (highᵢ − lowᵢ) / (2z)`
(`z` the two-sided normal critical value at `confidence`; the full width, so an asymmetric
Wilson interval near 0% or 100% counts both sides) and so its per-sample spread
`σᵢ² = sᵢ²·(nᵢ + z²)·nᵢ/(nᵢ − 1)`. The `+ z²` is Wilson's: a Wilson interval has the width of a
Wald interval on `nᵢ + z²` trials (Agresti & Coull 1998, Amer. Statist. 52(2):119–126); the
`nᵢ/(nᵢ − 1)` is Bessel's: a plug-in variance such as `p̂(1 − p̂)` is low by `(nᵢ − 1)/nᵢ` on
average. Without them a proportion's spread is understated at small n: by 4% of the variance at
n = 20 and p = 0.5, which the far tail the boundary sits in turns into 6.6% false alarms
instead of 5%. For a Wald or t interval both err on the safe side (the spread is overstated by
25% of the variance at n = 20, 5% at n = 100, 0.2% at n = 2,000), at some cost in delay.

With nothing changing every run measures the same quantity on the same kind of sample, so the
runs share one spread: the check pools it over the runs seen so far,
`σ̂ₜ² = Σ_{i≤t} nᵢσᵢ² / Σ_{i≤t} nᵢ`, and gives run `i` the variance `max(σ̂ₜ², σᵢ²)/nᵢ` at the
check of run `t` (a run of 2,000 weighs 100 times one of 20). The pooled spread keeps a run's
weight from depending on its own estimate (at n = 20 a Wilson interval at 0% is narrower than at
5%, which would pull a weighted mean towards the extremes), lets a run with a zero-width interval
(Wald at 0% or 100%) count with the others' spread, and averages away the noise of small runs'
intervals. The run's own spread, where it is larger, protects against skew: a run of 20
questions at p = 0.02 between runs of 2,000 is far from normal (3 successes out of 20 is 4 pooled
standard errors above 0.02 and happens in 0.7% of such runs), and with the pooled spread alone
19% of such series alarm; a high estimate near 0 has a wider interval, which the `max` uses
(1.0% alarm). Under the normal model the `max` can only lower `|Z|`, so the boundary below stays
valid; its price is a run or so of extra delay for rises at small p. Only the width of an
interval is used, not its two sides separately: a Wilson interval's longer side points towards
50%, and using the side facing the other runs (Newcombe's MOVER) measured too conservative at
p = 0.5 and n = 20 (1.7% false alarms) and slower. A series whose intervals are all zero-width is
treated as exact: any difference between its estimates is a change.

**The statistic.** With `Wₖ = Σ_{i≤k} nᵢ` and `Uₖ = Σ_{i≤k} nᵢxᵢ` (runs counted from 1), the
two-sample z statistic for "the first `k` runs against runs `k+1..t`" is

    Z_{k,t} = (Uₜ·Wₖ − Uₖ·Wₜ) / (σ̂ₜ·√(Wₖ·Wₜ·(Wₜ − Wₖ))),

the n-weighted mean after the split minus the one before, over its standard error. The
pre-change level is unknown and cancels (each side's mean is estimated), which is the
generalized likelihood ratio (GLR) statistic for one shift in a normal mean at an unknown time
with both levels unknown: `Mₜ = max_{1≤k<t} |Z_{k,t}|` (Hawkins, Qiu & Kang 2003, "The
changepoint model for statistical process control", J. Quality Technology 35(4):355–366;
Siegmund & Venkatraman 1995, Ann. Statist. 23(1):255–271). The check at run `t` alarms when
`Mₜ > cₜ`; at the first alarm the change is estimated to start at run `k̂ + 1` with
`k̂ = argmax_k |Z_{k,t}|`.

**The boundary.** With nothing changing the joint law of `(M₂, …, M_H)` depends only on the
sample sizes (σ cancels), so `cₜ` is calibrated for the series' own `n₁..nₜ` by Monte Carlo:
`PATHS` standard normal paths (a fixed seed, the same draws for every prefix, so a threshold
once used never changes when runs are added) and α spent evenly over the `H − 1` checks of the
horizon (alpha spending, Lan & DeMets 1983, Biometrika 70(3):659–663): `cₜ` is the value that
`(t − 1)/(H − 1)` of α′ of the paths have first crossed by check `t`. α′ = α less two Monte Carlo
standard errors, so that the Monte Carlo error of the thresholds stays on the safe side.

**Beyond the horizon.** At run `t > H` the check looks at the last `H` runs (runs `t−H+1..t`),
with that window's thresholds, at the last check of the horizon: a stationary detector that
forgets runs older than the horizon. The α guarantee covers the first `H` runs; each later run
keeps a small false-alarm chance of its own (measured in `benchmarks/bench_history_check.py`:
about 0.4% per run at α = 0.05, H = 50; 8% of 100-run series alarm somewhere in runs 51–100).

**Assumptions.** (1) The runs are independent, and each run's estimate is approximately normal
around the common value with the standard error its interval implies; (2) the spread per sample
is the same for every run (the same kind of questions, scorer and design), so that a run's
standard error scales as `1/√n`; (3) every interval is at `confidence`. When runs share their
questions (the same suite every night) their estimates vary less than their intervals say and
the check is conservative (fewer false alarms, slower alarms). When the night-to-night variation
is larger than the intervals say (a judge or a provider that varies from day to day) the false
alarms grow quickly: with extra noise of half a standard error, about 3 times α. Near 0% or 100%
at small n, Wilson's interval floors the spread and the check is conservative there.

**Cost.** One calibration (`PATHS × t²/2` operations, about half a second for 50 runs) per
distinct sequence of sample sizes, cached; the checks themselves are `O(t²)` per series.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from plumbline.stats._validation import check_count, check_probability, z_critical

FloatArray = npt.NDArray[np.float64]

#: Monte Carlo paths that calibrate the boundary (a fixed seed: the thresholds are reproducible).
PATHS = 40_000
#: Paths per block of the calibration (a block's arrays stay in the CPU cache).
CHUNK = 4_000
#: The seed of the calibration paths.
SEED = 40
#: The smallest α accepted: below it, fewer than about 7 of the PATHS paths would cross per check.
MIN_ALPHA = 0.01
#: The longest horizon accepted: the calibration costs PATHS × horizon² / 2 operations.
MAX_HORIZON = 200
#: The horizon the α guarantee covers when not given.
DEFAULT_HORIZON = 50
METHOD = (
    "two-sided GLR change-point statistic (Hawkins, Qiu & Kang 2003) on n-weighted runs, the "
    "spread pooled from their intervals (a run's own when wider), boundary calibrated for the "
    "series' sample sizes by Monte Carlo with α spent evenly over the horizon (Lan & DeMets 1983)"
)


@dataclass(frozen=True)
class ChangeDetection:
    """The change check of one series of runs, as it stood after each run arrived.

    `alarms[i]`: the check done when run `i` arrived (using runs `≤ i`) raised an alarm.
    `first_alarm`: index of the first such run, or None. `changed_at`: index of the run where
    the change is estimated to start (at the first alarm), or None. `statistics[i]` is `Mᵢ`
    and `thresholds[i]` the boundary `cᵢ` of the check at run `i` (0 and ∞ at the first run,
    which is never checked). `shift` is the estimated change at the first alarm (the mean after
    `changed_at` minus the mean before, in the estimates' units) and `shift_z` it in standard
    errors. `spread` is the pooled per-sample standard deviation σ̂ over all runs.
    """

    alarms: tuple[bool, ...]
    first_alarm: int | None
    changed_at: int | None
    method: str
    alpha: float
    horizon: int
    confidence: float
    statistics: tuple[float, ...]
    thresholds: tuple[float, ...]
    shift: float | None
    shift_z: float | None
    spread: float

    @property
    def changed(self) -> bool:
        return self.first_alarm is not None

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-ready values: an infinite statistic or threshold (the first run's,
        or an exact series that moved) becomes None, which JSON can carry."""
        data = asdict(self)
        for name in ("statistics", "thresholds"):
            data[name] = [value if math.isfinite(value) else None for value in data[name]]
        for name in ("shift_z",):
            value = data[name]
            data[name] = value if value is None or math.isfinite(value) else None
        return data


def _validate(
    estimates: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    ns: Sequence[int],
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    arrays = []
    for name, values in (("estimates", estimates), ("lows", lows), ("highs", highs)):
        try:
            array = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be a sequence of numbers: {exc}") from None
        if array.ndim != 1:
            raise ValueError(f"{name} must be a one-dimensional sequence of numbers")
        arrays.append(array)
    x, low, high = arrays
    if isinstance(ns, str | bytes) or not hasattr(ns, "__len__"):
        raise ValueError(f"ns must be a sequence of sample sizes, got {ns!r}")
    n = np.asarray([check_count(v, f"ns[{i}]", minimum=1) for i, v in enumerate(ns)], float)
    sizes = {"estimates": x.size, "lows": low.size, "highs": high.size, "ns": n.size}
    if len(set(sizes.values())) != 1:
        listed = ", ".join(f"{k} {v}" for k, v in sizes.items())
        raise ValueError(f"estimates, lows, highs and ns must have one entry per run, got {listed}")
    if x.size == 0:
        raise ValueError("the series needs at least 1 run, got 0")
    for name, array in (("estimates", x), ("lows", low), ("highs", high)):
        if not np.all(np.isfinite(array)):
            bad = int(np.flatnonzero(~np.isfinite(array))[0])
            raise ValueError(f"{name}[{bad}] is {float(array[bad])}; every run needs finite values")
    if np.any(low > high):
        bad = int(np.flatnonzero(low > high)[0])
        raise ValueError(
            f"run {bad}: interval low {float(low[bad])} is above high {float(high[bad])}"
        )
    return x, low, high, n


def _null_draws(horizon: int, block: int) -> FloatArray:
    """Standard normal draws for one block of paths (CHUNK × horizon), the same in every call:
    the calibration of a prefix of runs sees the same paths as that of the whole series."""
    return np.random.default_rng([SEED, horizon, block]).standard_normal((CHUNK, horizon))


def _null_maxima(ns: tuple[float, ...], horizon: int) -> FloatArray:
    """`M_t` of every null path (len(ns) × PATHS), σ known; row 0 (one run) is 0."""
    n = np.asarray(ns, dtype=np.float64)
    length = n.size
    w = np.cumsum(n)
    maxima = np.zeros((length, PATHS))
    # x_i = ε_i/√n_i with σ = 1, so n_i·x_i = √n_i·ε_i. Runs along the first axis and paths in
    # blocks, so that every operation (and the max over splits) runs along contiguous paths.
    for block, begin in enumerate(range(0, PATHS, CHUNK)):
        draws = _null_draws(horizon, block)[:, :length]
        u = np.ascontiguousarray(np.cumsum(draws * np.sqrt(n), axis=1).T)
        buffer = np.empty_like(u)
        for t in range(1, length):
            wk = w[:t]
            denominator = np.sqrt(wk * w[t] * (w[t] - wk))
            # Z_{k,t} = (U_t·W_k − U_k·W_t) / √(W_k·W_t·(W_t − W_k)), k = 1..t
            z = buffer[:t]
            np.multiply(u[:t], (w[t] / denominator)[:, None], out=z)
            z -= u[t] * (wk / denominator)[:, None]
            np.abs(z, out=z)
            maxima[t, begin : begin + CHUNK] = z.max(axis=0)
    return maxima


@functools.lru_cache(maxsize=256)
def _thresholds(ns: tuple[float, ...], alpha: float, horizon: int) -> tuple[float, ...]:
    """Boundaries `c_t` for the checks at runs 0..len(ns)−1 (0-based; ∞ at run 0) of a window.

    Alpha spending over the horizon's `horizon − 1` checks: after check `t` exactly
    `⌊PATHS · α′ · t / (horizon − 1)⌋` of the null paths have crossed (first crossings).
    """
    maxima = _null_maxima(ns, horizon)
    budget = alpha - 2 * math.sqrt(alpha * (1 - alpha) / PATHS)
    alive = np.ones(PATHS, dtype=bool)
    crossed = 0
    thresholds = [math.inf]
    for t in range(1, len(ns)):
        m = maxima[t]
        to_cross = math.floor(PATHS * budget * t / (horizon - 1)) - crossed
        candidates = m[alive]
        if to_cross <= 0 or candidates.size == 0:
            c = float(candidates.max()) if candidates.size else math.inf
        else:
            # the (to_cross + 1)-th largest: exactly `to_cross` paths lie above it
            rank = candidates.size - 1 - min(to_cross, candidates.size - 1)
            c = float(np.partition(candidates, rank)[rank])
        newly = alive & (m > c)
        crossed += int(newly.sum())
        alive &= ~newly
        thresholds.append(c)
    return tuple(thresholds)


@dataclass(frozen=True)
class _WindowChecks:
    """The checks at every run of a window: `M_t`, the split `k̂` and the shift there."""

    statistics: FloatArray
    splits: npt.NDArray[np.int64]
    shifts: FloatArray


def _window_checks(x: FloatArray, n: FloatArray, unit_var: FloatArray) -> _WindowChecks:
    """`M_t = max_k |Z_{k,t}|` for every run t of a window (all pairs k < t at once)."""
    w = np.cumsum(n)
    u = np.cumsum(n * x)
    # pooled σ̂_t² over the runs up to t, n-weighted
    spread_sq = np.cumsum(n * unit_var) / w
    k = np.arange(x.size)[:, None]  # runs before the split (0-based index k−1 → W_k = w[k])
    t = np.arange(x.size)[None, :]
    valid = k < t
    wk = w[:, None]
    wt = w[None, :]
    # run i's variance at check t, times n_i²: n_i·max(σ̂_t², σ_i²) (rows i, columns t); its
    # cumulative sums over i give each side's variance for every split at once
    weighted = np.cumsum(n[:, None] * np.maximum(spread_sq[None, :], unit_var[:, None]), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        before_var = weighted / wk**2
        after_var = (np.diagonal(weighted)[None, :] - weighted) / (wt - wk) ** 2
        # the mean after the split minus the mean before: (U_t − U_k)/(W_t − W_k) − U_k/W_k
        shift = (u[None, :] - u[:, None]) / (wt - wk) - u[:, None] / wk
        z = np.abs(shift) / np.sqrt(before_var + after_var)
    # every interval so far zero-width: the estimates are exact, any difference is a change
    # (located at the split with the largest difference)
    exact = np.broadcast_to(spread_sq[None, :] == 0, z.shape)
    z = np.where(valid, np.where(exact, np.abs(shift), z), -1.0)
    split = np.argmax(z, axis=0)
    columns = np.arange(x.size)
    statistics = np.maximum(z[split, columns], 0.0)
    tolerance = 1e-12 * max(1.0, float(np.max(np.abs(x))))
    statistics = np.where(
        spread_sq == 0, np.where(statistics > tolerance, math.inf, 0.0), statistics
    )
    return _WindowChecks(statistics, split + 1, shift[split, columns])


def _check_parameters(alpha: float, horizon: int, confidence: float) -> tuple[float, int, float]:
    alpha = check_probability(alpha, "alpha")
    if alpha < MIN_ALPHA:
        raise ValueError(
            f"alpha must be at least {MIN_ALPHA} (the {PATHS:,} calibration paths resolve no "
            f"smaller family-wise error over the horizon), got {alpha!r}"
        )
    confidence = check_probability(confidence, "confidence")
    horizon = check_count(horizon, "horizon", minimum=2)
    if horizon > MAX_HORIZON:
        raise ValueError(
            f"horizon must be at most {MAX_HORIZON} runs (the calibration's cost grows with its "
            f"square), got {horizon}"
        )
    return alpha, horizon, confidence


def _unit_variances(low: FloatArray, high: FloatArray, n: FloatArray, z: float) -> FloatArray:
    """σᵢ² = sᵢ²·(nᵢ + z²)·nᵢ/(nᵢ − 1) with sᵢ = (highᵢ − lowᵢ)/2z.

    Wilson's interval has the width of a Wald interval on nᵢ + z² trials (Agresti & Coull
    1998), and a plug-in variance p̂(1 − p̂) is low by (nᵢ − 1)/nᵢ on average; without both a
    proportion's spread is understated at small n.
    """
    bessel = np.where(n > 1, n / np.maximum(n - 1, 1), 1.0)
    return np.asarray(((high - low) / (2 * z)) ** 2 * (n + z * z) * bessel, dtype=np.float64)


def _checks_by_run(
    x: FloatArray, n: FloatArray, unit_var: FloatArray, alpha: float, horizon: int
) -> tuple[FloatArray, FloatArray, _WindowChecks]:
    """`(M_t, c_t, the checks' splits and shifts)` of the check at every run of the series."""
    size = x.size
    statistics = np.zeros(size)
    thresholds = np.full(size, math.inf)
    splits = np.zeros(size, dtype=np.int64)
    shifts = np.zeros(size)
    first = min(size, horizon)
    checks = _window_checks(x[:first], n[:first], unit_var[:first])
    statistics[:first] = checks.statistics
    splits[:first] = checks.splits
    shifts[:first] = checks.shifts
    thresholds[:first] = _thresholds(tuple(n[:first].tolist()), alpha, horizon)
    for t in range(horizon, size):
        # beyond the horizon: the last `horizon` runs, at the horizon's last check
        window = slice(t - horizon + 1, t + 1)
        checks = _window_checks(x[window], n[window], unit_var[window])
        statistics[t] = checks.statistics[-1]
        splits[t] = t - horizon + 1 + checks.splits[-1]
        shifts[t] = checks.shifts[-1]
        thresholds[t] = _thresholds(tuple(n[window].tolist()), alpha, horizon)[-1]
    return statistics, thresholds, _WindowChecks(statistics, splits, shifts)


def detect_change(
    estimates: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    ns: Sequence[int],
    *,
    alpha: float = 0.05,
    horizon: int = DEFAULT_HORIZON,
    confidence: float = 0.95,
) -> ChangeDetection:
    """Check a series of runs for a change beyond noise, as if checked after every run.

    Each run `i` gives its estimate, its interval `[lows[i], highs[i]]` at `confidence` and its
    sample size `ns[i]` (runs in time order). Returns the alarm of the check at each run, the
    first alarm and where the change is estimated to start; with nothing changing, the chance
    that any of the checks of a series of up to `horizon` runs alarms is at most `alpha`.

    Statistic: `M_t = max_k |Z_{k,t}|`, the GLR change-point statistic for a shift in a normal
    mean with both levels unknown (Hawkins, Qiu & Kang 2003), each run weighted by `nᵢ`, with
    the variance `max(σ̂², σᵢ²)/nᵢ` from the spread pooled over the runs' intervals
    (`σᵢ² = ((highᵢ − lowᵢ)/2z)²·(nᵢ + z²)·nᵢ/(nᵢ − 1)`); the boundary is calibrated for these
    sample sizes by Monte Carlo with α spent evenly over the horizon (Lan & DeMets 1983).
    See the module docstring for the details and assumptions. Raises ValueError naming the
    argument on invalid input (`alpha` from 0.01, `horizon` 2 to 200).
    """
    alpha, horizon, confidence = _check_parameters(alpha, horizon, confidence)
    x, low, high, n = _validate(estimates, lows, highs, ns)
    unit_var = _unit_variances(low, high, n, z_critical(confidence))
    statistics, thresholds, checks = _checks_by_run(x, n, unit_var, alpha, horizon)
    alarms = statistics > thresholds
    first_alarm = int(np.argmax(alarms)) if alarms.any() else None
    changed_at = shift = shift_z = None
    if first_alarm is not None:
        changed_at = int(checks.splits[first_alarm])
        shift = float(checks.shifts[first_alarm])
        shift_z = math.copysign(float(statistics[first_alarm]), shift)
    return ChangeDetection(
        alarms=tuple(bool(a) for a in alarms),
        first_alarm=first_alarm,
        changed_at=changed_at,
        method=METHOD,
        alpha=alpha,
        horizon=horizon,
        confidence=confidence,
        statistics=tuple(float(v) for v in statistics),
        thresholds=tuple(float(v) for v in thresholds),
        shift=shift,
        shift_z=shift_z,
        spread=math.sqrt(float(np.sum(n * unit_var) / np.sum(n))),
    )
