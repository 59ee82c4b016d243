"""What a trial sees of the host besides the system: the install prefixes of its agent (and of
that agent's interpreter), the runtimes, the harness's PATH without trial directories; and the
secrets a HOME file holds (redacted like `--pass-env` values).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from plumbline.sandbox.bwrap import runtime_paths


def install_paths(
    executable: Path, path_variable: str
) -> tuple[tuple[Path, ...], tuple[tuple[str, Path], ...]]:
    """What running `executable` needs besides the system: its install prefix (the
    `node_modules` directory of a Node package, the prefix of a `bin/` directory, else its own
    directory), the same for the interpreter its `#!` line names, and the symbolic links on the
    way from the name on PATH to the real file (as (real target, link) pairs)."""
    prefixes: list[Path] = []
    links: list[tuple[str, Path]] = []
    seen: set[Path] = set()
    pending = [Path(os.path.abspath(executable))]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        while current.is_symlink():
            target = os.readlink(current)
            if not _is_system(current):
                # Recreated pointing at the real file (mounted at its real path), so a
                # symbolic link among the directories above it (`~/.local` to elsewhere)
                # does not leave the recreated link dangling.
                links.append((os.path.realpath(current), current))
            current = Path(os.path.normpath(current.parent / target))
        real = current.resolve()
        if not _is_system(real):
            prefixes.append(_prefix(real))
        interpreter = _interpreter(real, path_variable)
        if interpreter is not None:
            pending.append(interpreter)
    return tuple(dict.fromkeys(prefixes)), tuple(links)


#: Directories every sandbox has already (read-only, from the host).
SYSTEM_ROOTS = tuple(
    Path("/") / name for name in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")
)


def _is_system(path: Path) -> bool:
    return any(path.is_relative_to(root) for root in SYSTEM_ROOTS)


def _prefix(real: Path) -> Path:
    if "node_modules" in real.parts:
        index = real.parts.index("node_modules")
        return Path(*real.parts[: index + 1])
    if real.parent.name == "bin" and real.parent.parent != Path("/"):
        return real.parent.parent
    return real.parent


def _interpreter(script: Path, path_variable: str) -> Path | None:
    """The interpreter a `#!` line names (`/usr/bin/env NAME` looked up on PATH), or None."""
    try:
        with script.open("rb") as handle:
            head = handle.readline(512)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if Path(words[0]).name == "env":
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        found = shutil.which(names[0], path=path_variable) if names else None
        return Path(found) if found else None
    return Path(words[0])


def harness_path() -> str:
    """The harness's own PATH (what the acceptance command runs with)."""
    return os.environ.get("PATH", os.defpath)


def without_entries_under(path_variable: str, roots: Sequence[Path]) -> str:
    """`path_variable` without the directories inside `roots` (places an agent could write)."""
    kept = [
        entry
        for entry in path_variable.split(os.pathsep)
        if entry and not any(Path(os.path.abspath(entry)).is_relative_to(r) for r in roots)
    ]
    return os.pathsep.join(kept)


def runtimes() -> tuple[Path, ...]:
    """The runtimes every sandboxed command gets read-only (Python, Node.js)."""
    return (*runtime_paths(), Path(sys.executable).parent)


def home_file_secrets(files: Mapping[str, bytes]) -> dict[str, str]:
    """What of each HOME file is redacted from everything the harness writes: the whole
    text, every JSON string value (a token in a credential file), and every line's value (of
    `key = value` or `key: value`, else the whole line) of `MIN_HOME_SECRET` characters or
    more."""
    secrets: dict[str, str] = {}
    for relative, content in files.items():
        text = content.decode("utf-8", "replace")
        values = {text.strip(), *(_line_value(line) for line in text.splitlines())}
        with contextlib.suppress(ValueError):
            values |= set(_json_strings(json.loads(text)))
        for index, value in enumerate(sorted(v for v in values if len(v) >= MIN_HOME_SECRET)):
            secrets[f"home file {relative} #{index}"] = value
    return secrets


#: Shorter strings of a HOME file are not redacted (they would match ordinary text).
MIN_HOME_SECRET = 8


def _line_value(line: str) -> str:
    """The value of a `key = value` or `key: value` line (quotes removed), else the line."""
    for separator in ("=", ":"):
        key, found, value = line.partition(separator)
        if found and key.strip() and " " not in key.strip():
            return value.strip().strip("\"'")
    return line.strip()


def _json_strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _json_strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _json_strings(item)]
    return []


__all__ = [
    "MIN_HOME_SECRET",
    "SYSTEM_ROOTS",
    "harness_path",
    "home_file_secrets",
    "install_paths",
    "runtimes",
    "without_entries_under",
]
