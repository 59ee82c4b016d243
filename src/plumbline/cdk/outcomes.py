"""The synthesis outcome taxonomy: every sample gets exactly one of these."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Outcome(StrEnum):
    """Why a sample passed or failed.

    ``infra_error`` means the sandbox or the toolchain failed (bubblewrap missing, the jsii
    runtime not starting, a CDK CLI older than the library's cloud-assembly schema): the
    sample is left unscored and reported, never counted against the model.

    ``forged_output`` means the cloud assembly holds a file that no CDK synthesis in that run
    wrote (an app writing ``*.template.json`` or ``manifest.json`` itself, or copying over a
    real synthesis's output): scored as a failure.
    """

    PASSED = "passed"
    EXTRACTION_FAILED = "extraction_failed"
    PYTHON_ERROR = "python_error"
    SYNTH_ERROR = "synth_error"
    LINT_ERROR = "lint_error"
    TIMEOUT = "timeout"
    RESOURCE_LIMIT = "resource_limit"
    FORGED_OUTPUT = "forged_output"
    INFRA_ERROR = "infra_error"

    @property
    def scored(self) -> bool:
        return self is not Outcome.INFRA_ERROR

    @property
    def passed(self) -> bool:
        return self is Outcome.PASSED


@dataclass(frozen=True)
class LintFinding:
    """One cfn-lint finding on one template."""

    rule: str
    severity: str  # "error", "warning" or "informational"
    message: str
    template: str
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SynthReport:
    """Everything known about one sample's synthesis.

    Attributes:
        outcome: the single outcome.
        reason: one sentence saying why.
        exception_type: the Python exception type for python_error (and others when known).
        stderr_head: the first useful lines of the app's output and traceback.
        resource_count: CloudFormation resources over all templates (None if none produced).
        templates: template file names in the cloud assembly.
        lint: every cfn-lint finding, including warnings that did not fail the sample.
        files: the extracted files; entry: the file that was run.
    """

    outcome: Outcome
    reason: str = ""
    exception_type: str | None = None
    stderr_head: str = ""
    resource_count: int | None = None
    templates: list[str] = field(default_factory=list)
    lint: list[LintFinding] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    entry: str | None = None
    notes: list[str] = field(default_factory=list)
    log: str = ""
    seconds: float = 0.0
    engine: str = "pool"

    @property
    def lint_counts(self) -> dict[str, int]:
        counts = {"error": 0, "warning": 0, "informational": 0}
        for finding in self.lint:
            counts[finding.severity] = counts.get(finding.severity, 0) + 1
        return counts

    def to_dict(self, *, include_files: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "outcome": self.outcome.value,
            "scored": self.outcome.scored,
            "passed": self.outcome.passed,
            "reason": self.reason,
            "exception_type": self.exception_type,
            "stderr_head": self.stderr_head,
            "resource_count": self.resource_count,
            "templates": list(self.templates),
            "lint_counts": self.lint_counts,
            "lint": [finding.to_dict() for finding in self.lint],
            "entry": self.entry,
            "notes": list(self.notes),
            "seconds": round(self.seconds, 3),
            "engine": self.engine,
        }
        if include_files:
            data["files"] = dict(self.files)
            data["log"] = self.log
        return data


_NOISE = re.compile(
    r"^(?:b'!!.*|!!.*|\s*$|.*(?:DeprecationWarning|jsii-runtime|node version).*)$", re.IGNORECASE
)


def stderr_head(text: str, lines: int = 12, width: int = 300) -> str:
    """The first useful lines of a log: banners and blank lines dropped, long lines cut.

    For a traceback, the last line (the exception itself) is what a reader needs first, so it
    is put at the top.
    """
    useful = [line[:width] for line in text.splitlines() if not _NOISE.match(line)]
    if not useful:
        return ""
    if any(line.startswith("Traceback (most recent call last)") for line in useful):
        final = next(
            (line for line in reversed(useful) if line and not line.startswith(" ")), useful[-1]
        )
        useful = [final, *[line for line in useful if line is not final]]
    return "\n".join(useful[:lines])


#: Messages that mean the toolchain, not the app, is broken.
INFRA_PATTERNS = (
    re.compile(r"cloud assembly schema version mismatch", re.IGNORECASE),
    re.compile(r"maximum schema version supported is", re.IGNORECASE),
    re.compile(r"This CDK CLI is not compatible with the CDK library", re.IGNORECASE),
    re.compile(r"jsii.*(?:kernel|runtime).*(?:not found|failed to start)", re.IGNORECASE),
    re.compile(r"Cannot use the jsii package cache", re.IGNORECASE),
    re.compile(r"No module named '(?:aws_cdk|jsii|constructs)'$", re.IGNORECASE | re.MULTILINE),
    re.compile(r"node: (?:not found|No such file)", re.IGNORECASE),
)


def looks_like_infra_failure(text: str) -> bool:
    """True when a log shows the toolchain failing (schema mismatch, runtime missing)."""
    return any(pattern.search(text) for pattern in INFRA_PATTERNS)
