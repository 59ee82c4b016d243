"""Small real inputs for the output-layer tests: one Inspect log made by running a real Inspect
task with mockllm, a suite that reads it, run records, trial records and a Claude Code result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "src" / "plumbline" / "examples"

SUITE_TOML = """\
[suite]
name = "mini"

[[category]]
key = "qa"
name = "QA"
description = "Answers a question."
weight = 1.0
scoring = "binary"
tasks = ["mini_qa"]
scorer = "match"
"""

CLAUDE_RESULT: dict[str, Any] = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "duration_ms": 12000,
    "duration_api_ms": 8000,
    "num_turns": 3,
    "result": "Done.",
    "session_id": "session-1",
    "total_cost_usd": 0.02,
    "usage": {
        "input_tokens": 120,
        "cache_creation_input_tokens": 2000,
        "cache_read_input_tokens": 15000,
        "output_tokens": 420,
    },
    "permission_denials": [],
    "success": True,
}


def make_log_dir(root: Path, *, scored: bool = True) -> Path:
    """`root/logs/` with one `.eval` log of a two-sample task answered by mockllm: it answers
    "A" to both, so one of the two is right (a score of 0.5)."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    task = Task(
        dataset=[
            Sample(input="Say A.", target="A", id="s1"),
            Sample(input="Say B.", target="B", id="s2"),
        ],
        solver=generate(),
        scorer=match() if scored else None,
        name="mini_qa",
    )
    logs = root / ("logs" if scored else "unscored-logs")
    answers = [ModelOutput.from_content(model="mockllm/model", content="A") for _ in range(2)]
    for answer in answers:  # with usage set, mockllm counts no tokens (tiktoken would download)
        answer.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
    model = get_model("mockllm/model", custom_outputs=answers, memoize=False)
    eval(task, model=model, log_dir=str(logs), display="none")
    assert list(logs.glob("*.eval")), "Inspect wrote no log"
    return logs


def write_suite(path: Path) -> Path:
    path.write_text(SUITE_TOML, encoding="utf-8")
    return path


def copy_example(name: str, target: Path) -> Path:
    target.write_bytes((EXAMPLES / name).read_bytes())
    return target


def write_claude_result(path: Path) -> Path:
    path.write_text(json.dumps(CLAUDE_RESULT), encoding="utf-8")
    return path
