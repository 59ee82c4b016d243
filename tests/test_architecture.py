"""The shape docs/architecture.md promises: short functions and modules, tests like the package.

The import rules themselves are import-linter's contracts (`make lint`, `lint-imports`).
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "plumbline"
#: Data, not plumbline's code: the example agent suite's repository (a task's code).
NOT_CODE = PACKAGE / "examples"
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 600


def function_lengths(path: Path) -> list[tuple[str, int, int]]:
    """(qualified name, first line, lines from `def` to the last line) of every function."""
    found: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                assert child.end_lineno is not None
                name = f"{prefix}{child.name}"
                found.append((name, child.lineno, child.end_lineno - child.lineno + 1))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def test_the_length_measure_counts_from_def_to_the_last_line(tmp_path: Path) -> None:
    source = tmp_path / "example.py"
    body = "\n".join(f"    x{i} = {i}" for i in range(3))
    source.write_text(f"@decorated\ndef f():\n{body}\n\nclass C:\n    def g(self):\n        pass\n")
    assert function_lengths(source) == [("f", 2, 4), ("C.g", 8, 2)]


def test_no_function_in_src_is_longer_than_80_lines() -> None:
    long = [
        f"{path.relative_to(ROOT)}:{line}: {name} has {length} lines"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.is_relative_to(NOT_CODE)
        for name, line, length in function_lengths(path)
        if length > MAX_FUNCTION_LINES
    ]
    assert long == [], "split these into named steps:\n" + "\n".join(long)


def test_no_module_in_src_is_longer_than_600_lines() -> None:
    long = [
        f"{path.relative_to(ROOT)}: {lines} lines"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not path.is_relative_to(NOT_CODE)
        for lines in [len(path.read_text(encoding="utf-8").splitlines())]
        if lines > MAX_MODULE_LINES
    ]
    assert long == [], "split these by responsibility:\n" + "\n".join(long)


def test_tests_mirror_the_package() -> None:
    """Every test folder is named after the package or module it tests."""
    packages = {path.name for path in PACKAGE.iterdir() if path.is_dir()}
    modules = {path.stem for path in PACKAGE.glob("*.py")}
    folders = {
        path.name
        for path in (ROOT / "tests").iterdir()
        if path.is_dir() and not path.name.startswith((".", "__"))
    }
    assert folders - {"support"} <= packages | modules, folders - packages - modules - {"support"}


def _contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def test_the_architecture_page_names_every_contract() -> None:
    """A contract per rule: each contract's name (up to its first colon) is in the rules table."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [c["name"] for c in _contracts() if f"`{c['name'].split(':')[0]}" not in page]
    assert missing == [], f"docs/architecture.md does not name these contracts: {missing}"


def test_the_architecture_page_draws_every_layer_the_contract_declares() -> None:
    """The four layers of the layers contract, and every module in them, are on the page."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    (layers,) = [c for c in _contracts() if c["name"].startswith("Layers: ")]
    assert len(layers["layers"]) == 4
    for layer in layers["layers"]:
        for module in re.split(r"[:|]", layer):
            name = module.strip().strip("()")
            assert re.search(rf"\b{re.escape(name)}(/|\.py)", page), name
