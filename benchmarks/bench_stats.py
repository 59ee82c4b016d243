"""Paired bootstrap: plumbline.stats.paired_bootstrap against scipy.stats.bootstrap.

10,000 percentile-bootstrap resamples of the mean paired difference over 100,000 pairs, the same
data for both. Each side runs in its own child process so its peak RSS
(`resource.getrusage(RUSAGE_SELF).ru_maxrss`) is its own. scipy is given `batch` so that it, too,
holds a bounded number of resamples at once (without it, scipy would materialise 10⁹ int64
indices, 8 GB, before gathering both arms). The same data are also run through our BCa, whose
jackknife is O(n) for the mean; scipy's BCa jackknife is O(n²) (10¹⁰ values here), so it is not
run.

    .venv/bin/python benchmarks/bench_stats.py [--pairs 100000] [--resamples 10000]

Fails (exit 1) if ours is slower than scipy.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np

SEED = 20_240_601


def make_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(SEED)
    y = rng.lognormal(0.0, 0.6, size=n)  # e.g. durations of the control arm
    x = y * rng.lognormal(-0.05, 0.2, size=n)  # treatment, correlated with control
    return x, y


def peak_rss_mb() -> float:
    # Linux reports ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_ours(n: int, resamples: int, method: str) -> dict[str, Any]:
    from plumbline.stats import paired_bootstrap

    x, y = make_pairs(n)
    start = time.perf_counter()
    result = paired_bootstrap(x, y, n_resamples=resamples, method=method, seed=1)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "low": result.interval.low,
        "high": result.interval.high,
        "peak_rss_mb": peak_rss_mb(),
    }


def run_scipy(n: int, resamples: int, batch: int) -> dict[str, Any]:
    from scipy import stats as sps

    x, y = make_pairs(n)

    def mean_difference(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(a - b, axis=axis)

    start = time.perf_counter()
    result = sps.bootstrap(
        (x, y),
        mean_difference,
        paired=True,
        vectorized=True,
        n_resamples=resamples,
        batch=batch,
        method="percentile",
        random_state=np.random.default_rng(1),
    )
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "low": float(result.confidence_interval.low),
        "high": float(result.confidence_interval.high),
        "peak_rss_mb": peak_rss_mb(),
    }


def run_cluster(resamples: int, within: str) -> dict[str, Any]:
    """The compare job's shape: 200 tasks × 2,500 repeats, binary success, two-stage resampling."""
    from plumbline.stats import cluster_bootstrap

    rng = np.random.default_rng(SEED)
    labels = np.repeat(np.arange(200), 2_500)
    rates = rng.beta(2.0, 2.0, size=200)
    values = (rng.random(labels.size) < rates[labels]).astype(float)
    start = time.perf_counter()
    result = cluster_bootstrap(
        values,
        labels,
        n_resamples=resamples,
        seed=1,
        within=within,  # type: ignore[arg-type]
    )
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "low": result.interval.low,
        "high": result.interval.high,
        "peak_rss_mb": peak_rss_mb(),
    }


def child(args: argparse.Namespace) -> None:
    if args.child == "cluster":
        print(json.dumps(run_cluster(args.resamples, "auto")))
        return
    if args.child == "cluster-members":
        print(json.dumps(run_cluster(args.resamples, "members")))
        return
    if args.child == "ours":
        outcome = run_ours(args.pairs, args.resamples, "percentile")
    elif args.child == "ours-bca":
        outcome = run_ours(args.pairs, args.resamples, "bca")
    else:
        outcome = run_scipy(args.pairs, args.resamples, args.batch)
    print(json.dumps(outcome))


def spawn(args: argparse.Namespace, which: str, resamples: int | None = None) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--child",
        which,
        "--pairs",
        str(args.pairs),
        "--resamples",
        str(resamples or args.resamples),
        "--batch",
        str(args.batch),
    ]
    completed = subprocess.run(command, capture_output=True, text=True, check=True)
    outcome: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument(
        "--batch", type=int, default=20, help="scipy resamples per batch (ours: 2^21 values/chunk)"
    )
    parser.add_argument(
        "--cluster-resamples", type=int, default=2_000, help="cluster bootstrap resamples"
    )
    parser.add_argument(
        "--member-resamples",
        type=int,
        default=200,
        help="resamples for the materialise-every-member baseline (it is ~100x slower)",
    )
    parser.add_argument(
        "--child",
        choices=["ours", "ours-bca", "scipy", "cluster", "cluster-members"],
        help=argparse.SUPPRESS,
    )
    args = parser.parse_args()
    if args.child:
        child(args)
        return 0

    print(
        f"paired bootstrap, mean of x - y: {args.pairs:,} pairs, {args.resamples:,} resamples, "
        "percentile 95%"
    )
    ours = spawn(args, "ours")
    theirs = spawn(args, "scipy")
    bca = spawn(args, "ours-bca")
    rows = [
        ("plumbline paired_bootstrap", ours),
        (f"scipy.stats.bootstrap (batch={args.batch})", theirs),
        ("plumbline paired_bootstrap, BCa", bca),
    ]
    for name, outcome in rows:
        print(
            f"  {name:<40} {outcome['seconds']:7.2f} s   peak RSS {outcome['peak_rss_mb']:7.1f} MB"
            f"   CI [{outcome['low']:.6f}, {outcome['high']:.6f}]"
        )
    ratio = theirs["seconds"] / ours["seconds"]
    print(f"  speed ratio scipy / plumbline (percentile): {ratio:.2f}x")
    width = theirs["high"] - theirs["low"]
    agree = abs(ours["low"] - theirs["low"]) < 0.05 * width
    agree = agree and abs(ours["high"] - theirs["high"]) < 0.05 * width
    print(f"  intervals agree within 5% of their width: {'yes' if agree else 'NO'}")

    print(
        "cluster bootstrap, mean, 200 clusters x 2,500 binary members, two-stage "
        "(clusters, then members)"
    )
    fast = spawn(args, "cluster", args.cluster_resamples)
    slow = spawn(args, "cluster-members", args.member_resamples)
    for name, outcome, count in (
        ("plumbline counts (within='auto')", fast, args.cluster_resamples),
        ("materialised members (within='members')", slow, args.member_resamples),
    ):
        print(
            f"  {name:<40} {outcome['seconds']:7.2f} s for {count:,} resamples "
            f"({outcome['seconds'] / count * 1e3:.2f} ms each)   "
            f"peak RSS {outcome['peak_rss_mb']:7.1f} MB"
        )
    per_fast = fast["seconds"] / args.cluster_resamples
    per_slow = slow["seconds"] / args.member_resamples
    print(f"  per-resample speed ratio members / counts: {per_slow / per_fast:.0f}x")
    if ratio < 1.0 or not agree:
        print("FAIL: plumbline must be at least as fast as scipy and agree with it")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
