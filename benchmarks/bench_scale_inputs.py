"""Benchmark `plumbline compare` and `plumbline reliability` on the sizes issue 19 reported.

The sizes: a 20 MB run-record file (36,720 records, on which compare took 74 s), 354,024 run
records (past 580 s) and 18,000 trial records (reliability past 590 s), all at default settings
(10,000 compare resamples, 2,000 reliability resamples, the bundled MiniLM).

Inputs come from real code paths: the run records are the bundled A/B example
(`scripts/make_example_agent_runs.py`'s `make_records`) copied under new task ids (task
`add-cli-dry-run-flag` becomes `add-cli-dry-run-flag-17` in copy 17: many tasks of six repeats,
the shape that made compare slow), written with `plumbline.cli.records.record_line`; the trials
are the bundled probe journal (recorded by `scripts/make_example_trials.py` through the real
`probe` command) copied under new trial numbers through `TrialRecord`. So the trial responses
repeat: 18,000 trials hold a few dozen distinct texts, and the embedding cache encodes each once
(with 18,000 distinct responses the MiniLM encoding itself dominates; see the README).

The baseline is the previous implementation, commit 4bee3e0 (main before this work), extracted
with `git archive` and run the same way in the same run: each command is a fresh process
(`python -m plumbline ... --json`, stdout discarded), timed for wall and CPU (children's
rusage). A baseline that uses more than `--baseline-cpu-limit` CPU seconds is stopped, and its
ratio printed as a lower bound. On a shared machine read the CPU figures: wall time grows with
the other jobs' load. Before any ratio is printed the outputs must agree: every reliability
number to 1e-9 (relative); compare's arm summaries, paired means and medians and decision
exactly, and its interval bounds within 5% of the interval's width (with many tasks, ours draws
the within-task stage pooled, a different Monte Carlo draw of the same bootstrap).

    .venv/bin/python benchmarks/bench_scale_inputs.py [--baseline-cpu-limit 300] [--only compare]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BASELINE_COMMIT = "4bee3e0"


def write_run_records(path: Path, copies: int) -> int:
    """The bundled A/B example, `copies` times, each copy under its own task ids."""
    sys.path.insert(0, str(ROOT / "scripts"))
    from make_example_agent_runs import make_records

    from plumbline.cli.records import record_line

    base = make_records()
    with path.open("w", encoding="utf-8") as handle:
        for copy in range(copies):
            for record in base:
                update = {"task_id": f"{record.task_id}-{copy}"}
                if record.run_id is not None:
                    update["run_id"] = f"{record.run_id}-{copy}"
                handle.write(record_line(record.model_copy(update=update)) + "\n")
    return copies * len(base)


def write_trials(path: Path, copies: int) -> tuple[int, int]:
    """The bundled probe journal, `copies` times under new trial numbers; (trials, texts)."""
    from plumbline.records.trial_record import read_trial_records

    source = ROOT / "src/plumbline/examples/trials.jsonl"
    records = read_trial_records([source]).records
    span = max(r.trial for r in records) + 1
    with path.open("w", encoding="utf-8") as handle:
        for copy in range(copies):
            for record in records:
                moved = record.model_copy(update={"trial": record.trial + copy * span})
                handle.write(moved.model_dump_json() + "\n")
    distinct = {r.response for r in records if r.response} | {r.prompt for r in records}
    return copies * len(records), len(distinct)


def extract_baseline(commit: str, into: Path) -> Path:
    """`src/plumbline` of `commit`, from git, under `into`; returns the `src` directory."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "src/plumbline"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a running process has used so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(src: Path, args: list[str], output: Path, cpu_limit: float) -> dict[str, Any]:
    """Run `python -m plumbline ARGS` with `src` first on the path; wall and CPU seconds.

    The process is stopped once it has used `cpu_limit` CPU seconds: on a shared machine CPU
    time, unlike wall time, does not grow with the other jobs' load.
    """
    env = dict(os.environ, PYTHONPATH=str(src))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with output.open("w") as stdout:
        process = subprocess.Popen(
            [sys.executable, "-m", "plumbline", *args],
            env=env,
            stdout=stdout,
            stderr=subprocess.DEVNULL,
        )
        code: int | None = None
        while True:
            try:
                code = process.wait(timeout=1.0)
                break
            except subprocess.TimeoutExpired:
                if _cpu_of(process.pid) > cpu_limit:
                    process.kill()
                    process.wait()
                    break
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": wall, "cpu_seconds": cpu, "finished": code is not None, "code": code}


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{path}[{index}]")
    else:
        yield path, value


def check_reliability(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    mine = dict(_leaves(ours))
    for path, value in _leaves(theirs):
        other = mine.get(path)
        if isinstance(value, float) and isinstance(other, float):
            if not math.isclose(value, other, rel_tol=1e-9, abs_tol=1e-12):
                raise SystemExit(f"reliability disagrees at {path}: {other} vs {value}")
        elif isinstance(value, bool | int | str) and other != value:
            raise SystemExit(f"reliability disagrees at {path}: {other!r} vs {value!r}")


def check_compare(ours: dict[str, Any], theirs: dict[str, Any]) -> None:
    for key in ("decision", "arm_summaries"):
        if ours[key] != theirs[key]:
            raise SystemExit(f"compare disagrees on {key}")
    for name, delta in theirs["paired"].items():
        if name == "pairs":
            if ours["paired"]["pairs"] != delta:
                raise SystemExit("compare disagrees on the number of pairs")
            continue
        mine = ours["paired"][name]
        for stat in ("mean", "median"):
            if not math.isclose(mine[stat], delta[stat], rel_tol=1e-9, abs_tol=1e-12):
                raise SystemExit(f"compare disagrees on {name} {stat}")
        if delta["ci"] is not None:
            width = delta["ci"]["high"] - delta["ci"]["low"]
            for bound in ("low", "high"):
                if abs(mine["ci"][bound] - delta["ci"][bound]) > 0.05 * width:
                    raise SystemExit(
                        f"compare interval of {name} differs by more than 5% of its width: "
                        f"{mine['ci']} vs {delta['ci']}"
                    )


def measure(
    label: str,
    args: list[str],
    ours_src: Path,
    baseline_src: Path,
    work: Path,
    cpu_limit: float,
    kind: str,
) -> None:
    ours_out, theirs_out = work / f"{label}-ours.json", work / f"{label}-baseline.json"
    ours = run(ours_src, args, ours_out, cpu_limit=3600)
    if not ours["finished"] or ours["code"] != 0:
        raise SystemExit(f"{label}: ours failed (exit {ours['code']})")
    theirs = run(baseline_src, args, theirs_out, cpu_limit=cpu_limit)
    if theirs["finished"]:
        if theirs["code"] != 0:
            raise SystemExit(f"{label}: the baseline failed (exit {theirs['code']})")
        mine, other = json.loads(ours_out.read_text()), json.loads(theirs_out.read_text())
        (check_compare if kind == "compare" else check_reliability)(mine, other)
    bound = "" if theirs["finished"] else "> "
    stopped = "" if theirs["finished"] else f" (stopped at {cpu_limit:.0f} CPU seconds)"
    print(f"{label}")
    print(
        f"  ours      wall {ours['seconds']:7.1f} s   cpu {ours['cpu_seconds']:7.1f} s   "
        f"(target: under 60 s)"
    )
    print(
        f"  baseline  wall {bound}{theirs['seconds']:6.1f} s   cpu {bound}"
        f"{theirs['cpu_seconds']:6.1f} s{stopped}"
    )
    ratio = "≥ " if not theirs["finished"] else ""
    print(
        f"  speed-up  wall {ratio}{theirs['seconds'] / ours['seconds']:.1f}×   "
        f"cpu {ratio}{theirs['cpu_seconds'] / ours['cpu_seconds']:.1f}×"
        + ("" if theirs["finished"] else "   (outputs not compared: the baseline was stopped)")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--baseline-cpu-limit",
        type=float,
        default=300.0,
        help="Stop a baseline run after this many CPU seconds (its ratio is then a lower bound).",
    )
    parser.add_argument("--baseline-commit", default=BASELINE_COMMIT)
    parser.add_argument("--only", choices=["compare", "reliability"])
    parser.add_argument("--sizes", choices=["issue", "small"], default="issue")
    parser.add_argument(
        "--compare-copies",
        type=int,
        nargs="+",
        help="Copies of the 72-record example to compare (default: 510 and 4917, the issue's "
        "20 MB and 354k records).",
    )
    args = parser.parse_args()
    small = args.sizes == "small"
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory)
        baseline_src = extract_baseline(args.baseline_commit, work / "baseline")
        ours_src = ROOT / "src"
        print(f"baseline: {args.baseline_commit}; ours: {ours_src}")
        if args.only in (None, "compare"):
            for copies in args.compare_copies or ((5, 50) if small else (510, 4917)):
                path = work / f"runs-{copies}.jsonl"
                n = write_run_records(path, copies)
                size = path.stat().st_size / 1e6
                label = (
                    f"compare: {n:,} run records ({6 * copies:,} tasks × 2 arms × 6 repeats, "
                    f"{size:.0f} MB), 10,000 resamples"
                )
                measure(
                    label,
                    ["compare", str(path), "--json"],
                    ours_src,
                    baseline_src,
                    work,
                    args.baseline_cpu_limit,
                    "compare",
                )
        if args.only in (None, "reliability"):
            copies = 2 if small else 100
            path = work / "trials.jsonl"
            n, texts = write_trials(path, copies)
            label = (
                f"reliability: {n:,} trial records (3 models × 3 prompts, {texts} distinct "
                "texts), 2,000 resamples"
            )
            measure(
                label,
                ["reliability", str(path), "--json"],
                ours_src,
                baseline_src,
                work,
                args.baseline_cpu_limit,
                "reliability",
            )


if __name__ == "__main__":
    main()
