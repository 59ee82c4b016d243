"""History change alarms: did a metric change beyond noise, on a series of runs that never ends?

**The question.** Runs arrive one at a time (a nightly leaderboard); each brings an estimate,
its published interval `[low, high]` at `confidence` and its sample size `n`. After every new
run the check asks "has the metric moved?". The guarantee holds however long the series runs:
with nothing changing, the chance of any false alarm within the first `within` runs (365: a
year of nightly runs) is at most α, and the mean number of runs to a false alarm (the average
run length, ARL) is stated (about 7,200 at the defaults). Over a family of `family` series
checked together (one nightly job) α is split evenly, so the job's chance is at most α.

**Each run's noise.** A run's interval gives its standard error `sᵢ = (highᵢ − lowᵢ)/(2z)` and so
its per-sample spread `σᵢ² = sᵢ²·(nᵢ + z²)·nᵢ/(nᵢ − 1)` (Wilson's `+ z²`, Agresti & Coull 1998,
Amer. Statist. 52(2):119–126, and Bessel's `nᵢ/(nᵢ − 1)`). The spread is pooled over the runs up
to the check, `σ̂ₜ² = Σ nᵢσᵢ² / Σ nᵢ`, and run `i` has variance `vᵢ = max(σ̂ₜ², σᵢ²)/nᵢ + τ²`, where
`τ²` is the extra night-to-night variance (a judge or a provider that varies from night to
night): given, or estimated from the successive differences `dᵢ = xᵢ − xᵢ₋₁` of the runs
before run `t` (von Neumann 1941, Ann. Math. Statist. 12(4):367–395):
`τ̂²ₜ = max(0, Σ (dᵢ² − bᵢ − bᵢ₋₁) / (2m))` over its `m` differences, `bᵢ` a run's own variance
(`dᵢ ~ N(0, bᵢ + bᵢ₋₁ + 2τ²)`). A level shift adds one large difference only, so a change
hides little of itself as extra variance. A score whose variance rests partly on `τ̂²` is a t
statistic and is turned into its normal score (Satterthwaite's degrees of freedom).

**The score.** Run `t` is compared with the precision-weighted mean `x̄ₜ₋₁` of the runs before it
(the level is unknown and learned from the series):

    zₜ = (xₜ − x̄ₜ₋₁) / √(vₜ + 1/Σ_{i<t} 1/vᵢ).

Under the normal model with known variances these recursive residuals are independent N(0, 1)
whatever the sample sizes (Brown, Durbin & Evans 1975, JRSS B 37(2):149–192; the self-starting
CUSUM of Hawkins 1987, Appl. Statist. 36(3):303–315), so one calibration serves every series.

**The detector.** A two-sided CUSUM on the scores, `S⁺ₜ = max(0, S⁺ₜ₋₁ + zₜ − k)` and
`S⁻ₜ = max(0, S⁻ₜ₋₁ − zₜ − k)` with `k = 1` (tuned to shifts of about 2 standard errors of one
run), alarms when `max(S⁺, S⁻) > h` (Page 1954, Biometrika 41:100–115). `h` is the smallest
threshold whose chance of any alarm within `within` runs is at most `α/family`, by the Brook &
Evans Markov chain (`plumbline.stats.cusum`): closed form, computed once per (α, family,
within). At the first alarm the change is estimated to start at the run after the alarming
side's CUSUM was last 0 (the CUSUM's change-point estimate, Page 1954).

**Restarts.** The series the check sees starts at its first run, or at an acknowledged change
(`history ack`, or `--since`): the guarantee counts runs from there.

**Assumptions.** (1) Runs are independent, each estimate approximately normal around the common
value with the standard error its interval implies plus `τ²`; (2) the spread per sample is the
same for every run (a run's standard error scales as `1/√n`); (3) every interval is at
`confidence`. When runs share their questions the estimates vary less than their intervals
say and the check is conservative. With τ² estimated, the first runs' estimate is noisy; the
simulations in `benchmarks/bench_history_check.py` measure the guarantee through this function.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from plumbline.stats._validation import check_count, check_probability, z_critical
from plumbline.stats.arrays import FloatArray
from plumbline.stats.cusum import CusumDesign, cusum_design

#: The CUSUM's reference value k, in standard errors of one run (optimal for a 2-SE shift).
REFERENCE = 1.0
#: The runs, counted from the series' start, that the false-alarm chance α covers by default.
DEFAULT_WITHIN = 365
#: The family-wise false-alarm chance by default.
DEFAULT_ALPHA = 0.05
#: The range of α the detector honours: below 0.1% the threshold sits so far in the normal tail
#: that the runs' approximate normality no longer carries it; above 50% it is no bound.
MIN_ALPHA = 0.001
MAX_ALPHA = 0.5
#: The longest `within` (runs): the Markov chain's cost grows with it.
MAX_WITHIN = 1000
#: A run smaller than this share of the mean n so far keeps its own spread where larger.
SMALL_RUN = 0.5
#: Degrees of freedom per difference of the mean square successive difference: successive
#: differences are correlated (−½ at lag 1), so m of them carry about 2m/3 (von Neumann 1941).
SUCCESSIVE_DF = 0.67
#: Columns of the (run × check) matrices computed at once (bounded memory for long series).
BLOCK = 512

ExtraSource = Literal["estimated", "given"]
METHOD = (
    "two-sided self-starting CUSUM (Page 1954; Hawkins 1987) on each run's standardized "
    "difference from the weighted mean of the runs before it, k = 1 standard error, threshold "
    "in closed form (Brook & Evans 1972 Markov chain) for the chance of any false alarm within "
    "the stated runs"
)


@dataclass(frozen=True)
class ChangeDetection:
    """The change check of one series of runs, as it stood after each run arrived.

    `alarms[i]`: the CUSUM was above its threshold at run `i` (using runs `≤ i`). `first_alarm`:
    index of the first alarm, or None; `changed_at`: index of the run where the change is
    estimated to start, or None. `scores[i]` is `zᵢ` (0 at run 0) and `statistics[i]` is
    `max(S⁺ᵢ, S⁻ᵢ)`. `shift` is the mean after `changed_at` minus the mean before (up to the first
    alarm) and `shift_z` it over its standard error. `spread` is the pooled per-sample σ̂;
    `extra_variance` the τ² used at the last run and `extra_variance_source` where it came from.
    `alpha` is the family's false-alarm chance within `within` runs, `alpha_per_series` a
    series' share (α/family), `average_run_length` the mean runs to a false alarm per series.
    """

    alarms: tuple[bool, ...]
    first_alarm: int | None
    changed_at: int | None
    method: str
    alpha: float
    family: int
    alpha_per_series: float
    within: int
    average_run_length: float
    reference: float
    threshold: float
    confidence: float
    scores: tuple[float, ...]
    statistics: tuple[float, ...]
    shift: float | None
    shift_z: float | None
    spread: float
    extra_variance: float
    extra_variance_source: ExtraSource

    @property
    def changed(self) -> bool:
        return self.first_alarm is not None

    @property
    def guarantee(self) -> str:
        return guarantee_text(
            self.alpha, self.family, self.within, self.average_run_length, self.confidence
        )

    def to_dict(self) -> dict[str, Any]:
        """The fields as JSON-ready values (a non-finite number becomes None)."""
        data = asdict(self)
        for name in ("statistics", "scores"):
            data[name] = [value if math.isfinite(value) else None for value in data[name]]
        value = data["shift_z"]
        data["shift_z"] = value if value is None or math.isfinite(value) else None
        data["guarantee"] = self.guarantee
        return data


def guarantee_text(
    alpha: float, family: int, within: int, average_run_length: float, confidence: float
) -> str:
    """The guarantee, as printed with every check."""
    share = alpha / family
    if family > 1:
        scope = (
            f"over the {family} series checked together at most {_pct(alpha)} (each series "
            f"{_pct(share)})"
        )
    else:
        scope = f"at most {_pct(alpha)}"
    return (
        f"with nothing changing, the chance of any false alarm within {within:,} runs of a "
        f"series' start (or its acknowledged change) is {scope}; mean runs to a false alarm "
        f"about {average_run_length:,.0f} per series. Assumes independent runs, each normal "
        f"with the standard error its {_pct(confidence)} interval implies plus the extra "
        f"night-to-night variance shown"
    )


def _pct(value: float) -> str:
    return f"{100 * value:.3g}%"


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


def check_alpha(alpha: float) -> float:
    """α as a probability the detector honours (MIN_ALPHA to MAX_ALPHA), else ValueError."""
    alpha = check_probability(alpha, "alpha")
    if not MIN_ALPHA <= alpha <= MAX_ALPHA:
        raise ValueError(
            f"alpha must be between {MIN_ALPHA} and {MAX_ALPHA} (the chance of any false alarm "
            f"within the stated runs; below {MIN_ALPHA} the normal approximation of a run's "
            f"estimate does not reach that far into the tail), got {alpha!r}"
        )
    return alpha


def _check_parameters(
    alpha: float, within: int, family: int, confidence: float, extra_variance: float | None
) -> tuple[float, int, int, float]:
    alpha = check_alpha(alpha)
    within = check_count(within, "within", minimum=2)
    if within > MAX_WITHIN:
        raise ValueError(f"within must be at most {MAX_WITHIN:,} runs, got {within}")
    family = check_count(family, "family", minimum=1)
    confidence = check_probability(confidence, "confidence")
    if extra_variance is not None and not (math.isfinite(extra_variance) and extra_variance >= 0):
        raise ValueError(f"extra_variance must be a finite number >= 0, got {extra_variance!r}")
    return alpha, within, family, confidence


def _unit_variances(low: FloatArray, high: FloatArray, n: FloatArray, z: float) -> FloatArray:
    """σᵢ² = sᵢ²·(nᵢ + z²)·nᵢ/(nᵢ − 1) with sᵢ = (highᵢ − lowᵢ)/2z (Agresti & Coull 1998)."""
    bessel = np.where(n > 1, n / np.maximum(n - 1, 1), 1.0)
    return np.asarray(((high - low) / (2 * z)) ** 2 * (n + z * z) * bessel, dtype=np.float64)


@dataclass(frozen=True)
class _Scores:
    """Per run t: the score zₜ, the extra variance τ²ₜ used, and the matrix-free pieces the
    shift estimate needs (each run's variance at the last check)."""

    scores: FloatArray
    extra: FloatArray
    pooled: FloatArray


def _score_block(
    x: FloatArray,
    n: FloatArray,
    unit_var: FloatArray,
    pooled: FloatArray,
    extras: FloatArray,
    columns: npt.NDArray[np.int64],
    given: float | None,
    floor: float,
) -> tuple[FloatArray, FloatArray]:
    """Scores zₜ and τ²ₜ for the checks `columns` (0-based runs), all splits at once."""
    last = int(columns[-1]) + 1
    rows = np.arange(last)[:, None]
    base = _run_variances(n, unit_var, pooled, columns, last)
    before = rows < columns[None, :]
    extra = extras[columns]
    variance = np.maximum(base + extra[None, :], floor)
    weights = np.where(before, 1.0 / variance, 0.0)
    total = weights.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = (weights * x[:last, None]).sum(axis=0) / total
        own = variance[columns, np.arange(columns.size)]
        spread = own + 1.0 / total
        scores = np.where(total > 0, (x[columns] - mean) / np.sqrt(spread), 0.0)
    if given is None:
        scores = _t_to_normal(scores, extra, spread, columns)
    return np.asarray(scores, dtype=np.float64), np.asarray(extra, dtype=np.float64)


def _t_to_normal(
    scores: FloatArray, extra: FloatArray, spread: FloatArray, columns: npt.NDArray[np.int64]
) -> FloatArray:
    """A score whose variance rests partly on the estimated τ̂² is a t statistic: its normal
    score `Φ⁻¹(F_ν(z))` (Hawkins 1987's self-starting device), with Satterthwaite's degrees of
    freedom `ν = ν_τ·(V/τ̂²)²` for the score's variance V, and `ν_τ = 0.67·m` for the estimate
    from m successive differences."""
    from scipy import stats as sps

    differences = np.maximum(columns - 1, 1).astype(np.float64)
    uncertain = (extra > 0) & np.isfinite(scores)
    if not uncertain.any():
        return scores
    df = SUCCESSIVE_DF * differences[uncertain] * (spread[uncertain] / extra[uncertain]) ** 2
    z = scores[uncertain]
    adjusted = np.sign(z) * sps.norm.isf(sps.t.sf(np.abs(z), np.maximum(df, 1.0)))
    out = scores.copy()
    out[uncertain] = adjusted
    return out


def _run_variances(
    n: FloatArray,
    unit_var: FloatArray,
    pooled: FloatArray,
    columns: npt.NDArray[np.int64],
    last: int,
) -> FloatArray:
    """`bᵢ` at every check in `columns` (rows: runs `< last`): the pooled spread `σ̂ₜ²/nᵢ`, or
    the run's own `σᵢ²/nᵢ` where larger and the run is small (`nᵢ` below half the mean `n` of
    the runs to t): a skewed small run between large ones keeps its own width."""
    mean_n = np.cumsum(n)[columns] / (columns + 1)
    small = n[:last, None] < SMALL_RUN * mean_n[None, :]
    own = np.where(small, unit_var[:last, None], 0.0)
    return np.asarray(np.maximum(pooled[None, columns], own) / n[:last, None], dtype=np.float64)


def _successive_extra(
    x: FloatArray, n: FloatArray, unit_var: FloatArray, pooled: FloatArray
) -> FloatArray:
    """τ̂²ₜ = max(0, Σ_{i=1..t−1} (dᵢ² − bᵢ − bᵢ₋₁) / (2(t − 1))) for every run t (0 for t < 2):
    the mean square successive difference (von Neumann 1941) less the runs' own variances
    (`bᵢ` as at run i's arrival). A level shift adds one large difference only."""
    extra = np.zeros(x.size)
    if x.size < 3:
        return extra
    small = n < SMALL_RUN * np.cumsum(n) / np.arange(1, x.size + 1)
    arrival = np.maximum(pooled, np.where(small, unit_var, 0.0)) / n
    values = (np.diff(x) ** 2 - arrival[1:] - arrival[:-1]) / 2
    # run t uses the differences d_1..d_{t−1}: values[:t − 1]
    means = np.cumsum(values) / np.arange(1, values.size + 1)
    extra[2:] = np.maximum(0.0, means[: x.size - 2])
    return extra


def _scores(x: FloatArray, n: FloatArray, unit_var: FloatArray, given: float | None) -> _Scores:
    """zₜ for every run: its difference from the weighted mean of the runs before it."""
    pooled = np.cumsum(n * unit_var) / np.cumsum(n)
    estimated = given is None
    extras = _successive_extra(x, n, unit_var, pooled) if estimated else np.full(x.size, given)
    floor = (1e-9 * max(1.0, float(np.max(np.abs(x))))) ** 2
    scores = np.zeros(x.size)
    extra = np.zeros(x.size)
    for begin in range(0, x.size, BLOCK):
        columns = np.arange(begin, min(x.size, begin + BLOCK))
        scores[columns], extra[columns] = _score_block(
            x, n, unit_var, pooled, extras, columns, given, floor
        )
    return _Scores(scores=scores, extra=extra, pooled=pooled)


@dataclass(frozen=True)
class _Path:
    statistics: FloatArray
    alarms: npt.NDArray[np.bool_]
    first_alarm: int | None
    changed_at: int | None


def _cusum(scores: FloatArray, design: CusumDesign) -> _Path:
    """The two-sided CUSUM's path, its alarms and (at the first) the change's start."""
    k, h = design.reference, design.threshold
    upper = lower = 0.0
    upper_zero = lower_zero = 0  # the last run at which each side was 0
    statistics = np.zeros(scores.size)
    first = changed = None
    for t in range(1, scores.size):
        upper = max(0.0, upper + scores[t] - k)
        lower = max(0.0, lower - scores[t] - k)
        upper_zero = t if upper == 0 else upper_zero
        lower_zero = t if lower == 0 else lower_zero
        statistics[t] = max(upper, lower)
        if first is None and statistics[t] > h:
            first = t
            changed = (upper_zero if upper >= lower else lower_zero) + 1
    return _Path(statistics, statistics > h, first, changed)


def _shift(
    x: FloatArray, n: FloatArray, unit_var: FloatArray, scores: _Scores, at: int, end: int
) -> tuple[float, float]:
    """The weighted mean of runs `at..end` minus that of runs before `at`, and it in SEs."""
    column = np.array([end])
    variance = _run_variances(n, unit_var, scores.pooled, column, end + 1)[:, 0]
    variance = variance + scores.extra[end]
    weights = 1.0 / np.maximum(variance, 1e-300)
    before, after = weights[:at], weights[at:]
    shift = float(after @ x[at : end + 1] / after.sum() - before @ x[:at] / before.sum())
    error = math.sqrt(1.0 / after.sum() + 1.0 / before.sum())
    return shift, (math.copysign(math.inf, shift) if error == 0 else shift / error)


def detect_change(
    estimates: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    ns: Sequence[int],
    *,
    alpha: float = DEFAULT_ALPHA,
    within: int = DEFAULT_WITHIN,
    family: int = 1,
    confidence: float = 0.95,
    extra_variance: float | None = None,
) -> ChangeDetection:
    """Check a series of runs for a change beyond noise, as if checked after every run.

    Each run `i` gives its estimate, its interval `[lows[i], highs[i]]` at `confidence` and its
    sample size `ns[i]` (runs in time order, from the series' start or acknowledged change).
    With nothing changing, the chance that any of the first `within` runs alarms is at most
    `alpha / family` (so at most `alpha` over `family` series checked together); the mean runs
    to a false alarm is `average_run_length`. `extra_variance`: the night-to-night variance
    beyond the intervals (the estimates' units squared), or None to estimate it from the series.

    Score `zₜ = (xₜ − x̄ₜ₋₁)/√(vₜ + 1/Σ_{i<t} 1/vᵢ)` with `vᵢ = max(σ̂ₜ², σᵢ²)/nᵢ + τ²`; a two-sided
    CUSUM with k = 1 and the Brook–Evans threshold (Page 1954; Hawkins 1987; Brook & Evans
    1972). See the module docstring. Raises ValueError naming the argument on invalid input.
    """
    alpha, within, family, confidence = _check_parameters(
        alpha, within, family, confidence, extra_variance
    )
    x, low, high, n = _validate(estimates, lows, highs, ns)
    unit_var = _unit_variances(low, high, n, z_critical(confidence))
    scores = _scores(x, n, unit_var, extra_variance)
    design = cusum_design(alpha / family, within, REFERENCE)
    path = _cusum(scores.scores, design)
    shift = shift_z = None
    if path.first_alarm is not None and path.changed_at is not None:
        shift, shift_z = _shift(x, n, unit_var, scores, path.changed_at, path.first_alarm)
    return ChangeDetection(
        alarms=tuple(bool(a) for a in path.alarms),
        first_alarm=path.first_alarm,
        changed_at=path.changed_at,
        method=METHOD,
        alpha=alpha,
        family=family,
        alpha_per_series=alpha / family,
        within=within,
        average_run_length=design.average_run_length,
        reference=design.reference,
        threshold=design.threshold,
        confidence=confidence,
        scores=tuple(float(v) for v in scores.scores),
        statistics=tuple(float(v) for v in path.statistics),
        shift=shift,
        shift_z=shift_z,
        spread=math.sqrt(float(np.sum(n * unit_var) / np.sum(n))),
        extra_variance=float(scores.extra[-1]),
        extra_variance_source="estimated" if extra_variance is None else "given",
    )
