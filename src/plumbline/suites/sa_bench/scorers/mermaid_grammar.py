"""plumbline's own Mermaid parser: flowchart/graph, sequenceDiagram and architecture-beta."""

from __future__ import annotations

import re

from plumbline.suites.sa_bench.scorers.diagram import Edge, ValidationResult, diagram_result

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


def validate_mermaid_ours(source: str) -> ValidationResult:
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
    return diagram_result("mermaid", "plumbline-mermaid", chart.errors, nodes, chart.edges)


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
    return diagram_result("mermaid", "plumbline-mermaid", errors, nodes, edges)


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
    return diagram_result("mermaid", "plumbline-mermaid", errors, nodes, edges)
