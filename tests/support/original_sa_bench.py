"""Inspect logs shaped like the original SA Bench project's, produced by running real tasks.

The original project's tasks and scorers, by name: `aws_solutions_architect` scored by `choice`,
`architecture_design` and `architecture_interpretation` by `architecture_scorer`,
`architecture_design_llm_judge` by `llm_judge_scorer` (the three architecture tasks run the same
dataset, `architecture_interpretation.jsonl`, in that project's `evals/architecture_design/
tasks.py`), `aws_cdk_synth` by `cdk_verify` and `aws_cdk_synth_local` by `cdk_verify_local`.
Small stand-ins with those names run on mockllm with scripted outputs (usage set, so nothing is
downloaded), and the script tables below give every expected number.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

QUESTIONS = [f"q{i}" for i in range(6)]
TARGETS = dict(zip(QUESTIONS, "ABCDAB", strict=True))
DESIGNS = ["a0", "a1", "a2"]
APPS = ["c0", "c1", "c2", "c3"]

#: Per model: which questions it answers right, each design's rubric score, which apps synth.
SCRIPT: dict[str, dict[str, Any]] = {
    "good": {
        "right": {"q0", "q1", "q2", "q3", "q4"},
        "design": {"a0": 0.9, "a1": 0.8, "a2": 0.7},
        "synth": {"c0", "c1", "c2"},
    },
    "weak": {
        "right": {"q0", "q1"},
        "design": {"a0": 0.5, "a1": 0.4, "a2": 0.3},
        "synth": {"c0"},
    },
}
WEIGHTS = {"practice_exam": 0.34, "architecture_design": 0.33, "cdk_synth": 0.33}


def expected(model: str) -> dict[str, float]:
    """The category scores and overall the original aggregator gives for a scripted model."""
    script = SCRIPT[model]
    scores = {
        "practice_exam": len(script["right"]) / len(QUESTIONS),
        "architecture_design": sum(script["design"].values()) / len(DESIGNS),
        "cdk_synth": len(script["synth"]) / len(APPS),
    }
    scores["overall"] = sum(WEIGHTS[key] * scores[key] for key in WEIGHTS)
    return scores


def model_fn(model: str) -> Callable[..., Any]:
    """mockllm custom outputs for a scripted model; `broken` raises on every call."""
    from inspect_ai.model import ModelOutput, ModelUsage

    def generate(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        if model == "broken":
            raise RuntimeError("provider is down")
        script = SCRIPT[model]
        key = messages[-1].text.split("[", 1)[1].split("]", 1)[0]
        if key.startswith("q"):
            right = TARGETS[key]
            letter = right if key in script["right"] else "ABCD"[("ABCD".index(right) + 1) % 4]
            content = f"ANSWER: {letter}"
        elif key.startswith("a"):
            content = f"My design.\nSCORE {script['design'][key]}"
        else:
            content = "synth-ok" if key in script["synth"] else "synth failed"
        output = ModelOutput.from_content(model=model, content=content)
        output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
        return output

    return generate


def tasks() -> dict[str, Any]:
    """The original project's task functions (stand-ins with its task and scorer names)."""
    from inspect_ai import Task, task
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import Score, Target, accuracy, choice, mean, scorer
    from inspect_ai.solver import TaskState, generate, multiple_choice

    @scorer(metrics=[mean()])
    def architecture_scorer() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=float(state.output.completion.rsplit("SCORE", 1)[1]))

        return score

    @scorer(metrics=[mean()])
    def llm_judge_scorer() -> Any:
        # The judge's number: half the heuristic's, so a test can tell which one was read.
        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=float(state.output.completion.rsplit("SCORE", 1)[1]) / 2)

        return score

    def _cdk(name: str) -> Any:
        @scorer(metrics=[accuracy()], name=name)
        def verify() -> Any:
            async def score(state: TaskState, target: Target) -> Score:
                return Score(value="C" if "synth-ok" in state.output.completion else "I")

            return score

        return verify

    cdk_verify, cdk_verify_local = _cdk("cdk_verify"), _cdk("cdk_verify_local")

    @task
    def aws_solutions_architect() -> Task:
        samples = [
            Sample(id=q, input=f"[{q}] Which service?", choices=["w", "x", "y", "z"], target=t)
            for q, t in TARGETS.items()
        ]
        return Task(dataset=samples, solver=multiple_choice(), scorer=choice())

    def _architecture(judge: bool) -> Task:
        samples = [Sample(id=a, input=f"[{a}] Design it.", target="") for a in DESIGNS]
        grader = llm_judge_scorer() if judge else architecture_scorer()
        return Task(dataset=samples, solver=generate(), scorer=grader)

    @task
    def architecture_design() -> Task:
        return _architecture(judge=False)

    @task
    def architecture_interpretation() -> Task:
        return _architecture(judge=False)

    @task
    def architecture_design_llm_judge() -> Task:
        return _architecture(judge=True)

    def _synth(local: bool) -> Task:
        samples = [Sample(id=c, input=f"[{c}] Write a CDK app.", target="") for c in APPS]
        verify = cdk_verify_local() if local else cdk_verify()
        return Task(dataset=samples, solver=generate(), scorer=verify)

    @task
    def aws_cdk_synth() -> Task:
        return _synth(local=False)

    @task
    def aws_cdk_synth_local() -> Task:
        return _synth(local=True)

    return {
        "aws_solutions_architect": aws_solutions_architect,
        "architecture_design": architecture_design,
        "architecture_interpretation": architecture_interpretation,
        "architecture_design_llm_judge": architecture_design_llm_judge,
        "aws_cdk_synth": aws_cdk_synth,
        "aws_cdk_synth_local": aws_cdk_synth_local,
    }


def run_original(
    log_dir: Path, model: str, names: list[str], log_format: str = "eval"
) -> list[Path]:
    """Run the named original tasks for one scripted model (mockllm/<model>) into `log_dir`."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    factories = tasks()
    logs = inspect_eval(
        [factories[name]() for name in names],
        model=get_model(f"mockllm/{model}", custom_outputs=model_fn(model)),
        log_dir=str(log_dir),
        log_format=log_format,
        display="none",
        fail_on_error=False,
        max_tasks=1,
    )
    return [Path(log.location) for log in logs]


def original_logs(root: Path) -> Path:
    """The original project's three categories for `good` (CDK via `aws_cdk_synth_local`, scored
    by `cdk_verify_local`) and `weak` (via `aws_cdk_synth`, scored by `cdk_verify`)."""
    logs = root / "original-logs"
    run_original(
        logs, "good", ["aws_solutions_architect", "architecture_design", "aws_cdk_synth_local"]
    )
    run_original(logs, "weak", ["aws_solutions_architect", "architecture_design", "aws_cdk_synth"])
    return logs
