"""Bootstrap intervals: plain, paired and clustered/stratified; percentile and BCa.

Resamples are drawn in chunks of about `CHUNK_ELEMENTS` values, so memory stays bounded however
many resamples are asked for, and each chunk is one vectorised numpy operation (no Python loop
per resample). Randomness comes only from a `numpy.random.Generator`: the same seed gives the
same interval.

References: Efron & Tibshirani (1993), "An Introduction to the Bootstrap", ch. 13–14 (percentile
and BCa); Efron (1987), "Better Bootstrap Confidence Intervals", JASA 82:171–185; Davison &
Hinkley (1997), "Bootstrap Methods and their Application", §3.8 (two-stage cluster resampling).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import special

from plumbline.stats._validation import ArrayLike, FloatArray, as_float_vector, as_paired_vectors
from plumbline.stats.result import ConfidenceInterval, EstimateResult, check_level

#: A statistic: "mean", "median", or a function of a 2-D array returning one value per row
#: (it must reduce along axis=-1, e.g. `lambda a: np.mean(a, axis=-1)`).
Statistic = str | Callable[[FloatArray], Any]
BootstrapMethod = Literal["percentile", "bca"]

#: Values materialised per chunk of resamples (8 bytes each, plus 4–8 bytes of indices).
CHUNK_ELEMENTS = 1 << 21

#: Clusters with at most this many distinct values are resampled exactly via multinomial counts.
MAX_EXACT_DISTINCT = 32

#: Binomial draws (resamples × exactly resampled clusters × their distinct values − 1) above which
#: the mean's within-cluster stage is drawn pooled, when that is sound (see `_pooled_is_sound`).
#: At about 10⁸ draws a minute the exact stage would take over 30 s; below, nothing changes.
EXACT_DRAW_BUDGET = 50_000_000

#: The pooled within-cluster draw needs at least this many clusters with within-cluster spread,
#: and no cluster holding more than this share of the within-cluster variance.
POOLED_MIN_CLUSTERS = 100
POOLED_MAX_VARIANCE_SHARE = 0.01

IntArray = npt.NDArray[np.intp]


@dataclass(frozen=True)
class _ResolvedStatistic:
    name: str
    function: Callable[[FloatArray], FloatArray]
    nan_function: Callable[[FloatArray], FloatArray] | None


def _mean(a: FloatArray) -> FloatArray:
    return np.asarray(np.mean(a, axis=-1), dtype=np.float64)


def _median(a: FloatArray) -> FloatArray:
    return np.asarray(np.median(a, axis=-1), dtype=np.float64)


def _nanmean(a: FloatArray) -> FloatArray:
    return np.asarray(np.nanmean(a, axis=-1), dtype=np.float64)


def _nanmedian(a: FloatArray) -> FloatArray:
    return np.asarray(np.nanmedian(a, axis=-1), dtype=np.float64)


def _resolve_statistic(statistic: Statistic) -> _ResolvedStatistic:
    if isinstance(statistic, str):
        if statistic == "mean":
            return _ResolvedStatistic("mean", _mean, _nanmean)
        if statistic == "median":
            return _ResolvedStatistic("median", _median, _nanmedian)
        raise ValueError(f"statistic must be 'mean', 'median' or a callable, got {statistic!r}")
    if not callable(statistic):
        raise ValueError(f"statistic must be 'mean', 'median' or a callable, got {statistic!r}")
    user = statistic

    def wrapped(a: FloatArray) -> FloatArray:
        result = np.asarray(user(a), dtype=np.float64)
        if result.shape != a.shape[:-1]:
            raise ValueError(
                "statistic callable must reduce along axis=-1: "
                f"got shape {result.shape} from input of shape {a.shape}"
            )
        return result

    return _ResolvedStatistic(getattr(user, "__name__", "callable"), wrapped, None)


def _check_method(method: str) -> BootstrapMethod:
    if method == "percentile":
        return "percentile"
    if method == "bca":
        return "bca"
    raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}")


def _check_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer):
        raise ValueError(f"n_resamples must be an integer, got {n_resamples!r}")
    if n_resamples < 100:
        raise ValueError(f"n_resamples must be at least 100, got {n_resamples}")
    return int(n_resamples)


def _generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
        raise ValueError(f"seed must be an integer, a numpy Generator or None, got {seed!r}")
    return np.random.default_rng(seed)


def _index_dtype(n: int) -> type[np.signedinteger[Any]]:
    # int32 indices halve the memory traffic of the gather, the dominant cost.
    return np.int32 if n < 2**31 - 1 else np.int64


def _resample_distribution(
    data: FloatArray,
    function: Callable[[FloatArray], FloatArray],
    n_resamples: int,
    rng: np.random.Generator,
) -> FloatArray:
    """`function` of `n_resamples` with-replacement resamples of `data`, chunk by chunk."""
    n = data.size
    out = np.empty(n_resamples)
    rows = max(1, CHUNK_ELEMENTS // n)
    dtype = _index_dtype(n)
    for start in range(0, n_resamples, rows):
        count = min(rows, n_resamples - start)
        indices = rng.integers(0, n, size=(count, n), dtype=dtype)
        out[start : start + count] = function(data[indices])
    return out


def _jackknife(data: FloatArray, statistic: _ResolvedStatistic) -> FloatArray:
    """Leave-one-out values of the statistic (closed forms for mean and median)."""
    n = data.size
    if statistic.name == "mean" and statistic.function is _mean:
        return np.asarray((data.sum() - data) / (n - 1), dtype=np.float64)
    if statistic.name == "median" and statistic.function is _median:
        ordered = np.sort(data)
        removed = np.arange(n)
        m = n - 1

        def pick(position: int) -> FloatArray:
            # Element `position` of the sorted sample once rank `removed` is taken out.
            picked = np.where(position < removed, ordered[position], ordered[position + 1])
            return np.asarray(picked, dtype=np.float64)

        if m % 2:
            return pick((m - 1) // 2)
        return (pick(m // 2 - 1) + pick(m // 2)) / 2
    out = np.empty(n)
    rows = max(1, CHUNK_ELEMENTS // max(n - 1, 1))
    columns = np.arange(n - 1)
    for start in range(0, n, rows):
        left_out = np.arange(start, min(start + rows, n))
        indices = columns[None, :] + (columns[None, :] >= left_out[:, None])
        out[start : start + left_out.size] = statistic.function(data[indices])
    return out


def _interval_from_distribution(
    theta_hat: float,
    distribution: FloatArray,
    jackknife: Callable[[], FloatArray] | None,
    level: float,
) -> tuple[float, float, dict[str, Any]]:
    """Percentile bounds, or BCa bounds when a jackknife is given (Efron 1987, eq. 2.3)."""
    alpha = 1 - level
    finite = distribution[np.isfinite(distribution)]
    if finite.size < distribution.size:
        raise ValueError(
            f"{distribution.size - finite.size} bootstrap resamples gave a non-finite statistic; "
            "check the data or the statistic"
        )
    if jackknife is None:
        low, high = np.quantile(distribution, [alpha / 2, 1 - alpha / 2])
        return float(low), float(high), {}
    b = distribution.size
    below = np.count_nonzero(distribution < theta_hat)
    at_or_below = np.count_nonzero(distribution <= theta_hat)
    # Mid-rank proportion, clipped so an all-one-side distribution still gives finite z0.
    proportion = min(max((below + at_or_below) / (2 * b), 1 / (2 * b)), 1 - 1 / (2 * b))
    z0 = float(special.ndtri(proportion))
    values = jackknife()
    deviations = values.mean() - values
    denominator = 6 * float(np.sum(deviations**2)) ** 1.5
    acceleration = float(np.sum(deviations**3)) / denominator if denominator > 0 else 0.0
    z = special.ndtri(np.array([alpha / 2, 1 - alpha / 2]))
    denominator_z = 1 - acceleration * (z0 + z)
    # |a| this large (a degenerate jackknife) breaks the transform; fall back to the extremes.
    with np.errstate(divide="ignore", invalid="ignore"):
        adjusted = np.where(
            denominator_z > 0,
            special.ndtr(z0 + (z0 + z) / denominator_z),
            np.array([0.0, 1.0]),
        )
    low, high = np.quantile(distribution, adjusted)
    return (
        float(low),
        float(high),
        {"z0": z0, "acceleration": acceleration, "adjusted_levels": adjusted.tolist()},
    )


def _result(
    theta_hat: float,
    n: int,
    distribution: FloatArray,
    low: float,
    high: float,
    level: float,
    method: BootstrapMethod,
    statistic_name: str,
    seed: int | np.random.Generator | None,
    extra: dict[str, Any],
) -> EstimateResult:
    label = "bootstrap BCa" if method == "bca" else "bootstrap percentile"
    return EstimateResult(
        statistic=theta_hat,
        n=n,
        interval=ConfidenceInterval(low=low, high=high, level=level, method=label),
        standard_error=float(distribution.std(ddof=1)),
        details={
            "statistic_name": statistic_name,
            "n_resamples": int(distribution.size),
            "bootstrap_method": method,
            "seed": int(seed) if isinstance(seed, int | np.integer) else None,
            "bias": float(distribution.mean()) - theta_hat,
            **extra,
        },
    )


def bootstrap_interval(
    data: ArrayLike,
    statistic: Statistic = "mean",
    *,
    n_resamples: int = 10_000,
    level: float = 0.95,
    method: str = "percentile",
    seed: int | np.random.Generator | None = None,
) -> EstimateResult:
    """Bootstrap confidence interval for `statistic` of one sample.

    Percentile: the `α/2` and `1−α/2` quantiles of the statistic over resamples. BCa: the
    quantiles at `Φ(z0 + (z0 + z_α)/(1 − a(z0 + z_α)))`, with bias correction `z0 = Φ⁻¹(share
    of resampled statistics below θ̂)` (ties count half) and acceleration
    `a = Σ(θ̄ − θ_(i))³ / (6 (Σ(θ̄ − θ_(i))²)^{3/2})` from the jackknife values θ_(i). The
    jackknife of the mean and the median is closed-form and O(n): the mean's leave-one-out values
    are `(Σx − x_i)/(n − 1)`, the median's come from the sorted sample. A callable statistic's
    jackknife costs n evaluations on n − 1 values (chunked).

    The standard error is the SD of the bootstrap distribution. Reference: Efron (1987), JASA
    82:171–185; Efron & Tibshirani (1993), ch. 14.
    """
    level = check_level(level)
    kind = _check_method(method)
    resolved = _resolve_statistic(statistic)
    n_resamples = _check_resamples(n_resamples)
    values = as_float_vector(data, "data", min_size=2)
    rng = _generator(seed)
    theta_hat = float(resolved.function(values[None, :])[0])
    distribution = _resample_distribution(values, resolved.function, n_resamples, rng)
    jackknife = (lambda: _jackknife(values, resolved)) if kind == "bca" else None
    low, high, extra = _interval_from_distribution(theta_hat, distribution, jackknife, level)
    return _result(
        theta_hat, values.size, distribution, low, high, level, kind, resolved.name, seed, extra
    )


def bootstrap_percentile_intervals(
    data: ArrayLike,
    percentiles: Sequence[float],
    *,
    n_resamples: int = 10_000,
    level: float = 0.95,
    seed: int | None = None,
) -> list[EstimateResult]:
    """Percentile-bootstrap intervals for several percentiles (numpy "linear") of one sample.

    One set of resamples serves every percentile: for an integer seed each result
    equals `bootstrap_interval(data, lambda a: np.percentile(a, q, axis=-1), seed=seed)`, whose
    draws depend only on the seed and the sample size, at the cost of one call instead of one per
    percentile. Reference: Efron & Tibshirani (1993), ch. 13.
    """
    level = check_level(level)
    n_resamples = _check_resamples(n_resamples)
    values = as_float_vector(data, "data", min_size=2)
    qs = [float(q) for q in percentiles]
    if not qs or any(not 0 <= q <= 100 for q in qs):
        raise ValueError(f"percentiles must be in [0, 100], got {list(percentiles)!r}")
    rng = _generator(seed)
    n = values.size
    distributions = np.empty((len(qs), n_resamples))
    rows = max(1, CHUNK_ELEMENTS // n)
    dtype = _index_dtype(n)
    for start in range(0, n_resamples, rows):
        count = min(rows, n_resamples - start)
        indices = rng.integers(0, n, size=(count, n), dtype=dtype)
        distributions[:, start : start + count] = np.percentile(values[indices], qs, axis=-1)
    results = []
    for q, distribution in zip(qs, distributions, strict=True):
        theta_hat = float(np.percentile(values, q))
        low, high, extra = _interval_from_distribution(theta_hat, distribution, None, level)
        results.append(
            _result(
                theta_hat,
                n,
                distribution,
                low,
                high,
                level,
                "percentile",
                f"p{q:g}",
                seed,
                extra,
            )
        )
    return results


def paired_bootstrap(
    x: ArrayLike,
    y: ArrayLike,
    statistic: Statistic = "mean",
    *,
    n_resamples: int = 10_000,
    level: float = 0.95,
    method: str = "percentile",
    seed: int | np.random.Generator | None = None,
) -> EstimateResult:
    """Bootstrap interval for `statistic` of the paired differences `x − y`.

    The pair is the resampling unit, so the correlation between arms is kept. Swapping `x` and
    `y` negates the mean difference. See `bootstrap_interval` for the methods.
    """
    first, second = as_paired_vectors(x, y, min_size=2)
    result = bootstrap_interval(
        first - second,
        statistic,
        n_resamples=n_resamples,
        level=level,
        method=method,
        seed=seed,
    )
    return EstimateResult(
        statistic=result.statistic,
        n=result.n,
        interval=result.interval,
        standard_error=result.standard_error,
        details={**result.details, "n_pairs": result.n, "difference": "x - y"},
    )


@dataclass(frozen=True)
class _Clusters:
    """Values sorted by cluster, with per-cluster sizes, offsets and strata."""

    values: FloatArray
    sizes: IntArray
    offsets: IntArray
    strata: IntArray
    n_strata: int


def _prepare_clusters(
    values: FloatArray, clusters: ArrayLike, strata: ArrayLike | None
) -> _Clusters:
    labels = np.asarray(clusters)
    if labels.ndim != 1 or labels.size != values.size:
        raise ValueError(
            f"clusters must give one label per value ({values.size}), got shape {labels.shape}"
        )
    _, codes = np.unique(labels, return_inverse=True)
    order = np.argsort(codes, kind="stable")
    codes = codes[order]
    sizes = np.bincount(codes).astype(np.intp)
    if sizes.size < 2:
        raise ValueError(f"clusters needs at least 2 distinct clusters, got {sizes.size}")
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
    if strata is None:
        stratum_of_cluster = np.zeros(sizes.size, dtype=np.intp)
        n_strata = 1
    else:
        stratum_labels = np.asarray(strata)
        if stratum_labels.ndim != 1 or stratum_labels.size != values.size:
            raise ValueError(
                f"strata must give one label per value ({values.size}), "
                f"got shape {stratum_labels.shape}"
            )
        _, stratum_codes = np.unique(stratum_labels, return_inverse=True)
        stratum_codes = stratum_codes[order]
        stratum_of_cluster = stratum_codes[offsets].astype(np.intp)
        if np.any(stratum_codes != np.repeat(stratum_of_cluster, sizes)):
            raise ValueError(
                "strata must be constant within each cluster (a cluster is in one stratum)"
            )
        n_strata = int(stratum_of_cluster.max()) + 1
    return _Clusters(values[order], sizes, offsets, stratum_of_cluster, n_strata)


def _cluster_picks(groups: _Clusters, rows: int, rng: np.random.Generator) -> IntArray:
    """The clusters drawn in each of `rows` resamples (rows × clusters), within strata."""
    c = groups.sizes.size
    if groups.n_strata == 1:
        return rng.integers(0, c, size=(rows, c))
    picks = []
    for stratum in range(groups.n_strata):
        members = np.flatnonzero(groups.strata == stratum)
        picks.append(members[rng.integers(0, members.size, size=(rows, members.size))])
    return np.concatenate(picks, axis=1)


def _cluster_counts(groups: _Clusters, rows: int, rng: np.random.Generator) -> IntArray:
    """How often each cluster is drawn in each of `rows` resamples (within strata).

    Uniform draws counted with one `bincount`: numpy's multinomial loops per category and is
    an order of magnitude slower for this.
    """
    c = groups.sizes.size
    picks = _cluster_picks(groups, rows, rng)
    picks += (np.arange(rows) * c)[:, None]
    return np.bincount(picks.ravel(), minlength=rows * c).reshape(rows, c)


@dataclass(frozen=True)
class _DistinctValues:
    """Per-cluster distinct values and their shares, padded to a common width."""

    values: FloatArray  # clusters × D
    shares: FloatArray  # clusters × D, rows sum to 1
    exact: npt.NDArray[np.bool_]  # clusters resampled exactly (≤ MAX_EXACT_DISTINCT values)
    means: FloatArray
    variances: FloatArray  # population variance within each cluster


def _distinct_values(groups: _Clusters) -> _DistinctValues:
    c = groups.sizes.size
    cluster_of = np.repeat(np.arange(c), groups.sizes)
    # Distinct (cluster, value) pairs: lexsort once instead of a loop over clusters.
    order = np.lexsort((groups.values, cluster_of))
    sorted_clusters = cluster_of[order]
    sorted_values = groups.values[order]
    new = np.ones(order.size, dtype=np.bool_)
    new[1:] = (sorted_clusters[1:] != sorted_clusters[:-1]) | (
        sorted_values[1:] != sorted_values[:-1]
    )
    starts = np.flatnonzero(new)
    run_cluster = sorted_clusters[starts]
    run_value = sorted_values[starts]
    run_length = np.diff(np.append(starts, order.size))
    distinct = np.bincount(run_cluster, minlength=c)
    exact = distinct <= MAX_EXACT_DISTINCT
    # Only exactly-resampled clusters need columns; the rest get the normal draw.
    width = int(distinct[exact].max()) if np.any(exact) else 0
    values = np.zeros((c, width))
    shares = np.zeros((c, width))
    run_start = np.concatenate([[0], np.cumsum(distinct)[:-1]])
    rank = np.arange(starts.size) - run_start[run_cluster]
    keep = exact[run_cluster]
    values[run_cluster[keep], rank[keep]] = run_value[keep]
    shares[run_cluster[keep], rank[keep]] = run_length[keep] / groups.sizes[run_cluster[keep]]
    sums = np.bincount(cluster_of, weights=groups.values, minlength=c)
    means = sums / groups.sizes
    squares = np.bincount(cluster_of, weights=(groups.values - means[cluster_of]) ** 2, minlength=c)
    return _DistinctValues(values, shares, exact, means, squares / groups.sizes)


def _resampled_sums(
    copies: IntArray, groups: _Clusters, distinct: _DistinctValues, rng: np.random.Generator
) -> FloatArray:
    """Sum of resampled members of every drawn cluster copy (rows × clusters).

    `copies[r, c]` copies of cluster c each draw `n_c` members with replacement: together
    `T = copies·n_c` draws. For a cluster with D distinct values of shares p_j, the counts per
    value are exactly Multinomial(T, p), drawn as conditional binomials. Clusters with more than
    MAX_EXACT_DISTINCT distinct values (so more than 32 members) get a normal draw with the same
    mean `T·μ_c` and variance `T·σ²_c` as the exact resampled sum (a CLT approximation over at
    least 33 independent draws; only the third and higher moments differ).
    """
    draws = copies * groups.sizes[None, :]
    totals = np.zeros(draws.shape)
    exact = np.flatnonzero(distinct.exact)
    shares = distinct.shares[exact]
    values = distinct.values[exact]
    remaining = draws[:, exact]
    remaining_share = np.ones(exact.size)
    sums = np.zeros(remaining.shape)
    width = shares.shape[1]
    for j in range(width):
        if j == width - 1:
            counts = remaining
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                conditional = np.where(
                    remaining_share > 0, np.clip(shares[:, j] / remaining_share, 0.0, 1.0), 0.0
                )
            counts = rng.binomial(remaining, np.broadcast_to(conditional, remaining.shape))
            remaining = remaining - counts
            remaining_share = remaining_share - shares[:, j]
        sums += counts * values[None, :, j]
    totals[:, exact] = sums
    approximate = np.flatnonzero(~distinct.exact)
    if approximate.size:
        t = draws[:, approximate]
        noise = rng.standard_normal(t.shape)
        totals[:, approximate] = t * distinct.means[approximate] + noise * np.sqrt(
            t * distinct.variances[approximate]
        )
    return totals


def _exact_draws(distinct: _DistinctValues, n_resamples: int) -> int:
    """Binomial draws the exact within-cluster stage makes for `n_resamples` resamples."""
    widths = np.count_nonzero(distinct.shares[distinct.exact] > 0, axis=1)
    return n_resamples * int(np.maximum(widths - 1, 0).sum())


def _pooled_is_sound(groups: _Clusters, distinct: _DistinctValues) -> bool:
    """Whether the sum of every drawn member is close to normal given the drawn clusters.

    It is a sum of independent draws from many clusters; when no cluster holds more than
    POOLED_MAX_VARIANCE_SHARE of the within-cluster variance (so at least 100 clusters carry
    it), the Lindeberg condition holds with room to spare and only the third and higher moments
    of the resampled sum differ from the exact ones, by O(1/√(clusters)).
    """
    spread = groups.sizes * distinct.variances
    total = float(spread.sum())
    if total <= 0:
        return True  # no within-cluster variance: the pooled draw is exact
    return (
        int(np.count_nonzero(spread > 0)) >= POOLED_MIN_CLUSTERS
        and float(spread.max()) <= POOLED_MAX_VARIANCE_SHARE * total
    )


def _cluster_mean_distribution(
    groups: _Clusters,
    n_resamples: int,
    resample_within: bool,
    rng: np.random.Generator,
    pooled: bool | None = None,
) -> tuple[FloatArray, str]:
    """Bootstrap distribution of the mean, with the within-cluster stage drawn per cluster, or
    pooled (`pooled=None`: when the per-cluster draws exceed EXACT_DRAW_BUDGET and pooling is
    sound).

    Pooled: given the drawn cluster copies `k_c`, the sum of all resampled members has mean
    `Σ k_c·n_c·μ_c` and variance `Σ k_c·n_c·σ²_c` (n_c independent draws per copy); it is drawn
    as one normal with exactly those moments per resample, so the cost is that of stage 1 alone.
    """
    c = groups.sizes.size
    sums = np.add.reduceat(groups.values, groups.offsets)
    distinct = _distinct_values(groups) if resample_within else None
    if distinct is not None and pooled is None:
        pooled = _exact_draws(distinct, n_resamples) > EXACT_DRAW_BUDGET and _pooled_is_sound(
            groups, distinct
        )
    out = np.empty(n_resamples)
    rows = max(1, CHUNK_ELEMENTS // (4 * c))
    # The variance of one drawn copy's resampled sum: n_c·σ²_c.
    spread = None if distinct is None or not pooled else groups.sizes * distinct.variances
    for start in range(0, n_resamples, rows):
        count = min(rows, n_resamples - start)
        if spread is not None:
            # One gather per column is several times faster than a gather of rows.
            picks = _cluster_picks(groups, count, rng)
            size = groups.sizes[picks].sum(axis=1)
            variance = np.maximum(spread[picks].sum(axis=1), 0.0)
            total = sums[picks].sum(axis=1) + rng.standard_normal(count) * np.sqrt(variance)
        else:
            copies = _cluster_counts(groups, count, rng)
            size = copies @ groups.sizes
            if distinct is None:
                total = copies @ sums
            else:
                total = _resampled_sums(copies, groups, distinct, rng).sum(axis=1)
        out[start : start + count] = total / size
    if distinct is None:
        how = "clusters only"
    elif pooled:
        how = "normal approximation of the pooled within-cluster draw (many clusters)"
    elif np.all(distinct.exact):
        how = "exact multinomial counts"
    elif not np.any(distinct.exact):
        how = "normal approximation (every cluster has >32 distinct values)"
    else:
        how = "exact multinomial counts; normal approximation for clusters with >32 distinct values"
    return out, how


def _cluster_member_distribution(
    groups: _Clusters,
    statistic: _ResolvedStatistic,
    n_resamples: int,
    resample_within: bool,
    rng: np.random.Generator,
) -> FloatArray:
    """Materialise every resample's members (rows padded with NaN when their sizes differ)."""
    c = groups.sizes.size
    n = groups.values.size
    out = np.empty(n_resamples)
    # A resample holds about n values; bound the chunk by the largest possible size as well.
    rows = max(1, CHUNK_ELEMENTS // (2 * n))
    cluster_ids = np.arange(c)
    for start in range(0, n_resamples, rows):
        count = min(rows, n_resamples - start)
        copies = _cluster_counts(groups, count, rng)
        flat = copies.ravel()
        copy_cluster = np.repeat(np.tile(cluster_ids, count), flat)
        copy_row = np.repeat(np.repeat(np.arange(count), c), flat)
        member_sizes = groups.sizes[copy_cluster]
        member_cluster = np.repeat(copy_cluster, member_sizes)
        member_row = np.repeat(copy_row, member_sizes)
        total = member_cluster.size
        if resample_within:
            offsets = np.floor(rng.random(total) * groups.sizes[member_cluster]).astype(np.intp)
        else:
            copy_start = np.concatenate([[0], np.cumsum(member_sizes)[:-1]])
            offsets = np.arange(total) - np.repeat(copy_start, member_sizes)
        picked = groups.values[groups.offsets[member_cluster] + offsets]
        row_sizes = np.bincount(member_row, minlength=count)
        row_start = np.concatenate([[0], np.cumsum(row_sizes)[:-1]])
        column = np.arange(total) - row_start[member_row]
        matrix = np.full((count, int(row_sizes.max())), np.nan)
        matrix[member_row, column] = picked
        if np.all(row_sizes == row_sizes[0]) or statistic.nan_function is None:
            out[start : start + count] = statistic.function(matrix)
        else:
            out[start : start + count] = statistic.nan_function(matrix)
    return out


def _cluster_jackknife(groups: _Clusters, statistic: _ResolvedStatistic) -> FloatArray:
    """Leave-one-cluster-out values of the statistic."""
    c = groups.sizes.size
    if statistic.function is _mean:
        sums = np.add.reduceat(groups.values, groups.offsets)
        return np.asarray(
            (sums.sum() - sums) / (groups.values.size - groups.sizes), dtype=np.float64
        )
    out = np.empty(c)
    cluster_of = np.repeat(np.arange(c), groups.sizes)
    for cluster in range(c):
        out[cluster] = statistic.function(groups.values[cluster_of != cluster][None, :])[0]
    return out


def _check_within(within: str) -> None:
    """Raise ValueError unless `within` names one of cluster_bootstrap's stage-2 strategies."""
    if within not in ("auto", "members", "per-cluster", "pooled"):
        raise ValueError(
            f"within must be 'auto', 'members', 'per-cluster' or 'pooled', got {within!r}"
        )


def _cluster_distribution(
    groups: _Clusters,
    statistic: _ResolvedStatistic,
    n_resamples: int,
    resample_within: bool,
    rng: np.random.Generator,
    within: Literal["auto", "members", "per-cluster", "pooled"],
) -> tuple[FloatArray, str]:
    """The two-stage bootstrap distribution of the statistic, and how stage 2 was drawn."""
    if statistic.function is _mean and within != "members":
        pooled = None if within == "auto" else within == "pooled"
        return _cluster_mean_distribution(groups, n_resamples, resample_within, rng, pooled)
    distribution = _cluster_member_distribution(
        groups, statistic, n_resamples, resample_within, rng
    )
    return distribution, "members resampled" if resample_within else "clusters only"


def cluster_bootstrap(
    values: ArrayLike,
    clusters: ArrayLike,
    *,
    statistic: Statistic = "mean",
    n_resamples: int = 10_000,
    level: float = 0.95,
    method: str = "percentile",
    seed: int | np.random.Generator | None = None,
    resample_within: bool = True,
    strata: ArrayLike | None = None,
    within: Literal["auto", "members", "per-cluster", "pooled"] = "auto",
) -> EstimateResult:
    """Two-stage cluster bootstrap: resample clusters (within strata), then members within each.

    Stage 1 draws as many clusters as there are, with replacement (within each stratum when
    `strata` labels the values; a cluster must sit in one stratum). Stage 2, when
    `resample_within`, draws each chosen cluster's members with replacement; without it, each
    chosen cluster keeps all its members. The statistic is computed on the pooled members, so the
    mean weights every value equally (identical to the mean of cluster means when clusters are
    the same size).

    For the mean (`within="auto"`), stage 2 never materialises members: a drawn cluster's
    resampled sum is built from multinomial counts over its distinct values, which is exact, and
    costs O(resamples × clusters × distinct values) instead of O(resamples × values); binary
    scores need one binomial per cluster. Clusters with more than 32 distinct values (only
    possible with more than 32 members) get a normal draw with the exact mean and variance of the
    resampled sum. With many clusters (over EXACT_DRAW_BUDGET binomial draws, e.g. 10,000
    resamples of 3,000 tasks with 6 distinct values each), stage 2 is drawn pooled instead: given
    the drawn clusters, the sum of all resampled members is one normal draw with its exact mean
    and variance, which is sound when at least 100 clusters share the within-cluster variance (no
    cluster above 1% of it; otherwise the per-cluster draw is kept); the method string says which
    was used. `within="per-cluster"` or `"pooled"` forces one. `within="members"` materialises
    every member instead (exact, slow). Other
    statistics always materialise members; when resamples differ in size (unequal clusters) the
    rows are NaN-padded and "mean"/"median" ignore the padding (a callable must too, e.g. with
    `np.nanmean`).

    Resampling members again counts the within-cluster noise twice (the observed cluster means
    already carry it), so the two-stage interval is conservative: in simulation, 50 clusters of
    4 binary repeats give 98% coverage for a nominal 95% interval, against 94% with
    `resample_within=False` (tests/stats/test_stats_coverage.py). With many clusters,
    `resample_within=False` is the accurate choice, because each observed cluster mean already
    carries its members' noise; the two-stage default errs wide, by roughly the within-cluster
    variance divided by the cluster size, which matters most for few repeats per cluster.

    BCa uses the leave-one-cluster-out jackknife for the acceleration. Reference: Davison &
    Hinkley (1997), §3.8, strategy 2 (resample clusters, then within clusters); Field & Welsh
    (2007), "Bootstrapping clustered data", JRSS B 69(3).
    """
    level = check_level(level)
    kind = _check_method(method)
    resolved = _resolve_statistic(statistic)
    n_resamples = _check_resamples(n_resamples)
    _check_within(within)
    data = as_float_vector(values, "values", min_size=2)
    groups = _prepare_clusters(data, clusters, strata)
    rng = _generator(seed)
    theta_hat = float(resolved.function(groups.values[None, :])[0])
    distribution, how = _cluster_distribution(
        groups, resolved, n_resamples, resample_within, rng, within
    )
    jackknife = (lambda: _cluster_jackknife(groups, resolved)) if kind == "bca" else None
    low, high, extra = _interval_from_distribution(theta_hat, distribution, jackknife, level)
    details: dict[str, Any] = {
        "n_clusters": int(groups.sizes.size),
        "n_strata": groups.n_strata,
        "resample_within": resample_within,
        "within_resampling": how,
        **extra,
    }
    return _result(
        theta_hat, data.size, distribution, low, high, level, kind, resolved.name, seed, details
    )
