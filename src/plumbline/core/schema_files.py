"""The JSON Schemas shipped under `plumbline/schemas/` that are generated from pydantic models.

Each entry names the shipped file and the function that generates it;
`python -m plumbline.core.schema_files` rewrites them all after a model changes, and a test fails
when a shipped file and its model drift apart. Result documents (`RESULT_SCHEMAS`) also state a
unit for every number (see `plumbline.core.result`).
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: shipped file name -> "module:function" returning its schema
GENERATED: dict[str, str] = {
    "agent_run.schema.json": "plumbline.agent.result:generated_schema",
    "agent_suite.schema.json": "plumbline.agent.suite:generated_schema",
    "compare_report.schema.json": "plumbline.compare.result:generated_schema",
    "leaderboard_suite.schema.json": "plumbline.leaderboard.suite:generated_schema",
    "leaderboard.schema.json": "plumbline.leaderboard.document:generated_schema",
    "leaderboard_check.schema.json": "plumbline.leaderboard.check:generated_schema",
    "leaderboard_samples.schema.json": "plumbline.leaderboard.samples:generated_schema",
    "reliability_report.schema.json": "plumbline.reliability.result:generated_schema",
    "history.schema.json": "plumbline.results.history_document:generated_history_schema",
    "history_check.schema.json": "plumbline.results.history_document:generated_check_schema",
}

#: the generated schemas of result documents (every number states its unit)
RESULT_SCHEMAS: tuple[str, ...] = (
    "agent_run.schema.json",
    "compare_report.schema.json",
    "history.schema.json",
    "history_check.schema.json",
    "leaderboard.schema.json",
    "leaderboard_check.schema.json",
    "leaderboard_samples.schema.json",
    "reliability_report.schema.json",
)

SCHEMA_DIR = Path(__file__).parent.parent / "schemas"


def model_schema(model: type[BaseModel], *, schema_id: str, title: str) -> dict[str, Any]:
    """A model's JSON Schema as plumbline ships it: the 2020-12 dialect, an `$id` and a title."""
    schema = model.model_json_schema(by_alias=True)
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "$id": schema_id,
        "title": title,
        **{key: value for key, value in schema.items() if key != "title"},
    }


def generator(name: str) -> Callable[[], dict[str, Any]]:
    """The function that generates the shipped schema `name`."""
    module_name, attribute = GENERATED[name].split(":")
    function: Callable[[], dict[str, Any]] = getattr(
        importlib.import_module(module_name), attribute
    )
    return function


def generated(name: str) -> dict[str, Any]:
    """The schema `name` as its model generates it today (JSON round-tripped)."""
    loaded: dict[str, Any] = json.loads(json.dumps(generator(name)()))
    return loaded


def shipped(name: str) -> dict[str, Any]:
    """The schema `name` as shipped in the package."""
    text = resources.files("plumbline").joinpath(f"schemas/{name}").read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def write_all(directory: Path = SCHEMA_DIR) -> list[Path]:
    """Regenerate every shipped schema from its model."""
    written: list[Path] = []
    for name in GENERATED:
        path = directory / name
        path.write_text(json.dumps(generated(name), indent=2, ensure_ascii=False) + "\n", "utf-8")
        written.append(path)
    return written


def main() -> None:
    for path in write_all():
        sys.stdout.write(f"wrote {path}\n")


if __name__ == "__main__":
    main()
