"""The PlantUML validator: `plantuml -syntax` when installed, our structural checks beneath."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from plumbline.suites.sa_bench.scorers.diagram import Edge, ValidationResult, diagram_result

# ---------------------------------------------------------------------------------------------
# PlantUML

_PUML_KEYWORDS = (
    "actor|agent|artifact|boundary|card|circle|cloud|collections|component|control|database|"
    "entity|file|folder|frame|hexagon|interface|label|node|package|participant|person|queue|"
    "rectangle|stack|storage|usecase|process|system"
)
_PUML_DECL = re.compile(
    rf"(?P<kw>{_PUML_KEYWORDS})\s+"
    r"(?:(?P<qlabel>\"[^\"]+\")(?:\s+as\s+(?P<qid>[\w.]+))?|(?P<id>[\w.]+)(?:\s+as\s+(?P<alabel>\"[^\"]+\"|[\w.]+))?|\[(?P<blabel>[^\]]+)\](?:\s+as\s+(?P<bid>[\w.]+))?)"
    r"(?:\s*<<[^<>]+>>)*(?:\s*#[\w#]+)?\s*(?P<brace>\{)?\s*(?:\[(?P<desc>.*))?$",
    re.IGNORECASE,
)
_PUML_SHORT_COMPONENT = re.compile(r"\[(?P<label>[^\]]+)\](?:\s+as\s+(?P<id>[\w.]+))?")
_PUML_ENDPOINT = r"(?:\[[^\]]+\]|\"[^\"]+\"|\(\)\s*\"?[^\"]*\"?|[\w.]+)"
_PUML_REL = re.compile(
    rf"(?P<a>{_PUML_ENDPOINT})\s*(?:\"[^\"]*\"\s*)?"
    r"(?P<arrow><?(?:[-.]+(?:\[[^\]]*\])?(?:(?:up|down|left|right|u|d|l|r)?[-.]+)?)[>*o]?|<\|--|--\|>)"
    rf"\s*(?:\"[^\"]*\"\s*)?(?P<b>{_PUML_ENDPOINT})\s*(?::\s*(?P<label>.*))?$",
)
_PUML_MACRO = re.compile(r"(?P<name>[A-Za-z_]\w*)\((?P<args>.*)\)\s*(?P<brace>\{)?$")
_PUML_REL_MACROS = re.compile(r"^(?:Bi)?Rel(?:_\w+)?$|^Lay_\w+$")
_PUML_IGNORED = re.compile(
    r"^(?:!|skinparam\b|title\b|header\b|footer\b|caption\b|hide\b|show\b|scale\b|"
    r"left to right direction|top to bottom direction|autonumber\b|newpage\b|"
    r"SHOW_\w+|LAYOUT_\w+|AWSPuml\b|allowmixing\b)",
    re.IGNORECASE,
)


def _endpoint_id(token: str, nodes: dict[str, str]) -> str:
    token = token.strip()
    if token.startswith("[") and token.endswith("]"):
        label = token[1:-1].strip()
        for node_id, node_label in nodes.items():
            if node_label == label:
                return node_id
        nodes[label] = label  # `[Name]` is itself a component declaration
        return label
    if token.startswith('"') and token.endswith('"'):
        label = token[1:-1]
        for node_id, node_label in nodes.items():
            if node_label == label:
                return node_id
        return label
    return token


@dataclass
class _PlantUmlParse:
    """What parsing a PlantUML body has found so far, and which open constructs it is inside."""

    errors: list[str] = field(default_factory=list)
    nodes: dict[str, str] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)
    braces: list[int] = field(default_factory=list)  # line numbers of the open '{'
    pending: list[tuple[int, str]] = field(default_factory=list)  # checked once all are declared
    block_end: str | None = None  # closes the note, legend or description being skipped
    in_block_comment: bool = False


def _plantuml_block(lines: Sequence[str], errors: list[str]) -> tuple[int, int] | None:
    """The indexes of the one '@startuml' and '@enduml' lines, reporting any text outside them."""
    starts = [i for i, ln in enumerate(lines) if re.match(r"\s*@startuml\b", ln)]
    ends = [i for i, ln in enumerate(lines) if re.match(r"\s*@enduml\s*$", ln)]
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        errors.append("the diagram must be one '@startuml' … '@enduml' block")
        return None
    for number in [*range(starts[0]), *range(ends[0] + 1, len(lines))]:
        if lines[number].strip():
            errors.append(f"line {number + 1}: text outside '@startuml' … '@enduml'")
    return starts[0], ends[0]


def _skip_plantuml_line(state: _PlantUmlParse, line: str) -> bool:
    """Whether the line carries no elements (comments, notes, styling), tracking open blocks."""
    if state.in_block_comment:
        state.in_block_comment = "'/" not in line
        return True
    if line.startswith("/'"):
        state.in_block_comment = "'/" not in line[2:]
        return True
    if not line or line.startswith("'"):
        return True
    if state.block_end is not None:
        if re.match(state.block_end, line, re.IGNORECASE):
            state.block_end = None
        return True
    if re.match(r"(note|legend)\b", line, re.IGNORECASE):
        if not (re.match(r"note\b.*:", line, re.IGNORECASE) or " as " in line):
            state.block_end = r"end\s*note|endlegend|end\s*legend"
        return True
    if _PUML_IGNORED.match(line):
        if line.lower().startswith("skinparam") and line.endswith("{"):
            state.block_end = r"\}"
        return True
    return False


def _plantuml_declaration(state: _PlantUmlParse, match: re.Match[str], lineno: int) -> None:
    """Record an element declared with a keyword (`component "Web" as web {`)."""
    node_id = match.group("qid") or match.group("id") or match.group("bid")
    label = match.group("qlabel") or match.group("alabel") or match.group("blabel")
    label = (label or node_id or "").strip('"')
    node_id = node_id or label
    if match.group("id") and match.group("alabel") and match.group("alabel").startswith('"'):
        label = match.group("alabel").strip('"')
    state.nodes[node_id] = label
    if match.group("brace"):
        state.braces.append(lineno)
    if match.group("desc") is not None and "]" not in match.group("desc"):
        state.block_end = r".*\]\s*$"


def _plantuml_macro(state: _PlantUmlParse, match: re.Match[str], lineno: int) -> None:
    """Record a C4-style macro call: a relationship (`Rel(a, b, "uses")`) or an element."""
    args = [a.strip() for a in _split_args(match.group("args"))]
    if _PUML_REL_MACROS.match(match.group("name")):
        if len(args) < 2:
            state.errors.append(f"line {lineno}: {match.group('name')} needs two element ids")
        else:
            state.edges.append(Edge(args[0], args[1], args[2].strip('"') if len(args) > 2 else ""))
            state.pending.extend([(lineno, args[0]), (lineno, args[1])])
    elif args and re.fullmatch(r"[A-Za-z_][\w.]*", args[0]):
        label = args[1].strip('"') if len(args) > 1 else args[0]
        state.nodes[args[0]] = f"{label} ({match.group('name')})"
    else:
        state.errors.append(f"line {lineno}: {match.group('name')}(...) needs an element id first")
    if match.group("brace"):
        state.braces.append(lineno)


def _plantuml_line(state: _PlantUmlParse, line: str, lineno: int) -> None:
    """Parse one stripped body line: a closing brace, declaration, macro or relationship."""
    if _skip_plantuml_line(state, line):
        return
    if line == "}":
        if not state.braces:
            state.errors.append(f"line {lineno}: '}}' without an open '{{'")
        else:
            state.braces.pop()
    elif match := _PUML_DECL.match(line):
        _plantuml_declaration(state, match, lineno)
    elif match := _PUML_MACRO.match(line):
        _plantuml_macro(state, match, lineno)
    elif match := _PUML_REL.match(line):
        a = _endpoint_id(match.group("a"), state.nodes)
        b = _endpoint_id(match.group("b"), state.nodes)
        state.edges.append(Edge(a, b, (match.group("label") or "").strip()))
        state.pending.extend([(lineno, a), (lineno, b)])
    elif match := _PUML_SHORT_COMPONENT.fullmatch(line):
        label = match.group("label").strip()
        state.nodes[match.group("id") or label] = label
    else:
        state.errors.append(f"line {lineno}: cannot parse {line!r}")


def _plantuml_unclosed(state: _PlantUmlParse) -> None:
    """Report blocks and braces left open and relationships to undeclared elements."""
    if state.block_end is not None:
        state.errors.append("a note, legend or description block is never closed")
    for lineno in state.braces:
        state.errors.append(f"line {lineno}: '{{' is never closed")
    for lineno, ref in state.pending:
        if ref not in state.nodes:
            known = ", ".join(sorted(state.nodes)[:8])
            state.errors.append(
                f"line {lineno}: relationship references unknown element {ref!r} ({known})"
            )


def _plumbline_plantuml(source: str) -> tuple[list[str], dict[str, str], list[Edge]]:
    """Our PlantUML parser: its errors, the elements (id -> label) and the relationships."""
    lines = source.replace("\r\n", "\n").split("\n")
    state = _PlantUmlParse()
    block = _plantuml_block(lines, state.errors)
    if block is None:
        return state.errors, state.nodes, state.edges
    start, end = block
    for number in range(start + 1, end):
        _plantuml_line(state, lines[number].strip(), number + 1)
    _plantuml_unclosed(state)
    return state.errors, state.nodes, state.edges


def _split_args(args: str) -> list[str]:
    out, quoted, start = [], False, 0
    for index, char in enumerate(args):
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            out.append(args[start:index])
            start = index + 1
    out.append(args[start:])
    return out


@lru_cache(maxsize=1)
def plantuml_command() -> str | None:
    """Path of the `plantuml` command (Debian package `plantuml`), or None when absent."""
    return shutil.which("plantuml")


def _plantuml_syntax(command: str, source: str) -> list[str] | None:
    """Errors from `plantuml -syntax`, [] when it accepts, None when it could not run."""
    try:
        completed = subprocess.run(
            [command, "-syntax"],
            input=source,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [ln.strip() for ln in completed.stdout.splitlines() if ln.strip()]
    if not lines:
        return None
    if lines[0] == "ERROR":
        where = f"line {int(lines[1]) + 1}: " if len(lines) > 1 and lines[1].isdigit() else ""
        detail = " ".join(lines[2:]) or "syntax error"
        return [f"{where}plantuml: {detail}"]
    return []


def validate_plantuml(source: str, *, use_plantuml: bool = True) -> ValidationResult:
    """Validate PlantUML source; `plantuml -syntax` decides the syntax when it is installed."""
    errors, nodes, edges = _plumbline_plantuml(source)
    command = plantuml_command() if use_plantuml else None
    validator = "plumbline-plantuml"
    if command is not None:
        syntax = _plantuml_syntax(command, source)
        if syntax is not None:
            validator = "plantuml+plumbline"
            # PlantUML decides what is syntax; ours still decides structure (references, counts)
            structural = [e for e in errors if "cannot parse" not in e]
            errors = syntax + structural
    return diagram_result("plantuml", validator, errors, nodes, edges)
