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

import fcntl
import json
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import jsonschema

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
# Mermaid


class _ParseError(Exception):
    pass


# opening token -> closing token, longest openings first so "([" wins over "("
_SHAPES: tuple[tuple[str, str], ...] = (
    ("(((", ")))"),
    ("([", "])"),
    ("[[", "]]"),
    ("[(", ")]"),
    ("((", "))"),
    ("{{", "}}"),
    ("[/", "/]"),
    ("[\\", "\\]"),
    ("[/", "\\]"),
    ("[\\", "/]"),
    ("[", "]"),
    ("(", ")"),
    ("{", "}"),
    (">", "]"),
)
_BRACKETS = "[](){}"
_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_]*")
_LINK_TEXT = re.compile(
    r"(?P<open>--|==|-\.)\s+(?P<text>[^\s>|-][^|>]*?)\s*(?P<close>-{2,}[>ox]|-{3,}|={2,}[>=]|\.-+>|\.-+)"
)
_LINK = re.compile(r"(?:<|o|x)?(?:-{2,}|={2,}|-\.+-|~{3,})(?:>|[ox](?=\s))?")
_PIPE_TEXT = re.compile(r"\|(?P<text>[^|]*)\|")
_RESERVED = frozenset({"end", "subgraph", "graph", "flowchart", "style", "class", "classDef"})
_DIRECTIONS = frozenset({"TB", "TD", "BT", "RL", "LR"})


class _Flowchart:
    def __init__(self) -> None:
        self.nodes: dict[str, str] = {}
        self.declared: set[str] = set()
        self.referenced: dict[str, int] = {}
        self.subgraphs: set[str] = set()
        self.edges: list[Edge] = []
        self.errors: list[str] = []
        self.class_targets: list[tuple[int, str]] = []

    def node(self, stmt: str, pos: int, line: int) -> tuple[str, int]:
        match = _ID.match(stmt, pos)
        if not match:
            raise _ParseError(f"expected a node id at {stmt[pos : pos + 20]!r}")
        node_id = match.group(0)
        if node_id in _RESERVED:
            raise _ParseError(f"{node_id!r} is a reserved word and cannot be a node id")
        pos = match.end()
        for opening, closing in _SHAPES:
            if stmt.startswith(opening, pos):
                label, pos = self._label(stmt, pos + len(opening), opening, closing, node_id)
                previous = self.nodes.get(node_id)
                if previous and node_id in self.declared and previous != label:
                    # Mermaid keeps the last label; a conflicting redeclaration is usually a typo
                    self.errors.append(
                        f"line {line}: node {node_id!r} declared twice with different labels"
                    )
                self.nodes[node_id] = label
                self.declared.add(node_id)
                break
        else:
            self.nodes.setdefault(node_id, node_id)
            self.referenced.setdefault(node_id, line)
        if stmt.startswith(":::", pos):
            cls = _ID.match(stmt, pos + 3)
            if not cls:
                raise _ParseError(f"node {node_id!r}: ':::' needs a class name")
            pos = cls.end()
        return node_id, pos

    @staticmethod
    def _label(stmt: str, pos: int, opening: str, closing: str, node_id: str) -> tuple[str, int]:
        if pos < len(stmt) and stmt[pos] == '"':
            end = stmt.find('"', pos + 1)
            if end < 0:
                raise _ParseError(f"node {node_id!r}: unterminated quoted label")
            label = stmt[pos + 1 : end]
            pos = end + 1
            if not stmt.startswith(closing, pos):
                found = stmt[pos : pos + len(closing)] or "end of line"
                raise _ParseError(
                    f"node {node_id!r}: {opening!r} must be closed by {closing!r}, found {found!r}"
                )
            return label, pos + len(closing)
        end = pos
        while end < len(stmt) and not stmt.startswith(closing, end):
            char = stmt[end]
            if char in _BRACKETS:
                raise _ParseError(
                    f"node {node_id!r}: {opening!r} closed or interrupted by {char!r} "
                    f"(expected {closing!r}; quote labels that contain brackets)"
                )
            end += 1
        if end >= len(stmt):
            raise _ParseError(f"node {node_id!r}: {opening!r} is never closed by {closing!r}")
        label = stmt[pos:end].strip()
        if not label:
            raise _ParseError(f"node {node_id!r}: empty label")
        return label, end + len(closing)

    def group(self, stmt: str, pos: int, line: int) -> tuple[list[str], int]:
        ids = []
        while True:
            node_id, pos = self.node(stmt, pos, line)
            ids.append(node_id)
            pos = _skip_spaces(stmt, pos)
            if pos < len(stmt) and stmt[pos] == "&":
                pos = _skip_spaces(stmt, pos + 1)
                continue
            return ids, pos

    def statement(self, stmt: str, line: int) -> None:
        ids, pos = self.group(stmt, 0, line)
        while True:
            pos = _skip_spaces(stmt, pos)
            if pos >= len(stmt):
                return
            label = ""
            text_link = _LINK_TEXT.match(stmt, pos)
            link = _LINK.match(stmt, pos)
            if text_link:
                label, pos = text_link.group("text").strip(), text_link.end()
            elif link:
                pos = link.end()
                pipe = _PIPE_TEXT.match(stmt, _skip_spaces(stmt, pos))
                if pipe:
                    label, pos = pipe.group("text").strip(), pipe.end()
            else:
                raise _ParseError(
                    f"expected an arrow or end of statement at {stmt[pos : pos + 20]!r}"
                )
            pos = _skip_spaces(stmt, pos)
            if pos >= len(stmt):
                raise _ParseError("an arrow must point to a node")
            targets, pos = self.group(stmt, pos, line)
            self.edges.extend(Edge(a, b, label) for a in ids for b in targets)
            ids = targets


def _skip_spaces(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _strip_mermaid_preamble(lines: list[str]) -> tuple[list[tuple[int, str]], list[str]]:
    """Remove front matter, `%%{init}%%` directives and `%%` comments; return numbered lines."""
    errors: list[str] = []
    out: list[tuple[int, str]] = []
    index = 0
    while index < len(lines) and not lines[index].strip():
        index += 1
    if index < len(lines) and lines[index].strip() == "---":
        close = next((j for j in range(index + 1, len(lines)) if lines[j].strip() == "---"), None)
        if close is None:
            errors.append(f"line {index + 1}: front matter '---' is never closed")
            return out, errors
        index = close + 1
    directive_open: int | None = None
    for number, raw in enumerate(lines[index:], start=index + 1):
        stripped = raw.strip()
        if directive_open is not None:
            if "}%%" in stripped:
                directive_open = None
            continue
        if stripped.startswith("%%{"):
            if "}%%" not in stripped:
                directive_open = number
            continue
        if stripped.startswith("%%"):
            continue
        # Mermaid has no trailing comments: `A --> B %% note` is a syntax error, so keep it
        out.append((number, stripped))
    if directive_open is not None:
        errors.append(f"line {directive_open}: '%%{{' directive is never closed by '}}%%'")
    return out, errors


def validate_mermaid(source: str, *, use_mermaid: bool = True) -> ValidationResult:
    """Validate Mermaid source (flowchart/graph, sequenceDiagram or architecture-beta).

    When the real Mermaid parser is installed (`install_mermaid_parser()`), `mermaid.parse`
    decides the syntax and our structural checks apply on top (`mermaid+plumbline`);
    otherwise our parser decides alone (`plumbline-mermaid`).
    """
    ours = _validate_mermaid_ours(source)
    directory = mermaid_parser() if use_mermaid else None
    if directory is None:
        return ours
    syntax = _mermaid_parse(directory, source)
    if syntax is None:
        return ours
    structural = [e for e in ours.errors if any(m in e for m in _STRUCTURAL_MARKERS)]
    errors = syntax + structural
    return ValidationResult(
        "mermaid", not errors, "mermaid+plumbline", tuple(errors), ours.nodes, ours.edges
    )


# errors about the diagram's structure, which the real parser does not check
_STRUCTURAL_MARKERS = (
    "unknown node",
    "undeclared participant",
    "unknown service",
    "refers to unknown",
    "declared twice",
    "at least",
    "unsupported or unknown diagram type",
)

MERMAID_PACKAGES = ("mermaid@11", "jsdom@25")
_MERMAID_SCRIPT = """
import { JSDOM } from "jsdom";
const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import("mermaid");
let input = "";
for await (const chunk of process.stdin) input += chunk;
const verdicts = [];
for (const source of JSON.parse(input)) {
  try {
    const result = await mermaid.parse(source);
    verdicts.push({ valid: true, type: result.diagramType });
  } catch (error) {
    verdicts.push({ valid: false, error: String(error?.message ?? error) });
  }
}
console.log(JSON.stringify(verdicts));
"""


def mermaid_dir() -> Path:
    """Where the Mermaid parser's npm packages live: `$PLUMBLINE_MERMAID_DIR`, else
    `$XDG_CACHE_HOME/plumbline/mermaid` (default `~/.cache/plumbline/mermaid`)."""
    configured = os.environ.get("PLUMBLINE_MERMAID_DIR")
    if configured:
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "plumbline" / "mermaid"


@lru_cache(maxsize=1)
def mermaid_parser() -> Path | None:
    """The directory holding an installed Mermaid parser (with Node.js on PATH), or None."""
    directory = mermaid_dir()
    modules = directory / "node_modules"
    if shutil.which("node") and (modules / "mermaid").is_dir() and (modules / "jsdom").is_dir():
        return directory
    return None


def install_mermaid_parser(directory: Path | None = None) -> Path:
    """Install Mermaid and jsdom from npm into `directory` (default `mermaid_dir()`)."""
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed; install Node.js and npm first")
    target = directory or mermaid_dir()
    target.mkdir(parents=True, exist_ok=True)
    # several processes (pytest workers) may install at once: one installs, the others wait
    with open(target / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        modules = target / "node_modules"
        if not ((modules / "mermaid").is_dir() and (modules / "jsdom").is_dir()):
            command = [npm, "install", "--prefix", str(target), "--no-audit", "--no-fund"]
            completed = subprocess.run(
                [*command, *MERMAID_PACKAGES],
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            if completed.returncode != 0:
                raise RuntimeError(f"npm install failed: {completed.stderr.strip()[-2000:]}")
    mermaid_parser.cache_clear()
    return target


def mermaid_parse_many(directory: Path, sources: Sequence[str]) -> list[list[str]] | None:
    """`mermaid.parse` errors for each source ([] when accepted) in one Node.js process, or
    None when the parser could not run."""
    node = shutil.which("node")
    if node is None:
        return None
    try:
        completed = subprocess.run(
            [node, "--input-type=module", "-e", _MERMAID_SCRIPT],
            cwd=directory,
            input=json.dumps(list(sources)),
            capture_output=True,
            text=True,
            timeout=60 + 10 * len(sources),
            check=False,
        )
        verdicts = json.loads(completed.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError, IndexError):
        return None
    if not isinstance(verdicts, list) or len(verdicts) != len(sources):
        return None
    return [
        []
        if verdict.get("valid")
        else [f"mermaid: {' '.join(str(verdict.get('error', 'syntax error')).split())}"]
        for verdict in verdicts
    ]


def _mermaid_parse(directory: Path, source: str) -> list[str] | None:
    verdicts = mermaid_parse_many(directory, [source])
    return None if verdicts is None else verdicts[0]


def _validate_mermaid_ours(source: str) -> ValidationResult:
    numbered, errors = _strip_mermaid_preamble(source.replace("\r\n", "\n").split("\n"))
    numbered = [(n, s) for n, s in numbered if s]
    if errors:
        return ValidationResult("mermaid", False, "plumbline-mermaid", tuple(errors))
    if not numbered:
        return ValidationResult("mermaid", False, "plumbline-mermaid", ("the diagram is empty",))
    number, header = numbered[0]
    if ";" in header:
        # `flowchart LR; A --> B` puts the first statements on the header line
        header, _, rest = header.partition(";")
        numbered = [(number, header.strip()), (number, rest.strip()), *numbered[1:]]
    kind = header.split()[0].rstrip(";")
    if kind in ("flowchart", "graph"):
        return _validate_flowchart(header, numbered[1:])
    if kind == "sequenceDiagram":
        return _validate_sequence(numbered[1:])
    if kind == "architecture-beta":
        return _validate_architecture_beta(numbered[1:])
    return ValidationResult(
        "mermaid",
        False,
        "plumbline-mermaid",
        (
            f"line {number}: unsupported or unknown diagram type {kind!r}; "
            "use flowchart, graph, sequenceDiagram or architecture-beta",
        ),
    )


def _finish(
    fmt: str, validator: str, errors: list[str], nodes: dict[str, str], edges: list[Edge]
) -> ValidationResult:
    if not errors:
        if len(nodes) < 2:
            errors.append(f"a diagram needs at least two nodes, found {len(nodes)}")
        if not edges:
            errors.append("a diagram needs at least one edge")
    return ValidationResult(fmt, not errors, validator, tuple(errors), dict(nodes), tuple(edges))


def _validate_flowchart(header: str, body: list[tuple[int, str]]) -> ValidationResult:
    parts = header.rstrip(";").split()
    chart = _Flowchart()
    if len(parts) > 2 or (len(parts) == 2 and parts[1] not in _DIRECTIONS):
        chart.errors.append(f"line 1: bad header {header!r}; expected e.g. 'flowchart LR'")
    open_subgraphs: list[tuple[int, str]] = []
    for number, line in body:
        for stmt in (s.strip() for s in _split_statements(line)):
            if not stmt:
                continue
            try:
                _flowchart_statement(chart, stmt, number, open_subgraphs)
            except _ParseError as error:
                chart.errors.append(f"line {number}: {error}")
    for number, name in open_subgraphs:
        chart.errors.append(f"line {number}: subgraph {name!r} is never closed with 'end'")
    labelled = bool(chart.declared)
    for node_id, number in chart.referenced.items():
        if labelled and node_id not in chart.declared and node_id not in chart.subgraphs:
            known = ", ".join(sorted(chart.declared)[:8])
            chart.errors.append(
                f"line {number}: edge references unknown node {node_id!r} (declared: {known})"
            )
    for number, target in chart.class_targets:
        if target not in chart.nodes and target not in chart.subgraphs:
            chart.errors.append(f"line {number}: style/class refers to unknown node {target!r}")
    nodes = {k: v for k, v in chart.nodes.items() if k not in chart.subgraphs}
    return _finish("mermaid", "plumbline-mermaid", chart.errors, nodes, chart.edges)


def _split_statements(line: str) -> list[str]:
    """Split on `;` outside quotes and brackets."""
    out, depth, quoted, start = [], 0, False, 0
    for index, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "[({":
            depth += 1
        elif not quoted and char in "])}":
            depth -= 1
        elif char == ";" and not quoted and depth <= 0:
            out.append(line[start:index])
            start = index + 1
    out.append(line[start:])
    return out


def _flowchart_statement(
    chart: _Flowchart, stmt: str, number: int, open_subgraphs: list[tuple[int, str]]
) -> None:
    word = stmt.split()[0]
    if word == "subgraph":
        rest = stmt[len("subgraph") :].strip()
        if not rest:
            raise _ParseError("subgraph needs an id or a title")
        match = _ID.match(rest)
        name = match.group(0) if match and not rest.startswith('"') else rest.strip('"')
        if match and not rest.startswith('"'):
            tail = rest[match.end() :].strip()
            if tail and not (
                (tail.startswith("[") and tail.endswith("]"))
                or (tail.startswith('"') and tail.endswith('"'))
            ):
                raise _ParseError(f"subgraph title {tail!r} must be written as [title]")
            chart.subgraphs.add(name)
        open_subgraphs.append((number, name))
        return
    if word == "end" and stmt == "end":
        if not open_subgraphs:
            raise _ParseError("'end' without an open subgraph")
        open_subgraphs.pop()
        return
    if word == "direction":
        parts = stmt.split()
        if len(parts) != 2 or parts[1] not in _DIRECTIONS:
            raise _ParseError(f"bad direction {stmt!r}")
        return
    if word in ("classDef", "linkStyle"):
        if len(stmt.split()) < 3:
            raise _ParseError(f"{word} needs a name and styles")
        return
    if word in ("style", "click"):
        parts = stmt.split()
        if len(parts) < 3:
            raise _ParseError(f"{word} needs a node id and arguments")
        chart.class_targets.append((number, parts[1]))
        return
    if word == "class":
        parts = stmt.split()
        if len(parts) != 3:
            raise _ParseError("class needs node ids and a class name: 'class a,b name'")
        chart.class_targets.extend((number, target) for target in parts[1].split(","))
        return
    chart.statement(stmt, number)


_SEQ_PARTICIPANT = re.compile(r"(participant|actor)\s+(?P<id>[^\s]+)(?:\s+as\s+(?P<label>.+))?$")
_SEQ_MESSAGE = re.compile(
    r"(?P<a>[^\s\-+>]+)\s*(?P<arrow>-->>|->>|-->|->|--x|-x|--\)|-\))\s*[+-]?\s*(?P<b>[^\s:]+)\s*:\s*(?P<text>.*)$"
)
_SEQ_BLOCKS = frozenset({"loop", "alt", "opt", "par", "critical", "break", "rect", "box"})
_SEQ_CONTINUE = frozenset({"else", "and", "option"})


def _validate_sequence(body: list[tuple[int, str]]) -> ValidationResult:
    nodes: dict[str, str] = {}
    declared: set[str] = set()
    referenced: list[tuple[int, str]] = []
    edges: list[Edge] = []
    errors: list[str] = []
    blocks: list[tuple[int, str]] = []
    for number, line in body:
        word = line.split()[0]
        if match := _SEQ_PARTICIPANT.match(line):
            node_id = match.group("id")
            nodes[node_id] = (match.group("label") or node_id).strip()
            declared.add(node_id)
        elif word in _SEQ_BLOCKS:
            blocks.append((number, word))
        elif word in _SEQ_CONTINUE:
            if not blocks:
                errors.append(f"line {number}: {word!r} outside a block")
        elif line == "end":
            if not blocks:
                errors.append(f"line {number}: 'end' without an open block")
            else:
                blocks.pop()
        elif word in ("autonumber", "title") or word.lower() == "note":
            continue
        elif word in ("activate", "deactivate"):
            parts = line.split()
            if len(parts) != 2:
                errors.append(f"line {number}: {word} needs one participant")
            else:
                referenced.append((number, parts[1]))
        elif match := _SEQ_MESSAGE.match(line):
            a, b = match.group("a"), match.group("b")
            for node_id in (a, b):
                nodes.setdefault(node_id, node_id)
                referenced.append((number, node_id))
            edges.append(Edge(a, b, match.group("text").strip()))
        else:
            errors.append(f"line {number}: cannot parse {line!r}")
    for number, word in blocks:
        errors.append(f"line {number}: {word!r} block is never closed with 'end'")
    if declared:
        for number, node_id in referenced:
            if node_id not in declared:
                errors.append(
                    f"line {number}: message references undeclared participant {node_id!r}"
                )
    return _finish("mermaid", "plumbline-mermaid", errors, nodes, edges)


_ARCH_DECL = re.compile(
    r"(?P<kind>group|service|junction)\s+(?P<id>[A-Za-z_][\w-]*)"
    r"(?:\((?P<icon>[^()\[\]]+)\))?(?:\[(?P<title>[^\[\]]*)\])?(?:\s+in\s+(?P<parent>[\w-]+))?$"
)
_ARCH_EDGE = re.compile(
    r"(?P<a>[A-Za-z_][\w-]*)(?:\{group\})?:(?P<pa>[LRTB])\s*(?P<arrow><?--?>?)\s*"
    r"(?P<pb>[LRTB]):(?P<b>[A-Za-z_][\w-]*)(?:\{group\})?$"
)


def _validate_architecture_beta(body: list[tuple[int, str]]) -> ValidationResult:
    nodes: dict[str, str] = {}
    groups: set[str] = set()
    edges: list[Edge] = []
    errors: list[str] = []
    pending: list[tuple[int, str]] = []
    for number, line in body:
        if match := _ARCH_DECL.match(line):
            kind, node_id = match.group("kind"), match.group("id")
            if kind == "group":
                groups.add(node_id)
            else:
                nodes[node_id] = match.group("title") or node_id
            if match.group("parent"):
                pending.append((number, match.group("parent")))
        elif match := _ARCH_EDGE.match(line):
            edges.append(Edge(match.group("a"), match.group("b")))
            pending.extend([(number, match.group("a")), (number, match.group("b"))])
        else:
            errors.append(f"line {number}: cannot parse {line!r}")
    for number, ref in pending:
        if ref not in nodes and ref not in groups:
            errors.append(f"line {number}: reference to unknown service or group {ref!r}")
    return _finish("mermaid", "plumbline-mermaid", errors, nodes, edges)


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
    return _finish("plantuml", validator, errors, nodes, edges)


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
    return _finish("json", validator, errors, nodes, edges)
