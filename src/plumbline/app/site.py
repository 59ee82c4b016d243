"""The static site: any mix of result documents → pages under one root.

    inputs = load_site_inputs([Path("leaderboard.json"), Path("logs/"), Path("compare.json")])
    result = write_site(inputs, Path("site"))
    print(result.index.as_uri())

Each input gets a folder of pages named by its slug (`leaderboard/index.html`, ...), rendered by
the page module of its kind (`views.site.PAGES`), and a copy of its document at
`data/<slug>.json`, so the site is self-contained: it can be zipped, moved or opened from
`file://` without the files it came from. Documents are read here, once, into typed results
(`plumbline.results`); pages render the typed result alone. Inspect logs given beside a
leaderboard are read here, once, into its drill-down document (`LeaderboardSamples`, copied to
`data/<slug>/samples.json`) that its per-model pages render; record files given beside a
comparison or a reliability report are named as its sources. The site never links to any of
them.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from plumbline.app.site_files import (
    GENERATOR_MARK,
    MANIFEST_VERSION,
    SITE_LOCK,
    SITE_MARKER,
    NotASiteError,
    SiteInputError,
    claim,
    cwd_inside,
    exchange_directories,
    existing_identities,
    json_text,
    link_tree,
    read_manifest,
    remove_leftovers,
    remove_stale_pages,
    site_lock,
    site_problem,
    stage_prefix,
)
from plumbline.leaderboard.result import DocumentReview, LeaderboardDocument
from plumbline.records.io import UnreadableFileError, read_json_file, write_atomic
from plumbline.records.log_files import find_log_files
from plumbline.results.errors import ResultDocumentError
from plumbline.results.kinds import detect, kind, kind_of
from plumbline.results.sources import record_source
from plumbline.views.html import Page
from plumbline.views.site import (
    PAGES,
    Kind,
    SiteInput,
    assign_slugs,
    render_index,
    render_pages,
    report_identity,
)


@dataclass(frozen=True)
class SiteResult:
    """What `write_site` wrote: the index, every page, and the data copies."""

    root: Path
    index: Path
    pages: list[Path] = field(default_factory=list)
    data: list[Path] = field(default_factory=list)


def document_kind(document: Any) -> Kind | None:
    """Which result with pages a JSON document is, from its `schema_version` alone (older
    leaderboards included: `results.kinds.detect`); None when it is none of them."""
    name = detect(document)
    return name if name in PAGES else None


def _kinds_fed_by(source: str) -> list[Kind]:
    return [name for name in PAGES if source in kind(name).sources]


def _classify(path: Path) -> tuple[str, Any] | str:
    """(what, payload) for one input path: ("document", (kind, JSON)) or (source, paths); or
    a problem message."""
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
        source = record_source(path)
        if source is None:
            return "not run records (task_id, arm, ...) or trial records (prompt_id, trial, ...)"
        return (source, [path])
    try:
        document = read_json_file(path)
    except UnreadableFileError as error:
        # A JSON array or concatenated records may still be record files.
        source = record_source(path)
        if source is not None:
            return (source, [path])
        return f"line {error.line}: {error.problem}"
    name = document_kind(document)
    if name is not None:
        return ("document", (name, document))
    if isinstance(document, dict) and "eval" in document and "version" in document:
        return ("inspect_logs", [path])
    if isinstance(document, list):
        source = record_source(path)
        if source is not None:
            return (source, [path])
    return (
        "not a plumbline leaderboard, compare or reliability JSON document, an Inspect log, "
        "or a record file"
    )


def load_site_inputs(paths: Sequence[Path]) -> list[SiteInput[Any]]:
    """Read result documents (each typed once) and attach the sources given beside them.

    Inspect logs (files, or directories searched recursively) go to every leaderboard, run
    record files to the comparison computed from them (`own_sources`), trial record files to
    every reliability report: the sources each kind names (`ResultKind.sources`). Raises
    `SiteInputError` listing every unusable path as `file: problem`, and a source given without
    any document of its kind.
    """
    problems: list[str] = []
    documents: list[tuple[Kind, str, Any, dict[str, Any]]] = []
    sources: dict[Kind, list[Path]] = {name: [] for name in PAGES}
    for path in paths:
        classified = _classify(Path(path))
        if isinstance(classified, str):
            problems.append(f"{path}: {classified}")
            continue
        what, payload = classified
        if what != "document":
            for name in _kinds_fed_by(what):
                sources[name].extend(payload)
            continue
        name, document = payload
        try:
            documents.append((name, Path(path).stem, kind(name).read(document), document))
        except ResultDocumentError as error:
            problems += [f"{path}: {problem}" for problem in error.problems]
    present = {name for name, _, _, _ in documents}
    for name, extra in sources.items():
        if extra and name not in present:
            problems.append(
                f"{extra[0]}: sources for a {name} report were given without its JSON document "
                f"(make one with `{kind(name).made_by}` and pass it too)"
            )
    if not documents and not problems:
        problems.append("no inputs: give at least one leaderboard, compare or reliability JSON")
    if problems:
        raise SiteInputError(problems)
    unique = {name: list(dict.fromkeys(found)) for name, found in sources.items()}
    return [
        site_input(title, result, own_sources(document, unique[name]), document=document)
        for name, title, result, document in documents
    ]


def site_input(
    name: str,
    result: BaseModel,
    sources: Sequence[Path] = (),
    *,
    review: DocumentReview | None = None,
    document: dict[str, Any] | None = None,
) -> SiteInput[Any]:
    """The site input of a typed result (of the kind its type says) and its sources;
    `document`: the JSON it was read from (copied to the site's data as it came in; None: the
    result's own JSON). A leaderboard is reviewed against its own weights here, once (a review
    its producer made is kept), and given Inspect logs, it gets the samples read from them
    (`read_leaderboard_samples`)."""
    kind_name = kind_of(result).name
    if not isinstance(result, LeaderboardDocument):
        return SiteInput(kind_name, name, result, tuple(sources), data=document)
    if review is None:
        from plumbline.leaderboard.check import review_document

        review = review_document(result.to_json())
    samples = None
    if sources:
        from plumbline.leaderboard.samples import read_leaderboard_samples

        samples = read_leaderboard_samples(result, sources)
    return SiteInput(kind_name, name, result, tuple(sources), samples, review, data=document)


def read_site_input(
    kind_name: Kind, name: str, document: Any, sources: Sequence[Path] = ()
) -> SiteInput[Any]:
    """The site input of a JSON document of kind `kind_name`, typed once (`ResultKind.read`:
    `ResultDocumentError` when it is not one) and copied to the site's data as it came in."""
    return site_input(name, kind(kind_name).read(document), sources, document=document)


def own_sources(document: Any, candidates: Sequence[Path]) -> tuple[Path, ...]:
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


def existing_reports(root: Path, exclude: set[str]) -> list[tuple[SiteInput[Any], str]]:
    """Reports an earlier run wrote under `root` (its `data/<slug>.json` beside
    `<slug>/index.html`), except the slugs in `exclude`; for the index of a site that grows.
    A report this version cannot read is listed with why (`SiteInput.problems`)."""
    found: list[tuple[SiteInput[Any], str]] = []
    for path in sorted((root / "data").glob("*.json")):
        slug = path.stem
        if slug in exclude or not (root / slug / "index.html").is_file():
            continue
        try:
            document = read_json_file(path)
        except (OSError, ValueError):
            continue
        name = document_kind(document)
        if name is None:
            continue
        try:
            result = kind(name).read(document)
        except ResultDocumentError as error:
            found.append((SiteInput(name, slug, None, problems=tuple(error.problems)), slug))
            continue
        found.append((site_input(slug, result, (), document=document), slug))
    return found


#: The drill-down document of a leaderboard, under `data/<slug>/`.
SAMPLES_FILE = "samples.json"


def write_site(
    inputs: Sequence[SiteInput[Any]], out_dir: Path, *, keep_other_reports: bool = False
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
        claim(root, manifest)
        known = dict(manifest.get("reports", {}))
        slugs = assign_slugs(inputs, existing_identities(root, known) if keep_other_reports else {})
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


def _render_pages(inputs: Sequence[SiteInput[Any]], slugs: Sequence[str]) -> list[Page]:
    pages: list[Page] = []
    for site_input, slug in zip(inputs, slugs, strict=True):
        rendered = render_pages(site_input, slug)
        for page in rendered:
            if not page.path.startswith(f"{slug}/"):
                raise ValueError(f"the {site_input.kind} page wrote {page.path} outside {slug}/")
        pages.extend(rendered)
    return pages


def _data(site_input: SiteInput[Any]) -> dict[str, Any]:
    """The JSON of an input's data copy: as it came in, else its result's own."""
    if site_input.data is not None:
        return site_input.data
    return kind(site_input.kind).to_json(site_input.typed())


def _publish(
    root: Path,
    inputs: Sequence[SiteInput[Any]],
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
    stage = Path(tempfile.mkdtemp(prefix=stage_prefix(real), dir=real.parent))
    try:
        link_tree(real, stage)
        (stage / SITE_LOCK).touch()  # its own lock: writers waiting on the old one take it

        def staged(relative: str, data: str | bytes) -> Path:
            write_atomic(stage / relative, data)
            return root / relative

        written = [staged(page.path, page.html) for page in pages]
        data: list[Path] = []
        for site_input, slug in zip(inputs, slugs, strict=True):
            data.append(staged(f"data/{slug}.json", json_text(_data(site_input))))
            samples = f"data/{slug}/{SAMPLES_FILE}"
            if site_input.samples is not None:
                data.append(staged(samples, json_text(site_input.samples.model_dump(mode="json"))))
            else:
                (stage / samples).unlink(missing_ok=True)  # an earlier run's, no page shows now
        remove_stale_pages(stage, slugs, {stage / page.path for page in pages})
        manifest = {"generator": "plumbline", "version": MANIFEST_VERSION, "reports": reports}
        write_atomic(stage / SITE_MARKER, json_text(manifest))
        write_atomic(stage / index.path, index.html)
        inside = cwd_inside(real)
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


__all__ = [
    "GENERATOR_MARK",
    "PAGES",
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
    "read_site_input",
    "render_index",
    "site_input",
    "site_lock",
    "site_problem",
    "write_site",
]
