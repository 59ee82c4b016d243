"""The static site: any mix of leaderboard, compare and reliability JSON → pages under one root.

    inputs = load_site_inputs([Path("leaderboard.json"), Path("logs/"), Path("compare.json")])
    result = write_site(inputs, Path("site"))
    print(result.index.as_uri())

Each input document gets a folder of pages named by its slug (`leaderboard/index.html`, ...),
rendered by the renderer of its kind, and a copy of itself at `data/<slug>.json`, so the site is
self-contained: it can be zipped, moved or opened from `file://` without the files it came from.
Pages render their document alone. Inspect logs given beside a leaderboard are read here, once,
into its drill-down document (`LeaderboardSamples`, copied to `data/<slug>/samples.json`) that
its per-model pages render; record files given beside a comparison or a reliability report are
named as its sources. The site never links to any of them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plumbline.core.result import document_kind as result_kind
from plumbline.records.io import (
    Located,
    UnreadableFileError,
    iter_json_values,
    read_json_file,
    write_atomic,
)
from plumbline.records.log_files import find_log_files
from plumbline.views.html import Page
from plumbline.views.site import (
    KINDS,
    RENDERERS,
    Kind,
    SiteInput,
    assign_slugs,
    render_index,
    renderer_for,
    report_identity,
    slugify,
)

if TYPE_CHECKING:
    pass


#: Which sources feed which kind of document.
_SOURCE_KIND: dict[str, Kind] = {
    "inspect_log": "leaderboard",
    "run_records": "compare",
    "trial_records": "reliability",
}


class SiteInputError(ValueError):
    """Inputs that cannot make a site, one `file: problem` line per problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class SiteResult:
    """What `write_site` wrote: the index, every page, and the data copies."""

    root: Path
    index: Path
    pages: list[Path] = field(default_factory=list)
    data: list[Path] = field(default_factory=list)


def document_kind(document: Any) -> Kind | None:
    """Which plumbline result a JSON document is, from its `schema_version` alone (see
    `plumbline.core.result`); None when it is none of them.

    Leaderboards older than their `schema_version` string (SA Bench's own files, plumbline's
    version 1) are still leaderboards: `leaderboard.result` reads and upgrades them."""
    from plumbline.leaderboard.result import is_older_leaderboard

    kind = result_kind(document)
    if kind in KINDS:
        return kind
    return "leaderboard" if is_older_leaderboard(document) else None


def _record_kind(path: Path) -> str | None:
    """`run_records` or `trial_records` from a record file's first record; None otherwise."""
    for item in iter_json_values(path):
        if not isinstance(item, Located) or not isinstance(item.value, dict):
            return None
        keys = set(item.value)
        if {"task_id", "arm"} <= keys:
            return "run_records"
        if {"prompt_id", "trial"} <= keys or {"prompt", "latency_seconds"} <= keys:
            return "trial_records"
        return None
    return None


def _classify(path: Path) -> tuple[str, Any] | str:
    """(kind, payload) for one input path, or a problem message."""
    if path.is_dir():
        logs = find_log_files([path]).logs
        if not logs:
            return "a directory without Inspect logs (.eval or .json)"
        return ("inspect_logs", logs)
    if not path.is_file():
        return "no such file or directory"
    if path.suffix == ".eval":
        return ("inspect_logs", [path])
    if path.suffix not in (".json", ".jsonl"):
        return (
            "not a JSON document, record file (.jsonl) or Inspect log (.eval, .json, or a log "
            "directory)"
        )
    if path.suffix == ".jsonl":
        kind = _record_kind(path)
        if kind is None:
            return "not run records (task_id, arm, ...) or trial records (prompt_id, trial, ...)"
        return (kind, path)
    try:
        document = read_json_file(path)
    except UnreadableFileError as error:
        # A JSON array or concatenated records may still be record files.
        kind = _record_kind(path)
        if kind is not None:
            return (kind, path)
        return f"line {error.line}: {error.problem}"
    kind = document_kind(document)
    if kind is not None:
        return ("document", (kind, document))
    if isinstance(document, dict) and "eval" in document and "version" in document:
        return ("inspect_logs", [path])
    if isinstance(document, list):
        record_kind = _record_kind(path)
        if record_kind is not None:
            return (record_kind, path)
    return (
        "not a plumbline leaderboard, compare or reliability JSON document, an Inspect log, "
        "or a record file"
    )


def load_site_inputs(paths: Sequence[Path]) -> list[SiteInput]:
    """Read result documents and attach the sources given beside them.

    Inspect logs (files, or directories searched recursively) go to every leaderboard, run
    record files to the comparison computed from them (`own_sources`), trial record files to
    every reliability report. Raises
    `SiteInputError` listing every unusable path as `file: problem`, and a source given without
    any document of its kind.
    """
    problems: list[str] = []
    documents: list[tuple[Kind, str, dict[str, Any]]] = []
    sources: dict[Kind, list[Path]] = {kind: [] for kind in KINDS}
    for path in paths:
        classified = _classify(Path(path))
        if isinstance(classified, str):
            problems.append(f"{path}: {classified}")
            continue
        what, payload = classified
        if what == "document":
            kind, document = payload
            if kind == "leaderboard":
                from plumbline.leaderboard.document import document_problems

                # a stale overall is shown on the page, model by model, not refused
                invalid = document_problems(document, check_overall=False)
                if invalid:
                    problems += [f"{path}: {problem}" for problem in invalid]
                    continue
            if kind == "compare":
                from plumbline.compare.result import document_problems as compare_problems

                invalid = compare_problems(document)
                if invalid:
                    problems += [f"{path}: {problem}" for problem in invalid]
                    continue
            documents.append((kind, Path(path).stem, document))
        elif what == "inspect_logs":
            sources["leaderboard"].extend(payload)
        else:
            sources[_SOURCE_KIND[what]].append(payload)
    present = {kind for kind, _, _ in documents}
    for kind, extra in sources.items():
        if extra and kind not in present:
            hint = {
                "leaderboard": "plumbline leaderboard LOGDIR -o leaderboard.json",
                "compare": "plumbline compare RECORDS --json compare.json",
                "reliability": "plumbline reliability TRIALS --json reliability.json",
            }[kind]
            problems.append(
                f"{extra[0]}: sources for a {kind} report were given without its JSON document "
                f"(make one with `{hint}` and pass it too)"
            )
    if not documents and not problems:
        problems.append("no inputs: give at least one leaderboard, compare or reliability JSON")
    if problems:
        raise SiteInputError(problems)
    unique = {kind: list(dict.fromkeys(found)) for kind, found in sources.items()}
    return [
        site_input(kind, name, document, own_sources(document, unique[kind]))
        for kind, name, document in documents
    ]


def site_input(
    kind: Kind, name: str, document: dict[str, Any], sources: Sequence[Path]
) -> SiteInput:
    """The site input of a document and its sources. A leaderboard is typed (older files
    upgraded) and reviewed against its own weights here, once; given Inspect logs, it gets the
    samples read from them (`read_leaderboard_samples`)."""
    if kind != "leaderboard":
        return SiteInput(kind, name, document, tuple(sources))
    from plumbline.leaderboard.check import review_document
    from plumbline.leaderboard.document import as_document

    typed = as_document(document, name)
    samples = None
    if sources:
        from plumbline.leaderboard.samples import read_leaderboard_samples

        samples = read_leaderboard_samples(document, sources)
    return SiteInput(
        kind,
        name,
        document,
        tuple(sources),
        samples,
        leaderboard=typed,
        review=review_document(typed.to_json()),
    )


def own_sources(document: dict[str, Any], candidates: Sequence[Path]) -> tuple[Path, ...]:
    """The candidates a document was computed from, when it names its input files (a compare
    document's `input.files`), matched by resolved path, else by file name; all candidates
    when it names none, so that two comparisons in one site never mix their runs."""
    files = (document.get("input") or {}).get("files") if isinstance(document, dict) else None
    if not isinstance(files, list) or not files:
        return tuple(candidates)
    named = [Path(str(file)) for file in files]
    resolved = {path.resolve() for path in named}
    by_path = [c for c in candidates if c.resolve() in resolved]
    if by_path:
        return tuple(by_path)
    names = {path.name for path in named}
    return tuple(c for c in candidates if c.name in names)


def existing_reports(root: Path, exclude: set[str]) -> list[tuple[SiteInput, str]]:
    """Reports an earlier run wrote under `root` (its `data/<slug>.json` beside
    `<slug>/index.html`), except the slugs in `exclude`; for the index of a site that grows."""
    found: list[tuple[SiteInput, str]] = []
    for path in sorted((root / "data").glob("*.json")):
        slug = path.stem
        if slug in exclude or not (root / slug / "index.html").is_file():
            continue
        try:
            document = read_json_file(path)
        except (OSError, ValueError):
            continue
        kind = document_kind(document)
        if kind is not None:
            found.append((site_input(kind, slug, document, ()), slug))
    return found


#: The drill-down document of a leaderboard, under `data/<slug>/`.
SAMPLES_FILE = "samples.json"


def write_site(
    inputs: Sequence[SiteInput], out_dir: Path, *, keep_other_reports: bool = False
) -> SiteResult:
    """Render every input's pages and the index under `out_dir`, all or nothing.

    `out_dir` must be new, empty, or a plumbline site (its `.plumbline-site` marker): any
    other directory is refused (`NotASiteError`) and nothing in it is touched. Under a lock
    (`.plumbline-site.lock`, so that commands writing one site at once all land), every page
    is rendered and written to a staging folder first; a failure there leaves the previous
    site as it was. Then the staged files are moved into place, and the index last, so the
    index never links to a page that is not there. Each input's document is copied to
    `data/<slug>.json` (and a leaderboard's samples to `data/<slug>/samples.json`); pages of
    an earlier site in the same folders that this one no longer has are removed. With
    `keep_other_reports`, reports already in `out_dir` under other slugs stay and the index
    lists them too (so `compare --html site/` and `reliability --html site/` share a site);
    a report of another identity whose name slugs alike gets a slug of its own.
    """
    if not inputs:
        raise SiteInputError(
            ["no inputs: give at least one leaderboard, compare or reliability JSON"]
        )
    root = Path(out_dir)
    problem = site_problem(root)
    if problem:
        raise NotASiteError([f"{root}: {problem}"])
    root.mkdir(parents=True, exist_ok=True)
    with site_lock(root):
        problem = site_problem(root)  # another writer may have changed it meanwhile
        if problem:
            raise NotASiteError([f"{root}: {problem}"])
        manifest = read_manifest(root)
        _claim(root, manifest)
        known = dict(manifest.get("reports", {}))
        slugs = assign_slugs(
            inputs, _existing_identities(root, known) if keep_other_reports else {}
        )
        pages = _render_pages(inputs, slugs)
        kept = existing_reports(root, set(slugs)) if keep_other_reports else []
        index = render_index(
            [*inputs, *(item for item, _ in kept)], [*slugs, *(slug for _, slug in kept)]
        )
        reports = {slug: known[slug] for _, slug in kept if slug in known}
        reports.update(
            {slug: report_identity(item) for item, slug in zip(inputs, slugs, strict=True)}
        )
        return _publish(root, inputs, slugs, pages, index, reports)


def _render_pages(inputs: Sequence[SiteInput], slugs: Sequence[str]) -> list[Page]:
    pages: list[Page] = []
    for site_input, slug in zip(inputs, slugs, strict=True):
        try:
            rendered = renderer_for(site_input.kind)(site_input, slug)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
            # The document came from a file: a field of the wrong shape is bad input.
            problem = " ".join(str(error).split()) or type(error).__name__
            raise SiteInputError(
                [
                    f"{site_input.name}: not a {site_input.kind} document this version can "
                    f"render ({type(error).__name__}: {problem}); regenerate it with plumbline"
                ]
            ) from error
        for page in rendered:
            if not page.path.startswith(f"{slug}/"):
                raise ValueError(
                    f"renderer for {site_input.kind} wrote {page.path} outside {slug}/"
                )
        pages.extend(rendered)
    return pages


def _publish(
    root: Path,
    inputs: Sequence[SiteInput],
    slugs: Sequence[str],
    pages: Sequence[Page],
    index: Page,
    reports: dict[str, str],
) -> SiteResult:
    """Build the whole new site beside the old one, then switch them with one rename.

    The new site is `<parent>/.plumbline-stage-<name>-*`: the old site's files hard-linked in
    (a user's own files and other reports' pages stay), then this update's pages, data copies,
    marker and index written over them. A failure while it is built (a full disk, a directory
    where a data copy goes) leaves the old site untouched. The switch is one
    `renameat2(RENAME_EXCHANGE)`: a process killed (SIGKILL) at any moment leaves either the
    whole old site or the whole new one, and the other under the stage name, which the next
    update removes (`remove_leftovers`).
    """
    import shutil
    import tempfile

    real = Path(os.path.realpath(root))
    remove_leftovers(real)
    stage = Path(tempfile.mkdtemp(prefix=_stage_prefix(real), dir=real.parent))
    try:
        _link_tree(real, stage)
        (stage / SITE_LOCK).touch()  # its own lock: writers waiting on the old one take it

        def staged(relative: str, data: str | bytes) -> Path:
            write_atomic(stage / relative, data)
            return root / relative

        written = [staged(page.path, page.html) for page in pages]
        data: list[Path] = []
        for site_input, slug in zip(inputs, slugs, strict=True):
            data.append(staged(f"data/{slug}.json", _json_text(site_input.document)))
            samples = f"data/{slug}/{SAMPLES_FILE}"
            if site_input.samples is not None:
                data.append(staged(samples, _json_text(site_input.samples.model_dump(mode="json"))))
            else:
                (stage / samples).unlink(missing_ok=True)  # an earlier run's, no page shows now
        _remove_stale_pages(stage, slugs, {stage / page.path for page in pages})
        manifest = {"generator": "plumbline", "version": MANIFEST_VERSION, "reports": reports}
        write_atomic(stage / SITE_MARKER, _json_text(manifest))
        write_atomic(stage / index.path, index.html)
        inside = _cwd_inside(real)
        exchange_directories(stage, real)
        if inside is not None:  # `-o .`: follow the site, not the old one about to go
            with contextlib.suppress(OSError):
                os.chdir(real / inside)
    except OSError as error:
        # name the file of the site, not of its staged copy (which is gone)
        if isinstance(error.filename, str) and error.filename.startswith(str(stage)):
            site_path = str(root) + error.filename[len(str(stage)) :]
            raise type(error)(error.errno, error.strerror, site_path) from error
        raise
    finally:
        # before the switch: the unfinished new site; after it: the old one
        shutil.rmtree(stage, ignore_errors=True)
    return SiteResult(
        root=root, index=root / index.path, pages=[*written, root / index.path], data=data
    )


def _cwd_inside(real: Path) -> Path | None:
    """The working directory relative to the site `real` when it is inside it, else None."""
    try:
        return Path(os.getcwd()).relative_to(real)
    except (OSError, ValueError):
        return None


#: Every staged site's name starts so (a site's own: `.plumbline-stage-<name>-`, then 8 random
#: characters).
STAGE_PREFIX = ".plumbline-stage-"


def _stage_prefix(real: Path) -> str:
    return f"{STAGE_PREFIX}{real.name}-"


def remove_leftovers(real: Path) -> list[Path]:
    """Remove what updates of the site `real` killed part way left: their staged sites beside
    it (`.plumbline-stage-<name>-` then 8 random characters: an unfinished new site or a
    switched-out old one) and, from before sites were switched whole, staging folders inside
    it. Called under the site's lock, so no running update owns them."""
    import re
    import shutil

    own = re.compile(re.escape(_stage_prefix(real)) + r"[a-z0-9_]{8}")
    found = [
        path
        for path in real.parent.glob(f"{glob_escape(_stage_prefix(real))}*")
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


def _link_tree(source: Path, target: Path) -> None:
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

    away = Path(tempfile.mkdtemp(prefix=_stage_prefix(current), dir=current.parent))
    os.rename(current, away / "old")
    os.rename(new, current)
    os.rename(away, new)  # removed with the stage by the caller


def _json_text(value: Any) -> str:
    import json

    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


#: The file that marks a directory as a plumbline site (and lists its reports' identities).
SITE_MARKER = ".plumbline-site"
#: The lock every writer of a site holds while it updates it (`fcntl.flock`).
SITE_LOCK = ".plumbline-site.lock"
MANIFEST_VERSION = 1


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


def _claim(root: Path, manifest: dict[str, Any]) -> None:
    """Mark `root` as plumbline's before the first file of a site is written into it."""
    if not (root / SITE_MARKER).is_file():
        write_atomic(
            root / SITE_MARKER,
            _json_text({"generator": "plumbline", "version": MANIFEST_VERSION, "reports": {}}),
        )
        manifest.setdefault("reports", {})


def _existing_identities(root: Path, known: Mapping[str, Any]) -> dict[str, str | None]:
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


def _remove_stale_pages(root: Path, slugs: Sequence[str], keep: set[Path]) -> None:
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


__all__ = [
    "KINDS",
    "RENDERERS",
    "SAMPLES_FILE",
    "SITE_LOCK",
    "SITE_MARKER",
    "NotASiteError",
    "SiteInput",
    "SiteInputError",
    "SiteResult",
    "assign_slugs",
    "document_kind",
    "existing_reports",
    "load_site_inputs",
    "render_index",
    "renderer_for",
    "site_input",
    "site_lock",
    "site_problem",
    "slugify",
    "write_site",
]
