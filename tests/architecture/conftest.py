"""Shared fixtures: architecture tasks (ours, one per subtype, and the packaged dataset)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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


@pytest.fixture(autouse=True)
def own_parsers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests use our validators unless they ask for the real Mermaid/PlantUML parsers.

    The real parsers start a JVM or Node.js per diagram; the tests that request `real_mermaid`
    or `real_plantuml` prove they agree with ours on the table of cases.
    """
    from plumbline.suites.sa_bench.scorers import structured

    if "real_mermaid" not in request.fixturenames:
        monkeypatch.setattr(structured, "mermaid_parser", lambda: None)
    if "real_plantuml" not in request.fixturenames:
        monkeypatch.setattr(structured, "plantuml_command", lambda: None)


@pytest.fixture(scope="session")
def tasks() -> list[dict[str, Any]]:
    loaded = load_tasks(TASKS_FILE)
    assert {t["subtype"] for t in loaded} == {
        "service_identification",
        "data_flow_analysis",
        "security_assessment",
        "scalability_analysis",
        "cost_optimization",
        "requirements_to_architecture",
        "pattern_implementation",
        "problem_solving",
        "architecture_critique",
    }
    return loaded
