"""The files of a static site: the marker that makes a directory plumbline's, its lock, and
the switch of a whole new site for the old one (`exchange_directories`), with what an update
killed part way leaves (`remove_leftovers`)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from plumbline.core.problems import ProblemLinesError
from plumbline.records.io import read_json_file, write_atomic


def json_text(value: Any) -> str:
    """A site's JSON file: indented, strict (no NaN), a newline at the end."""
    import json

    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def cwd_inside(real: Path) -> Path | None:
    """The working directory relative to the site `real` when it is inside it, else None."""
    try:
        return Path(os.getcwd()).relative_to(real)
    except (OSError, ValueError):
        return None


#: Every staged site's name starts so (a site's own: `.plumbline-stage-<name>-`, then 8 random
#: characters).
STAGE_PREFIX = ".plumbline-stage-"


def stage_prefix(real: Path) -> str:
    return f"{STAGE_PREFIX}{real.name}-"


def remove_leftovers(real: Path) -> list[Path]:
    """Remove what updates of the site `real` killed part way left: their staged sites beside
    it (`.plumbline-stage-<name>-` then 8 random characters: an unfinished new site or a
    switched-out old one) and, from before sites were switched whole, staging folders inside
    it. Called under the site's lock, so no running update owns them."""
    import re
    import shutil

    own = re.compile(re.escape(stage_prefix(real)) + r"[a-z0-9_]{8}")
    found = [
        path
        for path in real.parent.glob(f"{glob_escape(stage_prefix(real))}*")
        if own.fullmatch(path.name) and path.is_dir() and not path.is_symlink()
    ]
    found += [path for path in real.glob(f"{STAGE_PREFIX}*") if path.is_dir()]
    for path in found:
        shutil.rmtree(path, ignore_errors=True)
    return found


def glob_escape(text: str) -> str:
    """`text` with glob's special characters taken literally (a site may be named `a[1]`)."""
    import glob

    return glob.escape(text)


def link_tree(source: Path, target: Path) -> None:
    """Make `target` (an empty directory) a copy of the site `source`: files hard-linked (they
    are only ever replaced, never written in place, so the old site keeps its own), copied
    where the file system has no hard links; links as links; modes kept. The lock and staging
    folders are not copied."""
    import shutil

    for entry in os.scandir(source):
        if entry.name == SITE_LOCK or entry.name.startswith(STAGE_PREFIX):
            continue
        _link_entry(Path(entry.path), target / entry.name)
    shutil.copystat(source, target, follow_symlinks=False)


def _link_entry(source: Path, target: Path) -> None:
    import shutil

    if source.is_symlink():
        os.symlink(os.readlink(source), target)
    elif source.is_dir():
        target.mkdir()
        for entry in os.scandir(source):
            _link_entry(Path(entry.path), target / entry.name)
        shutil.copystat(source, target)
    else:
        try:
            os.link(source, target, follow_symlinks=False)
        except OSError:
            shutil.copy2(source, target, follow_symlinks=False)


#: renameat2(2) flag: swap the two paths atomically (Linux 3.15+; ext4, xfs, btrfs, tmpfs...).
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def exchange_directories(new: Path, current: Path) -> None:
    """Put the directory `new` at `current` and the old `current` at `new`, in one step.

    `renameat2(RENAME_EXCHANGE)` swaps them atomically: every reader, and a process killed at
    any moment, sees one whole site or the other. Where the system has no such call (not Linux,
    or a file system without it), the old site is renamed away and the new one renamed in:
    two renames, between which the site's path is briefly absent (never half-updated).
    """
    import ctypes
    import errno

    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is not None:
        renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
        renameat2.argtypes += [ctypes.c_uint]
        renameat2.restype = ctypes.c_int
        status = renameat2(
            _AT_FDCWD, os.fsencode(new), _AT_FDCWD, os.fsencode(current), _RENAME_EXCHANGE
        )
        if status == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
            raise OSError(code, os.strerror(code), str(current))
    if not os.path.lexists(current):
        os.rename(new, current)
        return
    import tempfile

    away = Path(tempfile.mkdtemp(prefix=stage_prefix(current), dir=current.parent))
    os.rename(current, away / "old")
    os.rename(new, current)
    os.rename(away, new)  # removed with the stage by the caller


#: The file that marks a directory as a plumbline site (and lists its reports' identities).
SITE_MARKER = ".plumbline-site"
#: The lock every writer of a site holds while it updates it (`fcntl.flock`).
SITE_LOCK = ".plumbline-site.lock"
MANIFEST_VERSION = 1


class SiteInputError(ProblemLinesError):
    """Inputs that cannot make a site, one `file: problem` line per problem."""


class NotASiteError(SiteInputError):
    """A directory plumbline will not write a site into (a user's own files are there)."""


def site_problem(directory: Path) -> str | None:
    """Why plumbline must not write a site into `directory` (None: it may).

    It may when the directory does not exist yet, is empty, holds the `.plumbline-site`
    marker, or is a site an earlier plumbline wrote before the marker existed (its
    `index.html` carries plumbline's generator mark and it has a `data/` folder).
    """
    if not os.path.lexists(directory):
        return None
    if not directory.is_dir():
        return "exists and is not a directory"
    if (directory / SITE_MARKER).is_file():
        return None
    try:
        entries = [entry for entry in os.listdir(directory) if entry != SITE_LOCK]
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if not entries:
        return None
    if _older_site(directory):
        return None
    return (
        f"a directory that is not empty and not a plumbline site (no {SITE_MARKER} file in "
        "it): plumbline writes a site only into a new or empty directory, or one it made, so "
        "nothing here is overwritten; choose another directory"
    )


def _older_site(directory: Path) -> bool:
    try:
        with (directory / "index.html").open(encoding="utf-8", errors="replace") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return GENERATOR_MARK in head and (directory / "data").is_dir()


def read_manifest(root: Path) -> dict[str, Any]:
    """The site's marker file as a dict (`{"reports": {slug: identity}}`); empty when absent,
    unreadable, or an empty marker."""
    try:
        value = read_json_file(root / SITE_MARKER)
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict) or not isinstance(value.get("reports", {}), dict):
        return {}
    return value


def claim(root: Path, manifest: dict[str, Any]) -> None:
    """Mark `root` as plumbline's before the first file of a site is written into it."""
    if not (root / SITE_MARKER).is_file():
        write_atomic(
            root / SITE_MARKER,
            json_text({"generator": "plumbline", "version": MANIFEST_VERSION, "reports": {}}),
        )
        manifest.setdefault("reports", {})


def existing_identities(root: Path, known: Mapping[str, Any]) -> dict[str, str | None]:
    """Slug -> identity of every report in the site (None when the site did not record it)."""
    slugs = {path.stem for path in (root / "data").glob("*.json")} | set(known)
    return {slug: known.get(slug) if isinstance(known.get(slug), str) else None for slug in slugs}


@contextlib.contextmanager
def site_lock(root: Path) -> Iterator[None]:
    """Hold the site's lock (an exclusive `flock` on `root/.plumbline-site.lock`)."""
    import fcntl

    while True:
        with open(root / SITE_LOCK, "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                # an update switches the whole site, lock file included: the lock waited for
                # may now be the old site's, so take the new one's
                held = os.fstat(handle.fileno())
                try:
                    now = os.stat(root / SITE_LOCK)
                except FileNotFoundError:
                    continue
                if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
                    continue
                yield
                return
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


GENERATOR_MARK = '<meta name="generator" content="plumbline">'


def remove_stale_pages(root: Path, slugs: Sequence[str], keep: set[Path]) -> None:
    """Delete pages plumbline wrote earlier in these reports' folders that this site no longer
    has (a model dropped from a leaderboard), so no page links to out-of-date results.

    Only `.html` files carrying plumbline's generator mark are touched; anything else a user
    put in the folder stays.
    """
    for slug in slugs:
        for path in (root / slug).rglob("*.html"):
            if path in keep:
                continue
            try:
                with path.open(encoding="utf-8", errors="replace") as handle:
                    head = handle.read(2048)
            except OSError:
                continue
            if GENERATOR_MARK in head:
                path.unlink(missing_ok=True)
