"""The human labels behind a PPI estimate: the check that they are a uniform random sample of
the judged items, and how many to draw for a half-width (with the judge and without it)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

from plumbline.stats._validation import (
    ArrayLike,
    as_float_vector,
    check_probability,
    z_critical,
)
from plumbline.stats.arrays import FloatArray
from plumbline.stats.result import check_level

#: Level of the check that the labelled items are a uniform random sample.
SELECTION_ALPHA = 0.01
SELECTION_EXACT = "hypergeometric (exact): judge verdicts on labelled vs all items"
SELECTION_NORMAL = "normal, sampling without replacement (Hájek 1960)"


@dataclass(frozen=True)
class SelectionCheck:
    """Do the labelled items look drawn uniformly at random? The judge's mean on them against
    its mean on the others; `chosen` when the two-sided p-value is below `alpha`.

    `floor_pvalue` is the p-value of the least extreme of the two most extreme labelled sets
    (the n items the judge scored highest, or lowest): when it is not below `alpha`, even
    labels picked from the judge's "yes" (or "no") answers alone would pass, so the check
    `can_tell` nothing at this n and a pass is "cannot tell", never "drawn at random".
    """

    labelled_mean: float
    unlabelled_mean: float
    pvalue: float
    alpha: float
    method: str
    floor_pvalue: float = 0.0
    labelled: int = 0

    @property
    def chosen(self) -> bool:
        return self.pvalue < self.alpha

    @property
    def can_tell(self) -> bool:
        """The test reaches its level in both directions at this number of labels."""
        return self.floor_pvalue < self.alpha

    @property
    def verdict(self) -> str:
        """`chosen`, `cannot tell` (the test cannot reach its level here) or `random`."""
        if self.chosen:
            return "chosen"
        return "random" if self.can_tell else "cannot tell"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "chosen": self.chosen, "can_tell": self.can_tell}


def _selection_pvalue(f: FloatArray, every: FloatArray) -> tuple[float, str]:
    """Two-sided p of 'the n values `f` are a simple random sample of `every`'."""
    n, total = f.size, every.size
    if np.all((every == 0.0) | (every == 1.0)):
        distribution = sps.hypergeom(total, int(every.sum()), n)
        k = int(f.sum())
        tails = min(float(distribution.cdf(k)), float(distribution.sf(k - 1)))
        return min(1.0, 2 * tails), SELECTION_EXACT
    variance = float(every.var(ddof=1)) / n * ((total - n) / total)
    if variance <= 0:
        return 1.0, SELECTION_NORMAL
    z = (float(f.mean()) - float(every.mean())) / math.sqrt(variance)
    return float(2 * sps.norm.sf(abs(z))), SELECTION_NORMAL


def selection_check(
    judge_labelled: ArrayLike, judge_unlabelled: ArrayLike, *, alpha: float = SELECTION_ALPHA
) -> SelectionCheck:
    """Test that the n labelled items are a simple random sample of the n + N judged ones.

    PPI's guarantee rests on the labelled items being drawn uniformly at random; labels chosen
    by hand (the hard cases, the ones the judge liked) make its estimate biased with no sign in
    its interval. Under a uniform draw the judge's scores on the labelled items are a simple
    random sample of all its scores, so their mean is tested against that finite population:
    for 0/1 judge scores exactly (the labelled count of 1s is hypergeometric; two-sided p =
    2 × the smaller tail, at most 1: Fisher's exact test of labelled × verdict), otherwise by
    the normal approximation of a sample mean without replacement, variance
    `S²/n · N/(n + N)` with S² over all judged items (Hájek 1960, Publ. Math. Inst. Hungar.
    Acad. Sci. 5:361–374). A small p says the labelled set looks chosen; a large one cannot
    prove it was random (only selections that move the judge's mean are seen). At few labels
    the test may not reach `alpha` at all: `floor_pvalue` is the larger of the p-values of the
    two most extreme labelled sets (the judge's n highest and n lowest scores); when it is not
    below `alpha`, `can_tell` is False and a pass means "cannot tell at n labels".
    """
    f = as_float_vector(judge_labelled, "judge_labelled", min_size=1)
    u = as_float_vector(judge_unlabelled, "judge_unlabelled", min_size=1)
    alpha = check_probability(alpha, "alpha")
    every = np.concatenate([f, u])
    pvalue, method = _selection_pvalue(f, every)
    ranked = np.sort(every)
    floor = max(
        _selection_pvalue(ranked[-f.size :], every)[0],
        _selection_pvalue(ranked[: f.size], every)[0],
    )
    return SelectionCheck(
        labelled_mean=float(f.mean()),
        unlabelled_mean=float(u.mean()),
        pvalue=pvalue,
        alpha=alpha,
        method=method,
        floor_pvalue=floor,
        labelled=int(f.size),
    )


@dataclass(frozen=True)
class LabelBudget:
    """Human labels needed for a half-width, with the judge (PPI++) and without it."""

    labels_needed: int | None
    """None when even labelling every judged sample cannot reach the half-width."""
    labels_needed_without_judge: int
    correlation: float
    judged: int
    half_width: float
    rate: float
    level: float
    method: str = (
        "PPI++ variance at the λ the estimator uses, λ = clip(ρ, 0, 1): σ²(1 − 2λρ + λ²)/n + σ²λ²/N"
    )
    lambda_planned: float = 0.0
    """The λ planned with: the correlation clipped to [0, 1], as the estimator clips it (a
    negative correlation gives λ = 0: the human labels alone, no gain from the judge)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def label_budget(
    correlation: float,
    judged: int,
    half_width: float,
    *,
    rate: float = 0.5,
    level: float = 0.95,
) -> LabelBudget:
    """Labels needed for a 95% half-width H, from PPI++'s variance at the λ it will use.

    With N samples judged in all, n of them labelled (N − n unlabelled), human variance
    σ² = p(1 − p), judge–human correlation ρ and judge variance taken equal to σ², the PPI++
    variance at λ is `σ²(1 − 2λρ + λ²)/n + σ²λ²/N`. The estimator clips its λ to [0, 1]
    (`tuned_lambda`), so the plan uses λ = clip(ρ, 0, 1): for ρ ≥ 0 the variance is
    `σ²(1 − ρ²)/n + σ²ρ²/N` and solving `z²·V = H²` gives `n = σ²(1 − ρ²) / (H²/z² − σ²ρ²/N)`
    (None when the denominator is ≤ 0 or n > N: the judge's own noise on N samples already
    exceeds H); a negative ρ gives λ = 0 and the labels alone, `n = n₀`, with no gain from the
    judge (a negative λ would help, but the estimator never uses one). Without the judge
    `n₀ = z²σ²/H²`. Both are
    normal-approximation figures; plumbline's small-sample interval is a little wider at
    n < 50. Reference: Angelopoulos, Duchi & Zrnic (2023), arXiv:2311.01453, §2.
    """
    level = check_level(level)
    if isinstance(correlation, bool) or not isinstance(correlation, int | float):
        raise ValueError(f"correlation must be a number in [-1, 1], got {correlation!r}")
    if not -1 <= correlation <= 1:
        raise ValueError(f"correlation must be in [-1, 1], got {correlation!r}")
    if isinstance(judged, bool) or not isinstance(judged, int) or judged < 1:
        raise ValueError(f"judged must be a positive integer, got {judged!r}")
    if isinstance(half_width, bool) or not isinstance(half_width, int | float):
        raise ValueError(f"half_width must be a number in (0, 0.5], got {half_width!r}")
    if not 0 < half_width <= 0.5:
        raise ValueError(f"half_width must be in (0, 0.5], got {half_width!r}")
    rate = check_probability(rate, "rate")
    z = z_critical(level)
    sigma2 = rate * (1 - rate)
    without = math.ceil(z * z * sigma2 / half_width**2 - 1e-9)
    lam = min(max(float(correlation), 0.0), 1.0)
    rho2 = lam * lam  # λ = clip(ρ, 0, 1): 1 − 2λρ + λ² = 1 − λ² for ρ ≥ 0, 1 for ρ < 0
    denominator = half_width**2 / (z * z) - sigma2 * rho2 / judged
    needed: int | None = None
    if denominator > 0:
        exact = sigma2 * (1 - rho2) / denominator
        needed = max(2, math.ceil(exact - 1e-9))
        if needed > judged:
            needed = None
    return LabelBudget(
        labels_needed=needed,
        labels_needed_without_judge=without,
        correlation=float(correlation),
        judged=judged,
        half_width=float(half_width),
        rate=rate,
        level=level,
        lambda_planned=lam,
    )
