"""The naive baseline: the npm ``cdk`` CLI and the ``cfn-lint`` CLI, one app at a time.

This is how the reference implementation scored samples (``cdk synth`` in a fresh directory,
then ``cfn-lint`` on the templates), kept as the baseline that ``benchmarks/bench_cdk.py``
measures the warm pool against. It runs the app **directly on the host, without a sandbox**:
use it only on trusted code such as the dataset's reference solutions.

Unlike the reference, it classifies a CLI/library cloud-assembly schema mismatch as
``infra_error`` and fails only on cfn-lint errors.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from plumbline.cdk.assembly import _count_resources
from plumbline.cdk.extract import ExtractedApp
from plumbline.cdk.outcomes import Outcome, SynthReport, looks_like_infra_failure, stderr_head
from plumbline.cdk.runtime import DUMMY_ACCOUNT, DUMMY_REGION, silence_node_warnings
from plumbline.cdk.synth import build_job

#: The pinned CLI that `make cdk-cli` installs (the CLI must be at least as new as the
#: library's cloud-assembly schema, or every synth fails).
CDK_CLI_VERSION = "2.1148.1"
PROJECT_CLI = Path(".tools/cdk-cli/node_modules/.bin/cdk")


def find_cdk_cli() -> str | None:
    """The project-local CDK CLI (installed by `make cdk-cli`), else `cdk` on PATH."""
    if PROJECT_CLI.exists():
        return str(PROJECT_CLI.resolve())
    return shutil.which("cdk")


def _write_app(root: Path, files: Mapping[str, str]) -> None:
    """The job's files under `root` (the app in `root / "app"`)."""
    for name, text in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def _cli_environment(root: Path) -> dict[str, str]:
    """The environment `cdk synth` runs in: this Python first on PATH, the dummy account."""
    python_bin = str(Path(sys.executable).parent)
    return {
        "PATH": f"{python_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        # The user's HOME, as the reference ran: the jsii package cache persists there.
        "HOME": os.environ.get("HOME", str(root)),
        "CDK_DEFAULT_ACCOUNT": DUMMY_ACCOUNT,
        "CDK_DEFAULT_REGION": DUMMY_REGION,
        "CDK_DISABLE_VERSION_CHECK": "1",
        **silence_node_warnings(),
    }


def _synth_failed(report: SynthReport, synth: subprocess.CompletedProcess[str]) -> bool:
    """Record `cdk synth`'s log; True (with the outcome set) when it exited non-zero."""
    report.log = synth.stdout + synth.stderr
    if synth.returncode == 0:
        return False
    report.stderr_head = stderr_head(synth.stderr)
    if looks_like_infra_failure(report.log):
        report.outcome = Outcome.INFRA_ERROR
        report.reason = "the CDK CLI and library do not match (cloud assembly schema)"
    else:
        report.outcome = Outcome.SYNTH_ERROR
        report.reason = f"cdk synth exited with status {synth.returncode}"
    return True


def _lint_templates(report: SynthReport, templates: list[Path], timeout: float) -> None:
    """Count the templates' resources and run cfn-lint on them: errors fail the sample."""
    report.templates = [path.name for path in templates]
    report.resource_count = sum(
        _count_resources(json.loads(path.read_text())) for path in templates
    )
    lint = subprocess.run(
        [
            str(Path(sys.executable).parent / "cfn-lint"),
            "--format",
            "json",
            *map(str, templates),
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    findings = json.loads(lint.stdout or "[]")
    errors = [f for f in findings if str(f.get("Level", "")).lower() == "error"]
    if errors:
        report.outcome = Outcome.LINT_ERROR
        report.reason = f"cfn-lint found {len(errors)} error(s)"
    else:
        report.reason = f"synthesized {len(templates)} template(s)"


def synth_with_cli(app: ExtractedApp, cdk: str, *, timeout: float = 60.0) -> SynthReport:
    """`cdk synth` then `cfn-lint` on one app, unsandboxed (trusted code only)."""
    started = time.monotonic()
    job = build_job(app)
    if isinstance(job, SynthReport):
        job.engine = "cdk-cli"
        return job
    report = SynthReport(Outcome.PASSED, files=dict(app.files), entry=app.entry, engine="cdk-cli")
    with tempfile.TemporaryDirectory(
        prefix="plumbline-cdk-cli-", ignore_cleanup_errors=True
    ) as directory:
        root = Path(directory)
        _write_app(root, job.files)
        workdir = root / "app"
        try:
            synth = subprocess.run(
                [cdk, "synth", "--quiet", "--no-notices"],
                cwd=workdir,
                env=_cli_environment(root),
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            report.outcome = Outcome.TIMEOUT
            report.reason = f"cdk synth did not finish within {timeout:g} s"
            report.seconds = time.monotonic() - started
            return report
        if _synth_failed(report, synth):
            report.seconds = time.monotonic() - started
            return report
        _lint_templates(report, sorted((workdir / "cdk.out").glob("*.template.json")), timeout)
    report.seconds = time.monotonic() - started
    return report
