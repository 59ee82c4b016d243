"""What a run is judged on: exactly the agent's changes, saved and applied to a fresh copy.

Before the agent runs, the harness's pristine copy of the repository (`save_baseline`) gets an
*evidence base*: a commit of every file in the workspace, ignored ones included (`git add
--force`; no `.gitignore`, exclude file or index bit the agent writes can hide a file). After
the agent, the same forced add gives the evidence: the saved diff is everything it changed,
and the acceptance command runs on a fresh directory checked out from exactly that index
(`judged_copy`), never on the directory the agent worked in. A nested repository or submodule
cannot be part of such a diff (git records one `Subproject commit` line for it), so a
workspace holding one is rejected (`nested_repositories`). Files that change what the test
runner runs without being code under test are listed by `runner_files`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbline.agent.safe_files import escaped_name, read_regular
from plumbline.agent.workspace import WorkspaceError, git

#: Bytecode files: never taken from the agent's changes (Python would run them unchecked).
BYTECODE_SUFFIXES = (".pyc", ".pyo")
#: pytest's configuration files: new or changed, they change what the acceptance runs.
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini")
#: Files holding pytest settings in one section (the section named).
PYTEST_SECTIONS = {"tox.ini": "[pytest]", "setup.cfg": "[tool:pytest]"}
MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
_USES_MAKE = re.compile(r"(?<![\w.-])make(?![\w.-])")
_USES_NPM = re.compile(r"(?<![\w.-])(npm|npx|yarn|pnpm)(?![\w.-])")


@dataclass(frozen=True)
class Evidence:
    """The agent's changes: the binary patch against the evidence base, and every path it
    adds, changes or deletes."""

    patch: bytes
    changed: frozenset[str]


def _baseline_env(baseline: Path, work_tree: Path, env: Mapping[str, str]) -> dict[str, str]:
    return {**env, "GIT_DIR": str(baseline), "GIT_WORK_TREE": str(work_tree)}


def nested_repositories(workspace: Path) -> list[str]:
    """The directories below the workspace's top that hold a `.git` (a nested repository, a
    submodule's checkout, or something posing as one), escaped for a record."""
    found: list[str] = []
    for top, dirs, files in os.walk(workspace, followlinks=False):
        relative = os.path.relpath(top, workspace)
        if relative == ".":
            dirs[:] = [d for d in dirs if d != ".git"]
            continue
        if ".git" in dirs or ".git" in files:
            found.append(escaped_name(relative))
            dirs[:] = [d for d in dirs if d != ".git"]
    return sorted(found)


def remove_special_files(workspace: Path) -> list[str]:
    """Remove the FIFOs, sockets and device files below the workspace (no diff can hold
    them: one in place of a file counts as that file's deletion); their escaped paths."""
    removed: list[str] = []
    for top, dirs, files in os.walk(workspace, followlinks=False):
        if top == str(workspace):
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = os.path.join(top, name)
            if not stat.S_ISREG(mode := os.lstat(path).st_mode) and not stat.S_ISLNK(mode):
                os.unlink(path)
                removed.append(escaped_name(os.path.relpath(path, workspace)))
    return sorted(removed)


def evidence_base(workspace: Path, baseline: Path, env: Mapping[str, str]) -> str:
    """Commit every file of the workspace now (ignored ones too) in the pristine copy
    `baseline`, without moving its HEAD; the commit's hash."""
    git_env = _baseline_env(baseline, workspace, env)
    (baseline / "info" / "exclude").unlink(missing_ok=True)
    git(workspace, "add", "--all", "--force", env=git_env)
    tree = git(workspace, "write-tree", env=git_env).decode().strip()
    head = git(workspace, "rev-parse", "HEAD", env=git_env).decode().strip()
    commit = git(workspace, "commit-tree", tree, "-p", head, "-m", "evidence base", env=git_env)
    return commit.decode().strip()


def collect_evidence(
    workspace: Path, baseline: Path, base: str, env: Mapping[str, str]
) -> Evidence:
    """The agent's changes since `base`, computed in `baseline` (never the workspace's own
    `.git`), which is left with the agent's files in its index for `judged_copy`."""
    git_env = _baseline_env(baseline, workspace, env)
    # The copy sits within the agent's reach: start from the base's tree (no skip-worktree
    # or assume-unchanged bits), with no excludes.
    (baseline / "info" / "exclude").unlink(missing_ok=True)
    git(workspace, "read-tree", base, env=git_env)
    git(workspace, "add", "--all", "--force", env=git_env)
    patch = git(workspace, "diff", "--cached", "--binary", "--no-renames", base, env=git_env)
    names = git(
        workspace, "diff", "--cached", "--name-only", "-z", "--no-renames", base, env=git_env
    )
    changed = frozenset(os.fsdecode(name) for name in names.split(b"\0") if name)
    return Evidence(patch, changed)


def judged_copy(
    baseline: Path, target: Path, initial: str, evidence: Evidence, env: Mapping[str, str]
) -> None:
    """Check the evidence (the index `collect_evidence` left in `baseline`) out into the
    empty directory `target`, without the agent's bytecode, and give it a `.git` at the
    initial commit (so `git diff` in an acceptance command shows the agent's changes)."""
    git(target, "checkout-index", "--all", "--force", env=_baseline_env(baseline, target, env))
    for name in evidence.changed:
        if name.endswith(BYTECODE_SUFFIXES) and os.path.lexists(target / name):
            os.unlink(target / name)
    shutil.copytree(baseline, target / ".git", symlinks=True)
    git(target, "read-tree", initial, env={**env, "GIT_DIR": str(target / ".git")})


def _cat(baseline: Path, base: str, name: str, env: Mapping[str, str]) -> bytes | None:
    """A file's bytes at `base` in `baseline`, or None when it had no such file."""
    try:
        git_env = {**env, "GIT_DIR": str(baseline)}
        return git(baseline, "cat-file", "blob", f"{base}:{name}", env=git_env)
    except WorkspaceError:
        return None


def _read(path: Path) -> bytes | None:
    """A judged file's bytes (a regular file, never a link), or None."""
    try:
        return read_regular(path)
    except OSError:
        return None


def _table(data: bytes | None, parse: str) -> Any:
    """The pytest table of a pyproject.toml or the scripts of a package.json (None when the
    file is missing or does not parse)."""
    if data is None:
        return None
    try:
        if parse == "toml":
            return tomllib.loads(data.decode("utf-8")).get("tool", {}).get("pytest")
        loaded = json.loads(data)
        return loaded.get("scripts") if isinstance(loaded, dict) else None
    except (ValueError, AttributeError):
        return None


def runner_files(
    judged: Path,
    baseline: Path,
    base: str,
    evidence: Evidence,
    acceptance: str,
    env: Mapping[str, str],
    allowed: Sequence[str] = (),
) -> list[str]:
    """The changed files that change what the acceptance command's runner runs: a pytest
    configuration (`pytest.ini`, a `[pytest]` section of `tox.ini`, a `[tool:pytest]`
    section of `setup.cfg`, a changed `[tool.pytest]` table of `pyproject.toml`), and when
    the acceptance command runs `make` or npm, a Makefile, changed `package.json` scripts or
    a program in `node_modules/.bin`. `allowed` names paths or file names the suite expects."""
    uses_make = _USES_MAKE.search(acceptance) is not None
    uses_npm = _USES_NPM.search(acceptance) is not None
    found: list[str] = []
    for name in sorted(evidence.changed):
        path = Path(name)
        if name in allowed or path.name in allowed:
            continue
        now = _read(judged / name)
        if path.name in PYTEST_CONFIGS or (uses_make and path.name in MAKEFILES):
            flagged = True
        elif path.name in PYTEST_SECTIONS:
            section = PYTEST_SECTIONS[path.name].encode()
            before = _cat(baseline, base, name, env) or b""
            flagged = section in before or section in (now or b"")
        elif path.name in ("pyproject.toml", "package.json") and (
            path.name == "pyproject.toml" or uses_npm
        ):
            kind = "toml" if path.name == "pyproject.toml" else "json"
            flagged = _table(_cat(baseline, base, name, env), kind) != _table(now, kind)
        else:
            flagged = uses_npm and "node_modules/.bin/" in f"/{name}"
        if flagged:
            found.append(escaped_name(name))
    return found


__all__ = [
    "Evidence",
    "collect_evidence",
    "evidence_base",
    "judged_copy",
    "nested_repositories",
    "remove_special_files",
    "runner_files",
]
