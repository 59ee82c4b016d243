"""The result of validating an architecture diagram: its format, nodes, edges and errors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

DiagramFormat = Literal["mermaid", "plantuml", "json"]
FORMATS: tuple[DiagramFormat, ...] = ("mermaid", "plantuml", "json")


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    label: str = ""


@dataclass(frozen=True)
class ValidationResult:
    """The verdict on one diagram, with what was parsed from it (for completeness checks)."""

    format: str
    valid: bool
    validator: str
    errors: tuple[str, ...] = ()
    nodes: dict[str, str] = field(default_factory=dict)  # id -> label
    edges: tuple[Edge, ...] = ()
    found: bool = True  # False when the response contains no diagram in this format

    @property
    def text(self) -> str:
        """Every label in the diagram, for matching expected elements against it."""
        parts = [*self.nodes, *self.nodes.values(), *(e.label for e in self.edges)]
        return "\n".join(p for p in parts if p)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "found": self.found,
            "valid": self.valid,
            "validator": self.validator,
            "errors": list(self.errors),
            "nodes": len(self.nodes),
            "edges": len(self.edges),
        }


def diagram_result(
    fmt: str, validator: str, errors: list[str], nodes: dict[str, str], edges: list[Edge]
) -> ValidationResult:
    if not errors:
        if len(nodes) < 2:
            errors.append(f"a diagram needs at least two nodes, found {len(nodes)}")
        if not edges:
            errors.append("a diagram needs at least one edge")
    return ValidationResult(fmt, not errors, validator, tuple(errors), dict(nodes), tuple(edges))
