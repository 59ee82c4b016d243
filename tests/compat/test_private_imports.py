"""Private modules of other packages are imported in `plumbline.compat` only (issue 39).

Walks the AST of every module under `src/plumbline` outside `compat/`: an `import a._b`, a
`from a._b import c`, a `from a import _b` of another package, or an
`importlib.import_module("a._b")` / `__import__("a._b")` with a literal name fails the test,
naming the file and line. plumbline's own private modules are its own business.
"""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "src" / "plumbline"
COMPAT = SOURCE / "compat"


def _private(dotted: str) -> bool:
    parts = dotted.split(".")
    return parts[0] != "plumbline" and any(
        part.startswith("_") and not part.startswith("__") for part in parts
    )


def private_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, module) of every import of another package's private module in `tree`."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _private(node.module):
                found.append((node.lineno, node.module))
            elif node.module.split(".")[0] != "plumbline":
                found += [
                    (node.lineno, f"{node.module}.{alias.name}")
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                    # a private module imported by name (a private function is not a module,
                    # but the rule is the same: private names are compat's)
                ]
        elif isinstance(node, ast.Call) and node.args:
            function = node.func
            name = function.attr if isinstance(function, ast.Attribute) else None
            name = function.id if isinstance(function, ast.Name) else name
            first = node.args[0]
            if (
                name in ("import_module", "__import__")
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and _private(first.value)
            ):
                found.append((node.lineno, first.value))
    return found


def test_no_module_outside_compat_imports_another_packages_private_module() -> None:
    problems = []
    for path in sorted(SOURCE.rglob("*.py")):
        if COMPAT in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        problems += [
            f"{path.relative_to(SOURCE.parent)}:{line}: {module}"
            for line, module in private_imports(tree)
        ]
    assert not problems, "private imports outside plumbline/compat:\n" + "\n".join(problems)


def test_the_walk_finds_every_form_of_private_import() -> None:
    source = """
import inspect_ai._eval.loader
from openai._models import FinalRequestOptions
from jsii import _runtime
import importlib
importlib.import_module("ray._raylet")
__import__("inspect_ai._util.http")
from plumbline.stats._validation import check
from inspect_ai.model import GenerateConfig
import os.path
"""
    assert [module for _, module in private_imports(ast.parse(source))] == [
        "inspect_ai._eval.loader",
        "openai._models",
        "jsii._runtime",
        "ray._raylet",
        "inspect_ai._util.http",
    ]


def test_compat_itself_is_where_the_private_imports_are() -> None:
    modules = {
        module
        for path in COMPAT.rglob("*.py")
        for _, module in private_imports(ast.parse(path.read_text(encoding="utf-8")))
    }
    # the walk sees them there: the test above would see them anywhere else
    assert {"inspect_ai._eval.loader", "openai._base_client", "jsii._runtime"} <= modules
