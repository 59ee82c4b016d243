"""cfn-lint on synthesized templates.

cfn-lint exits non-zero for warnings and informational findings too; the reference
implementation failed samples on those. Here every finding is recorded and only the
severities in ``fail_on`` (default: errors) fail a sample.

Reference: https://github.com/aws-cloudformation/cfn-lint (the ``cfnlint.api`` module).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

from plumbline.cdk.outcomes import LintFinding

SEVERITIES = ("error", "warning", "informational")
DEFAULT_REGIONS = ("us-east-1",)

_lock = threading.Lock()  # cfn-lint keeps module-level caches; one template at a time


def check_fail_on(fail_on: Iterable[str]) -> tuple[str, ...]:
    """Validate a set of failing severities."""
    values = tuple(dict.fromkeys(s.strip().lower() for s in fail_on))
    unknown = [s for s in values if s not in SEVERITIES]
    if unknown:
        raise ValueError(f"fail_on: unknown severity {unknown[0]!r}; use {', '.join(SEVERITIES)}")
    return values


def lint_template(
    text: str, name: str, *, regions: Sequence[str] = DEFAULT_REGIONS
) -> list[LintFinding]:
    """Every cfn-lint finding on one template (JSON or YAML text)."""
    # Imported here: cfn-lint takes about 0.7 s to import.
    from cfnlint.api import ManualArgs, lint  # type: ignore[import-untyped]

    with _lock:
        matches = lint(text, config=ManualArgs(regions=list(regions)))
    findings = []
    for match in matches:
        severity = str(getattr(match.rule, "severity", "error")).lower()
        if severity.startswith("info"):
            severity = "informational"
        findings.append(
            LintFinding(
                rule=str(match.rule.id),
                severity=severity if severity in SEVERITIES else "error",
                message=str(match.message),
                template=name,
                line=int(match.linenumber) if getattr(match, "linenumber", None) else None,
            )
        )
    return findings
