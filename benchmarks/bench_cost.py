"""Coverage of the leaderboard's cost-per-sample interval and calibration of its Pareto-front
probabilities, simulated through `leaderboard.cost.board_costs` (what `build_leaderboard` calls),
on `CategoryData` built as `leaderboard.collect` builds it; exit 1 when a target fails.

Each dataset: three models answer the same n questions (one epoch); each answer is right with
the model's probability p_m, and costs `c_m · LogNormal(0, σ)` (true mean `c_m · exp(σ²/2)`).
Coverage cells: σ ∈ {0.5, 1} × n ∈ {20, 50, 100, 500}, fixed p and c (target ≥ 93% in every
cell). Front calibration, σ = 1: the verdict is on boards drawn from the front posterior's own
prior (`prior_truths`: 3 and 5 models, 20, 50, 100 and 500 questions; the shrinkage factor of
each coordinate uniform, as the posterior assumes). Reported beside it, not part of it: boards
of a fixed spread (`POPULATIONS`: uniform truths of 3 and 5 models, and nearly equal models),
at 20 and 100 questions, on which no forecaster that uses the board is calibrated at every
spread. Each model's published `probability_on_front` is binned and compared with the share of
those models on the true front (`validation.front_check`: each bin of at least 50 models tested
with an SE clustered by board, Holm over every bin of the verdict's cells at family-wise 5%; the
binomial SE, models taken as independent, is printed alongside; the fixed-spread cells print
their unadjusted p-values and the largest deviations toward confidence and toward caution).
The front's boards run `board_costs` with `FRONT_REPLICATES` cost replicates (the front does
not use them).

    python benchmarks/bench_cost.py [--datasets 2000] [--front-datasets 1500] [--seed 0]
        [--sizes 20,50,100,500] [--sigmas 0.5,1] [--no-front] [--front-sizes 20,50,100,500]
        [--fixed-sizes 20,100]
        [--no-coverage] [--save FILE.npz] [--recheck FILE.npz ...] [--check-size RUNS]
        [--speed]

`--save` writes the front calibration's raw cells; `--recheck` checks saved cells again (cells
of the same population and size from several files pooled, as one run). `--check-size RUNS`
measures the check's false-alarm rate: RUNS runs, each of `SIZE_POPULATIONS` × front size, on a
forecaster calibrated by construction (`exact_bayes_front`), and the share that fail.

`--speed` times `board_costs` on a 10-model board (500 questions) against the same call with
the front's posterior (`stats.front.front_posterior`) swapped for the bootstrap share it
replaced (scores resampled with the cost's bootstrap draws, each model's share of joint
replicates on the front), and prints the ratio
(target: at most 2×).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time

import numpy as np
from scipy import stats

from plumbline.core.prices import PriceTable
from plumbline.leaderboard.collect import CategoryData
from plumbline.leaderboard.cost import board_costs
from plumbline.leaderboard.scores import score_model
from plumbline.leaderboard.suite import parse_suite, parse_toml
from plumbline.leaderboard.usage import TOKEN_KINDS, SampleUsage
from plumbline.stats.arrays import FloatArray, IntArray
from plumbline.stats.cost import (
    DEFAULT_REPLICATES,
    Stratum,
    draw_indices,
    on_front,
)
from plumbline.stats.front import FrontInput, front_posterior
from validation.front_check import MIN_MODELS, calibration_bins, calibration_check

TABLE = PriceTable(version="simulation", entries={})
SUITE = parse_suite(
    parse_toml(
        '[suite]\nname = "sim"\n[[category]]\nkey = "qa"\nname = "QA"\n'
        'description = "simulated"\nweight = 1.0\nscoring = "binary"\ntasks = ["sim"]\n'
        'scorer = "match"\n',
        "sim",
    ),
    "sim",
)
MODELS = ("a", "b", "c")
#: The verdict's boards, drawn from the front posterior's own prior: models per board.
PRIOR_POPULATIONS = {"3 models, from the prior": 3, "5 models, from the prior": 5}
#: Boards of a fixed spread, reported beside the verdict: (models, score range, log-cost
#: half-range); the nearly equal ones have shrinkage factors near 1 at 20–100 questions.
POPULATIONS = {
    "3 models, p ~ U(0.4, 0.8)": (3, 0.4, 0.8, 0.4),
    "5 models, p ~ U(0.3, 0.9)": (5, 0.3, 0.9, 0.7),
    "3 models, nearly equal": (3, 0.58, 0.62, 0.05),
    "5 models, nearly equal": (5, 0.58, 0.62, 0.05),
}
#: Each fixed population's random stream (the first two keep the streams, and figures, they
#: had before the others were added).
STREAMS = {
    "3 models, p ~ U(0.4, 0.8)": (99,),
    "5 models, p ~ U(0.3, 0.9)": (99, 5),
    "3 models, nearly equal": (97, 3),
    "5 models, nearly equal": (97, 5),
}
#: The fixed populations the check's size (`--check-size`) was measured on.
SIZE_POPULATIONS = ("3 models, p ~ U(0.4, 0.8)", "5 models, p ~ U(0.3, 0.9)")
#: The cost interval's bootstrap replicates in the front calibration: the front's posterior
#: does not use them (the same probabilities with any number), so few keep the run short.
FRONT_REPLICATES = 20


def simulated_category(model: str, scores: np.ndarray, costs: np.ndarray) -> CategoryData:
    n = scores.size
    usage = SampleUsage(
        tokens=np.zeros((n, len(TOKEN_KINDS)), np.int64),
        costs=costs.copy(),
        notes=np.full(n, None, dtype=object),
        reported=np.ones(n, bool),
    )
    return CategoryData(
        model=model,
        category="qa",
        questions=np.arange(n, dtype=np.int64),
        matrix=scores[:, None].astype(np.float64),
        errors=0,
        excluded=0,
        logs=("sim",),
        tasks=("sim",),
        costs=costs[:, None],
        usage=usage,
    )


def _dataset(
    rng: np.random.Generator,
    n: int,
    sigma: float,
    p: np.ndarray,
    c: np.ndarray,
    models: tuple[str, ...] = MODELS,
    replicates: int = DEFAULT_REPLICATES,
) -> tuple[dict[str, object], list[object]]:
    data = {}
    for index, model in enumerate(models):
        scores = (rng.random(n) < p[index]).astype(np.float64)
        costs = c[index] * rng.lognormal(0.0, sigma, n)
        data[(model, "qa")] = simulated_category(model, scores, costs)
    ranked = [score_model(SUITE, model, data) for model in models]  # type: ignore[arg-type]
    costs_by_model, front = board_costs(SUITE, data, ranked, TABLE, replicates=replicates)  # type: ignore[arg-type]
    return costs_by_model, front  # type: ignore[return-value]


def coverage_cell(n: int, sigma: float, datasets: int, seed: int) -> tuple[float, float]:
    """(coverage, mean relative half-width) of model a's cost interval."""
    rng = np.random.default_rng([seed, n, int(sigma * 10)])
    p, c = np.array([0.5, 0.6, 0.7]), np.array([1.0, 1.5, 2.0])
    truth = c[0] * math.exp(sigma**2 / 2)
    hits, widths = 0, []
    for _ in range(datasets):
        costs, _ = _dataset(rng, n, sigma, p, c)
        interval = costs["a"].per_sample_usd  # type: ignore[attr-defined]
        hits += interval.low <= truth <= interval.high
        widths.append((interval.high - interval.low) / 2 / truth)
    return hits / datasets, float(np.mean(widths))


def prior_truths(
    rng: np.random.Generator, count_models: int, n: int
) -> tuple[FloatArray, FloatArray]:
    """True (p, c) of a board drawn from the front posterior's prior (`stats.front`): centres
    μ_score ~ U(0.35, 0.65) and μ_log cost ~ U(−1, 1); per coordinate the shrinkage factor
    B ~ U(0, 1), so τ² = σ²(1/B − 1), σ² its sampling variance at n questions (score
    μ(1 − μ)/n, log cost (e − 1)/n by the delta method, lognormal σ = 1); θ ~ N(μ, τ²), the
    scores kept in [0.01, 0.99]. The true mean cost is c · e^(1/2)."""
    centre = np.array([rng.uniform(0.35, 0.65), rng.uniform(-1.0, 1.0)])
    noise = np.array([centre[0] * (1.0 - centre[0]) / n, (math.e - 1.0) / n])
    spread = np.sqrt(noise * (1.0 / (1.0 - rng.random(2)) - 1.0))
    theta = centre + spread * rng.standard_normal((count_models, 2))
    return np.clip(theta[:, 0], 0.01, 0.99), np.exp(theta[:, 1] - 0.5)


def front_calibration(
    n: int, datasets: int, seed: int, name: str
) -> tuple[FloatArray, FloatArray, IntArray]:
    """Each model's published probability of being on the front, whether it is on the true
    front (0/1), and its board's index, over `datasets` boards of the named population (drawn
    from the prior, or of a fixed spread)."""
    population = PRIOR_POPULATIONS.get(name) or POPULATIONS[name]
    count_models = population if isinstance(population, int) else population[0]
    models = MODELS if count_models == 3 else tuple(f"m{index}" for index in range(count_models))
    stream = (98, count_models) if isinstance(population, int) else STREAMS[name]
    rng = np.random.default_rng([seed, n, *stream])
    probabilities, truths = [], []
    for _ in range(datasets):
        if isinstance(population, int):
            p, c = prior_truths(rng, count_models, n)
        else:
            _, p_low, p_high, spread = population
            p = rng.uniform(p_low, p_high, count_models)
            c = np.exp(rng.uniform(-spread, spread, count_models))
        true_front = on_front(p, c * math.exp(0.5))
        _, front = _dataset(rng, n, 1.0, p, c, models, FRONT_REPLICATES)
        by_model = {entry.model: entry.probability_on_front for entry in front}  # type: ignore[attr-defined]
        probabilities.extend(by_model[model] for model in models)
        truths.extend(float(t) for t in true_front)
    boards = np.repeat(np.arange(datasets), count_models)
    return np.array(probabilities), np.array(truths), boards


def _exact_front(mean: FloatArray, sd: FloatArray, nodes_per_axis: int = 48) -> FloatArray:
    """P(i on front) for independent normal posteriors (boards × models × 2 means, 2 SDs)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(nodes_per_axis)
    weights = weights / weights.sum()
    # θ_i at the nodes: boards × i × 1 × nodes (score) × nodes (log cost)
    s_i = mean[:, :, None, 0, None, None] + sd[0] * nodes[:, None]
    c_i = mean[:, :, None, 1, None, None] + sd[1] * nodes[None, :]
    above = stats.norm.sf((s_i - mean[:, None, :, 0, None, None]) / sd[0])
    below = stats.norm.cdf((c_i - mean[:, None, :, 1, None, None]) / sd[1])
    dominated = above * below  # boards × i × j × nodes × nodes
    index = np.arange(mean.shape[1])
    dominated[:, index, index] = 0.0
    inner = np.prod(1.0 - dominated, axis=2)
    result: FloatArray = np.einsum("bmkl,k,l->bm", inner, weights, weights)
    return result


def exact_bayes_front(
    n: int, datasets: int, rng: np.random.Generator, population: tuple[int, float, float, float]
) -> tuple[FloatArray, FloatArray, IntArray]:
    """A forecaster calibrated by construction on boards like the population's, for the
    check's size: true (score, log cost) ~ N(μ₀, diag(s²)) per model (μ₀ and s the population
    uniform's mean and SD), observed with normal noise of the benchmark's SEs at n questions
    (score √(p̄(1 − p̄)/n), log cost √((e − 1)/n), lognormal σ = 1), and the exact posterior
    probability of being on the front: the posteriors are independent normals, so
    P(i on front) = E_θᵢ Π_{j≠i} (1 − P(s_j ≥ s_i) P(c_j ≤ c_i)), by 2-D Gauss–Hermite."""
    count_models, p_low, p_high, spread = population
    centre = np.array([(p_low + p_high) / 2, 0.0])
    prior_sd = np.array([(p_high - p_low), 2 * spread]) / math.sqrt(12)
    p_bar = centre[0]
    noise_sd = np.array([math.sqrt(p_bar * (1 - p_bar) / n), math.sqrt((math.e - 1) / n)])
    theta = centre + prior_sd * rng.standard_normal((datasets, count_models, 2))
    x = theta + noise_sd * rng.standard_normal(theta.shape)
    precision = 1 / prior_sd**2 + 1 / noise_sd**2
    mean = (x / noise_sd**2 + centre / prior_sd**2) / precision
    sd = 1 / np.sqrt(precision)
    probability = np.concatenate(
        [_exact_front(mean[start : start + 100], sd) for start in range(0, datasets, 100)]
    )
    truths = on_front(theta[..., 0], theta[..., 1]).astype(np.float64)
    boards = np.repeat(np.arange(datasets), count_models)
    return probability.ravel(), truths.ravel(), boards


def _bootstrap_front_share(
    strata: list[Stratum], draws: dict[str, IntArray], cost_replicates: FloatArray
) -> FloatArray:
    """What the posterior replaced: the scores resampled with the cost's draws and each model's
    share of joint replicates on the front (`cost_per_sample` made the cost replicates then,
    for its interval, so they are not timed here)."""
    scores = [s.scores[draws[s.key]].mean(axis=1) for s in strata]
    share: FloatArray = on_front(np.stack(scores, axis=1), cost_replicates).mean(axis=0)
    return share


def _best(call: object, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return min(times)


def speed(models: int = 10, n: int = 500, rounds: int = 5) -> float:
    """Print and return board_costs' time with the posterior over its time with the bootstrap
    share (the fastest of `rounds` each)."""
    rng = np.random.default_rng(7)
    names = tuple(f"m{index}" for index in range(models))
    data = {}
    for model in names:
        scores = (rng.random(n) < rng.uniform(0.3, 0.9)).astype(np.float64)
        data[(model, "qa")] = simulated_category(model, scores, rng.lognormal(0.0, 1.0, n))
    ranked = [score_model(SUITE, model, data) for model in names]  # type: ignore[arg-type]
    strata = [Stratum(d.costs[:, 0], d.question_means(), 1.0, "qa") for d in data.values()]  # type: ignore[index]
    inputs = [
        FrontInput(r.overall, float(s.costs.mean()), [s])
        for r, s in zip(ranked, strata, strict=True)
    ]
    ours = _best(lambda: board_costs(SUITE, data, ranked, TABLE), rounds)  # type: ignore[arg-type]
    posterior = _best(lambda: front_posterior(inputs), rounds)

    draws = draw_indices({"qa": n}, DEFAULT_REPLICATES, np.random.default_rng(0))
    costs = np.stack([s.costs[draws[s.key]].mean(axis=1) for s in strata], axis=1)
    old_front = _best(lambda: _bootstrap_front_share(strata, draws, costs), rounds)
    baseline = ours - posterior + old_front
    ratio = ours / baseline
    print(
        f"board_costs, {models} models × {n} questions: {ours * 1000:.0f} ms with the posterior "
        f"({posterior * 1000:.0f} ms of it), {baseline * 1000:.0f} ms with the bootstrap share "
        f"({old_front * 1000:.0f} ms): {ratio:.2f}× (target ≤ 2×)"
    )
    return ratio


Cell = tuple[str, int, FloatArray, FloatArray, IntArray]


def check_front(cells: list[Cell]) -> bool:
    """Print every cell's bins (both SEs, the clustered t and Holm's adjusted p-value) and
    return whether the check passes (`validation.front_check`) on the boards drawn from the
    prior; the fixed-spread boards are reported (their unadjusted two-sided p-values), with
    the largest deviation toward confidence and toward caution."""
    verdict = [cell for cell in cells if cell[0] in PRIOR_POPULATIONS]
    reported = [cell for cell in cells if cell[0] not in PRIOR_POPULATIONS]
    check = calibration_check([calibration_bins(*cell[2:]) for cell in verdict])
    fixed = [calibration_bins(*cell[2:]) for cell in reported]
    print(
        "\n| population | n | mean P(front) | share on true front | binomial SE | clustered SE "
        "| off (clustered SE) | design effect | models | boards | Holm p |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    rows = list(zip(verdict, check.cells, check.adjusted, strict=True))
    rows += [
        (cell, bins, (b.pvalue for b in bins)) for cell, bins in zip(reported, fixed, strict=True)
    ]
    for (name, n, *_), bins, adjusted in rows:
        for row, holm_p in zip(bins, adjusted, strict=True):
            shown = "not tested" if holm_p is None else f"{holm_p:.3f}"
            if name not in PRIOR_POPULATIONS:
                shown = f"reported (p {holm_p:.3f})" if holm_p is not None else "reported"
            print(
                f"| {name} | {n} | {row.mean_probability:.3f} | {row.observed:.3f} "
                f"| {row.binomial_se:.3f} | {row.clustered_se:.3f} | {row.off:+.1f} "
                f"| {row.design_effect:.2f} "
                f"| {row.models} | {row.boards} | {shown} |"
            )
    tested = sum(a is not None for cell in check.adjusted for a in cell)
    print(
        f"\nfront calibration on boards drawn from the prior: {tested} bins tested, Holm at "
        f"family-wise {check.alpha:.0%}: {'passed' if check.passed and tested else 'FAILED'}"
    )
    prior_bins = [b for bins in check.cells for b in bins if b.models >= MIN_MODELS]
    largest = max((abs(b.observed - b.mean_probability) for b in prior_bins), default=0.0)
    print(f"  largest deviation: {largest * 100:.1f} points")
    # over-confidence: how much further from 1/2 a bin's forecast is than its share observed
    confidence = [
        abs(b.mean_probability - 0.5) - abs(b.observed - 0.5)
        for bins in fixed
        for b in bins
        if b.models >= MIN_MODELS
    ]
    if confidence:
        print(
            "fixed-spread boards (reported): largest deviation toward confidence "
            f"{max(max(confidence), 0.0) * 100:.1f} points, toward caution "
            f"{max(-min(confidence), 0.0) * 100:.1f} points"
        )
    return check.passed and tested > 0


def check_size(runs: int, datasets: int, sizes: list[int], seed: int) -> float:
    """The check's false-alarm rate: the share of `runs` runs (every population × size, as
    the calibration's run) in which it fails the forecaster calibrated by construction; the
    old criterion's count is printed with it."""
    rng = np.random.default_rng([seed, 4877])
    failures = old_failures = 0
    for _ in range(runs):
        cells = [
            calibration_bins(*exact_bayes_front(n, datasets, rng, population))
            for population, n in itertools.product(
                [POPULATIONS[name] for name in SIZE_POPULATIONS], sizes
            )
        ]
        failures += not calibration_check(cells).passed
        # the criterion this check replaced: any bin of ≥ 50 models > 2.5 binomial SE off
        old_failures += any(
            b.models >= 50 and abs(b.observed - b.mean_probability) > 2.5 * b.binomial_se
            for cell in cells
            for b in cell
        )
    rate = failures / runs
    print(
        f"check's false-alarm rate on a calibrated forecaster: {failures}/{runs} runs = "
        f"{rate:.3f} (MC SE {math.sqrt(max(rate * (1 - rate), 1e-12) / runs):.3f}; "
        f"{len(SIZE_POPULATIONS) * len(sizes)} cells of {datasets} boards; target ≤ 0.05); "
        f"the old criterion (any bin > 2.5 binomial SE): {old_failures}/{runs}"
    )
    return rate


def _load(paths: list[str]) -> list[Cell]:
    """Cells saved by `--save`, those of the same population and size pooled (their boards
    renumbered apart)."""
    pooled: dict[tuple[str, int], list[tuple[FloatArray, FloatArray, IntArray]]] = {}
    for path in paths:
        with np.load(path) as saved:
            for key in sorted({k.rsplit("|", 1)[0] for k in saved.files}):
                name, n = key.rsplit("#", 1)
                pooled.setdefault((name, int(n)), []).append(
                    (saved[f"{key}|p"], saved[f"{key}|y"], saved[f"{key}|b"])
                )
    cells: list[Cell] = []
    for (name, n), parts in pooled.items():
        offsets = np.cumsum([0] + [int(b.max()) + 1 for *_, b in parts[:-1]])
        cells.append(
            (
                name,
                n,
                np.concatenate([p for p, _, _ in parts]),
                np.concatenate([y for _, y, _ in parts]),
                np.concatenate([b + o for (_, _, b), o in zip(parts, offsets, strict=True)]),
            )
        )
    return cells


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=2000, help="datasets per coverage cell")
    parser.add_argument("--front-datasets", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--sizes", default="20,50,100,500", help="questions per model, comma-separated"
    )
    parser.add_argument("--sigmas", default="0.5,1", help="lognormal σ, comma-separated")
    parser.add_argument("--no-front", action="store_true", help="coverage cells only")
    parser.add_argument(
        "--front-sizes",
        default="20,50,100,500",
        help="questions per model of the front calibration's boards drawn from the prior",
    )
    parser.add_argument(
        "--fixed-sizes", default="20,100", help="questions per model of the fixed-spread boards"
    )
    parser.add_argument("--no-coverage", action="store_true", help="front calibration only")
    parser.add_argument("--speed", action="store_true", help="only time board_costs (above)")
    parser.add_argument("--save", help="write the front calibration's raw cells to this .npz")
    parser.add_argument(
        "--recheck", nargs="+", help="only check the cells of these --save files, pooled"
    )
    parser.add_argument(
        "--check-size", type=int, metavar="RUNS", help="only the check's false-alarm rate"
    )
    return parser.parse_args()


def main() -> int:
    args = _arguments()
    if args.speed:
        return 1 if speed() > 2.0 else 0
    sizes = [int(s) for s in args.front_sizes.split(",")]
    if args.check_size:
        return 1 if check_size(args.check_size, args.front_datasets, sizes, args.seed) > 0.05 else 0
    if args.recheck:
        return 0 if check_front(_load(args.recheck)) else 1
    started = time.perf_counter()
    failed = False
    print("| σ | n | coverage | mean half-width / truth |\n|---:|---:|---:|---:|")
    for sigma in () if args.no_coverage else (float(s) for s in args.sigmas.split(",")):
        for n in (int(s) for s in args.sizes.split(",")):
            coverage, width = coverage_cell(n, sigma, args.datasets, args.seed)
            failed |= coverage < 0.93
            print(f"| {sigma:g} | {n} | {coverage:.3f} | {width:.3f} |")
    fixed_sizes = [int(s) for s in args.fixed_sizes.split(",")]
    cells: list[Cell] = [
        (name, n, *front_calibration(n, args.front_datasets, args.seed, name))
        for name in [*PRIOR_POPULATIONS, *POPULATIONS]
        for n in (() if args.no_front else sizes if name in PRIOR_POPULATIONS else fixed_sizes)
    ]
    if cells:
        failed |= not check_front(cells)
    if args.save and cells:
        arrays = {}
        for name, n, prob, truth, board in cells:
            arrays |= {f"{name}#{n}|p": prob, f"{name}#{n}|y": truth, f"{name}#{n}|b": board}
        np.savez(args.save, **arrays)  # type: ignore[arg-type]
    print(f"\n{time.perf_counter() - started:.0f} s; targets {'FAILED' if failed else 'met'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
