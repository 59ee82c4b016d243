"""Real result documents for the results store's tests, made by running plumbline.

- `mini_leaderboard`: an Inspect task of `total` questions answered by mockllm (the first
  `correct` right), built into a leaderboard by `plumbline leaderboard`;
- `compare_report` / `reliability_report`: `plumbline compare` / `plumbline reliability` on
  the bundled example records;
- `renamed`: a leaderboard with its model renamed (a distinct result, for many writers).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from tests.support.small_inputs import EXAMPLES, write_suite

from plumbline.cli.main import main


def run_cli(args: list[str]) -> str:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def mini_logs(root: Path, correct: int, total: int = 40, model: str = "model") -> Path:
    """`root/logs/`: one Inspect log of `total` questions, the first `correct` answered right
    by `mockllm/<model>`."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    task = Task(
        dataset=[Sample(input=f"Say {i}.", target=str(i), id=f"q{i}") for i in range(total)],
        solver=generate(),
        scorer=match(),
        name="mini_qa",
    )
    answers = [
        ModelOutput.from_content(model=f"mockllm/{model}", content=str(i if i < correct else -1))
        for i in range(total)
    ]
    for answer in answers:  # with usage set, mockllm counts no tokens (tiktoken would download)
        answer.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
    logs = root / "logs"
    llm = get_model(f"mockllm/{model}", custom_outputs=answers, memoize=False)
    eval(task, model=llm, log_dir=str(logs), display="none", max_connections=1)
    return logs


def mini_leaderboard(root: Path, correct: int, total: int = 40) -> Path:
    """A leaderboard JSON file of the mini suite (see `mini_logs`) under `root`."""
    root.mkdir(parents=True, exist_ok=True)
    suite = write_suite(root / "mini.toml")
    logs = mini_logs(root, correct, total)
    output = root / "leaderboard.json"
    run_cli(["leaderboard", str(logs), "--suite", str(suite), "-o", str(output)])
    return output


def compare_report(root: Path, seed: int = 0) -> Path:
    output = root / f"compare-{seed}.json"
    run_cli(
        [
            "compare",
            str(EXAMPLES / "agent_runs.jsonl"),
            "--treatment",
            "with_skelly",
            "--control",
            "without_skelly",
            "--resamples",
            "300",
            "--seed",
            str(seed),
            "--json",
            str(output),
        ]
    )
    return output


def reliability_report(root: Path) -> Path:
    output = root / "reliability.json"
    run_cli(["reliability", str(EXAMPLES / "trials.jsonl"), "--json", str(output)])
    return output


def read(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def renamed(document: dict[str, Any], model: str) -> dict[str, Any]:
    """The leaderboard with its (one) model renamed `model`: another result."""
    copied = copy.deepcopy(document)
    for row in copied["models"]:
        row["model"] = model
    for group in copied.get("tie_groups", []):
        group["models"] = [model for _ in group["models"]]
    return copied


@dataclass(frozen=True)
class Documents:
    """Result files made by running plumbline, and their JSON."""

    leaderboard: Path
    compare: Path
    reliability: Path

    def json(self, kind: str) -> dict[str, Any]:
        return read(getattr(self, kind))
