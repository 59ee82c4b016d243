"""Finding Inspect logs: the `.eval` and `.json` logs under local paths or remote locations."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

from plumbline.records.log_scores import describe_error

# Inspect's `.json` logs are named `<ISO timestamp>_<task>_<id>.json`; other `.json` files in a
# log directory (eval-set manifests, listings, our own outputs) must not be mistaken for logs.
_LOG_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")


_JSON_LOG_START = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d')


LOG_SUFFIXES = (".eval", ".json")


def _looks_like_json_log(path: Path) -> bool:
    if _LOG_NAME.match(path.name):
        return True
    try:
        with path.open("rb") as handle:
            start = handle.read(64)
    except OSError:
        return True  # let the reader report why it cannot be opened
    return _JSON_LOG_START.match(start) is not None


@dataclass
class LogFiles:
    """The log files found under some paths, and the `.json` files passed over as non-logs.

    Local logs are `Path`s; logs in a remote store (`s3://...`) are their URLs as strings.
    """

    logs: list[Path | str] = field(default_factory=list)
    ignored: list[Path] = field(default_factory=list)
    missing: list[Path | str] = field(default_factory=list)
    unreachable: list[tuple[str, str]] = field(default_factory=list)
    """Remote locations that could not be listed: (location, why)."""


def is_remote(location: str | Path) -> bool:
    """Whether a location names a remote store (`s3://`, `gs://`, ...), not a local path."""
    text = str(location)
    scheme, separator, _ = text.partition("://")
    return bool(separator) and scheme not in ("", "file") and "/" not in scheme


def local_path(location: str | Path) -> Path:
    text = str(location)
    if text.startswith("file://"):
        return Path(url2pathname(urlparse(text).path))
    return Path(location)


def _listed(directory: str) -> list[str]:
    """Inspect's own listing of the logs under a directory (local or remote), oldest first."""
    from inspect_ai.log import list_eval_logs

    return [info.name for info in list_eval_logs(directory, recursive=True, descending=False)]


#: Inspect's rule (`inspect_ai.log._file.is_log_file`): `.eval` files, and `.json` files whose
#: name starts with a timestamp.
_INSPECT_LOG_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*$")


def _listed_local(directory: str) -> list[str]:
    """`_listed` of a local directory, walked as Inspect walks it (fsspec's `walk`), without
    importing Inspect or reading any header (Inspect reads one for each `.eval` log whose name
    is not its own, to show its task)."""
    import fsspec

    fs, root = fsspec.core.url_to_fs(directory)
    names: list[str] = []
    try:
        for _, _, files in fs.walk(root, detail=True, on_error="raise"):
            for info in files.values():
                base = info["name"].replace("\\", "/").split("/")[-1]
                if info["type"] == "file" and (
                    base.endswith(".eval")
                    or (_INSPECT_LOG_NAME.match(base) and base.endswith((".eval", ".json")))
                ):
                    names.append(fs.unstrip_protocol(info["name"]))
    except FileNotFoundError:
        return []
    return names


def _find_remote(location: str, found: LogFiles, seen: set[str]) -> None:
    import fsspec

    try:
        fs, root = fsspec.core.url_to_fs(location)
        is_dir = fs.isdir(root)
        exists = is_dir or fs.exists(root)
    except Exception as error:  # fsspec backends raise their own client errors
        found.unreachable.append((location, describe_error(error)))
        return
    if not exists:
        found.missing.append(location)
        return
    names = _listed(location) if is_dir else [location]
    for name in sorted(names):
        if name not in seen:
            seen.add(name)
            found.logs.append(name)


def find_log_files(paths: Iterable[str | Path]) -> LogFiles:
    """Find Inspect logs: files given directly, and `.eval`/`.json` logs under directories.

    Directories (local, or remote such as `s3://bucket/logs`) are listed recursively with
    Inspect's `list_eval_logs`, which finds `.eval` logs and `.json` logs under Inspect's file
    name. In a local directory a `.json` file under another name counts as a log when it starts
    like an Inspect log; other `.json` files (manifests, our own outputs) are listed in
    `ignored`. Files named explicitly are always treated as logs. A remote store that cannot be
    reached is listed in `unreachable`.
    """
    found = LogFiles()
    seen: set[str] = set()
    for raw in paths:
        if is_remote(raw):
            _find_remote(str(raw), found, seen)
            continue
        path = local_path(raw)
        if path.is_dir():
            candidates = sorted(local_path(name) for name in _listed_local(str(path)))
            listed = set(candidates)
            # Inspect lists .json logs by file name; one renamed is found by its first bytes.
            for other in sorted(path.rglob("*.json")):
                if other in listed or not other.is_file():
                    continue
                if _looks_like_json_log(other):
                    candidates.append(other)
                else:
                    found.ignored.append(other)
            for candidate in candidates:
                key = str(candidate.resolve())
                if key not in seen:
                    seen.add(key)
                    found.logs.append(candidate)
        elif path.is_file():
            key = str(path.resolve())
            if key not in seen:
                seen.add(key)
                found.logs.append(path)
        else:
            found.missing.append(path)
    return found
