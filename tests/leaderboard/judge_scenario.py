"""Inspect logs of a biased judge, produced by running a real Inspect task with mockllm.

Two models answer the same QUESTIONS open questions; a seeded human truth says which answers are
right (`better`: 75%, `worse`: 55%). The judge (the task's scorer, reading the score the scripted
model output carries) is fair to `better` (15% of verdicts flipped) but lenient to `worse` (it
accepts 70% of its wrong answers), so judge-only it ranks `worse` first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

QUESTIONS = [f"j{i:03d}" for i in range(300)]
MODELS = ("better", "worse")
SUITE_TOML = """
[suite]
name = "judged"
title = "Judged answers"

[[category]]
key = "answers"
name = "Answers"
description = "Open answers scored by an LLM judge."
weight = 1.0
scoring = "rubric"
tasks = ["judged_answers"]
scorers = ["judge_scorer"]
"""


@dataclass(frozen=True)
class JudgedLogs:
    logs: Path
    suite: Path
    human: dict[str, dict[str, float]]
    """model -> sample id -> the human truth (0 or 1)."""
    judge: dict[str, dict[str, float]]

    def truth(self, model: str) -> float:
        return float(np.mean(list(self.human[model].values())))


def _truth(seed: int) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    human: dict[str, dict[str, float]] = {}
    judge: dict[str, dict[str, float]] = {}
    for model, rate in (("better", 0.75), ("worse", 0.55)):
        y = (rng.random(len(QUESTIONS)) < rate).astype(float)
        if model == "better":
            f = np.abs(y - (rng.random(len(QUESTIONS)) < 0.15))
        else:
            f = np.maximum(y, rng.random(len(QUESTIONS)) < 0.7).astype(float)
        human[model] = dict(zip(QUESTIONS, y.tolist(), strict=True))
        judge[model] = dict(zip(QUESTIONS, f.tolist(), strict=True))
    return human, judge


def _model_fn(model: str, judge: dict[str, float]) -> Callable[..., Any]:
    from inspect_ai.model import ModelOutput, ModelUsage

    def generate(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        key = messages[-1].text.split("[", 1)[1].split("]", 1)[0]
        output = ModelOutput.from_content(model=model, content=f"My answer.\nSCORE {judge[key]}")
        output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
        return output

    return generate


def generate_judged_logs(root: Path, seed: int = 29) -> JudgedLogs:
    from inspect_ai import Task, eval, task
    from inspect_ai.dataset import Sample
    from inspect_ai.model import get_model
    from inspect_ai.scorer import Score, Target, mean, scorer
    from inspect_ai.solver import TaskState, generate

    human, judge = _truth(seed)

    @scorer(metrics=[mean()])
    def judge_scorer() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            value = float(state.output.completion.rsplit("SCORE", 1)[1])
            verdict = "acceptable" if value >= 0.5 else "not acceptable"
            return Score(value=value, explanation=f"The judge finds the answer {verdict}.")

        return score

    @task
    def judged_answers() -> Task:
        samples = [Sample(id=q, input=f"[{q}] Explain it.", target="") for q in QUESTIONS]
        return Task(dataset=samples, solver=generate(), scorer=judge_scorer())

    logs = root / "logs"
    for model in MODELS:
        eval(
            [judged_answers()],
            model=get_model(f"mockllm/{model}", custom_outputs=_model_fn(model, judge[model])),
            log_dir=str(logs / model),
            display="none",
            log_realtime=False,  # no live-view buffer: the written log is the same
        )
    suite = root / "judged.toml"
    suite.write_text(SUITE_TOML)
    return JudgedLogs(logs=logs, suite=suite, human=human, judge=judge)
