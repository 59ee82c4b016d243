"""A JSON result's page added to a site as a producing command's `--html DIR` adds it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from plumbline.app.publish import Outputs
from plumbline.app.site import SiteResult
from plumbline.cli.output import dumps
from plumbline.cli.report import publish_result
from plumbline.results.kinds import kind


def write_html(
    kind_name: str, name: str, document: Any, sources: Sequence[Path], directory: Path
) -> SiteResult:
    """Publish the typed `document` with only its page asked for (other reports kept)."""
    result = kind(kind_name).read(document)
    outputs = Outputs(dumps=dumps, html_dir=directory, page_name=name)
    site = publish_result(result, sources, outputs).site
    assert site is not None
    return site
