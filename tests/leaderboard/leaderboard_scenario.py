"""Inspect logs for the leaderboard tests, produced by running real Inspect tasks with mockllm.

The scenario (every number the tests expect is derived from the SCRIPT tables below, never
from the logs):

- alpha: all three categories; practice_exam with 2 epochs in `.eval`, run twice (the second,
  newer run changes q0's answer: 16 duplicate sample-epochs, the newer wins).
- beta: all three categories in `.json`; two cdk_synth prompts raise an error (2 errors).
- gamma: practice_exam and architecture_design only (cdk_synth missing); its
  architecture_design comes from two logs over disjoint items, which pool.
- delta: practice_exam, plus a cdk_synth log scored by `cdk_lint_only` (none of the suite's
  scorers: reported and skipped), so cdk_synth and architecture_design are missing.
- a log of a task no category matches, a truncated copy of a log, and a `logs.json` manifest.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PE_QUESTIONS = [f"q{i}" for i in range(8)]
PE_TARGETS = {q: "ABCD"[i % 4] for i, q in enumerate(PE_QUESTIONS)}
ARCH_ITEMS = [f"a{i}" for i in range(5)]
CDK_PROMPTS = [f"c{i}" for i in range(6)]

# practice_exam: per model, question -> answers in call order (one per epoch; the question's
# mean over epochs is what matters and does not depend on which epoch ran first).
# True = correct answer.
PE_SCRIPT: dict[str, dict[str, list[bool]]] = {
    "alpha": {q: [True, True] for q in PE_QUESTIONS} | {"q3": [True, False], "q5": [False, False]},
    "beta": {q: [i % 2 == 0] for i, q in enumerate(PE_QUESTIONS)},
    "gamma": {q: [i < 2] for i, q in enumerate(PE_QUESTIONS)},
    "delta": {q: [i != 7] for i, q in enumerate(PE_QUESTIONS)},
}
# alpha's second (newer) practice_exam run: q0 is now wrong in both epochs.
PE_SCRIPT_ALPHA_RERUN = PE_SCRIPT["alpha"] | {"q0": [False, False]}
PE_EPOCHS = {"alpha": 2, "beta": 1, "gamma": 1, "delta": 1}

ARCH_SCRIPT: dict[str, dict[str, float]] = {
    "alpha": dict(zip(ARCH_ITEMS, [0.9, 0.8, 0.85, 0.7, 0.95], strict=True)),
    "beta": dict(zip(ARCH_ITEMS, [0.6, 0.5, 0.55, 0.4, 0.65], strict=True)),
    "gamma": dict(zip(ARCH_ITEMS, [0.3, 0.2, 0.25, 0.1, 0.35], strict=True)),
    # a judge on a 0–10 scale: two values are not valid [0, 1] scores
    "epsilon": dict(zip(ARCH_ITEMS, [7.5, 0.5, 0.25, 10.0, 1.0], strict=True)),
}
# cdk_synth: "ok" synthesizes, "fail" does not, "error" raises inside the model call.
CDK_SCRIPT: dict[str, dict[str, str]] = {
    "alpha": dict(zip(CDK_PROMPTS, ["ok", "ok", "ok", "fail", "ok", "fail"], strict=True)),
    "beta": dict(zip(CDK_PROMPTS, ["ok", "fail", "ok", "fail", "error", "error"], strict=True)),
    "delta": dict(zip(CDK_PROMPTS, ["ok"] * 6, strict=True)),
}
MODELS = ["alpha", "beta", "gamma", "delta"]


@dataclass(frozen=True)
class Fixture:
    root: Path
    logs: Path
    alpha_pe_old: Path
    alpha_pe_new: Path
    truncated: Path
    unmatched: Path
    wrong_scorer: Path


def _model_fn(model: str, pe_script: dict[str, list[bool]] | None = None) -> Callable[..., Any]:
    from inspect_ai.model import ModelOutput, ModelUsage

    calls: dict[str, int] = {}
    pe = pe_script or PE_SCRIPT.get(model, {})

    def generate(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        text = messages[-1].text
        key = text.split("[", 1)[1].split("]", 1)[0]
        call = calls.get(key, 0)
        calls[key] = call + 1
        if key.startswith("q"):
            correct = pe[key][call % len(pe[key])]
            letter = PE_TARGETS[key] if correct else "ABCD"[("ABCD".index(PE_TARGETS[key]) + 1) % 4]
            content = f"ANSWER: {letter}"
        elif key.startswith("a"):
            content = f"My design.\nSCORE {ARCH_SCRIPT[model][key]}"
        else:
            outcome = CDK_SCRIPT[model][key]
            if outcome == "error":
                raise RuntimeError(f"provider exploded on {key}")
            content = "synth-ok" if outcome == "ok" else "syntax error"
        output = ModelOutput.from_content(model=model, content=content)
        # Set usage so mockllm does not count tokens (tiktoken would fetch its vocabulary).
        output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
        return output

    return generate


def _tasks() -> dict[str, Callable[..., Any]]:
    from inspect_ai import Task, task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import Score, Target, accuracy, choice, mean, scorer
    from inspect_ai.solver import TaskState, generate, multiple_choice

    @scorer(metrics=[mean()])
    def architecture_scorer() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=float(state.output.completion.rsplit("SCORE", 1)[1]))

        return score

    @scorer(metrics=[accuracy()])
    def cdk_verify() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value="C" if "synth-ok" in state.output.completion else "I")

        return score

    @scorer(metrics=[accuracy()])
    def cdk_lint_only() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value="C" if "synth-ok" in state.output.completion else "I")

        return score

    @task
    def practice_exam() -> Task:
        samples = [
            Sample(
                id=q,
                input=f"[{q}] Which service?",
                choices=["w", "x", "y", "z"],
                target=PE_TARGETS[q],
            )
            for q in PE_QUESTIONS
        ]
        return Task(dataset=samples, solver=multiple_choice(), scorer=choice())

    @task
    def architecture_design(items: list[str] | None = None) -> Task:
        samples = [Sample(id=a, input=f"[{a}] Design it.", target="") for a in items or ARCH_ITEMS]
        return Task(dataset=samples, solver=generate(), scorer=architecture_scorer())

    @task
    def cdk_synth(local: bool = False) -> Task:
        samples = [Sample(id=c, input=f"[{c}] Emit a CDK app.", target="") for c in CDK_PROMPTS]
        return Task(
            dataset=samples,
            solver=generate(),
            scorer=cdk_lint_only() if local else cdk_verify(),
        )

    @task
    def other_task() -> Task:
        samples = [Sample(id=c, input=f"[{c}] Something else.", target="") for c in CDK_PROMPTS]
        return Task(dataset=samples, solver=generate(), scorer=cdk_verify())

    return {
        "practice_exam": practice_exam,
        "architecture_design": architecture_design,
        "cdk_synth": cdk_synth,
        "other_task": other_task,
    }


def run_task(
    task: Any, model: str, log_dir: Path, fmt: str = "eval", fail_on_error: bool = False
) -> Path:
    """Run one scenario task for one model; returns the log's path."""
    (path,) = _run([task], model, log_dir, fmt, fail_on_error=fail_on_error)
    return path


def task_factories() -> dict[str, Callable[..., Any]]:
    """The scenario's Inspect task functions by name."""
    return _tasks()


def _run(
    tasks: list[Any],
    model: str,
    log_dir: Path,
    fmt: str,
    epochs: int = 1,
    pe_script: dict[str, list[bool]] | None = None,
    fail_on_error: bool = False,
) -> list[Path]:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    logs = inspect_eval(
        tasks,
        model=get_model(f"mockllm/{model}", custom_outputs=_model_fn(model, pe_script)),
        epochs=epochs,
        log_dir=str(log_dir),
        log_format=fmt,
        fail_on_error=fail_on_error,
        display="none",
        max_tasks=1,
    )
    return [Path(log.location) for log in logs]


def generate_logs(root: Path) -> Fixture:
    """Run the scenario into `root`; returns where each notable log is."""
    tasks = _tasks()
    logs = root / "logs"
    (alpha_pe_old,) = _run([tasks["practice_exam"]()], "alpha", logs / "alpha", "eval", epochs=2)
    _run([tasks["architecture_design"](), tasks["cdk_synth"]()], "alpha", logs / "alpha", "eval")
    _run(
        [tasks["practice_exam"](), tasks["architecture_design"](), tasks["cdk_synth"]()],
        "beta",
        logs / "beta",
        "json",
    )
    _run([tasks["practice_exam"]()], "gamma", logs / "gamma", "eval")
    _run([tasks["architecture_design"](items=ARCH_ITEMS[:3])], "gamma", logs / "gamma", "eval")
    _run([tasks["architecture_design"](items=ARCH_ITEMS[3:])], "gamma", logs / "gamma", "json")
    _run([tasks["practice_exam"]()], "delta", logs / "delta", "json")
    (wrong_scorer,) = _run([tasks["cdk_synth"](local=True)], "delta", logs / "delta", "eval")
    (unmatched,) = _run([tasks["other_task"]()], "delta", logs / "misc", "eval")
    # Inspect stamps `created` to the second: make the re-run unambiguously newer.
    time.sleep(1.1)
    (alpha_pe_new,) = _run(
        [tasks["practice_exam"]()],
        "alpha",
        logs / "alpha-rerun",
        "eval",
        epochs=2,
        pe_script=PE_SCRIPT_ALPHA_RERUN,
    )
    truncated = logs / "misc" / "truncated.eval"
    data = alpha_pe_old.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    (logs / "logs.json").write_text('{"not": "a log"}\n')
    return Fixture(root, logs, alpha_pe_old, alpha_pe_new, truncated, unmatched, wrong_scorer)
