"""Coverage of the leaderboard's cost-per-sample interval and calibration of its Pareto-front
probabilities, simulated through `leaderboard.cost.board_costs` (what `build_leaderboard` calls),
on `CategoryData` built as `leaderboard.collect` builds it; exit 1 when a target fails.

Each dataset: three models answer the same n questions (one epoch); each answer is right with
the model's probability p_m, and costs `c_m · LogNormal(0, σ)` (true mean `c_m · exp(σ²/2)`).
Coverage cells: σ ∈ {0.5, 1} × n ∈ {20, 50, 100, 500}, fixed p and c (target ≥ 93% in every
cell). Front calibration, two truth populations drawn per dataset, σ = 1: 3 models with
p_m ~ U(0.4, 0.8) and c_m ~ exp(U(−0.4, 0.4)), and 5 models with p_m ~ U(0.3, 0.9) and
c_m ~ exp(U(−0.7, 0.7)); each model's published `probability_on_front` is binned and compared
with the share of those models on the true front (target: within 2.5 Monte Carlo standard
errors in every bin with at least 50 models).

    python benchmarks/bench_cost.py [--datasets 2000] [--front-datasets 1500] [--seed 0]
        [--sizes 20,50,100,500] [--sigmas 0.5,1] [--no-front] [--front-sizes 20,100]
        [--no-coverage] [--speed]

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
#: Front-calibration truth populations: (models, score range, log-cost half-range).
POPULATIONS = {
    "3 models, p ~ U(0.4, 0.8)": (3, 0.4, 0.8, 0.4),
    "5 models, p ~ U(0.3, 0.9)": (5, 0.3, 0.9, 0.7),
}


def _data(model: str, scores: np.ndarray, costs: np.ndarray) -> CategoryData:
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
) -> tuple[dict[str, object], list[object]]:
    data = {}
    for index, model in enumerate(models):
        scores = (rng.random(n) < p[index]).astype(np.float64)
        costs = c[index] * rng.lognormal(0.0, sigma, n)
        data[(model, "qa")] = _data(model, scores, costs)
    ranked = [score_model(SUITE, model, data) for model in models]  # type: ignore[arg-type]
    costs_by_model, front = board_costs(SUITE, data, ranked, TABLE)  # type: ignore[arg-type]
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


def front_calibration(
    n: int, datasets: int, seed: int, population: tuple[int, float, float, float]
) -> list[tuple[float, float, float, int, float]]:
    """Per probability bin: (mean probability, share truly on the front, its binomial SE,
    models, the SE of share − mean probability clustered by board). The binomial SE (the
    target's) takes the models as independent; a board's models are not (one on the front
    moves the others), and the clustered SE (sandwich, boards as clusters) allows for that."""
    count_models, p_low, p_high, spread = population
    models = MODELS if count_models == 3 else tuple(f"m{index}" for index in range(count_models))
    # the first population keeps the stream (and figures) it had before the second was added
    rng = np.random.default_rng([seed, n, 99] if count_models == 3 else [seed, n, 99, count_models])
    probabilities, truths, boards = [], [], []
    for board in range(datasets):
        p = rng.uniform(p_low, p_high, count_models)
        c = np.exp(rng.uniform(-spread, spread, count_models))
        true_front = on_front(p, c * math.exp(0.5))
        _, front = _dataset(rng, n, 1.0, p, c, models)
        by_model = {entry.model: entry.probability_on_front for entry in front}  # type: ignore[attr-defined]
        for index, model in enumerate(models):
            probabilities.append(by_model[model])
            truths.append(bool(true_front[index]))
            boards.append(board)
    prob, truth = np.array(probabilities), np.array(truths, dtype=float)
    board_of = np.array(boards)
    edges = np.array([0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0 + 1e-9])
    rows = []
    for low, high in itertools.pairwise(edges):
        inside = (prob >= low) & (prob < high)
        count = int(inside.sum())
        if count == 0:
            continue
        share = float(truth[inside].mean())
        mean_p = float(prob[inside].mean())
        se = math.sqrt(max(mean_p * (1 - mean_p), 1e-12) / count)
        residual = truth[inside] - prob[inside]
        sums = np.bincount(board_of[inside], weights=residual - residual.mean())
        clustered = math.sqrt(float(sums @ sums)) / count
        rows.append((mean_p, share, se, count, clustered))
    return rows


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
        data[(model, "qa")] = _data(model, scores, rng.lognormal(0.0, 1.0, n))
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


def main() -> int:
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
        "--front-sizes", default="20,100", help="questions per model of the front calibration"
    )
    parser.add_argument("--no-coverage", action="store_true", help="front calibration only")
    parser.add_argument("--speed", action="store_true", help="only time board_costs (above)")
    args = parser.parse_args()
    if args.speed:
        return 1 if speed() > 2.0 else 0
    started = time.perf_counter()
    failed = False
    print("| σ | n | coverage | mean half-width / truth |\n|---:|---:|---:|---:|")
    for sigma in () if args.no_coverage else (float(s) for s in args.sigmas.split(",")):
        for n in (int(s) for s in args.sizes.split(",")):
            coverage, width = coverage_cell(n, sigma, args.datasets, args.seed)
            failed |= coverage < 0.93
            print(f"| {sigma:g} | {n} | {coverage:.3f} | {width:.3f} |")
    print(
        "\n| population | n | mean P(front) | share on true front | MC SE | models |"
        " clustered SE |\n|---|---:|---:|---:|---:|---:|---:|"
    )
    sizes = () if args.no_front else [int(s) for s in args.front_sizes.split(",")]
    for (name, population), n in itertools.product(POPULATIONS.items(), sizes):
        for mean_p, share, se, count, clustered in front_calibration(
            n, args.front_datasets, args.seed, population
        ):
            off = abs(share - mean_p)
            failed |= count >= 50 and off > 2.5 * se
            print(
                f"| {name} | {n} | {mean_p:.3f} | {share:.3f} | {se:.3f} | {count} "
                f"| {clustered:.3f} |"
            )
    print(f"\n{time.perf_counter() - started:.0f} s; targets {'FAILED' if failed else 'met'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
