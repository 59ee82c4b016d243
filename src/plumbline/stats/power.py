"""Power analysis: questions needed to detect an effect, and the effect detectable with n questions.

Three designs, all two-sided at level `alpha`:

- two independent proportions (each arm on its own questions; n is per arm);
- paired binary outcomes (both arms answer the same questions; McNemar, Connor 1987);
- a paired difference of continuous scores (paired t test, exact via the noncentral t).

**Repeats (K epochs).** A single run's per-question variance splits into a between-question part
(difficulty, fixed) and a within-question part (run-to-run noise). Averaging K repeats per
question shrinks only the latter, so every variance is multiplied by
`f = (1 − w) + w / K`, with `w = within_share` the within-question share of a single run's
variance (Miller 2024, "Adding Error Bars to Evals", §3; `repeated_measures_mean` estimates
`w` from a pilot as `details["within_share"]`). With `w = 0` (deterministic answers) repeats do
not help; with `w = 1` they act like new questions. The default `w = 0` is the conservative
assumption.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from scipy import optimize
from scipy import stats as sps

from plumbline.stats._validation import check_count, check_positive, check_probability


@dataclass(frozen=True)
class SampleSizeResult:
    """Questions needed: `n` rounded up from the formula's `n_exact` (per arm when `per_arm`)."""

    n: int
    n_exact: float
    effect: float
    alpha: float
    power: float
    epochs: int
    design: str
    method: str
    per_arm: bool
    assumptions: dict[str, Any] = field(default_factory=dict)

    @property
    def total_runs(self) -> int:
        """Scored runs needed in all: questions × epochs × arms."""
        return self.n * self.epochs * 2

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total_runs": self.total_runs}


@dataclass(frozen=True)
class DetectableEffectResult:
    """The smallest effect (in the direction asked) detected with probability `power` at `n`."""

    effect: float
    baseline: float | None
    n: int
    alpha: float
    power: float
    epochs: int
    design: str
    method: str
    per_arm: bool
    assumptions: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def repeat_variance_factor(epochs: int, within_share: float) -> float:
    """`f = (1 − w) + w/K`: the variance of a K-repeat question mean relative to a single run."""
    k = check_count(epochs, "epochs", minimum=1)
    w = _check_share(within_share)
    return (1 - w) + w / k


def _check_share(within_share: float) -> float:
    return check_probability(within_share, "within_share", open_interval=False)


@dataclass(frozen=True)
class _Design:
    """One of the three designs: its name, the method its n comes from, and whether n is per arm."""

    name: str
    method: str
    per_arm: bool


_TWO_PROPORTIONS = _Design("two independent proportions", "normal approximation (Fleiss)", True)
_PAIRED_PROPORTIONS = _Design("paired proportions", "McNemar (Connor 1987)", False)
_PAIRED_DIFFERENCE = _Design("paired difference", "paired t (noncentral t)", False)


def _stated(design: _Design, alpha: float, power: float, epochs: int) -> dict[str, Any]:
    """The fields every power result states: level, power, repeats and the design."""
    return {
        "alpha": float(alpha),
        "power": float(power),
        "epochs": int(epochs),
        "design": design.name,
        "method": design.method,
        "per_arm": design.per_arm,
    }


def _questions(exact: float) -> int:
    """`n_exact` rounded up (a float just above an integer is that integer), at least 2."""
    return max(math.ceil(exact - 1e-9), 2)


def _z(alpha: float, power: float) -> tuple[float, float]:
    a = check_probability(alpha, "alpha")
    b = check_probability(power, "power")
    return float(sps.norm.ppf(1 - a / 2)), float(sps.norm.ppf(b))


def _check_effect(effect: float) -> float:
    if isinstance(effect, bool) or not isinstance(effect, int | float) or not math.isfinite(effect):
        raise ValueError(f"effect must be a finite number, got {effect!r}")
    if effect == 0:
        raise ValueError(
            "effect must be non-zero (a difference of 0 needs infinitely many questions)"
        )
    return float(effect)


def _second_arm(baseline: float, effect: float) -> tuple[float, float]:
    p1 = check_probability(baseline, "baseline")
    delta = _check_effect(effect)
    p2 = p1 + delta
    if not 0 < p2 < 1:
        raise ValueError(
            f"baseline + effect = {p2:.4g} must be strictly between 0 and 1 "
            f"(baseline {p1}, effect {delta})"
        )
    return p1, p2


def _two_proportion_n(p1: float, p2: float, za: float, zb: float, factor: float) -> float:
    pooled = (p1 + p2) / 2
    root = za * math.sqrt(2 * pooled * (1 - pooled) * factor) + zb * math.sqrt(
        (p1 * (1 - p1) + p2 * (1 - p2)) * factor
    )
    return root * root / (p2 - p1) ** 2


def two_proportion_sample_size(
    baseline: float,
    effect: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    epochs: int = 1,
    within_share: float = 0.0,
) -> SampleSizeResult:
    """Questions per arm to detect `p2 = baseline + effect` against `p1 = baseline` (unpaired).

    `n = (z_{1−α/2}√(2p̄q̄·f) + z_{1−β}√((p1q1 + p2q2)·f))² / (p2 − p1)²` with `p̄ = (p1+p2)/2`
    and the repeat factor f (module docstring); no continuity correction.
    Reference: Fleiss, Levin & Paik (2003), "Statistical Methods for Rates and Proportions", §4.2.
    """
    p1, p2 = _second_arm(baseline, effect)
    za, zb = _z(alpha, power)
    factor = repeat_variance_factor(epochs, within_share)
    exact = _two_proportion_n(p1, p2, za, zb, factor)
    return SampleSizeResult(
        n=_questions(exact),
        n_exact=exact,
        effect=float(effect),
        **_stated(_TWO_PROPORTIONS, alpha, power, epochs),
        assumptions={"baseline": p1, "target": round(p2, 12), "within_share": float(within_share)},
    )


def _discordance(
    p1: float, p2: float, correlation: float | None, discordant: float | None
) -> float:
    if discordant is not None:
        psi = check_probability(discordant, "discordant")
    else:
        rho = 0.5 if correlation is None else float(correlation)
        if not -1 <= rho <= 1:
            raise ValueError(f"correlation must be between -1 and 1, got {correlation!r}")
        both = p1 * p2 + rho * math.sqrt(p1 * (1 - p1) * p2 * (1 - p2))
        if not max(0.0, p1 + p2 - 1) - 1e-12 <= both <= min(p1, p2) + 1e-12:
            raise ValueError(
                f"correlation {rho} is impossible for marginal rates {p1:.4g} and {p2:.4g}; "
                "lower it or give --discordant"
            )
        psi = p1 + p2 - 2 * both
    if psi < abs(p2 - p1):
        raise ValueError(
            f"discordant share {psi:.4g} is smaller than the effect {abs(p2 - p1):.4g}; "
            "the effect can only come from discordant questions"
        )
    return psi


def _mcnemar_assumptions(
    psi: float, correlation: float | None, discordant: float | None, within_share: float
) -> dict[str, Any]:
    """The discordant share used and the correlation it came from (None: given directly)."""
    return {
        "discordant": psi,
        "correlation": None
        if discordant is not None
        else (0.5 if correlation is None else float(correlation)),
        "within_share": float(within_share),
    }


def _mcnemar_n(psi: float, delta: float, za: float, zb: float, factor: float) -> float:
    root = za * math.sqrt(psi * factor) + zb * math.sqrt(max(psi - delta * delta, 0.0) * factor)
    return root * root / (delta * delta)


def mcnemar_sample_size(
    baseline: float,
    effect: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    correlation: float | None = 0.5,
    discordant: float | None = None,
    epochs: int = 1,
    within_share: float = 0.0,
) -> SampleSizeResult:
    """Questions (answered by both arms) to detect a paired change from `baseline` by `effect`.

    Connor's formula for McNemar's test: `n = (z_{1−α/2}√ψ + z_{1−β}√(ψ − δ²))² / δ²`, where
    δ = effect and ψ is the share of discordant questions (one arm right, the other wrong).
    ψ is what the design hinges on; give it directly (`discordant`) or through the correlation ρ
    between the arms' per-question outcomes: `p11 = p1p2 + ρ√(p1q1p2q2)`, `ψ = p1 + p2 − 2p11`.
    The default ρ = 0.5 is an assumption (two versions of one agent on the same questions are
    usually positively correlated; ρ = 0 treats them as independent and needs more questions
    than ρ > 0). With K repeats the variances are multiplied by the repeat factor f (module
    docstring) and the analysis is the paired normal test on per-question mean differences.
    Reference: Connor (1987), "Sample size for testing differences in proportions for the
    paired-sample design", Biometrics 43:207–211.
    """
    p1, p2 = _second_arm(baseline, effect)
    za, zb = _z(alpha, power)
    factor = repeat_variance_factor(epochs, within_share)
    psi = _discordance(p1, p2, correlation, discordant)
    exact = _mcnemar_n(psi, p2 - p1, za, zb, factor)
    return SampleSizeResult(
        n=_questions(exact),
        n_exact=exact,
        effect=float(effect),
        **_stated(_PAIRED_PROPORTIONS, alpha, power, epochs),
        assumptions={
            "baseline": p1,
            "target": round(p2, 12),
            **_mcnemar_assumptions(psi, correlation, discordant, within_share),
        },
    )


def _paired_t_power(n: int, effect: float, sd: float, alpha: float) -> float:
    df = n - 1
    critical = float(sps.t.ppf(1 - alpha / 2, df))
    noncentrality = abs(effect) / sd * math.sqrt(n)
    upper = float(sps.nct.sf(critical, df, noncentrality))
    lower = float(sps.nct.cdf(-critical, df, noncentrality))
    # scipy's noncentral t can return NaN deep in a tail, where the probability is ~0 (or ~1).
    if math.isnan(upper):
        upper = 1.0 if noncentrality > critical else 0.0
    if math.isnan(lower):
        lower = 0.0
    return upper + lower


def _effective_sd(sd: float, epochs: int, within_share: float) -> float:
    """`σ·√f`: the SD of a K-repeat question's mean difference (module docstring)."""
    return check_positive(sd, "sd") * math.sqrt(repeat_variance_factor(epochs, within_share))


def _paired_assumptions(sd: float, sigma: float, within_share: float) -> dict[str, Any]:
    return {"sd": float(sd), "effective_sd": sigma, "within_share": float(within_share)}


def paired_sample_size(
    effect: float,
    sd: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    epochs: int = 1,
    within_share: float = 0.0,
) -> SampleSizeResult:
    """Questions needed to detect a mean paired difference `effect` with a paired t test.

    `sd` is the SD of the per-question differences for a single run; with K repeats it becomes
    `sd·√f`. The smallest n whose exact power (noncentral t, df = n − 1, noncentrality
    `|δ|√n/σ`) reaches `power`; the normal formula `((z_{1−α/2} + z_{1−β}) σ / δ)²` is the start.
    Reference: Cohen (1988), "Statistical Power Analysis", ch. 2; scipy.stats.nct.
    """
    delta = _check_effect(effect)
    sigma = _effective_sd(sd, epochs, within_share)
    za, zb = _z(alpha, power)
    approximate = ((za + zb) * sigma / delta) ** 2
    n = max(2, math.ceil(approximate))
    while n > 2 and _paired_t_power(n - 1, delta, sigma, alpha) >= power:
        n -= 1
    while _paired_t_power(n, delta, sigma, alpha) < power:
        n += 1
    return SampleSizeResult(
        n=n,
        n_exact=approximate,
        effect=delta,
        **_stated(_PAIRED_DIFFERENCE, alpha, power, epochs),
        assumptions=_paired_assumptions(sd, sigma, within_share),
    )


def _direction(baseline: float, increase: bool) -> tuple[float, float]:
    """The effect's sign and the largest change the baseline leaves room for."""
    sign = 1.0 if increase else -1.0
    return sign, (1 - baseline if increase else baseline) * (1 - 1e-9)


def _solve_effect(needed: Any, n: int, upper: float, description: str) -> float:
    """Smallest positive effect in (0, upper) whose required sample size is at most n."""
    lower = upper * 1e-9
    if needed(upper) > n:
        raise ValueError(
            f"n = {n} is too small to detect any {description}: even the largest possible "
            f"effect ({upper:.4g}) needs {math.ceil(needed(upper))}"
        )
    return float(optimize.brentq(lambda d: needed(d) - n, lower, upper, xtol=1e-10))


def two_proportion_minimum_detectable_effect(
    baseline: float,
    n: int,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    epochs: int = 1,
    within_share: float = 0.0,
    increase: bool = True,
) -> DetectableEffectResult:
    """Smallest change from `baseline` detectable with `n` questions per arm (unpaired).

    Inverts `two_proportion_sample_size` numerically (Brent's method); `increase=False` looks for
    a drop below the baseline instead.
    """
    p1 = check_probability(baseline, "baseline")
    size = check_count(n, "n", minimum=2)
    za, zb = _z(alpha, power)
    factor = repeat_variance_factor(epochs, within_share)
    sign, upper = _direction(p1, increase)
    effect = _solve_effect(
        lambda d: _two_proportion_n(p1, p1 + sign * d, za, zb, factor),
        size,
        upper,
        "increase" if increase else "decrease",
    )
    return DetectableEffectResult(
        effect=sign * effect,
        baseline=p1,
        n=size,
        **_stated(_TWO_PROPORTIONS, alpha, power, epochs),
        assumptions={"within_share": float(within_share)},
    )


def mcnemar_minimum_detectable_effect(
    baseline: float,
    n: int,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    correlation: float | None = 0.5,
    discordant: float | None = None,
    epochs: int = 1,
    within_share: float = 0.0,
    increase: bool = True,
) -> DetectableEffectResult:
    """Smallest paired change from `baseline` detectable with `n` questions (McNemar, Connor).

    With `correlation`, the discordant share changes with the effect; with `discordant` it is
    fixed, and the effect cannot exceed it.
    """
    p1 = check_probability(baseline, "baseline")
    size = check_count(n, "n", minimum=2)
    za, zb = _z(alpha, power)
    factor = repeat_variance_factor(epochs, within_share)
    sign, upper = _direction(p1, increase)
    if discordant is not None:
        upper = min(upper, check_probability(discordant, "discordant") * (1 - 1e-9))
    else:
        # The correlation must stay feasible for every candidate target; find the largest one.
        def feasible(d: float) -> bool:
            try:
                _discordance(p1, p1 + sign * d, correlation, None)
            except ValueError:
                return False
            return True

        if not feasible(upper):
            low, high = 0.0, upper
            for _ in range(100):
                middle = (low + high) / 2
                if feasible(middle):
                    low = middle
                else:
                    high = middle
            upper = low

    def needed(d: float) -> float:
        target = p1 + sign * d
        return _mcnemar_n(
            _discordance(p1, target, correlation, discordant), sign * d, za, zb, factor
        )

    description = (
        f"paired change with discordant share {discordant}"
        if discordant is not None
        else f"paired change at correlation {0.5 if correlation is None else correlation} "
        "(a lower correlation allows larger changes)"
    )
    effect = _solve_effect(needed, size, upper, description)
    psi = _discordance(p1, p1 + sign * effect, correlation, discordant)
    return DetectableEffectResult(
        effect=sign * effect,
        baseline=p1,
        n=size,
        **_stated(_PAIRED_PROPORTIONS, alpha, power, epochs),
        assumptions=_mcnemar_assumptions(psi, correlation, discordant, within_share),
    )


def paired_minimum_detectable_effect(
    n: int,
    sd: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    epochs: int = 1,
    within_share: float = 0.0,
) -> DetectableEffectResult:
    """Smallest mean paired difference detectable with `n` questions (exact paired t power)."""
    size = check_count(n, "n", minimum=2)
    sigma = _effective_sd(sd, epochs, within_share)
    za, zb = _z(alpha, power)
    upper = 20 * (za + zb) * sigma
    effect = float(
        optimize.brentq(
            lambda d: _paired_t_power(size, d, sigma, alpha) - power, 1e-12 * sigma, upper
        )
    )
    return DetectableEffectResult(
        effect=effect,
        baseline=None,
        n=size,
        **_stated(_PAIRED_DIFFERENCE, alpha, power, epochs),
        assumptions=_paired_assumptions(sd, sigma, within_share),
    )
