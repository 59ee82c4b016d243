"""Helpers for the agent harness tests: the fake agent and suites built from the example."""

from __future__ import annotations

import json
import shutil
import sys
import time
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

FAKE_AGENT = Path(__file__).with_name("fake_agent.py")
EXAMPLE = Path(str(resources.files("plumbline").joinpath("examples/agent_suite")))


def fake_agent(output_format: str = "json") -> str:
    """The agent command template that runs the fake agent like `claude -p ...`."""
    return f"{sys.executable} {FAKE_AGENT} -p {{prompt}} --output-format {output_format}"


def example_data() -> dict[str, Any]:
    return tomllib.loads((EXAMPLE / "suite.toml").read_text())


def write_suite(directory: Path, changes: dict[str, Any] | None = None) -> Path:
    """Copy the example suite's files to `directory` and write a JSON suite there, starting
    from the example's settings with `changes` applied (None deletes a key)."""
    shutil.copytree(EXAMPLE, directory, dirs_exist_ok=True)
    data = example_data()
    for key, value in (changes or {}).items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path = directory / "suite.json"
    path.write_text(json.dumps(data, indent=2))
    return path


def one_task(**task_changes: Any) -> list[dict[str, Any]]:
    """The example's first task alone, with changes."""
    task = dict(example_data()["tasks"][0])
    task.update(task_changes)
    return [task]


def arms(without: dict[str, Any] | None = None, with_: dict[str, Any] | None = None) -> list[Any]:
    """The example's two arms, with changes to each."""
    control, treatment = (dict(a) for a in example_data()["arms"])
    control.update(without or {})
    treatment.update(with_ or {})
    return [control, treatment]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _dead(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def gone(pid: int, timeout: float = 10.0) -> bool:
    """The process no longer runs (absent, or a zombie waiting to be reaped). A SIGKILLed
    process dies when the kernel next schedules it, so this waits a little for that."""
    deadline = time.monotonic() + timeout
    while not _dead(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True
