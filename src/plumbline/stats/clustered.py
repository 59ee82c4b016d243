"""The cluster (and stratified) bootstrap: two-stage resampling, clusters then their members.

It shares the statistic, the checks and the interval (percentile, BCa) with `stats.bootstrap`.
For the mean, clusters with few distinct values are resampled by multinomial counts
(`MAX_EXACT_DISTINCT`), and above `EXACT_DRAW_BUDGET` the within-cluster stage is drawn pooled
when that is sound (`_pooled_is_sound`).

Reference: Davison & Hinkley (1997), "Bootstrap Methods and their Application", §3.8 (two-stage
cluster resampling)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from plumbline.stats._validation import ArrayLike, as_float_vector
from plumbline.stats.arrays import FloatArray, IndexArray
from plumbline.stats.bootstrap import (
    CHUNK_ELEMENTS,
    Statistic,
    _check_method,
    _check_resamples,
    _generator,
    _interval_from_distribution,
    _mean,
    _resolve_statistic,
    _ResolvedStatistic,
    _result,
)
from plumbline.stats.result import EstimateResult, check_level

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


@dataclass(frozen=True)
class _Clusters:
    """Values sorted by cluster, with per-cluster sizes, offsets and strata."""

    values: FloatArray
    sizes: IndexArray
    offsets: IndexArray
    strata: IndexArray
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


def _cluster_picks(groups: _Clusters, rows: int, rng: np.random.Generator) -> IndexArray:
    """The clusters drawn in each of `rows` resamples (rows × clusters), within strata."""
    c = groups.sizes.size
    if groups.n_strata == 1:
        return rng.integers(0, c, size=(rows, c))
    picks = []
    for stratum in range(groups.n_strata):
        members = np.flatnonzero(groups.strata == stratum)
        picks.append(members[rng.integers(0, members.size, size=(rows, members.size))])
    return np.concatenate(picks, axis=1)


def _cluster_counts(groups: _Clusters, rows: int, rng: np.random.Generator) -> IndexArray:
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
    copies: IndexArray, groups: _Clusters, distinct: _DistinctValues, rng: np.random.Generator
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
