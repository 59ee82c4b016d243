"""Helpers shared by the architecture tests: our tasks, their metadata, adversarial responses.

A module with a unique name (not `conftest`), so imports never pick up another directory's
conftest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from plumbline.suites.sa_bench.scorers.aws_services import all_service_names

HERE = Path(__file__).parent
TASKS_FILE = HERE / "tasks.jsonl"
METADATA_KEYS = ("id", "subtype", "expected", "output_format", "difficulty", "question")


def load_tasks(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def metadata(task: dict[str, Any]) -> dict[str, Any]:
    return {key: task.get(key) for key in METADATA_KEYS}


def keyword_salad(task: dict[str, Any]) -> str:
    """The expected element names strung together without reasoning."""
    return " ".join(element_names(task))


def element_names(task: dict[str, Any]) -> list[str]:
    """The names of the expected elements (and the key concepts)."""
    expected = task["expected"]
    parts: list[str] = []
    for item in expected.get("services", []) + expected.get("security_components", []):
        parts.append(item["name"])
    for item in expected.get("bottlenecks", []) + expected.get("cost_factors", []):
        parts.append(item["component"])
    for item in expected.get("flow_steps", []):
        parts += [item["from"], item["to"]]
    for item in expected.get("issues", []):
        parts.append(item["issue"])
    parts += expected.get("key_concepts", [])
    return parts


def answer_key_salad(task: dict[str, Any]) -> str:
    """Every expected field (names and their roles, issues, mitigations) strung together."""
    parts: list[str] = []
    for key, items in task["expected"].items():
        if key == "key_concepts":
            parts += items
        else:
            for item in items:
                parts += [str(v) for v in item.values()]
    return " ".join(parts)


def every_service() -> str:
    """A response that lists every AWS service in the catalogue."""
    return "The architecture uses: " + ", ".join(all_service_names(kind=None)) + "."
