"""Anytime-valid sequential A/B comparison: look after every pair, stop when the data decide.

**The problem.** Testing a fixed-sample test after every pair and stopping at the first
"significant" result inflates the false-positive rate from 5% to 30–40% (Armitage, McPherson &
Rowe 1969). A *confidence sequence* is an interval that holds at every look simultaneously, so
stopping whenever it excludes zero keeps the error rate at α.

**The statistic.** Pairs arrive in order; `D_i = T_i − C_i` is the paired difference
(−1, 0, +1 for binary success; any real number for cost or time). With `S_n = Σ D_i` after
`n` pairs and the variance process `V_n = Σ D_i²` (for binary outcomes: the number of
discordant pairs), the two-sided normal-mixture boundary is

    b(V) = √((V + ρ) · (ln((V + ρ)/ρ) + L)),

and the confidence sequence for the mean difference δ = E[D] after `n` pairs is
`[(S_n − b(V_n))/n, (S_n + b(V_n))/n]`. It is Robbins' normal mixture in the form of Howard,
Ramdas, McAuliffe & Sekhon (2021), "Time-uniform, nonparametric, nonasymptotic confidence
sequences", Ann. Statist. 49(2), eq. (3.7)/Prop. 5: the mixture of `exp(λS − λ²V/2)` over
`λ ~ N(0, 1/ρ)` is a nonnegative supermartingale when the differences are symmetric about 0
(de la Peña 1999), and Ville's inequality with `L = 2 ln(1/α)` bounds the chance that
`|S_n| > b(V_n)` at *any* n by α. ρ (the mixture's precision) chooses the intrinsic time where
the boundary is tightest.

**Binary outcomes: exact calibration to the cap.** With no effect, P(D = +1) = P(D = −1)
whatever the tasks' difficulties and however the two arms' outcomes correlate within a pair, so
the signs of the discordant pairs are fair coin flips: `S` is a simple random walk in the
discordant-pair clock `V`. Since the procedure stops at `max_pairs` (the cap), at most
`max_pairs` discordant steps are ever seen. `L` is therefore not Ville's conservative
`2 ln(1/α)` but the smallest value whose exact crossing probability over `max_pairs` steps,
computed by dynamic programming on the walk, is at most α (the repeated-significance-test
calculation of Armitage et al. 1969, applied to the mixture boundary). This is exact at every
sample size, not asymptotic, and spends all of α by the cap (the final look included).
Continuous outcomes keep Ville's `L = 2 ln(1/α)` (valid for symmetric differences at any n).

**Tuning (fixed before the data; never from the outcomes being tested).** ρ is set so the
boundary is tightest early, at `ρ = MIXTURE_SHARE × (the variance the fixed design accumulates)`
(binary: ψ·n_fixed discordant pairs; continuous: σ²·n_fixed), and the cap `max_pairs` is the
smallest number of pairs whose exact power (binary: dynamic programming on the biased walk,
mixed over the binomial number of discordant pairs; continuous: a seeded simulation) reaches the
planned power + POWER_SLACK (0.02) at the planned effect. `MIXTURE_SHARE` (0.1, from a grid of
0.1, 0.2, 0.35) was chosen by simulation (`benchmarks/bench_sequential.py`; at 0.6 vs 0.7 it
gives a cap of 1.5× the fixed design, and 0.46× / 0.29× the fixed design's pairs at 1.5× / 2×
the planned effect): it trades the cap (power at the planned effect) against the
pairs used when the true effect is larger.

**Verdicts.** `better` (the interval is above 0), `worse` (below 0), `equivalent` (inside
±margin, when a margin is given), else `undecided` when the cap is reached (or the data run out
before it: then `complete` is False). At δ = 0 the interval is exactly the calibrated test; at
δ ≠ 0 it uses the discordant count as the variance, which over-estimates `Σ(D − δ)²` by about
`nδ²` (conservative), but the exact calibration holds only at δ = 0: away from 0 the interval
is an approximate confidence sequence (`INTERVAL_GUARANTEE`; its coverage at the stop is
measured in `benchmarks/bench_misspecification.py`).

**The within-pair correlation is an input, 0 by default.** The discordant share ψ, which sets
the fixed design, ρ and the cap, depends on how the two arms' outcomes correlate within a pair.
Planning at correlation 0 (independent arms) gives the largest ψ of any correlation ≥ 0 at
the same rates, hence the most pairs: the power at the planned effect is at least the planned
power whatever the true correlation in [0, 1) (positively correlated arms only make the test
stronger). A larger `correlation` shrinks the plan and is the user's stated assumption.
Negatively correlated arms have more discordant pairs than the plan expects and less power
(`power_at_correlations`: exact, printed by `power --sequential`); when the correlation is
unknown, plan at `lowest_correlation` (the Fréchet lower bound of the planned rates), whose
power holds at every correlation.

**Order.** The random-walk calibration treats the pairs in the order they are analysed as
exchangeable: every pair equally likely to come from any task. Tasks differ (one favours the
treatment, another the control), so an order that brings a task's repeats together (a harness
that runs them back to back, records grouped by task) lets the first tasks decide for the
suite; the callers therefore analyse pairs in a random order drawn before any outcome
(`compare --sequential`: complete rounds in repeat order, each shuffled by a seeded key, so
the order only grows as records are added; `agent run --until-decided`: the randomised
schedule). Then each analysed pair is a draw, without replacement, from the
suite's (task, repeat) cells, its sign is a fair coin when the suite's mean difference is 0,
and sampling without replacement only pulls the walk back towards the suite's mean.

The fixed design (`fixed_pairs`) is `plumbline power`'s paired design: McNemar with Connor's
formula at the same baseline, effect, α, power and within-pair correlation, or the paired t
for continuous outcomes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np
from scipy import stats as sps

from plumbline.stats._validation import as_paired_vectors, check_positive, check_probability
from plumbline.stats.arrays import FloatArray, IntArray
from plumbline.stats.power import mcnemar_sample_size, paired_sample_size
from plumbline.stats.result import ConfidenceInterval
from plumbline.stats.sequential_model import Outcome as Outcome
from plumbline.stats.sequential_model import SequentialPlan as SequentialPlan
from plumbline.stats.sequential_model import SequentialResult as SequentialResult
from plumbline.stats.sequential_model import SequentialStep as SequentialStep
from plumbline.stats.sequential_model import Verdict as Verdict
from plumbline.stats.sequential_model import _null_crossing, _thresholds, _walk_crossings

#: ρ as a share of the variance the fixed design accumulates (chosen by simulation).
MIXTURE_SHARE = 0.1
#: The cap is never allowed beyond this multiple of the fixed design.
MAX_CAP_RATIO = 3.0
#: The cap aims this much above the asked power, so that a simulation of the plan clears the
#: asked power beyond Monte Carlo error.
POWER_SLACK = 0.02
#: The first cap tried, as a multiple of the fixed design.
FIRST_CAP_RATIO = 1.7
#: Seeded paths used to find the cap of a continuous plan.
CONTINUOUS_PATHS = 4000
METHOD_BINARY = "normal-mixture confidence sequence, exact random-walk calibration to the cap"
METHOD_CONTINUOUS = "normal-mixture confidence sequence (Ville)"
#: The within-pair correlation plans assume unless told otherwise (the most pairs for ≥ 0).
DEFAULT_CORRELATION = 0.0
#: What the interval at the stop guarantees (stated beside it in every view).
INTERVAL_GUARANTEE = (
    "exact at a difference of 0 (the test); an approximate confidence sequence elsewhere"
)


@lru_cache(maxsize=256)
def _calibrate(mixture: float, alpha: float, steps: int) -> float:
    """Smallest L whose exact two-sided crossing probability over `steps` fair steps is ≤ α."""
    high = 2 * math.log(1 / alpha)  # Ville: always valid
    low = 0.0
    for _ in range(30):
        middle = (low + high) / 2
        if _null_crossing(mixture, middle, steps) <= alpha:
            high = middle
        else:
            low = middle
    return high


def _binary_power(
    mixture: float, level_constant: float, pairs: int, discordant: float, effect: float
) -> float:
    """P(the upper boundary is crossed within `pairs` pairs) at discordance ψ and effect δ."""
    up = (discordant + abs(effect)) / (2 * discordant)
    upper, _ = _walk_crossings(_thresholds(mixture, level_constant, pairs), min(up, 1.0))
    weights = sps.binom.pmf(np.arange(pairs + 1), pairs, discordant)
    return float(np.dot(weights, upper))


@lru_cache(maxsize=128)
def _binary_cap(
    fixed: int, discordant: float, effect: float, alpha: float, power: float
) -> tuple[int, float, float, float]:
    """(max_pairs, ρ, L, power at the cap): the smallest cap reaching `power`."""
    mixture = MIXTURE_SHARE * discordant * fixed

    def evaluate(pairs: int) -> tuple[float, float]:
        level_constant = _calibrate(mixture, alpha, pairs)
        return level_constant, _binary_power(mixture, level_constant, pairs, discordant, effect)

    target = min(power + POWER_SLACK, 0.999)
    low, high = fixed, max(fixed + 1, math.ceil(FIRST_CAP_RATIO * fixed))
    level_high, power_high = evaluate(high)
    if power_high < target:
        low, high = high, max(high + 1, math.ceil(MAX_CAP_RATIO * fixed))
        level_high, power_high = evaluate(high)
        if power_high < target:
            return high, mixture, level_high, power_high
    best = (high, level_high, power_high)
    while high - low > 1:
        middle = (low + high) // 2
        level_mid, power_mid = evaluate(middle)
        if power_mid >= target:
            high, best = middle, (middle, level_mid, power_mid)
        else:
            low = middle
    return best[0], mixture, best[1], best[2]


# ---------------------------------------------------------------------------------------------
# Plans


def _check_margin(margin: float | None) -> float | None:
    if margin is None:
        return None
    return check_positive(margin, "margin")


def plan_sequential(
    baseline: float,
    effect: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    margin: float | None = None,
    correlation: float | None = DEFAULT_CORRELATION,
    discordant: float | None = None,
    max_pairs: int | None = None,
) -> SequentialPlan:
    """The sequential design for paired binary outcomes (success 1/0 of both arms per pair).

    `fixed_pairs` is `mcnemar_sample_size(baseline, effect, ...)` (what `plumbline power
    --paired` prints for the same arguments); the boundary's mixture ρ and level L and the cap
    `max_pairs` follow the module docstring: ρ = MIXTURE_SHARE·ψ·n_fixed, L exactly calibrated
    to the cap, the cap the smallest reaching `power` at `effect` (exact). `margin` (optional)
    allows the `equivalent` verdict: the interval inside ±margin. `max_pairs` (optional) sets
    the cap instead (L is calibrated to it; `planned_power` says what power it gives).
    `correlation` is the assumed within-pair correlation of the two arms' outcomes (default 0,
    independent arms: the most pairs of any correlation ≥ 0, so the power holds whatever the
    true correlation in [0, 1)); `discordant` gives the discordant share directly instead.
    Reference: Howard, Ramdas, McAuliffe & Sekhon (2021), Ann. Statist. 49(2); Armitage,
    McPherson & Rowe (1969), J. R. Stat. Soc. A 132(2).
    """
    fixed = mcnemar_sample_size(
        baseline,
        effect,
        alpha=alpha,
        power=power,
        correlation=DEFAULT_CORRELATION if correlation is None else correlation,
        discordant=discordant,
    )
    psi = float(fixed.assumptions["discordant"])
    checked_margin = _check_margin(margin)
    if max_pairs is None:
        cap, mixture, level_constant, planned = _binary_cap(
            fixed.n, round(psi, 12), abs(float(effect)), float(alpha), float(power)
        )
    else:
        if isinstance(max_pairs, bool) or not isinstance(max_pairs, int) or max_pairs < 1:
            raise ValueError(f"max_pairs must be a positive whole number, got {max_pairs!r}")
        cap = max_pairs
        mixture = MIXTURE_SHARE * psi * fixed.n
        level_constant = _calibrate(mixture, float(alpha), cap)
        planned = _binary_power(mixture, level_constant, cap, psi, abs(float(effect)))
    return SequentialPlan(
        outcome="binary",
        baseline=float(baseline),
        effect=float(effect),
        alpha=float(alpha),
        power=float(power),
        margin=checked_margin,
        fixed_pairs=fixed.n,
        max_pairs=cap,
        mixture=mixture,
        level_constant=level_constant,
        planned_power=planned,
        method=METHOD_BINARY,
        assumptions={
            "discordant": psi,
            "correlation": fixed.assumptions["correlation"],
            "fixed_method": fixed.method,
            "mixture_share": MIXTURE_SHARE,
        },
    )


#: Within-pair correlations whose power every binary plan reports beside its own (issue 45:
#: negatively correlated arms need more pairs than correlation 0 plans).
REPORTED_CORRELATIONS = (-0.5, -0.3, 0.0)


def lowest_correlation(baseline: float, effect: float) -> float:
    """The lowest within-pair correlation (phi) two arms with success rates `baseline` and
    `baseline + effect` can have: both right as rarely as possible, `P(both) = max(0, p_t +
    p_c − 1)` (the Fréchet lower bound). It gives the largest discordant share,
    `min(p_t + p_c, 2 − p_t − p_c)`, hence the most pairs: a plan at this correlation keeps its
    power whatever the true correlation (the conservative plan when it is unknown)."""
    pc = check_probability(baseline, "baseline")
    pt = check_probability(baseline + effect, "baseline + effect")
    spread = math.sqrt(pt * (1 - pt) * pc * (1 - pc))
    if spread == 0:
        return 0.0
    return max(-1.0, (max(0.0, pt + pc - 1) - pt * pc) / spread)


@dataclass(frozen=True)
class CorrelationPower:
    """The power of a binary plan at the planned effect when the arms' outcomes correlate at
    `correlation` within a pair (exact, as `planned_power`); None where the rates make that
    correlation impossible."""

    correlation: float
    discordant: float | None
    power: float | None


def power_at_correlations(
    plan: SequentialPlan, correlations: Sequence[float] = REPORTED_CORRELATIONS
) -> list[CorrelationPower]:
    """The plan's exact power at the planned effect for each true within-pair correlation:
    the discordant share `ψ = p_t + p_c − 2(p_t p_c + ρ√(p_t q_t p_c q_c))`, the walk's up-step
    probability `(ψ + δ)/(2ψ)`, mixed over the binomial number of discordant pairs up to the cap
    (`_binary_power`). Lower correlations mean more discordant pairs, more noise, less power."""
    if plan.baseline is None:
        raise ValueError("power_at_correlations needs a binary plan")
    pc, pt = plan.baseline, plan.baseline + plan.effect
    rows = []
    for rho in correlations:
        both = pc * pt + rho * math.sqrt(pt * (1 - pt) * pc * (1 - pc))
        if not max(0.0, pt + pc - 1) - 1e-12 <= both <= min(pt, pc) + 1e-12:
            rows.append(CorrelationPower(float(rho), None, None))
            continue
        psi = pt + pc - 2 * both
        power = _binary_power(
            plan.mixture, plan.level_constant, plan.max_pairs, psi, abs(plan.effect)
        )
        rows.append(CorrelationPower(float(rho), psi, power))
    return rows


def _continuous_power(
    mixture: float, level_constant: float, pairs: int, sd: float, effect: float
) -> float:
    rng = np.random.default_rng(20_261_125)
    diffs = rng.normal(abs(effect), sd, size=(CONTINUOUS_PATHS, pairs))
    sums = np.cumsum(diffs, axis=1)
    variance = np.cumsum(diffs * diffs, axis=1) + mixture
    bound = np.sqrt(variance * (np.log(variance / mixture) + level_constant))
    return float(np.mean(np.any(sums > bound, axis=1)))


def plan_sequential_continuous(
    effect: float,
    sd: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    margin: float | None = None,
) -> SequentialPlan:
    """The sequential design for a paired continuous difference (cost, time): `sd` is the SD of
    the per-pair differences. `fixed_pairs` is `paired_sample_size(effect, sd, ...)` (the paired
    t, `plumbline power --sd`); L = 2 ln(1/α) (Ville's inequality, valid at every n for
    differences symmetric under no effect); ρ = MIXTURE_SHARE·σ²·n_fixed; the cap is the
    smallest reaching `power` at `effect` on Gaussian differences (seeded simulation,
    CONTINUOUS_PATHS paths). Reference: Howard et al. (2021), Prop. 5; de la Peña (1999).
    """
    fixed = paired_sample_size(effect, sd, alpha=alpha, power=power)
    checked_margin = _check_margin(margin)
    a = check_probability(alpha, "alpha")
    mixture = MIXTURE_SHARE * sd * sd * fixed.n
    level_constant = 2 * math.log(1 / a)
    target = min(power + POWER_SLACK, 0.999)

    def reached(pairs: int) -> float:
        return _continuous_power(mixture, level_constant, pairs, sd, effect)

    low, high = fixed.n, max(fixed.n + 1, math.ceil(FIRST_CAP_RATIO * fixed.n))
    best = (high, reached(high))
    if best[1] < target:
        low, high = high, max(high + 1, math.ceil(MAX_CAP_RATIO * fixed.n))
        best = (high, reached(high))
    if best[1] >= target:
        while high - low > 1:
            middle = (low + high) // 2
            at_middle = reached(middle)
            if at_middle >= target:
                high, best = middle, (middle, at_middle)
            else:
                low = middle
    return SequentialPlan(
        outcome="continuous",
        baseline=None,
        effect=float(effect),
        alpha=float(alpha),
        power=float(power),
        margin=checked_margin,
        fixed_pairs=fixed.n,
        max_pairs=best[0],
        mixture=mixture,
        level_constant=level_constant,
        planned_power=best[1],
        method=METHOD_CONTINUOUS,
        assumptions={"sd": float(sd), "fixed_method": fixed.method, "mixture_share": MIXTURE_SHARE},
    )


# ---------------------------------------------------------------------------------------------
# Running


def stopping_points(differences: FloatArray, plan: SequentialPlan) -> tuple[IntArray, IntArray]:
    """Vectorised stop rule over rows of paired differences (runs × pairs, in arrival order).

    Returns (index of the stopping pair, 0-based, or −1 if none; code: 1 better, −1 worse,
    2 equivalent, 0 none). The benchmark and `run_sequential` share this one implementation.
    """
    d = np.atleast_2d(np.asarray(differences, dtype=np.float64))[:, : plan.max_pairs]
    n = np.arange(1, d.shape[1] + 1, dtype=np.float64)
    sums = np.cumsum(d, axis=1)
    bound = plan.boundary(np.cumsum(d * d, axis=1))
    codes = np.zeros(d.shape, dtype=np.int64)
    codes[sums > bound] = 1
    codes[sums < -bound] = -1
    if plan.margin is not None:
        inside = (np.abs(sums) + bound) / n < plan.margin
        codes[(codes == 0) & inside] = 2
    stopped = codes != 0
    first = np.where(stopped.any(axis=1), stopped.argmax(axis=1), -1)
    rows = np.arange(d.shape[0])
    code = np.where(first >= 0, codes[rows, np.maximum(first, 0)], 0)
    return first.astype(np.int64), code.astype(np.int64)


def _differences(
    treatment: Sequence[float] | FloatArray,
    control: Sequence[float] | FloatArray,
    plan: SequentialPlan,
) -> FloatArray:
    t, c = as_paired_vectors(treatment, control, min_size=1, names=("treatment", "control"))
    if plan.outcome == "binary":
        for name, values in (("treatment", t), ("control", c)):
            bad = np.flatnonzero((values != 0) & (values != 1))
            if bad.size:
                raise ValueError(
                    f"{name}[{int(bad[0])}] is {values[bad[0]]:g}; binary outcomes must be 0 or 1"
                )
    return t - c


def run_sequential(
    treatment: Sequence[float] | FloatArray,
    control: Sequence[float] | FloatArray,
    plan: SequentialPlan,
) -> SequentialResult:
    """Look after every pair (in the order given) and stop at the first decision or the cap.

    `treatment[i]` and `control[i]` are the outcomes of pair i (binary plans: 1/0 success;
    continuous plans: any finite number, e.g. cost or seconds; "better" means the treatment's
    value is larger, so for cost or time, where lower is better, swap the two arguments).
    Method, reference and tuning: the module docstring.
    """
    d = _differences(treatment, control, plan)
    available = int(d.size)
    used = d[: plan.max_pairs]
    first, code = stopping_points(used, plan)
    stop = int(first[0]) + 1 if first[0] >= 0 else int(used.size)
    kind = int(code[0])
    verdict: Verdict = {1: "better", -1: "worse", 2: "equivalent"}.get(kind, "undecided")  # type: ignore[assignment]
    if kind in (1, -1):
        reason = "boundary"
    elif kind == 2:
        reason = "equivalence"
    elif stop >= plan.max_pairs:
        reason = "cap"
    else:
        reason = "data"
    n = np.arange(1, stop + 1, dtype=np.float64)
    sums = np.cumsum(used[:stop])
    bound = plan.boundary(np.cumsum(used[:stop] ** 2))
    low, high = (sums - bound) / n, (sums + bound) / n
    if plan.outcome == "binary":
        low, high = np.clip(low, -1, 1), np.clip(high, -1, 1)
    path = [
        SequentialStep(int(i), float(s / i), float(lo), float(hi))
        for i, s, lo, hi in zip(n.astype(int), sums, low, high, strict=True)
    ]
    last = path[-1]
    return SequentialResult(
        verdict=verdict,
        stopped_at=stop,
        pairs_available=available,
        estimate=last.estimate,
        interval=ConfidenceInterval(last.low, last.high, 1 - plan.alpha, plan.method),
        reason=reason,
        complete=reason != "data",
        plan=plan,
        path=path,
    )


def expected_pairs(plan: SequentialPlan, effect: float) -> float:
    """Expected pairs used at a true `effect` (binary plans: exact, by dynamic programming on the
    walk mixed over the binomial discordant count; the discordance follows the plan's
    correlation at the new effect; continuous plans: a seeded simulation of Gaussian
    differences with the plan's SD). Ignores equivalence stopping."""
    if plan.outcome == "continuous":
        return _continuous_expected_pairs(plan, effect)
    if plan.baseline is None:
        raise ValueError("expected_pairs needs a plan with a baseline")
    psi = float(
        mcnemar_sample_size(
            plan.baseline,
            effect,
            alpha=plan.alpha,
            power=plan.power,
            correlation=plan.assumptions.get("correlation"),
            discordant=None
            if plan.assumptions.get("correlation") is not None
            else plan.assumptions["discordant"],
        ).assumptions["discordant"]
    )
    up = (psi + effect) / (2 * psi)
    thresholds = _thresholds(plan.mixture, plan.level_constant, plan.max_pairs)
    upper, lower = _walk_crossings(thresholds, min(max(up, 0.0), 1.0))
    crossed = upper + lower  # P(stopped by discordant step k)
    # P(N > n) = Σ_k P(K_n = k) · (1 − crossed[k]); E[N] = Σ_{n=0}^{cap−1} P(N > n).
    total = 0.0
    for pairs in range(plan.max_pairs):
        weights = sps.binom.pmf(np.arange(pairs + 1), pairs, psi)
        total += float(np.dot(weights, 1 - crossed[: pairs + 1]))
    return total


def _continuous_expected_pairs(plan: SequentialPlan, effect: float) -> float:
    rng = np.random.default_rng(20_261_126)
    sd = float(plan.assumptions["sd"])
    diffs = rng.normal(effect, sd, size=(CONTINUOUS_PATHS, plan.max_pairs))
    no_margin = SequentialPlan(**{**asdict(plan), "margin": None})
    first, _ = stopping_points(diffs, no_margin)
    return float(np.mean(np.where(first >= 0, first + 1, plan.max_pairs)))
