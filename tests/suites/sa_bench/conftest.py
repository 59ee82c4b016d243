"""Fixtures for the architecture tests (helpers live in `arch_helpers`)."""

from __future__ import annotations

from typing import Any

import pytest
from arch_helpers import TASKS_FILE, load_tasks


@pytest.fixture(autouse=True)
def own_parsers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests use our validators unless they ask for the real Mermaid/PlantUML parsers.

    The real parsers start a JVM or Node.js per diagram; the tests that request `real_mermaid`
    or `real_plantuml` prove they agree with ours on the table of cases.
    """
    from plumbline.suites.sa_bench.scorers import mermaid, plantuml

    if "real_mermaid" not in request.fixturenames:
        monkeypatch.setattr(mermaid, "mermaid_parser", lambda: None)
    if "real_plantuml" not in request.fixturenames:
        monkeypatch.setattr(plantuml, "plantuml_command", lambda: None)


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
