"""Effect sizes: Cohen's d (pooled SD), Cliff's delta, ratio of geometric means."""

from __future__ import annotations

import math

import numpy as np

from plumbline.stats._validation import (
    ArrayLike,
    as_float_vector,
    as_paired_vectors,
    t_critical,
    z_critical,
)
from plumbline.stats.result import ConfidenceInterval, EstimateResult, check_level


def cohens_d(x: ArrayLike, y: ArrayLike, *, level: float = 0.95) -> EstimateResult:
    """Cohen's d with the pooled standard deviation: `d = (x̄ − ȳ) / s_p`.

    `s_p = √(((n_x − 1)s_x² + (n_y − 1)s_y²) / (n_x + n_y − 2))`. The interval is the normal
    approximation with `SE(d) = √((n_x + n_y)/(n_x n_y) + d² / (2(n_x + n_y)))`; details add
    Hedges' small-sample corrected `g = d · (1 − 3/(4(n_x + n_y) − 9))`.
    Reference: Cohen (1988), "Statistical Power Analysis", §2.2; Hedges & Olkin (1985), eq. 5.8.
    """
    level = check_level(level)
    first = as_float_vector(x, "x", min_size=2)
    second = as_float_vector(y, "y", min_size=2)
    nx, ny = first.size, second.size
    pooled = math.sqrt(
        ((nx - 1) * float(first.var(ddof=1)) + (ny - 1) * float(second.var(ddof=1))) / (nx + ny - 2)
    )
    if pooled == 0:
        raise ValueError("x and y have zero pooled standard deviation; Cohen's d is undefined")
    d = (float(first.mean()) - float(second.mean())) / pooled
    se = math.sqrt((nx + ny) / (nx * ny) + d * d / (2 * (nx + ny)))
    half = z_critical(level) * se
    return EstimateResult(
        statistic=d,
        n=nx + ny,
        interval=ConfidenceInterval(low=d - half, high=d + half, level=level, method="normal"),
        standard_error=se,
        details={
            "n_x": nx,
            "n_y": ny,
            "pooled_sd": pooled,
            "hedges_g": d * (1 - 3 / (4 * (nx + ny) - 9)),
        },
    )


def cohens_d_clustered(
    x: ArrayLike,
    y: ArrayLike,
    x_clusters: ArrayLike,
    y_clusters: ArrayLike,
    *,
    level: float = 0.95,
) -> EstimateResult:
    """Cohen's d (as `cohens_d`) with an interval for values that come in clusters.

    The values of both groups fall into clusters (the prompts a model was asked, each several
    times); a cluster may hold values of both groups (the same prompt asked of both models), so
    their shared cause cancels in the difference. The mean difference gets the cluster-robust
    (CR1) variance of its influence values, `V = C/(C−1) · Σ_c (Σ_{i∈c} (x_i − x̄)/n_x −
    Σ_{j∈c} (y_j − ȳ)/n_y)²`, and d the delta method's `SE² = V / s_p² + d² / (2(n_x + n_y))`
    (the second term from Hedges & Olkin's, for the pooled SD); the interval is
    `d ± t_{C−1} · SE`, C the clusters.
    Reference: Cameron & Miller (2015), "A Practitioner's Guide to Cluster-Robust Inference",
    J. Human Resources 50(2), §II–III; Hedges & Olkin (1985), eq. 5.8.
    """
    plain = cohens_d(x, y, level=level)
    first = as_float_vector(x, "x", min_size=2)
    second = as_float_vector(y, "y", min_size=2)
    labels = np.concatenate([np.asarray(x_clusters), np.asarray(y_clusters)])
    if labels.ndim != 1 or labels.size != first.size + second.size:
        raise ValueError("x_clusters and y_clusters must give one label per value")
    uniques, codes = np.unique(labels, return_inverse=True)
    c = int(uniques.size)
    if c < 2:
        raise ValueError(f"the values need at least 2 distinct clusters, got {c}")
    influence = np.concatenate(
        [(first - first.mean()) / first.size, -(second - second.mean()) / second.size]
    )
    per_cluster = np.bincount(codes, weights=influence, minlength=c)
    variance = c / (c - 1) * float(np.sum(per_cluster**2))
    pooled = float(plain.details["pooled_sd"])
    d = plain.statistic
    se = math.sqrt(variance / pooled**2 + d * d / (2 * (first.size + second.size)))
    half = t_critical(level, c - 1) * se
    return EstimateResult(
        statistic=d,
        n=plain.n,
        interval=ConfidenceInterval(
            low=d - half, high=d + half, level=level, method="cluster-robust t"
        ),
        standard_error=se,
        details={**plain.details, "clusters": c},
    )


def cliffs_delta(x: ArrayLike, y: ArrayLike, *, level: float = 0.95) -> EstimateResult:
    """Cliff's delta: `δ = (#{x_i > y_j} − #{x_i < y_j}) / (n_x n_y)`, in [−1, 1].

    Computed by sorting in O((n_x + n_y) log n_y). The interval is Cliff's asymmetric one,
    `(δ − δ³ ± z s √((1 − δ²)² + z² s²)) / (1 − δ² + z² s²)`, with the consistent variance
    `s² = (n_y² Σ(d_i. − δ)² + n_x² Σ(d_.j − δ)² − ΣΣ(d_ij − δ)²) / (n_x n_y (n_x − 1)(n_y − 1))`
    where `d_ij = sign(x_i − y_j)` and `d_i.`, `d_.j` are its row and column means. When that
    variance is 0 (complete separation) the interval collapses to δ; details flag it.
    Reference: Cliff (1993), Psychological Bulletin 114(3):494–509; Cliff (1996), "Ordinal
    Methods for Behavioral Data Analysis", §3.
    """
    level = check_level(level)
    first = as_float_vector(x, "x", min_size=2)
    second = as_float_vector(y, "y", min_size=2)
    nx, ny = first.size, second.size
    sorted_y = np.sort(second)
    sorted_x = np.sort(first)
    # Row means d_i.: for each x_i, (#y below − #y above) / n_y.
    y_below = np.searchsorted(sorted_y, first, side="left")
    y_above = ny - np.searchsorted(sorted_y, first, side="right")
    row = (y_below - y_above) / ny
    # Column means d_.j: for each y_j, (#x above − #x below) / n_x.
    x_above = nx - np.searchsorted(sorted_x, second, side="right")
    x_below = np.searchsorted(sorted_x, second, side="left")
    column = (x_above - x_below) / nx
    delta = float(row.mean())
    untied = int(np.sum(y_below + y_above))
    cells = nx * ny
    # ΣΣ(d_ij − δ)² = Σ d_ij² − 2δ Σ d_ij + N δ², and d_ij² is 1 unless tied.
    cell_squares = untied - 2 * delta * delta * cells + cells * delta * delta
    numerator = (
        ny * ny * float(np.sum((row - delta) ** 2))
        + nx * nx * float(np.sum((column - delta) ** 2))
        - cell_squares
    )
    variance = max(numerator / (cells * (nx - 1) * (ny - 1)), 0.0)
    s = math.sqrt(variance)
    z = z_critical(level)
    degenerate = variance == 0.0
    if degenerate:
        low = high = delta
    else:
        square = 1 - delta * delta
        root = z * s * math.sqrt(square * square + z * z * variance)
        denominator = square + z * z * variance
        low = max((delta - delta**3 - root) / denominator, -1.0)
        high = min((delta - delta**3 + root) / denominator, 1.0)
    return EstimateResult(
        statistic=delta,
        n=nx + ny,
        interval=ConfidenceInterval(low=low, high=high, level=level, method="Cliff asymmetric"),
        standard_error=s,
        details={
            "n_x": nx,
            "n_y": ny,
            "probability_x_greater": float(np.sum(y_below)) / cells,
            "probability_x_less": float(np.sum(y_above)) / cells,
            "degenerate_interval": degenerate,
        },
    )


def geometric_mean_ratio(
    x: ArrayLike, y: ArrayLike, *, paired: bool = False, level: float = 0.95
) -> EstimateResult:
    """Ratio of geometric means `GM(x) / GM(y) = exp(mean(log x) − mean(log y))`.

    For positive, right-skewed quantities (cost, duration, tokens) a ratio is the natural effect.
    Paired: a t interval on the per-pair log ratios `log x_i − log y_i`. Unpaired: Welch's t
    interval on the difference of mean logs (Welch–Satterthwaite df). The interval is
    exponentiated, so it is asymmetric around the ratio; `standard_error` is on the log scale.
    Reference: Kirkwood (1979), Biometrics 35:908–909; Welch (1947), Biometrika 34:28–35.
    """
    level = check_level(level)
    if paired:
        first, second = as_paired_vectors(x, y, min_size=2)
    else:
        first = as_float_vector(x, "x", min_size=2)
        second = as_float_vector(y, "y", min_size=2)
    for name, data in (("x", first), ("y", second)):
        if np.any(data <= 0):
            bad = int(np.flatnonzero(data <= 0)[0])
            raise ValueError(
                f"{name}[{bad}] is {float(data[bad])}; "
                "geometric means need strictly positive values"
            )
    log_x, log_y = np.log(first), np.log(second)
    if paired:
        logs = log_x - log_y
        n = logs.size
        log_ratio = float(logs.mean())
        se = float(logs.std(ddof=1)) / math.sqrt(n)
        df = float(n - 1)
    else:
        vx = float(log_x.var(ddof=1)) / log_x.size
        vy = float(log_y.var(ddof=1)) / log_y.size
        log_ratio = float(log_x.mean() - log_y.mean())
        se = math.sqrt(vx + vy)
        n = log_x.size + log_y.size
        if se > 0:
            df = (vx + vy) ** 2 / (vx**2 / (log_x.size - 1) + vy**2 / (log_y.size - 1))
        else:
            df = float(n - 2)
    half = t_critical(level, df) * se
    return EstimateResult(
        statistic=math.exp(log_ratio),
        n=n,
        interval=ConfidenceInterval(
            low=math.exp(log_ratio - half),
            high=math.exp(log_ratio + half),
            level=level,
            method="paired t on logs" if paired else "Welch t on logs",
        ),
        standard_error=se,
        details={
            "log_ratio": log_ratio,
            "log_standard_error": se,
            "df": df,
            "paired": paired,
            "geometric_mean_x": math.exp(float(log_x.mean())),
            "geometric_mean_y": math.exp(float(log_y.mean())),
        },
    )
