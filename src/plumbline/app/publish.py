"""Publish a result: every output a producing command writes, once, from the typed result.

    published = publish(report, sources=records, outputs=Outputs(json_path=..., html_dir=...))

In one call, in this order: the result's one consistency check (`ResultKind.check`) and its
one conversion to JSON values; the JSON file, the Markdown and the CSV (nothing is written when
a JSON file is asked for and the check fails: `InvalidResultError`); the result's page in the
static site; the command's own showing of it (the JSON on stdout, or the terminal view); the
store row. Nothing here parses the result again: the page gets the typed result, the store its
metrics from it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from plumbline.records.io import write_atomic
from plumbline.results.kinds import ResultKind, kind_of

if TYPE_CHECKING:
    from plumbline.app.site import SiteResult
    from plumbline.results.stored import ResultDocument


class InvalidResultError(ValueError):
    """A result that fails its own check: no file was written; every problem as
    `path: field: why`."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {problem}" for problem in problems))


@dataclass(frozen=True)
class Outputs:
    """What to make of a result (None: not that output).

    `dumps` serialises JSON values as the command prints them; `markdown`/`csv` render the
    typed result; `page_name` names its page in the site at `html_dir`; `show` is the
    command's showing of it (given the JSON values and the site written, or None); `store`
    records the stored form of the result (a store's failures are the caller's to report)."""

    dumps: Callable[[Any], str]
    json_path: str | Path | None = None
    markdown_path: str | Path | None = None
    markdown: Callable[[Any], str] | None = None
    csv_path: str | Path | None = None
    csv: Callable[[Any], str] | None = None
    html_dir: Path | None = None
    page_name: str | None = None
    show: Callable[[dict[str, Any], SiteResult | None], None] | None = None
    store: Callable[[Callable[[], ResultDocument]], object] | None = None


@dataclass(frozen=True)
class Published:
    """What publishing wrote: the result's JSON values and the site (None: no page)."""

    data: dict[str, Any]
    site: SiteResult | None


def publish(result: BaseModel, sources: Sequence[Path], outputs: Outputs) -> Published:
    """Write every output of `result` (see the module); `sources`: the local files it was
    computed from (the page's sources and the stored input digests)."""
    definition = kind_of(result)
    problems = definition.check(result)
    data = definition.to_json(result)
    if problems and outputs.json_path is not None:
        raise InvalidResultError(str(outputs.json_path), problems)
    _write_files(result, data, outputs)
    site = _write_page(definition, result, data, problems, sources, outputs)
    if outputs.show is not None:
        outputs.show(data, site)
    if outputs.store is not None:
        outputs.store(lambda: _stored(result, data, problems))
    return Published(data=data, site=site)


def _write_files(result: BaseModel, data: dict[str, Any], outputs: Outputs) -> None:
    if outputs.json_path is not None:
        write_atomic(outputs.json_path, outputs.dumps(data) + "\n")
    if outputs.csv_path is not None and outputs.csv is not None:
        write_atomic(outputs.csv_path, outputs.csv(result))
    if outputs.markdown_path is not None and outputs.markdown is not None:
        write_atomic(outputs.markdown_path, outputs.markdown(result))


def _write_page(
    definition: ResultKind[Any],
    result: BaseModel,
    data: dict[str, Any],
    problems: list[str],
    sources: Sequence[Path],
    outputs: Outputs,
) -> SiteResult | None:
    """The result's page in the site (its other reports kept), or None when none is asked."""
    if outputs.html_dir is None:
        return None
    from plumbline.app.site import site_input, write_site

    review = definition.review(result, problems)
    name = outputs.page_name or definition.name
    given = site_input(name, result, sources, review=review, document=data)
    return write_site([given], outputs.html_dir, keep_other_reports=True)


def _stored(result: BaseModel, data: dict[str, Any], problems: list[str]) -> ResultDocument:
    """The stored form of the result: from the typed result when its check found nothing,
    else read from its JSON as any stored file is (which refuses what the store cannot keep)."""
    from plumbline.results.stored import read_result, stored_result

    if problems:
        return read_result(data)
    return stored_result(result, data)
