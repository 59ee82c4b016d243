"""Intervals for means: the CERT document's CI_95, the t interval, repeated measures, clusters."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from plumbline.stats._validation import (
    ArrayLike,
    as_float_vector,
    t_critical,
    z_critical,
)
from plumbline.stats.arrays import FloatArray
from plumbline.stats.result import ConfidenceInterval, EstimateResult, check_level


def cert_bounds(samples: FloatArray, *, ddof: int = 0) -> tuple[FloatArray, ...]:
    """Vectorised CERT CI_95, one per row: (means, standard errors, lows, highs)."""
    n = samples.shape[-1]
    means = samples.mean(axis=-1)
    se = samples.std(axis=-1, ddof=ddof) / math.sqrt(n)
    return means, se, means - 1.96 * se, means + 1.96 * se


def cert_ci_95(values: ArrayLike, *, ddof: int = 0) -> EstimateResult:
    """The CERT document's interval, exactly: `CI_95 = mean ± 1.96 · std / √n`.

    `std` is numpy's default population standard deviation (`ddof=0`), as in the CERT code;
    pass `ddof=1` for the sample standard deviation. The fixed 1.96 and ddof=0 both ignore
    small-sample uncertainty, so it is too narrow for small n (about 93.7% coverage at n = 30 for
    normal data): `t_interval` is the better method beside it.
    Reference: CERT benchmark metrics, "Statistical Confidence".
    """
    data = as_float_vector(values, "values", min_size=2)
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 or 1, got {ddof!r}")
    mean, se, low, high = (float(a[0]) for a in cert_bounds(data[None, :], ddof=ddof))
    return EstimateResult(
        statistic=mean,
        n=data.size,
        interval=ConfidenceInterval(low=low, high=high, level=0.95, method="CERT CI_95"),
        standard_error=se,
        details={"std": float(data.std(ddof=ddof)), "ddof": ddof},
    )


def t_bounds(samples: FloatArray, *, level: float = 0.95) -> tuple[FloatArray, ...]:
    """Vectorised t intervals, one per row of a 2-D array: (means, standard errors, lows, highs).

    The core of `t_interval`, for simulations and callers with many samples of equal size.
    """
    level = check_level(level)
    n = samples.shape[-1]
    means = samples.mean(axis=-1)
    se = samples.std(axis=-1, ddof=1) / math.sqrt(n)
    half = t_critical(level, n - 1) * se
    return means, se, means - half, means + half


def t_interval(values: ArrayLike, *, level: float = 0.95) -> EstimateResult:
    """Student t interval for a mean: `x̄ ± t_{n−1, 1−α/2} · s / √n` with `s` the sample SD.

    Reference: Student (1908); scipy.stats.t.
    """
    level = check_level(level)
    data = as_float_vector(values, "values", min_size=2)
    mean, se, low, high = (float(a[0]) for a in t_bounds(data[None, :], level=level))
    return EstimateResult(
        statistic=mean,
        n=data.size,
        interval=ConfidenceInterval(low=low, high=high, level=level, method="t"),
        standard_error=se,
        details={"df": data.size - 1},
    )


def _as_score_matrix(scores: Any) -> FloatArray:
    """Questions × epochs matrix with NaN for missing epochs, from a 2-D array or ragged lists."""
    if isinstance(scores, np.ndarray):
        matrix = np.asarray(scores, dtype=np.float64)
    else:
        if not isinstance(scores, Sequence) or isinstance(scores, str | bytes):
            raise ValueError("scores must be a 2-D array or a sequence of per-question sequences")
        rows: list[FloatArray] = []
        for index, row in enumerate(scores):
            try:
                rows.append(np.atleast_1d(np.asarray(row, dtype=np.float64)))
            except (TypeError, ValueError):
                raise ValueError(f"scores[{index}] must be a sequence of numbers") from None
            if rows[-1].ndim != 1:
                raise ValueError(f"scores[{index}] must be a flat sequence of numbers")
        width = max((row.size for row in rows), default=0)
        matrix = np.full((len(rows), width), np.nan)
        for index, row in enumerate(rows):
            matrix[index, : row.size] = row
    if matrix.ndim == 1:
        matrix = matrix[:, None]
    if matrix.ndim != 2:
        raise ValueError(f"scores must be two-dimensional (questions × epochs), got {matrix.shape}")
    if np.any(np.isinf(matrix)):
        raise ValueError("scores contain infinite values")
    return matrix


def repeated_measures_mean(scores: Any, *, level: float = 0.95) -> EstimateResult:
    """Mean score over questions with K repeats (epochs) each, resampling the question.

    Each question's repeats are averaged first, `x̄_i = mean_k s_ik`; the estimate is the mean of
    the question means, with `SE = sd(x̄_i) / √Q` over the Q questions and a t interval on Q − 1
    degrees of freedom. Treating the Q·K scores as independent would understate the SE whenever
    questions differ in difficulty. Missing epochs are NaN (or shorter rows).

    Details also split a single run's variance (Miller 2024, eq. 6–8): `within_variance` is the
    mean per-question sample variance across repeats (run-to-run noise, shrinks as 1/K),
    `between_variance = var(x̄_i) − within/K̄` (question difficulty, does not shrink), and
    `within_share = within / (within + between)` feeds `plumbline power --within-share`.

    Reference: Miller (2024), "Adding Error Bars to Evals", arXiv:2411.00640, §2.2 and §3.
    """
    level = check_level(level)
    matrix = _as_score_matrix(scores)
    counts = np.sum(~np.isnan(matrix), axis=1)
    if matrix.shape[0] < 2:
        raise ValueError(f"scores needs at least 2 questions, got {matrix.shape[0]}")
    if np.any(counts == 0):
        empty = int(np.flatnonzero(counts == 0)[0])
        raise ValueError(f"scores[{empty}] has no scores; drop the question or score it")
    question_means = np.nansum(matrix, axis=1) / counts
    q = question_means.size
    mean, se, low, high = (float(a[0]) for a in t_bounds(question_means[None, :], level=level))
    variance_of_means = float(question_means.var(ddof=1))

    repeated = counts >= 2
    within = float("nan")
    between = float("nan")
    share = float("nan")
    if np.any(repeated):
        rows = matrix[repeated]
        row_means = question_means[repeated][:, None]
        squares = np.nansum((rows - row_means) ** 2, axis=1) / (counts[repeated] - 1)
        within = float(squares.mean())
        mean_k = float(np.mean(counts))
        between = max(variance_of_means - within / mean_k, 0.0)
        total = within + between
        share = within / total if total > 0 else 0.0

    epochs_min = int(counts.min())
    epochs_max = int(counts.max())
    return EstimateResult(
        statistic=mean,
        n=q,
        interval=ConfidenceInterval(
            low=low, high=high, level=level, method="t over question means"
        ),
        standard_error=se,
        details={
            "n_questions": q,
            "epochs": epochs_max if epochs_min == epochs_max else float(np.mean(counts)),
            "epochs_min": epochs_min,
            "epochs_max": epochs_max,
            "n_scores": int(counts.sum()),
            "within_variance": within,
            "between_variance": between,
            "within_share": share,
        },
    )


def _cluster_codes(clusters: ArrayLike, size: int, name: str = "clusters") -> tuple[Any, Any]:
    labels = np.asarray(clusters)
    if labels.ndim != 1 or labels.size != size:
        raise ValueError(f"{name} must give one label per value ({size}), got shape {labels.shape}")
    uniques, codes = np.unique(labels, return_inverse=True)
    return uniques, codes.astype(np.intp)


def clustered_bounds(
    samples: FloatArray, codes: npt.NDArray[np.intp], *, level: float = 0.95
) -> tuple[FloatArray, ...]:
    """Vectorised cluster-robust (CR1) t intervals, one per row; `codes` are 0..C−1 per column.

    The core of `clustered_mean`: (means, standard errors, lows, highs).
    """
    level = check_level(level)
    n = samples.shape[-1]
    c = int(codes.max()) + 1
    means = samples.mean(axis=-1)
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(c))
    residual_sums = np.add.reduceat((samples - means[:, None])[:, order], starts, axis=-1)
    se = np.sqrt(c / (c - 1) * np.sum(residual_sums**2, axis=-1) / (n * n))
    half = t_critical(level, c - 1) * se
    return means, se, means - half, means + half


def clustered_mean(
    values: ArrayLike, clusters: ArrayLike, *, level: float = 0.95
) -> EstimateResult:
    """Mean of all values with a cluster-robust standard error (CR1, the C/(C−1) correction).

    `SE² = C/(C−1) · Σ_c (Σ_{i∈c} (x_i − x̄))² / N²`, interval `x̄ ± t_{C−1} · SE`. Use it when
    the values come in groups that share a cause (repeats of one task, questions from one
    document), so the effective sample size is nearer the number of clusters C than N.

    Reference: Miller (2024), "Adding Error Bars to Evals", eq. 4; Cameron & Miller (2015),
    "A Practitioner's Guide to Cluster-Robust Inference", J. Human Resources 50(2).
    """
    level = check_level(level)
    data = as_float_vector(values, "values", min_size=2)
    uniques, codes = _cluster_codes(clusters, data.size)
    c = uniques.size
    if c < 2:
        raise ValueError(f"clusters needs at least 2 distinct clusters, got {c}")
    n = data.size
    means, ses, lows, highs = clustered_bounds(data[None, :], codes, level=level)
    mean, se, low, high = float(means[0]), float(ses[0]), float(lows[0]), float(highs[0])
    naive_se = float(data.std(ddof=1)) / math.sqrt(n)
    return EstimateResult(
        statistic=mean,
        n=n,
        interval=ConfidenceInterval(low=low, high=high, level=level, method="cluster-robust t"),
        standard_error=se,
        details={
            "n_clusters": c,
            "df": c - 1,
            "naive_standard_error": naive_se,
            "design_effect": (se / naive_se) ** 2 if naive_se > 0 else float("nan"),
        },
    )


def normal_interval(
    estimate: float, standard_error: float, *, level: float = 0.95
) -> tuple[float, float]:
    """`estimate ± z_{1−α/2} · standard_error` (a helper for callers with their own SE)."""
    level = check_level(level)
    half = z_critical(level) * standard_error
    return estimate - half, estimate + half
