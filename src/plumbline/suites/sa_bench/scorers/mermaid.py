"""The Mermaid validator: the real `mermaid.parse` (Node.js) when installed, our grammar beneath."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from plumbline.suites.sa_bench.scorers.diagram import ValidationResult
from plumbline.suites.sa_bench.scorers.mermaid_grammar import validate_mermaid_ours


def validate_mermaid(source: str, *, use_mermaid: bool = True) -> ValidationResult:
    """Validate Mermaid source (flowchart/graph, sequenceDiagram or architecture-beta).

    When the real Mermaid parser is installed (`install_mermaid_parser()`), `mermaid.parse`
    decides the syntax and our structural checks apply on top (`mermaid+plumbline`);
    otherwise our parser decides alone (`plumbline-mermaid`).
    """
    ours = validate_mermaid_ours(source)
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
