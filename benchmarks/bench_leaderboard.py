"""Benchmark: `plumbline leaderboard` against `read_eval_log` and Inspect's `samples_df`.

Generates 50 Inspect logs × 2,000 samples × 3 epochs: one real run of a practice_exam task
through Inspect with mockllm provides the template log (every field Inspect writes); it is
rewritten through inspect_ai's own `write_eval_log` into one 2,000 × 3 log per SA Bench task
(each with its scorer's name), and the 50 logs (17 models × 3 tasks) are copies of those whose
headers are rewritten per model with `write_eval_log(header_only=True)`.

Then, each in its own subprocess (so wall time, CPU time and peak RSS are measured separately,
by `os.wait4`; a process pool's workers count in the CPU time and in the peak RSS of the
largest process):

- ours: `plumbline leaderboard LOGDIR -o leaderboard.json` (headers + sample summaries, in a
  process pool over the logs);
- `read_eval_log`: each full log read, then its scores averaged in Python, the way the
  reference aggregator did (one log at a time, so its memory does not grow either);
- `samples_df`: what an analyst would use, Inspect's own data frame of every sample
  (`samples_df(logs, columns=SampleSummary + EvalModel + EvalTask)`), then the same mean per
  model and task from the frame.

The baselines run at 50 logs, ours at 10 and at 50 (its peak RSS at both shows memory flat
in the number of logs). Prints the ratios at 50 logs beside their targets (≥ 20×
`read_eval_log`, ≥ 3× `samples_df`), the growth of our peak RSS and the load average; exits 1
when a target is missed. Every command runs `--rounds` times, interleaved, and the fastest
round counts (a busy machine slows all alike; the best round is the least disturbed).

    .venv/bin/python benchmarks/bench_leaderboard.py [--logs 50] [--samples 2000] [--epochs 3]
    .venv/bin/python benchmarks/bench_leaderboard.py --quick   # 12 logs × 500 samples, smoke
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TASKS = {
    "practice_exam": "choice",
    "architecture_design": "architecture_scorer",
    "cdk_synth": "cdk_verify",
}

BASELINE = r"""
import sys
from pathlib import Path
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import value_to_float

to_float = value_to_float()
SCORERS = {"practice_exam": "choice", "architecture_design": "architecture_scorer",
           "cdk_synth": "cdk_verify"}
totals = {}
for path in sorted(Path(sys.argv[1]).rglob("*.eval")):
    log = read_eval_log(str(path))
    scorer = SCORERS[log.eval.task]
    values = [to_float(s.scores[scorer].value) for s in log.samples if s.scores]
    totals[(log.eval.model, log.eval.task)] = sum(values) / len(values)
print(len(totals))
"""

SAMPLES_DF = r"""
import math
import sys
from pathlib import Path
from inspect_ai.analysis import EvalModel, EvalTask, SampleSummary, samples_df
from inspect_ai.scorer import value_to_float

to_float = value_to_float()
SCORERS = {"practice_exam": "choice", "architecture_design": "architecture_scorer",
           "cdk_synth": "cdk_verify"}
logs = [str(path) for path in sorted(Path(sys.argv[1]).rglob("*.eval"))]
frame = samples_df(logs, columns=SampleSummary + EvalModel + EvalTask, quiet=True)
totals = {}
for (model, task), group in frame.groupby(["model", "task_name"]):
    values = [to_float(v) for v in group[f"score_{SCORERS[task]}"] if isinstance(v, str)
              or (v is not None and not math.isnan(v))]
    totals[(model, task)] = sum(values) / len(values)
print(len(totals))
"""

TARGETS = {"read_eval_log": 20.0, "samples_df": 3.0}


def template_log(workdir: Path) -> Path:
    """One real Inspect run: 10 MCQ samples × 3 epochs with mockllm."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import choice
    from inspect_ai.solver import multiple_choice

    def respond(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        output = ModelOutput.from_content(model="bench", content="ANSWER: A")
        output.usage = ModelUsage(input_tokens=50, output_tokens=3, total_tokens=53)
        return output

    samples = [
        Sample(
            id=f"q{i}",
            input=f"Question {i}: which AWS service fits best?",
            choices=["S3", "EBS", "EFS", "FSx"],
            target="A",
        )
        for i in range(10)
    ]
    (log,) = inspect_eval(
        Task(dataset=samples, solver=multiple_choice(), scorer=choice(), name="practice_exam"),
        model=get_model("mockllm/bench", custom_outputs=respond),
        epochs=3,
        log_dir=str(workdir / "template"),
        display="none",
    )
    return Path(log.location)


def _full_log(base: Any, task: str, n_samples: int, epochs: int, seed: int) -> Any:
    """The template log rewritten as `task` with `n_samples` × `epochs` scored samples."""
    from inspect_ai.scorer import Score

    assert base.samples
    proto = base.samples[0]
    scorer = TASKS[task]
    rng = random.Random(seed)
    accuracy = 0.3 + 0.6 * rng.random()
    samples = []
    for i in range(n_samples):
        for epoch in range(1, epochs + 1):
            value = "C" if rng.random() < accuracy else "I"
            samples.append(
                proto.model_copy(
                    update={
                        "id": f"q{i}",
                        "epoch": epoch,
                        "uuid": f"{task}-{i}-{epoch}",
                        "scores": {scorer: Score(value=value, answer="A")},
                    }
                )
            )
    log = base.model_copy(deep=False)
    log.eval = base.eval.model_copy(
        update={
            "task": task,
            "config": base.eval.config.model_copy(update={"epochs": epochs}),
            "dataset": base.eval.dataset.model_copy(
                update={"samples": n_samples, "sample_ids": [f"q{i}" for i in range(n_samples)]}
            ),
        }
    )
    if log.results is not None:
        log.results = log.results.model_copy(
            update={
                "scores": [
                    s.model_copy(update={"name": scorer, "scorer": scorer})
                    for s in log.results.scores
                ],
                "total_samples": n_samples * epochs,
                "completed_samples": n_samples * epochs,
            }
        )
    log.samples = samples
    return log


def write_logs(template: Path, out: Path, n_logs: int, n_samples: int, epochs: int) -> None:
    """Write `n_logs` logs (17 models × 3 tasks) from the template, through write_eval_log.

    One full log per task is written with `write_eval_log`; each model's log is a copy of it
    whose header (model, eval id) is rewritten with `write_eval_log(..., header_only=True)`,
    which appends the new header to the zip without rewriting the samples. Writing 300,000
    samples in full would take longer than everything measured here.
    """
    from inspect_ai.log import read_eval_log, write_eval_log

    base = read_eval_log(str(template))
    out.mkdir(parents=True, exist_ok=True)
    full: dict[str, Path] = {}
    for seed, task in enumerate(TASKS):
        full[task] = out.parent / f"full-{task}.eval"
        write_eval_log(_full_log(base, task, n_samples, epochs, seed), str(full[task]), "eval")
    tasks = list(TASKS)
    for index in range(n_logs):
        model_index, task_index = divmod(index, len(tasks))
        task = tasks[task_index]
        target = out / f"bench-{index:02d}_{task}.eval"
        shutil.copy(full[task], target)
        header = read_eval_log(str(target), header_only=True)
        header.eval = header.eval.model_copy(
            update={"model": f"bench/model-{model_index:02d}", "eval_id": f"bench-{index}"}
        )
        write_eval_log(header, str(target), "eval", header_only=True)


def measure(command: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds, CPU seconds (children included) and peak RSS (MiB) of one subprocess."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stderr is not None
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    stdout, stderr = process.stdout.read(), process.stderr.read()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed ({process.returncode}):\n{stderr[-2000:]}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout


def _generate(args: argparse.Namespace, workdir: Path, full: Path, small: Path) -> None:
    if not full.exists():
        started = time.perf_counter()
        template = template_log(workdir)
        write_logs(template, full, args.logs, args.samples, args.epochs)
        print(
            f"generated {args.logs} logs × {args.samples} samples × {args.epochs} epochs "
            f"in {time.perf_counter() - started:.1f} s"
        )
    if not small.exists():
        small.mkdir()
        for path in sorted(full.glob("*.eval"))[: args.small]:
            shutil.copy(path, small / path.name)


def _commands(workdir: Path, directory: Path, count: int) -> dict[str, list[str]]:
    bindir = Path(sys.executable).parent
    out = workdir / f"leaderboard-{count}.json"
    return {
        "ours": [str(bindir / "plumbline"), "leaderboard", str(directory), "-o", str(out)],
        "read_eval_log": [sys.executable, "-c", BASELINE, str(directory)],
        "samples_df": [sys.executable, "-c", SAMPLES_DF, str(directory)],
    }


def _run_all(
    args: argparse.Namespace, workdir: Path, sizes: list[tuple[int, Path]]
) -> dict[tuple[str, int], tuple[float, float, float]]:
    """(wall, CPU, peak RSS) of each command at each size: the fastest of `--rounds`."""
    best: dict[tuple[str, int], tuple[float, float, float]] = {}
    for _ in range(args.rounds):
        for count, directory in sizes:
            for who, command in _commands(workdir, directory, count).items():
                if who != "ours" and count != args.logs:
                    continue  # the baselines only where the ratios are taken
                wall, cpu, rss, _ = measure(command)
                if (who, count) not in best or wall < best[(who, count)][0]:
                    best[(who, count)] = (wall, cpu, rss)
    return best


def _report(
    args: argparse.Namespace, results: dict[tuple[str, int], tuple[float, float, float]]
) -> bool:
    labels = {
        "ours": "plumbline leaderboard",
        "read_eval_log": "read_eval_log (full logs)",
        "samples_df": "samples_df (Inspect frame)",
    }
    print()
    print(f"{'':30}{'logs':>6}{'wall s':>9}{'CPU s':>9}{'peak RSS MiB':>15}")
    for (who, count), (wall, cpu, rss) in sorted(results.items(), key=lambda kv: kv[0][1]):
        print(f"{labels[who]:30}{count:>6}{wall:>9.2f}{cpu:>9.2f}{rss:>15.1f}")
    print()
    ok = True
    ours_wall = results[("ours", args.logs)][0]
    ours_cpu = results[("ours", args.logs)][1]
    for who, target in TARGETS.items():
        ratio = results[(who, args.logs)][0] / ours_wall
        verdict = "ok" if ratio >= target else "MISSED"
        ok = ok and ratio >= target
        cpu_ratio = results[(who, args.logs)][1] / ours_cpu
        print(
            f"leaderboard vs {who}: {ratio:.1f}× (target ≥ {target:g}×) {verdict}  "
            f"[CPU time: {cpu_ratio:.1f}×]"
        )
    small_rss = results[("ours", args.small)][2]
    large_rss = results[("ours", args.logs)][2]
    print(
        f"peak RSS of ours: {small_rss:.1f} MiB at {args.small} logs, {large_rss:.1f} MiB at "
        f"{args.logs} logs ({large_rss / small_rss:.2f}×)"
    )
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logs", type=int, default=50)
    parser.add_argument("--small", type=int, default=10, help="log count of the memory check")
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1, help="runs of each command (best)")
    parser.add_argument("--quick", action="store_true", help="12 logs × 500 samples × 3 epochs")
    parser.add_argument("--keep", type=Path, help="generate into (and keep) this directory")
    args = parser.parse_args()
    if args.quick:
        args.logs, args.small, args.samples = 12, 4, 500

    workdir = args.keep or Path(tempfile.mkdtemp(prefix="bench-leaderboard-"))
    try:
        full = workdir / f"logs-{args.logs}"
        small = workdir / f"logs-{args.small}"
        _generate(args, workdir, full, small)
        size = sum(p.stat().st_size for p in full.glob("*.eval")) / 2**20
        print(f"log directory: {size:.1f} MiB; load average {os.getloadavg()[0]:.2f}")
        results = _run_all(args, workdir, [(args.small, small), (args.logs, full)])
        met = _report(args, results)
        if args.quick:
            # At this size our fixed cost (interpreter, imports) dominates: a smoke run.
            print("--quick: a smoke run; the targets apply at the default size")
            return 0
        return 0 if met else 1
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
