"""`plumbline history` for one model from a store of 10,000 results, against reading the files.

A store (SQLite, WAL) is filled with 10,000 leaderboards of one model each, 20 models taking
turns (500 results per model): a real leaderboard (mockllm answering a 40-question Inspect
task, built by `plumbline leaderboard`), its score and Wilson interval redrawn per result
(so every result is a distinct entry). Also written as 10,000 JSON files.

Ours: open the store (schema check included) and build the history document of one model
(`store.history.build_history`: every result of the model with its metrics and labels), in
process; then the CLI end to end (`plumbline history --model M --json`, Python's start
included). Baseline: what a user without a store does: read the 10,000 JSON files and keep
the model's rows. Target: ours under 1 s.

    .venv/bin/python benchmarks/bench_history.py [--quick]   # --quick: 1,000 results
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from plumbline.results.stored import read_result  # noqa: E402
from plumbline.stats.proportions import wilson_interval  # noqa: E402
from plumbline.store.history import build_history  # noqa: E402
from plumbline.store.store import Query, Store  # noqa: E402

MODELS = 20
TARGET_SECONDS = 1.0


def base_leaderboard(root: Path) -> dict[str, Any]:
    from tests.support.store_results import mini_leaderboard

    loaded: dict[str, Any] = json.loads(mini_leaderboard(root, correct=24).read_text())
    return loaded


def variant(base: dict[str, Any], index: int, rng: random.Random) -> dict[str, Any]:
    """Result `index`: model `model-{index % 20}`, a redrawn score with its Wilson interval,
    and its own count of logs read (so no two results are the same entry)."""
    document = copy.deepcopy(base)
    row = document["models"][0]
    n = row["counts"]["qa"]["n"]
    correct = rng.randint(int(0.4 * n), int(0.8 * n))
    wilson = wilson_interval(correct, n)
    row["model"] = f"model-{index % MODELS}"
    row["qa"] = row["overall"] = correct / n
    for key in ("qa", "overall"):
        row["intervals"][key].update(low=wilson.interval.low, high=wilson.interval.high)
        row["standard_errors"][key] = wilson.standard_error
        row["half_widths"][key] = wilson.interval.half_width
    for group in document["tie_groups"]:
        group["models"] = [row["model"]]
    document["_metadata"]["generated_at"] = f"2026-01-01T00:00:{index % 60:02d}Z"
    document["_metadata"]["run_id"] = f"nightly-{index}"
    # another night's run read other logs: a distinct result even when the score repeats
    document["_metadata"]["log_count"] = index + 1
    return document


def fill(store_path: Path, files: Path, base: dict[str, Any], count: int) -> None:
    rng = random.Random(7)
    files.mkdir()
    with Store.open(str(store_path)) as store:
        for index in range(count):
            document = variant(base, index, rng)
            (files / f"result-{index:05d}.json").write_text(json.dumps(document))
            store.add(read_result(document), labels={"night": str(index)})


def ours(store_path: Path, model: str) -> tuple[float, int]:
    started = time.perf_counter()
    with Store.open(str(store_path)) as store:
        document = build_history(store, Query(model=model))
    return time.perf_counter() - started, len(document.results)


def cli(store_path: Path, model: str) -> tuple[float, int]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "plumbline",
            "history",
            "--store",
            str(store_path),
            "--model",
            model,
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    elapsed = time.perf_counter() - started
    return elapsed, len(json.loads(done.stdout)["results"])


def baseline(files: Path, model: str) -> tuple[float, int]:
    started = time.perf_counter()
    found = 0
    for path in sorted(files.glob("*.json")):
        document = json.loads(path.read_text())
        found += any(row["model"] == model for row in document["models"])
    return time.perf_counter() - started, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 results instead of 10,000")
    arguments = parser.parse_args()
    count = 1_000 if arguments.quick else 10_000
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        base = base_leaderboard(root / "base")
        started = time.perf_counter()
        fill(root / "history.db", root / "files", base, count)
        filled = time.perf_counter() - started
        print(f"stored {count:,} results in {filled:.1f} s ({filled / count * 1000:.1f} ms each)")
        model = "model-7"
        ours(root / "history.db", model)  # warm the imports and the file cache
        baseline(root / "files", model)
        timed, rows = min(ours(root / "history.db", model) for _ in range(3))
        cli_timed, cli_rows = cli(root / "history.db", model)
        base_timed, base_rows = min(baseline(root / "files", model) for _ in range(3))
        assert rows == base_rows == cli_rows == count // MODELS, (rows, base_rows, cli_rows)
        print(f"history of one model ({rows:,} of {count:,} results):")
        print(f"  ours, in process (open + query + document): {timed:.3f} s")
        print(f"  ours, the CLI end to end (Python start included): {cli_timed:.3f} s")
        print(f"  baseline, reading the {count:,} JSON files: {base_timed:.3f} s")
        print(f"  ratio baseline / ours: {base_timed / timed:.1f}x")
        verdict = "met" if timed < TARGET_SECONDS else "MISSED"
        print(f"target: under {TARGET_SECONDS:.0f} s in process: {verdict}")
        if timed >= TARGET_SECONDS:
            sys.exit(1)


if __name__ == "__main__":
    main()
