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

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plumbline.core.result import document_kind as result_kind
from plumbline.records.inspect_logs import find_log_files
from plumbline.records.io import (
    Located,
    UnreadableFileError,
    iter_json_values,
    read_json_file,
    write_atomic,
    write_json_atomic,
)
from plumbline.views.html import Page
from plumbline.views.site import (
    KINDS,
    RENDERERS,
    Kind,
    SiteInput,
    assign_slugs,
    render_index,
    renderer_for,
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
    """Render every input's pages and the index under `out_dir`, each file written atomically.

    Each input's document is copied to `data/<slug>.json` (and a leaderboard's samples to
    `data/<slug>/samples.json`). Pages are all rendered before the
    first file is written, so a renderer that fails leaves the previous site untouched; pages
    of an earlier site in the same folders that this one no longer has are removed. With
    `keep_other_reports`, reports already in `out_dir` under other slugs stay and the index
    lists them too (so `compare --html site/` and `reliability --html site/` share a site).
    """
    if not inputs:
        raise SiteInputError(
            ["no inputs: give at least one leaderboard, compare or reliability JSON"]
        )
    slugs = assign_slugs(inputs)
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
    root = Path(out_dir)
    kept = existing_reports(root, set(slugs)) if keep_other_reports else []
    pages.append(
        render_index([*inputs, *(item for item, _ in kept)], [*slugs, *(slug for _, slug in kept)])
    )

    written: list[Path] = []
    for page in pages:
        target = root / page.path
        write_atomic(target, page.html)
        written.append(target)
    data: list[Path] = []
    for site_input, slug in zip(inputs, slugs, strict=True):
        target = root / "data" / f"{slug}.json"
        write_json_atomic(target, site_input.document)
        data.append(target)
        samples = root / "data" / slug / SAMPLES_FILE
        if site_input.samples is not None:
            write_json_atomic(samples, site_input.samples.model_dump(mode="json"))
            data.append(samples)
        else:
            samples.unlink(missing_ok=True)  # an earlier run's samples no page shows now
    _remove_stale_pages(root, slugs, set(written))
    return SiteResult(root=root, index=root / "index.html", pages=written, data=data)


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
    "slugify",
    "write_site",
]
