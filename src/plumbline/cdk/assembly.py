"""What a synthesis left behind: the outcome of a run that raised or crashed, and the cloud
assembly's manifests, annotations, built-in validation notes and forged files."""

from __future__ import annotations

import errno
import hashlib
import json
import signal
from pathlib import PurePosixPath
from typing import Any

from plumbline.cdk.outcomes import (
    Outcome,
    SynthReport,
    looks_like_infra_failure,
    stderr_head,
)
from plumbline.sandbox import JobResult, ResourceLimits


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _from_exception(result: JobResult, report: SynthReport) -> SynthReport:
    exception = result.exception or {}
    kind = str(exception.get("type", "Exception"))
    module = str(exception.get("module", ""))
    message = str(exception.get("message", ""))
    text = str(exception.get("traceback", ""))
    report.exception_type = kind
    report.stderr_head = stderr_head(text or result.log)
    code = exception.get("errno")
    if looks_like_infra_failure(message) or looks_like_infra_failure(text):
        report.outcome, report.reason = Outcome.INFRA_ERROR, f"toolchain failure: {message}"
    elif kind == "MemoryError":
        report.outcome = Outcome.RESOURCE_LIMIT
        report.reason = "the app ran out of its address-space limit (MemoryError)"
    elif code == errno.EAGAIN and kind in ("BlockingIOError", "OSError"):
        report.outcome = Outcome.RESOURCE_LIMIT
        report.reason = "the app tried to create processes; the sandbox allows none"
    elif code in (errno.EFBIG, errno.ENOSPC, errno.EDQUOT):
        report.outcome = Outcome.RESOURCE_LIMIT
        report.reason = f"the app hit the disk limit ({kind}: {message})"
    elif module.startswith("jsii") or any(
        str(name).startswith("jsii.") for name in exception.get("chain", [])
    ):
        report.outcome = Outcome.SYNTH_ERROR
        report.reason = "CDK rejected the app during synthesis: " + (
            message.strip().splitlines()[0] if message.strip() else kind
        )
    else:
        report.outcome = Outcome.PYTHON_ERROR
        first = message.strip().splitlines()[0] if message.strip() else ""
        report.reason = f"the app raised {kind}" + (f": {first}" if first else "")
    return report


def _from_crash(result: JobResult, report: SynthReport, limits: ResourceLimits) -> SynthReport:
    report.stderr_head = stderr_head(result.log)
    number = result.signal
    if number == signal.SIGXCPU:
        report.outcome = Outcome.TIMEOUT
        report.reason = f"the app used its {limits.cpu_seconds} CPU seconds"
    elif number in (signal.SIGXFSZ, signal.SIGKILL):
        report.outcome = Outcome.RESOURCE_LIMIT
        report.reason = (
            "the app wrote a file larger than the file-size limit"
            if number == signal.SIGXFSZ
            else "the app was killed (SIGKILL), typically for exhausting memory"
        )
    elif number is not None:
        report.outcome = Outcome.PYTHON_ERROR
        report.exception_type = _signal_name(number)
        report.reason = f"the app's process died from {_signal_name(number)}"
    elif looks_like_infra_failure(result.log):
        report.outcome, report.reason = Outcome.INFRA_ERROR, "toolchain failure (see log)"
    elif result.returncode == 0:
        report.outcome = Outcome.SYNTH_ERROR
        report.reason = "the app ended its process before a cloud assembly could be read"
    else:
        report.outcome = Outcome.PYTHON_ERROR
        report.exception_type = f"exit status {result.returncode}"
        report.reason = f"the app ended its process with exit status {result.returncode}"
    return report


def _manifests(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    manifests = {}
    for name, text in files.items():
        if PurePosixPath(name).name == "manifest.json":
            try:
                value = json.loads(text)
            except ValueError:
                continue
            if isinstance(value, dict):
                manifests[name] = value
    return manifests


def _annotations(
    manifests: dict[str, dict[str, Any]], files: dict[str, str], level: str
) -> list[str]:
    """Annotations of a level ("error", "warning") recorded in the cloud assembly.

    They sit in each artifact's ``metadata`` in the manifest, or, in newer assemblies, in the
    ``*.metadata.json`` file the artifact names as ``additionalMetadataFile``.
    """
    sources: list[dict[str, Any]] = []
    for name, manifest in manifests.items():
        base = PurePosixPath(name).parent
        for artifact in (manifest.get("artifacts") or {}).values():
            if not isinstance(artifact, dict):
                continue
            sources.append(artifact.get("metadata") or {})
            extra = artifact.get("additionalMetadataFile")
            if isinstance(extra, str) and (base / extra).as_posix() in files:
                try:
                    sources.append(json.loads(files[(base / extra).as_posix()]))
                except ValueError:
                    continue
    found = []
    for metadata in sources:
        if not isinstance(metadata, dict):
            continue
        for path, entries in metadata.items():
            for entry in entries if isinstance(entries, list) else []:
                if isinstance(entry, dict) and entry.get("type") == f"aws:cdk:{level}":
                    found.append(f"{path}: {entry.get('data')}")
    return found


def _builtin_validation_notes(files: dict[str, str]) -> list[str]:
    """The findings of aws-cdk-lib's built-in validator (its `validation-report.json`)."""
    notes: list[str] = []
    for name, text in files.items():
        if not name.endswith("validation-report.json"):
            continue
        try:
            document = json.loads(text)
        except ValueError:
            continue
        if not isinstance(document, dict):
            continue
        for plugin in document.get("pluginReports") or []:
            for violation in (plugin.get("violations") or [])[:20]:
                notes.append(
                    f"CDK built-in validation ({plugin.get('pluginName')}): "
                    f"{violation.get('ruleName')} {violation.get('description')}"
                )
    return notes


def forged_outputs(files: dict[str, str], synthesized: dict[str, str] | None) -> list[str]:
    """Collected assembly files that no CDK synthesis observed in the run wrote as they are.

    A file counts as genuine only when the worker's record of the run's syntheses holds it with
    the same SHA-256 (see ``sandbox.worker``); without a record, every file is unobserved.
    """
    record = synthesized or {}
    return [
        name
        for name, text in sorted(files.items())
        if record.get(name) != hashlib.sha256(text.encode("utf-8")).hexdigest()
    ]


def _count_resources(template: Any) -> int:
    resources = template.get("Resources") if isinstance(template, dict) else None
    if not isinstance(resources, dict):
        return 0
    return sum(
        1
        for body in resources.values()
        if not (isinstance(body, dict) and body.get("Type") == "AWS::CDK::Metadata")
    )


def _syntax_error(files: dict[str, str]) -> SyntaxError | None:
    """The first syntax error among the app's Python files (compiled, never executed)."""
    if sum(len(text) for text in files.values()) > 1_000_000:
        return None  # leave very large inputs to the sandbox
    for name, text in files.items():
        if not name.endswith(".py"):
            continue
        try:
            compile(text, name, "exec", dont_inherit=True)
        except SyntaxError as error:  # includes IndentationError and TabError
            return error
        except (ValueError, MemoryError, RecursionError):
            return None
    return None
