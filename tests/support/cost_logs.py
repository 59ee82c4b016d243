"""Real Inspect logs with usage for the cost tests: three mockllm models answer the same eight
questions of task `cost_qa`, each answer carrying a provider usage (input, output, cache read,
reasoning tokens); a price file prices two of them."""

from __future__ import annotations

from pathlib import Path

SUITE = """\
[suite]
name = "costly"

[[category]]
key = "qa"
name = "QA"
description = "Answers a question."
weight = 1.0
scoring = "binary"
tasks = ["cost_qa"]
scorer = "match"
"""

PRICES = """\
version = "test-prices-1"
[models."mockllm/cheap"]
source = "test"
date = "2026-01-01"
input = 1.0
output = 2.0
cache_read = 0.5
[models."mockllm/dear"]
source = "test"
date = "2026-01-01"
input = 10.0
output = 20.0
cache_read = 5.0
"""

N = 8
#: model -> (its index in `usage`, how many of the N questions it answers right)
MODELS = {"mockllm/cheap": (0, 4), "mockllm/dear": (1, 7), "mockllm/free": (2, 2)}


def usage(model_index: int, sample: int) -> dict[str, int]:
    """The usage the provider reports for one answer."""
    return {
        "input_tokens": 100 + 10 * sample,
        "output_tokens": 5 + sample + model_index,
        "input_tokens_cache_read": sample % 3,
        "reasoning_tokens": sample % 2,
    }


def _run(logs: Path, model_name: str, model_index: int, right: int) -> None:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate

    task = Task(
        dataset=[Sample(input=f"Say A ({i}).", target="A", id=f"q{i}") for i in range(N)],
        solver=generate(),
        scorer=match(),
        name="cost_qa",
    )
    outputs = []
    for i in range(N):
        output = ModelOutput.from_content(model=model_name, content="A" if i < right else "B")
        tokens = usage(model_index, i)
        total = tokens["input_tokens"] + tokens["output_tokens"]
        output.usage = ModelUsage(**tokens, total_tokens=total)
        outputs.append(output)
    model = get_model(model_name, custom_outputs=outputs, memoize=False)
    eval(task, model=model, log_dir=str(logs), display="none", max_samples=1)


def make_cost_logs(root: Path) -> tuple[Path, Path, Path]:
    """(log directory, suite file, price file) under `root`."""
    logs = root / "logs"
    for name, (index, right) in MODELS.items():
        _run(logs, name, index, right)
    suite = root / "suite.toml"
    suite.write_text(SUITE, encoding="utf-8")
    prices = root / "prices.toml"
    prices.write_text(PRICES, encoding="utf-8")
    return logs, suite, prices
