"""Validators for the structured outputs of architecture creation tasks: Mermaid, PlantUML, JSON.

Stricter than the reference implementation (which accepted `A[label)` and rejected a leading
`%%{init}%%` line): bracket types must match, init directives and comments are allowed, node ids
resolve, every edge references known nodes, and the JSON format is checked against the schema
shipped in `plumbline/schemas/architecture_json.schema.json` plus referential integrity.

Which validator decided is reported in `ValidationResult.validator`:

- Mermaid: `mermaid.parse` from the npm `mermaid` package (run by Node.js with a jsdom window;
  `install_mermaid_parser()` installs it) decides the syntax when installed, and our structural
  checks apply on top: `mermaid+plumbline`. Without it, `plumbline-mermaid` (our parser:
  flowchart/graph, sequenceDiagram, architecture-beta) decides alone. The npm
  `@mermaid-js/parser` alone does not cover flowcharts, so it is not used.
- PlantUML: `plantuml -syntax` (Debian package `plantuml`) decides the syntax when the command
  exists, and our structural checks (declared elements, resolvable relationships) apply on top:
  `plantuml+plumbline`. Without it, `plumbline-plantuml` decides alone.
- JSON: `jsonschema+plumbline`.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib.resources import files
from typing import Any

import jsonschema

from plumbline.suites.sa_bench.scorers.diagram import (
    FORMATS,
    DiagramFormat,
    Edge,
    ValidationResult,
    diagram_result,
)
from plumbline.suites.sa_bench.scorers.mermaid import validate_mermaid
from plumbline.suites.sa_bench.scorers.plantuml import validate_plantuml

# ---------------------------------------------------------------------------------------------
# extraction

_FENCE = re.compile(
    r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[\w+-]*)[^\n]*\n"
    r"(?P<body>.*?)(?:^[ \t]*(?P=fence)[ \t]*$|\Z)",
    re.MULTILINE | re.DOTALL,
)

_FENCE_TAGS: dict[str, tuple[str, ...]] = {
    "mermaid": ("mermaid", "mmd"),
    "plantuml": ("plantuml", "puml", "uml"),
    "json": ("json", "jsonc"),
}


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    return [
        (m.group("tag").lower(), m.group("body"))
        for m in _FENCE.finditer(text.replace("\r\n", "\n"))
    ]


def extract_diagram(text: str, fmt: DiagramFormat) -> str | None:
    """The diagram source in `fmt` from a response, or None when there is none.

    A fenced block tagged with the format wins; then an untagged fence whose content looks like
    the format; then the raw text (`flowchart`/`graph` line, `@startuml` … `@enduml`, or a
    JSON object with an `architecture` key).
    """
    blocks = _fenced_blocks(text)
    for tag, body in blocks:
        if tag in _FENCE_TAGS[fmt]:
            return body
    for tag, body in blocks:
        if tag == "" and _looks_like(body, fmt):
            return body
    normalised = text.replace("\r\n", "\n")
    if fmt == "plantuml":
        match = re.search(r"^[ \t]*@startuml\b.*?^[ \t]*@enduml[ \t]*$", normalised, re.M | re.S)
        return match.group(0) if match else None
    if fmt == "mermaid":
        match = re.search(
            r"^(?:[ \t]*%%.*\n)*[ \t]*(?:flowchart|graph|sequenceDiagram|architecture-beta)\b.*",
            normalised,
            re.M | re.S,
        )
        return match.group(0) if match else None
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", normalised):
        try:
            value, _ = decoder.raw_decode(normalised, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and "architecture" in value:
            return json.dumps(value)
    return None


def _looks_like(body: str, fmt: DiagramFormat) -> bool:
    stripped = body.lstrip()
    if fmt == "plantuml":
        return stripped.startswith("@startuml")
    if fmt == "json":
        return stripped.startswith("{") and '"architecture"' in stripped
    first = next(
        (
            ln.strip()
            for ln in stripped.splitlines()
            if ln.strip() and not ln.strip().startswith("%%")
        ),
        "",
    )
    return bool(re.match(r"(flowchart|graph|sequenceDiagram|architecture-beta)\b", first))


def validate_diagram(text: str, fmt: DiagramFormat) -> ValidationResult:
    """Extract the diagram in `fmt` from a response and validate it."""
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {', '.join(FORMATS)}, got {fmt!r}")
    source = extract_diagram(text, fmt)
    if source is None:
        return ValidationResult(
            fmt,
            False,
            "plumbline-extract",
            (f"no {fmt} diagram found in the response",),
            found=False,
        )
    if fmt == "mermaid":
        return validate_mermaid(source)
    if fmt == "plantuml":
        return validate_plantuml(source)
    return validate_json_architecture(source)


# ---------------------------------------------------------------------------------------------
# JSON


@lru_cache(maxsize=1)
def architecture_schema() -> dict[str, Any]:
    """The JSON Schema of the architecture JSON output format."""
    text = files("plumbline.schemas").joinpath("architecture_json.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def validate_json_architecture(source: str | dict[str, Any]) -> ValidationResult:
    """Validate the JSON architecture format: the schema, unique ids, resolvable references."""
    validator = "jsonschema+plumbline"
    if isinstance(source, str):
        try:
            document = json.loads(source)
        except json.JSONDecodeError as error:
            return ValidationResult(
                "json", False, validator, (f"line {error.lineno}: invalid JSON: {error.msg}",)
            )
    else:
        document = source
    checker = jsonschema.Draft202012Validator(architecture_schema())
    problems = sorted(checker.iter_errors(document), key=lambda e: list(e.absolute_path))
    errors = [
        f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in problems
    ]
    if errors:
        return ValidationResult("json", False, validator, tuple(errors))
    architecture = document["architecture"]
    nodes: dict[str, str] = {}
    for index, component in enumerate(architecture["components"]):
        if component["id"] in nodes:
            errors.append(f"architecture/components/{index}/id: duplicate id {component['id']!r}")
        label = component.get("name") or component.get("service") or component["id"]
        nodes[component["id"]] = f"{label} ({component['type']})"
    groups = {group["id"] for group in architecture.get("groups", [])}
    for index, component in enumerate(architecture["components"]):
        if "group" in component and component["group"] not in groups:
            errors.append(
                f"architecture/components/{index}/group: unknown group {component['group']!r}"
            )
    edges = []
    for index, relation in enumerate(architecture["relationships"]):
        for end in ("from", "to"):
            if relation[end] not in nodes:
                errors.append(
                    f"architecture/relationships/{index}/{end}: unknown component id "
                    f"{relation[end]!r}"
                )
        edges.append(
            Edge(
                relation["from"], relation["to"], relation.get("label") or relation.get("type", "")
            )
        )
    for index, group in enumerate(architecture.get("groups", [])):
        for member in group.get("members", []):
            if member not in nodes:
                errors.append(f"architecture/groups/{index}/members: unknown component {member!r}")
    return diagram_result("json", validator, errors, nodes, edges)
