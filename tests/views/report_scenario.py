"""Real Inspect runs of a slice of sa-bench for the report tests, and their leaderboard.

Two models: `scripted/oracle` (answers from the reference data) runs the practice exam and the
architecture tasks only, so its CDK category is *missing*; a `mockllm` model whose name and every
response carry HTML injection attempts runs all three tasks (its first model call fails, so one
sample errors, and its CDK answers contain no code, so CDK reports `extraction_failed`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbline.leaderboard import build_leaderboard, write_leaderboard

HOSTILE = '<script>alert(1)</script>"><img src=x onerror=alert(1)>'
HOSTILE_MODEL = f"mockllm/{HOSTILE}"
HOSTILE_RESPONSE = f"ANSWER: B\n{HOSTILE}\nThe answer above is plain text."
LIMIT = 3
SEED = 42


@dataclass(frozen=True)
class Scenario:
    logs: Path
    leaderboard: Path
    document: dict[str, Any]


class _Responder:
    """mockllm outputs: the first call raises (one errored sample), the rest answer HOSTILE."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *args: Any) -> Any:
        from inspect_ai.model import ModelOutput, ModelUsage

        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("mock provider failure")
        output = ModelOutput.from_content(model="mockllm", content=HOSTILE_RESPONSE)
        # Set usage so mockllm does not count tokens (tiktoken would fetch its vocabulary).
        output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
        return output


def generate_scenario(root: Path) -> Scenario:
    """Run the two models through Inspect, then build and write the real leaderboard."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from plumbline.suites.sa_bench.tasks import architecture_design, cdk_synth, practice_exam

    logs = root / "logs"
    common: dict[str, Any] = {
        "log_dir": str(logs),
        "display": "none",
        "seed": SEED,
        "log_format": "eval",
    }
    oracle = inspect_eval(
        [practice_exam(seed=SEED, limit=LIMIT), architecture_design(seed=SEED, limit=LIMIT)],
        model="scripted/oracle",
        **common,
    )
    hostile = inspect_eval(
        [
            practice_exam(seed=SEED, limit=LIMIT),
            architecture_design(seed=SEED, limit=LIMIT),
            cdk_synth(seed=SEED, limit=2),
        ],
        model=get_model(HOSTILE_MODEL, custom_outputs=_Responder(), memoize=False),
        fail_on_error=False,
        max_tasks=1,
        **common,
    )
    assert all(log.status == "success" for log in [*oracle, *hostile]), [
        (log.eval.task, log.status, log.error) for log in [*oracle, *hostile]
    ]
    board = build_leaderboard(logs, "sa-bench", run_id="report-tests")
    document = board.to_dict()
    path = root / "leaderboard.json"
    write_leaderboard(path, document)
    return Scenario(logs=logs, leaderboard=path, document=json.loads(path.read_text()))
