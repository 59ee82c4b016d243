"""Recover a CDK app (one or more files and an entry point) from a model's response.

What a response may look like, all handled:

- fenced blocks tagged ``python``, ``py``, ``python3``, ``py3`` or untagged, with backticks or
  tildes, any fence length, trailing spaces or attributes after the tag, indented inside list
  items, CRLF line endings, and an unclosed final fence;
- prose around the blocks, ``ANSWER:`` lines, or no fences at all;
- several files: each named by its first-line comment (``# stacks/storage.py``,
  ``# File: app.py``), by the fence's info string (````` ```python app.py `````,
  ``title="app.py"``), or by the line just before the block (``**app.py**``, ``### app.py``,
  ```stacks/storage.py`:``). Unnamed helper blocks are named after the module the entry
  point imports them from, or prepended to the entry point when it uses them unimported;
- a ``cdk.json`` block, whose ``app`` command then decides the entry point.

The entry point is the file that creates the ``App`` and calls ``synth()`` (``app.py``
first when several do). The reference implementation took the largest block of the first
matching fence pattern: it lost ``app.synth()`` on multi-file answers and failed on
``python3`` tags, trailing spaces, CRLF and unclosed fences.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3", "python2", "ipython", "pycon"})
JSON_TAGS = frozenset({"json", "jsonc"})

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$")
_FILE_NAME = r"(?:[\w.-]+/)*[\w.-]+\.(?:py|json)"
_FIRST_LINE_NAME = re.compile(
    rf"^\s*(?:#|//)\s*(?:(?:file(?:name)?|path)\s*[:=]\s*)?`?(?P<name>{_FILE_NAME})`?\s*:?\s*$",
    re.IGNORECASE,
)
_INFO_NAME = re.compile(
    rf"(?:title|file(?:name)?|name)\s*=\s*[\"']?(?P<name>{_FILE_NAME})|"
    rf"^[\w+-]*[:\s]+(?P<plain>{_FILE_NAME})\b",
    re.IGNORECASE,
)
_HEADING_NAME = re.compile(rf"(?<![\w/.-])(?P<name>{_FILE_NAME})(?![\w/-])")
_ANSWER_LINE = re.compile(r"^\s*(?:\*\*)?answer(?:\*\*)?\s*:\s*(?:\*\*)?", re.IGNORECASE)
_CREATES_APP = re.compile(r"\bApp\s*\(")
_CALLS_SYNTH = re.compile(r"\.synth\s*\(")
_CODE_START = re.compile(r"^(?:#!|import |from \w|class \w|def \w|@\w)")
_CDK_MODULES = ("aws_cdk", "constructs")


@dataclass(frozen=True)
class Block:
    """A fenced block of the response."""

    tag: str
    info: str
    text: str
    heading: str
    closed: bool
    start_line: int


@dataclass
class ExtractedApp:
    """The app recovered from a response.

    Attributes:
        files: relative path -> content, ready to write into a work directory.
        entry: the file ``python ENTRY`` runs (None when extraction failed).
        reason: why extraction failed (None on success).
        notes: decisions taken on the way (which block was the entry, what was dropped).
        blocks: number of fenced blocks found.
    """

    files: dict[str, str] = field(default_factory=dict)
    entry: str | None = None
    reason: str | None = None
    notes: list[str] = field(default_factory=list)
    blocks: int = 0

    @property
    def ok(self) -> bool:
        return self.entry is not None and self.reason is None


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufeff", "")


def _dedent(lines: list[str], indent: str) -> str:
    width = len(indent)
    out = [line[width:] if line[:width].strip() == "" else line.lstrip() for line in lines]
    return "\n".join(out).strip("\n") + "\n"


def find_blocks(text: str) -> list[Block]:
    """Every fenced block, in order; an unclosed final fence runs to the end of the text."""
    lines = _normalise(text).split("\n")
    blocks: list[Block] = []
    index = 0
    last_prose = ""
    while index < len(lines):
        match = _FENCE.match(lines[index])
        if match is None:
            if lines[index].strip():
                last_prose = lines[index].strip()
            index += 1
            continue
        fence = match.group("fence")
        info = match.group("info").strip()
        tag = info.split()[0].lower() if info else ""
        tag = tag.split(":")[0].split("{")[0]
        body: list[str] = []
        closed = False
        cursor = index + 1
        while cursor < len(lines):
            candidate = lines[cursor].strip()
            if candidate.startswith(fence[0] * len(fence)) and not candidate.strip(fence[0]):
                closed = True
                break
            if fence[0] == "`" and candidate.endswith(fence):
                # "app.synth()```": the closing fence glued to the last line of code
                body.append(lines[cursor].rstrip()[: -len(fence)].rstrip("`"))
                closed = True
                break
            body.append(lines[cursor])
            cursor += 1
        blocks.append(
            Block(
                tag=tag,
                info=info,
                text=_dedent(body, match.group("indent")),
                heading=last_prose,
                closed=closed,
                start_line=index + 1,
            )
        )
        last_prose = ""
        index = cursor + 1
    return blocks


def _safe_name(name: str) -> str | None:
    path = PurePosixPath(name.strip().lstrip("./") if name.startswith("./") else name.strip())
    if path.is_absolute() or ".." in path.parts or not path.parts:
        return None
    return path.as_posix()


def _name_of(block: Block) -> tuple[str | None, bool]:
    """The file name a block declares, and whether the evidence is strong."""
    for line in block.text.split("\n")[:3]:
        if not line.strip() or line.startswith("#!"):
            continue
        match = _FIRST_LINE_NAME.match(line)
        if match:
            return _safe_name(match.group("name")), True
        break
    info_match = _INFO_NAME.search(block.info)
    if info_match:
        return _safe_name(info_match.group("name") or info_match.group("plain")), True
    names = {m.group("name") for m in _HEADING_NAME.finditer(block.heading)}
    if len(names) == 1 and len(block.heading) <= 160:
        return _safe_name(names.pop()), False
    return None, False


def _is_python(block: Block) -> bool:
    if block.tag not in PYTHON_TAGS:
        return False
    if block.tag == "":
        # Untagged blocks also carry shell commands, JSON and output: keep only Python.
        stripped = block.text.strip()
        if stripped.startswith(("{", "[")) and _parses_as_json(stripped):
            return False
        if re.search(r"^\s*(?:from|import)\s+\w", stripped, re.MULTILINE):
            return True
        try:
            tree = ast.parse(stripped)
        except SyntaxError:
            return False
        return any(isinstance(node, ast.ClassDef | ast.FunctionDef) for node in tree.body)
    return bool(block.text.strip())


def _parses_as_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _is_cdk_json(block: Block, name: str | None) -> bool:
    if name is not None and PurePosixPath(name).name == "cdk.json":
        return True
    if block.tag in JSON_TAGS or block.tag == "":
        try:
            value = json.loads(block.text)
        except ValueError:
            return False
        return isinstance(value, dict) and isinstance(value.get("app"), str)
    return False


def is_entry_candidate(source: str) -> bool:
    """True when the source creates an ``App`` and calls ``synth()``."""
    return bool(_CREATES_APP.search(source) and _CALLS_SYNTH.search(source))


def _defined_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(re.findall(r"^(?:class|def)\s+(\w+)", source, re.MULTILINE))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _local_imports(source: str) -> list[tuple[str, list[str]]]:
    """``from module import names`` of non-CDK, non-standard-library modules."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            root = node.module.split(".")[0]
            if root in _CDK_MODULES or root in _STDLIB:
                continue
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def _used_names(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set(re.findall(r"\b([A-Z]\w*)\s*\(", source))
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


_STDLIB = frozenset(
    {"os", "sys", "json", "typing", "re", "pathlib", "dataclasses", "enum", "collections"}
    | {"itertools", "functools", "math", "datetime", "hashlib", "uuid", "random", "string"}
    | {"__future__", "abc", "textwrap", "base64", "logging", "copy", "time", "subprocess"}
)


def _strip_answer_lines(text: str) -> str:
    return "\n".join(_ANSWER_LINE.sub("", line) for line in text.split("\n"))


def _unfenced_code(text: str) -> str | None:
    """Python source from a response without fences, or None if there is none."""
    body = _strip_answer_lines(_normalise(text)).strip("\n")
    if not body.strip():
        return None
    try:
        ast.parse(body)
        parsed = True
    except SyntaxError:
        parsed = False
    looks_like_code = bool(re.search(r"^\s*(?:from|import)\s+\w", body, re.MULTILINE))
    if parsed and looks_like_code:
        return body + "\n"
    lines = body.split("\n")
    starts = [i for i, line in enumerate(lines) if _CODE_START.match(line)]
    if not starts or "aws_cdk" not in body:
        return None
    return "\n".join(lines[starts[0] :]).strip("\n") + "\n"


def _resolve_unnamed(
    files: dict[str, str], unnamed: list[Block], notes: list[str]
) -> dict[str, str]:
    """Turn unnamed Python blocks into files next to the named ones."""
    if not unnamed:
        return files
    has_entry = any(is_entry_candidate(src) for src in files.values())
    complete = [b for b in unnamed if is_entry_candidate(b.text)]
    if has_entry and not complete:
        notes.append(f"ignored {len(unnamed)} unnamed block(s): a named file is the entry point")
        return files
    if complete:
        entry_block = complete[-1]
        if len(complete) > 1:
            notes.append(
                f"{len(complete)} complete apps in unnamed blocks; using the last "
                f"(line {entry_block.start_line})"
            )
    else:
        with_app = [b for b in unnamed if _CREATES_APP.search(b.text)]
        entry_block = with_app[-1] if with_app else unnamed[-1]
    others = [b for b in unnamed if b is not entry_block]
    entry_source = entry_block.text
    claimed: set[int] = set()
    for module, names in _local_imports(entry_source):
        path = module.replace(".", "/") + ".py"
        if path in files:
            continue
        for position, block in enumerate(others):
            if position not in claimed and set(names) & _defined_names(block.text):
                files[path] = block.text
                claimed.add(position)
                notes.append(f"named the block at line {block.start_line} {path} (imported)")
                break
    used = _used_names(entry_source) - _defined_names(entry_source)
    prefix = [
        block.text
        for position, block in enumerate(others)
        if position not in claimed and used & _defined_names(block.text)
    ]
    if prefix:
        notes.append(f"joined {len(prefix)} block(s) defining names the entry point uses")
        entry_source = "\n\n".join([*prefix, entry_source])
    dropped = len(others) - len(claimed) - len(prefix)
    if dropped:
        notes.append(f"ignored {dropped} unnamed block(s) the entry point does not use")
    name = "app.py" if "app.py" not in files else "main.py"
    files[name] = entry_source
    return files


def _pick_entry(files: dict[str, str], cdk_json: str | None, notes: list[str]) -> str | None:
    if cdk_json is not None:
        try:
            command = json.loads(cdk_json).get("app")
        except (ValueError, AttributeError):
            command = None
        if isinstance(command, str):
            for word in command.split():
                if word.endswith(".py") and _safe_name(word) in files:
                    notes.append(f"entry point from cdk.json: {word}")
                    return _safe_name(word)
    python_files = [name for name in files if name.endswith(".py")]
    candidates = [name for name in python_files if is_entry_candidate(files[name])]
    if not candidates:
        candidates = [name for name in python_files if _CREATES_APP.search(files[name])]
    if not candidates:
        candidates = python_files
    if not candidates:
        return None
    if "app.py" in candidates:
        return "app.py"
    return sorted(candidates, key=lambda name: (name.count("/"), -python_files.index(name)))[0]


def extract_app(response: str) -> ExtractedApp:
    """Recover the app from a model response (see the module docstring for the shapes)."""
    blocks = find_blocks(response)
    notes: list[str] = []
    files: dict[str, str] = {}
    cdk_json: str | None = None
    unnamed: list[Block] = []
    answer_blocks = [b for b in blocks if _ANSWER_LINE.match(b.heading)]
    if answer_blocks and len(answer_blocks) < len(blocks):
        notes.append("used the block(s) after ANSWER:")
        blocks = answer_blocks
    for block in blocks:
        name, strong = _name_of(block)
        if _is_cdk_json(block, name):
            cdk_json = block.text
            continue
        if not _is_python(block):
            continue
        if name is None or not name.endswith(".py"):
            unnamed.append(block)
        elif name in files and not strong:
            unnamed.append(block)  # a name guessed from prose that another file already has
        else:
            if name in files:
                notes.append(f"{name} appears more than once; using the last version")
            files[name] = block.text
    files = _resolve_unnamed(files, unnamed, notes)
    if not files and not blocks:
        code = _unfenced_code(response)
        if code is not None:
            notes.append("no fenced block; used the response text as app.py")
            files["app.py"] = code
    if not files:
        reason = (
            "no Python code block in the response"
            if blocks or response.strip()
            else "the response is empty"
        )
        return ExtractedApp(reason=reason, notes=notes, blocks=len(blocks))
    entry = _pick_entry(files, cdk_json, notes)
    if cdk_json is not None:
        files["cdk.json"] = cdk_json
    return ExtractedApp(files=files, entry=entry, notes=notes, blocks=len(blocks))


def extract_from_source(source: str, name: str = "app.py") -> ExtractedApp:
    """An app given directly as Python source (a file, not a response)."""
    return ExtractedApp(files={name: _normalise(source)}, entry=name, notes=["read as a file"])
