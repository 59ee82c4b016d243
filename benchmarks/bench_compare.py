"""Benchmark `plumbline compare` on one million run records against a per-record baseline.

Data: 200 tasks × 2 arms × 2,500 repeats = 1,000,000 records (500,000 pairs), written as plain
JSONL, with 1% null costs. Four measurements, each in its own process so that peak RSS is
that phase's own:

- baseline, A/B schema only: a straightforward per-record Python implementation of the A/B
  schema's arm summary and paired deltas (`json.loads` per line, dicts, `statistics.median`),
  trusting its input;
- baseline, same work: the same, plus what `read_run_records` and `prepare_runs` do to every
  record: required keys present, types, ranges and finiteness checked (invalid records located
  by line, counted and left out), duplicated `(task_id, arm, repeat)` found and kept out of the
  pairing;
- ours, A/B schema part: `read_run_records` (validation included) + the same arm summary and paired
  deltas (polars);
- ours, full: `read_run_records` + `compare_runs` with bootstrap intervals on every paired
  delta (cluster bootstrap, tasks then repeats, 2,000 resamples), McNemar, Wilcoxon,
  Hodges–Lehmann, geometric-mean ratios, per-task table and power analysis.

The ratio that answers the issue's target (≥ 10×) is baseline-same-work / ours-schema-part; the
ratio to the trusting baseline is printed beside it. Wall and CPU time (all threads) are both
printed: on a shared, loaded machine CPU time is the steadier figure. Every baseline's arm
summaries and paired deltas must agree with ours before any ratio is printed.

    .venv/bin/python benchmarks/bench_compare.py [--tasks 200 --repeats 2500 --resamples 2000]
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

ARMS = ("with_skelly", "without_skelly")


def generate(path: Path, tasks: int, repeats: int, seed: int = 7) -> int:
    """Write tasks × 2 arms × repeats run records as JSONL (vectorised)."""
    rng = np.random.default_rng(seed)
    n = tasks * len(ARMS) * repeats
    task = np.repeat(np.arange(tasks), len(ARMS) * repeats)
    arm = np.tile(np.repeat(np.arange(len(ARMS)), repeats), tasks)
    repeat = np.tile(np.arange(1, repeats + 1), tasks * len(ARMS))
    difficulty = rng.uniform(0.3, 0.95, tasks)[task]
    treated = arm == 0
    success = rng.random(n) < np.clip(difficulty + np.where(treated, 0.02, 0.0), 0, 1)
    duration = rng.lognormal(np.log(60.0), 0.4, n) * np.where(treated, 0.6, 1.0)
    tokens = (rng.lognormal(np.log(80_000), 0.3, n) * np.where(treated, 0.4, 1.0)).astype(np.int64)
    output = (tokens * 0.1).astype(np.int64)
    cost = np.round(tokens * 4e-6, 6)
    frame = pl.DataFrame(
        {
            "task_id": pl.Series([f"task-{i:04d}" for i in range(tasks)])[task],
            "arm": pl.Series(ARMS)[arm],
            "repeat": repeat,
            "success": success,
            "duration_seconds": np.round(duration, 3),
            "total_cost_usd": pl.Series(cost).scatter(np.flatnonzero(rng.random(n) < 0.01), None),
            "input_tokens": tokens - output,
            "output_tokens": output,
            "cache_read_tokens": tokens * 3,
            "cache_write_tokens": tokens // 4,
            "step_count": rng.integers(2, 30, n),
            "tool_call_count": rng.integers(1, 40, n),
            "acceptance_cmd_count": rng.integers(1, 4, n),
        }
    )
    frame.write_ndjson(path)
    return n


def naive_seed_analysis(
    records: list[dict[str, Any]],
    treatment: str,
    control: str,
    exclude_from_pairing: set[tuple[Any, str, int]] | None = None,
) -> dict[str, Any]:
    """The A/B schema's arm summary and paired deltas, record by record in plain Python.

    Null cost or tokens are excluded from that metric (the A/B schema's intent, without the
    reference harness's coercion to 0); medians average the two middle values for even counts.
    """
    by_arm: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if record.get("infra_failure"):
            continue
        by_arm[record["arm"]].append(record)

    def total_tokens(r: dict[str, Any]) -> int | None:
        parts = [r[k] for k in TOKENS]
        return None if any(p is None for p in parts) else sum(parts)

    def non_cache(r: dict[str, Any]) -> int | None:
        if r["input_tokens"] is None or r["output_tokens"] is None:
            return None
        return int(r["input_tokens"] + r["output_tokens"])

    def success(r: dict[str, Any]) -> bool:
        return bool(r["success"]) and not r.get("timed_out", False)

    summaries: dict[str, dict[str, Any]] = {}
    for arm in (treatment, control):
        runs = by_arm[arm]
        costs = [r["total_cost_usd"] for r in runs if r["total_cost_usd"] is not None]
        totals = [t for r in runs if (t := total_tokens(r)) is not None]
        non_caches = [t for r in runs if (t := non_cache(r)) is not None]
        successes = sum(1 for r in runs if success(r))
        cost = sum(costs) if costs else None
        costed_successes = sum(1 for r in runs if r["total_cost_usd"] is not None and success(r))
        summaries[arm] = {
            "runs": len(runs),
            "successes": successes,
            "success_rate": successes / len(runs) if runs else None,
            "total_cost_usd": cost,
            "avg_cost_usd": cost / len(costs) if costs else None,
            "median_cost_usd": statistics.median(costs) if costs else None,
            "median_duration_seconds": statistics.median(r["duration_seconds"] for r in runs),
            "median_total_tokens": statistics.median(totals) if totals else None,
            "median_non_cache_tokens": statistics.median(non_caches) if non_caches else None,
            "solved_per_dollar": costed_successes / cost if cost else None,
        }
    excluded = exclude_from_pairing or set()
    index: dict[tuple[str, int], dict[str, Any]] = {}
    for r in by_arm[control]:
        if (str(r["task_id"]), control, r["repeat"]) not in excluded:
            index[(str(r["task_id"]), r["repeat"])] = r
    deltas: dict[str, list[float]] = defaultdict(list)
    for t in by_arm[treatment]:
        if (str(t["task_id"]), treatment, t["repeat"]) in excluded:
            continue
        c = index.get((str(t["task_id"]), t["repeat"]))
        if c is None:
            continue
        deltas["pass_delta"].append(int(success(t)) - int(success(c)))
        if t["total_cost_usd"] is not None and c["total_cost_usd"] is not None:
            deltas["cost_delta_usd"].append(t["total_cost_usd"] - c["total_cost_usd"])
        deltas["duration_delta_seconds"].append(t["duration_seconds"] - c["duration_seconds"])
        tt, ct = total_tokens(t), total_tokens(c)
        if tt is not None and ct is not None:
            deltas["token_delta"].append(tt - ct)
    paired = {
        name: {"mean": statistics.fmean(values), "median": statistics.median(values)}
        for name, values in deltas.items()
    }
    return {"arm_summaries": summaries, "paired": paired}


TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
COUNTS = ("step_count", "tool_call_count", "acceptance_cmd_count")


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _amount(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def record_problem(record: Any) -> str | None:
    """The first problem with one run record (the schema's rules), or None when it is valid."""
    if not isinstance(record, dict):
        return "not an object"
    for key in (
        "task_id",
        "arm",
        "repeat",
        "success",
        "duration_seconds",
        "total_cost_usd",
        *TOKENS,
    ):
        if key not in record:
            return f"{key}: Field required"
    task = record["task_id"]
    if not (isinstance(task, str) and task) and not (
        isinstance(task, int) and not isinstance(task, bool)
    ):
        return "task_id: must be a non-empty string"
    if not (isinstance(record["arm"], str) and record["arm"]):
        return "arm: must be a non-empty string"
    if not _count(record["repeat"]):
        return "repeat: must be an integer >= 0"
    if not isinstance(record["success"], bool):
        return "success: must be a boolean"
    if not _amount(record["duration_seconds"]):
        return "duration_seconds: must be a finite number >= 0"
    if record["total_cost_usd"] is not None and not _amount(record["total_cost_usd"]):
        return "total_cost_usd: must be null or a finite number >= 0"
    for key in TOKENS:
        if record[key] is not None and not _count(record[key]):
            return f"{key}: must be null or an integer >= 0"
    for key in COUNTS:
        if record.get(key) is not None and not _count(record[key]):
            return f"{key}: must be null or an integer >= 0"
    for key in ("timed_out", "infra_failure"):
        if record.get(key) is not None and not isinstance(record[key], bool):
            return f"{key}: must be a boolean"
    return None


def run_baseline(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()]
    return naive_seed_analysis(records, *ARMS)


def run_baseline_same_work(path: Path) -> dict[str, Any]:
    """Validate every record and find duplicates, as ours does, then the A/B schema's analysis."""
    records: list[dict[str, Any]] = []
    errors: list[str] = []
    with path.open(encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            record = json.loads(line)
            problem = record_problem(record)
            if problem is None:
                records.append(record)
            else:
                errors.append(f"{path}:{line_number}: {problem}")
    seen: dict[tuple[Any, str, int], int] = defaultdict(int)
    for record in records:
        if not record.get("infra_failure"):
            seen[(str(record["task_id"]), record["arm"], record["repeat"])] += 1
    duplicated = {key for key, copies in seen.items() if copies > 1}
    # Duplicates count in the arm summary but stay out of the pairing, as in ours.
    result = naive_seed_analysis(records, *ARMS, exclude_from_pairing=duplicated)
    result["invalid_records"] = len(errors)
    result["duplicates"] = len(duplicated)
    return result


def run_ours_schema(path: Path) -> dict[str, Any]:
    from plumbline.compare.metrics import arm_summaries, delta_summaries, pair_runs, prepare_runs
    from plumbline.compare.result import PRIMARY_DELTAS
    from plumbline.records.run_record import read_run_records

    table = read_run_records([path])
    prepared = prepare_runs(table.frame)
    summaries = arm_summaries(prepared, list(ARMS))
    pairs = pair_runs(prepared, *ARMS)
    deltas = delta_summaries(pairs, list(PRIMARY_DELTAS))
    return {
        "arm_summaries": {arm: s.to_dict() for arm, s in summaries.items()},
        "paired": {name: d.to_dict() for name, d in deltas.items()},
        "invalid_records": table.invalid_records,
        "duplicates": len(prepared.duplicates),
    }


def run_ours_full(path: Path, resamples: int) -> dict[str, Any]:
    from plumbline.compare.analysis import compare_runs
    from plumbline.compare.result import CompareSettings
    from plumbline.records.run_record import read_run_records

    table = read_run_records([path])
    report = compare_runs(table, settings=CompareSettings(n_resamples=resamples, seed=1))
    result: dict[str, Any] = report.to_dict()
    return {"decision": result["decision"], "paired": result["paired"]}


def phase(name: str, path: Path, resamples: int) -> None:
    """Run one phase in this process; print its time and peak RSS as JSON."""
    # Imports are not the work being measured.
    import plumbline.compare.analysis
    import plumbline.records.run_record  # noqa: F401

    start, cpu_start = time.perf_counter(), _cpu_seconds()
    if name == "baseline":
        result = run_baseline(path)
    elif name == "baseline-same-work":
        result = run_baseline_same_work(path)
    elif name == "ours-schema":
        result = run_ours_schema(path)
    else:
        result = run_ours_full(path, resamples)
    seconds, cpu = time.perf_counter() - start, _cpu_seconds() - cpu_start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu_seconds": cpu,
                "peak_rss_mib": peak_kib / 1024,
                "result": result,
            }
        )
    )


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(name: str, path: Path, resamples: int) -> dict[str, Any]:
    completed = subprocess.run(
        [
            sys.executable,
            __file__,
            "--phase",
            name,
            "--data",
            f"{path}",
            "--resamples",
            f"{resamples}",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    value: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return value


def check_agreement(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    """Stop unless both give the same arm summaries and paired deltas."""
    for name, stats in theirs["paired"].items():
        for stat in ("mean", "median"):
            if not math.isclose(
                ours["paired"][name][stat], stats[stat], rel_tol=1e-9, abs_tol=1e-9
            ):
                raise SystemExit(f"disagreement on {name} {stat}: {ours['paired'][name][stat]}")
    for arm, fields in theirs["arm_summaries"].items():
        for name, value in fields.items():
            mine = ours["arm_summaries"][arm][name]
            if (mine is None) != (value is None) or (
                value is not None and not math.isclose(mine, value, rel_tol=1e-9)
            ):
                raise SystemExit(f"disagreement on {arm} {name}: {mine} vs {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=2500)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument(
        "--phase", choices=["baseline", "baseline-same-work", "ours-schema", "ours-full"]
    )
    parser.add_argument("--data", type=Path)
    args = parser.parse_args()
    if args.phase:
        phase(args.phase, args.data, args.resamples)
        return
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "runs.jsonl"
        n = generate(path, args.tasks, args.repeats)
        size = path.stat().st_size / 2**20
        print(
            f"{n:,} run records ({args.tasks} tasks × 2 arms × {args.repeats} repeats), "
            f"{size:.0f} MiB of JSONL; {args.resamples:,} bootstrap resamples"
        )
        baseline = measure("baseline", path, args.resamples)
        same_work = measure("baseline-same-work", path, args.resamples)
        ours_schema = measure("ours-schema", path, args.resamples)
        ours_full = measure("ours-full", path, args.resamples)
    for label, result in (
        ("baseline: per-record Python, summary + deltas", baseline),
        ("baseline: + validation + duplicates (same work)", same_work),
        ("plumbline: read + validate + summary + deltas", ours_schema),
        ("plumbline: full compare (+ bootstrap, tests)", ours_full),
    ):
        print(
            f"{label:<52} wall {result['seconds']:7.2f} s   cpu {result['cpu_seconds']:7.2f} s"
            f"   peak RSS {result['peak_rss_mib']:6.0f} MiB"
        )
    # Every implementation must agree before its speed means anything.
    for other in (baseline, same_work):
        check_agreement(ours_schema["result"], other["result"])
    for key in ("invalid_records", "duplicates"):
        if ours_schema["result"][key] != same_work["result"][key]:
            raise SystemExit(f"disagreement on {key}")
    for clock in ("seconds", "cpu_seconds"):
        label = "wall" if clock == "seconds" else "cpu "
        print(
            f"speed-up ({label}): same work {same_work[clock] / ours_schema[clock]:5.1f}× "
            f"(target ≥ 10×); trusting baseline {baseline[clock] / ours_schema[clock]:5.1f}×; "
            f"same-work baseline / full compare {same_work[clock] / ours_full[clock]:5.1f}×"
        )
    print(f"decision: {ours_full['result']['decision']}")


if __name__ == "__main__":
    main()
