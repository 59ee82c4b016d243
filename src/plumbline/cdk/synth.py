"""Synthesize a model's CDK app in a sandbox and give it exactly one outcome.

Synthesis runs the app as ``cdk synth`` would: the app command from ``cdk.json`` (default
``python app.py``) with ``CDK_OUTDIR``, ``CDK_CONTEXT_JSON`` and the documented dummy
``CDK_DEFAULT_ACCOUNT``/``CDK_DEFAULT_REGION`` set, producing a cloud assembly. Like the CLI,
a sample fails when the app raises, writes no assembly, defines no stacks, or records error
annotations. Then cfn-lint checks every template: errors fail the sample; warnings and
informational findings are recorded (``fail_on`` changes that).

The app runs in a warm worker of a ``WarmPool``: a sandboxed Python process that already
imported aws_cdk (the jsii runtime's ~3 s start-up), serving this one sample only.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import time
from abc import abstractmethod
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from plumbline.cdk.assembly import (
    _annotations,
    _builtin_validation_notes,
    _count_resources,
    _from_crash,
    _from_exception,
    _manifests,
    _syntax_error,
    forged_outputs,
)
from plumbline.cdk.extract import ExtractedApp, extract_app, extract_from_source
from plumbline.cdk.lint import DEFAULT_REGIONS, check_fail_on, lint_template
from plumbline.cdk.outcomes import (
    LintFinding,
    Outcome,
    SynthReport,
    stderr_head,
)
from plumbline.cdk.runtime import (
    JSII_CACHE_IN_SANDBOX,
    VALIDATOR_SCRIPT,
    VALIDATOR_SCRIPT_IN_SANDBOX,
    VALIDATOR_SNAPSHOT_IN_SANDBOX,
    RuntimeMissing,
    cdk_environment,
    ensure_jsii_cache,
    ensure_validator_snapshot,
    sandbox_layout,
)
from plumbline.compat import jsii as jsii_compat
from plumbline.core.closing import Closing
from plumbline.sandbox import Job, JobResult, ResourceLimits, SandboxLayout, WarmPool

#: Modules every worker imports before its sample arrives. aws_cdk starts the jsii runtime
#: (the expensive part); the service modules are the ones CDK apps use most.
PRELOAD = (
    "aws_cdk",
    "constructs",
    "aws_cdk.aws_iam",
    "aws_cdk.aws_s3",
    "aws_cdk.aws_lambda",
    "aws_cdk.aws_ec2",
    "aws_cdk.aws_dynamodb",
    "aws_cdk.aws_sqs",
    "aws_cdk.aws_sns",
    "aws_cdk.aws_apigateway",
    "aws_cdk.aws_logs",
    "aws_cdk.aws_kms",
)

APP_DIR = "app"
OUTDIR = "cdk.out"
COLLECT = (
    f"{OUTDIR}/*manifest.json",
    f"{OUTDIR}/*.template.json",
    f"{OUTDIR}/*.metadata.json",
    f"{OUTDIR}/*validation-report.json",  # aws-cdk-lib's built-in validator, when it ran
)
_PYTHON = re.compile(r"^(?:.*/)?(?:python|py)(?:\d+(?:\.\d+)?)?$")


@dataclass(frozen=True)
class SynthOptions:
    """How samples are synthesized and judged.

    Attributes:
        limits: per-sample resource limits (wall clock 60 s by default).
        fail_on: cfn-lint severities that fail a sample ("error" by default).
        regions: regions cfn-lint checks templates against.
        pool_size: samples synthesized at once (default: number of CPUs, at least 2).
        unsafe_no_sandbox: run model code directly on the host. Only for users who accept it.
        lint: run cfn-lint at all.
        preload: modules warm workers import before their sample arrives. CDK apps need
            ``aws_cdk`` among them: once a sample runs no process can be created, and the jsii
            runtime is one (workers without it suit only apps that never reach CDK).
        expected_samples: how many samples will be checked, if known (no spare workers).
        builtin_validation: let aws-cdk-lib run its built-in CloudFormation validator at synth
            time. Off by default: it costs about 0.5 CPU seconds per sample (its WebAssembly
            rule engine restored from ``validator_snapshot``; 3.4 s to build it) and, unless
            the app itself sets ``@aws-cdk/core:validateAgainstDefaultRules`` (which keeps it
            on), its findings are only warnings that never change the outcome; cfn-lint
            checks every template.
        validator_snapshot: restore that validator's engine from a snapshot built once on the
            host by a trusted process (`ensure_validator_snapshot`), read-only in the sandbox,
            rather than building it in every runtime; the findings are the same.
    """

    limits: ResourceLimits = field(default_factory=ResourceLimits)
    fail_on: tuple[str, ...] = ("error",)
    regions: tuple[str, ...] = DEFAULT_REGIONS
    pool_size: int | None = None
    unsafe_no_sandbox: bool = False
    lint: bool = True
    preload: tuple[str, ...] = PRELOAD
    expected_samples: int | None = None
    builtin_validation: bool = False
    validator_snapshot: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "fail_on", check_fail_on(self.fail_on))


@dataclass(frozen=True)
class AppCommand:
    """The Python command of a cdk.json ``app`` entry."""

    entry: str
    args: tuple[str, ...] = ()
    module: bool = False


def parse_app_command(command: str) -> AppCommand:
    """Parse ``python3 app.py``-style commands; ValueError for anything else.

    Only Python apps are in scope; the command runs inside the warm worker, which already
    is a Python interpreter with aws_cdk loaded.
    """
    try:
        words = shlex.split(command)
    except ValueError as error:
        raise ValueError(f"cdk.json app command {command!r} cannot be parsed: {error}") from error
    if not words or not _PYTHON.match(words[0]):
        raise ValueError(f"cdk.json app command {command!r} is not a Python command")
    rest = words[1:]
    while rest and rest[0].startswith("-") and rest[0] != "-m":
        option = rest.pop(0)
        if option in ("-W", "-X") and rest:
            rest.pop(0)
    if not rest:
        raise ValueError(f"cdk.json app command {command!r} names no script")
    if rest[0] == "-m":
        if len(rest) < 2:
            raise ValueError(f"cdk.json app command {command!r} names no module")
        return AppCommand(rest[1], tuple(rest[2:]), module=True)
    return AppCommand(rest[0], tuple(rest[1:]))


def build_job(app: ExtractedApp, *, builtin_validation: bool = False) -> Job | SynthReport:
    """The sandbox job for an extracted app, or the report of why there is none."""
    if not app.ok or app.entry is None:
        return SynthReport(
            Outcome.EXTRACTION_FAILED,
            reason=app.reason or "no entry point",
            files=dict(app.files),
            notes=list(app.notes),
        )
    files = dict(app.files)
    context: dict[str, Any] = {}
    if "cdk.json" in files:
        try:
            config = json.loads(files["cdk.json"])
            if not isinstance(config, dict):
                raise ValueError("cdk.json must be a JSON object")
            command = parse_app_command(str(config.get("app", f"python3 {app.entry}")))
            context = dict(config.get("context") or {})
        except ValueError as error:
            return SynthReport(
                Outcome.SYNTH_ERROR,
                reason=str(error),
                files=files,
                entry=app.entry,
                notes=list(app.notes),
            )
    else:
        command = AppCommand(app.entry)
        files["cdk.json"] = json.dumps({"app": f"python3 {app.entry}"}, indent=2) + "\n"
    return Job(
        files={f"{APP_DIR}/{name}": text for name, text in files.items()},
        entry=command.entry,
        args=command.args,
        module=command.module,
        cwd=APP_DIR,
        collect=COLLECT,
        cdk_context=context,
        cdk_app_defaults={}
        if builtin_validation
        else {"builtin_cloud_formation_validation": False},
        record_synthesis=True,
    )


class SynthesizerBase(Closing):
    """What every synthesizer offers on top of its own `check_app`: a model response or a
    Python source in, one report out (`CdkSynthesizer` here, `RaySynthesizer` on a cluster)."""

    @property
    @abstractmethod
    def engine(self) -> str:
        """Where apps are synthesized, as reports name it."""

    @abstractmethod
    def check_app(self, app: ExtractedApp) -> SynthReport:
        """Synthesize one extracted app, lint it."""

    @abstractmethod
    def close(self) -> None:
        """Stop the workers."""

    def check_response(self, response: str) -> SynthReport:
        """Extract the app from a model response, synthesize it, lint it."""
        return self.check_app(extract_app(response))

    def check_source(self, source: str, name: str = "app.py") -> SynthReport:
        """Synthesize an app given as Python source."""
        return self.check_app(extract_from_source(source, name))

    async def acheck_response(self, response: str) -> SynthReport:
        """``check_response`` without blocking the event loop."""
        return await asyncio.to_thread(self.check_response, response)


class CdkSynthesizer(SynthesizerBase):
    """Synthesizes apps in warm sandboxed workers; one outcome per sample.

    Raises:
        SandboxUnavailable: bubblewrap cannot create a sandbox here (and the options do not
            say ``unsafe_no_sandbox``); no model code is run.
    """

    def __init__(self, options: SynthOptions | None = None) -> None:
        self.options = options or SynthOptions()
        self.infra_problem: str | None = None
        self._pool: WarmPool | None = None
        try:
            cache = ensure_jsii_cache()
        except RuntimeMissing as error:
            self.infra_problem = str(error)
            return
        snapshot = ensure_validator_snapshot(cache) if self.options.validator_snapshot else None
        validator: tuple[str, str] | None = None
        if self.options.unsafe_no_sandbox:
            cache_path, layout = str(cache), SandboxLayout()
            jsii_stop = str(jsii_compat.RUNTIME_SCRIPT)
            if snapshot is not None:
                validator = (str(VALIDATOR_SCRIPT), str(snapshot))
        else:
            cache_path, layout = JSII_CACHE_IN_SANDBOX, sandbox_layout(cache, snapshot)
            jsii_stop = jsii_compat.RUNTIME_SCRIPT_IN_SANDBOX
            if snapshot is not None:
                validator = (VALIDATOR_SCRIPT_IN_SANDBOX, VALIDATOR_SNAPSHOT_IN_SANDBOX)
        environment = cdk_environment(
            cache_path=cache_path,
            outdir=f"{{workdir}}/{APP_DIR}/{OUTDIR}",
            home="{workdir}/home",
            tmp="{workdir}/tmp",
            validator=validator,
        )
        # the worker's early stop of the jsii runtime, where the installed jsii has it
        environment.update(jsii_compat.worker_environment(jsii_stop))
        self._pool = WarmPool(
            preload=self.options.preload,
            environment=environment,
            limits=self.options.limits,
            size=self.options.pool_size,
            layout=layout,
            unsafe_no_sandbox=self.options.unsafe_no_sandbox,
            expected_jobs=self.options.expected_samples,
        )

    @property
    def engine(self) -> str:
        return "unsafe-no-sandbox" if self.options.unsafe_no_sandbox else "bwrap-pool"

    def check_app(self, app: ExtractedApp) -> SynthReport:
        started = time.monotonic()
        job = build_job(app, builtin_validation=self.options.builtin_validation)
        if isinstance(job, SynthReport):
            job.engine = self.engine
            return job
        report = SynthReport(
            Outcome.PASSED,
            files=dict(app.files),
            entry=app.entry,
            notes=list(app.notes),
            engine=self.engine,
        )
        syntax = _syntax_error(app.files)
        if syntax is not None:
            # The same outcome the run would give, without spending a warm worker on it.
            report.outcome = Outcome.PYTHON_ERROR
            report.exception_type = type(syntax).__name__
            report.reason = f"the app raised {report.exception_type}: {syntax}"
            report.stderr_head = f"{report.exception_type}: {syntax}"
            report.seconds = time.monotonic() - started
            return report
        if self._pool is None:
            report.outcome = Outcome.INFRA_ERROR
            report.reason = self.infra_problem or "the CDK runtime is not available"
            return report
        result = self._pool.run(job)
        report.log = result.log
        report = self._judge(result, report)
        report.seconds = time.monotonic() - started
        return report

    def _judge(self, result: JobResult, report: SynthReport) -> SynthReport:
        limits = self.options.limits
        if result.status in ("warmup_failed", "sandbox_error", "worker_error"):
            report.outcome = Outcome.INFRA_ERROR
            detail = (result.exception or {}).get("message") or result.message
            report.reason = f"the sandboxed CDK runtime failed ({result.status}): {detail}"
            report.stderr_head = stderr_head(
                str((result.exception or {}).get("traceback", "")) or result.log
            )
            return report
        if result.status == "timeout":
            report.outcome = Outcome.TIMEOUT
            report.reason = f"synthesis did not finish within {limits.wall_seconds:g} s"
            report.stderr_head = stderr_head(result.log)
            return report
        if result.status == "crashed":
            return _from_crash(result, report, limits)
        if result.status == "exception":
            return _from_exception(result, report)
        return self._judge_assembly(result, report)

    def _judge_assembly(self, result: JobResult, report: SynthReport) -> SynthReport:
        report.stderr_head = stderr_head(result.log)
        if result.truncated:
            report.outcome = Outcome.RESOURCE_LIMIT
            report.reason = "the cloud assembly is larger than the collection limit"
            return report
        forged = forged_outputs(result.files, result.synthesized)
        if forged:
            report.outcome = Outcome.FORGED_OUTPUT
            report.reason = (
                f"{len(forged)} cloud assembly file(s) were not written by a CDK synthesis in "
                f"this run (written or changed by the app itself): {', '.join(forged[:5])}"
            )
            return report
        manifests = _manifests(result.files)
        if not manifests:
            report.outcome = Outcome.SYNTH_ERROR
            report.reason = "no cloud assembly was written: does the app call app.synth()?"
            return report
        errors = _annotations(manifests, result.files, "error")
        warnings = _annotations(manifests, result.files, "warning")
        report.notes.extend(f"CDK warning: {w}" for w in warnings[:20])
        report.notes.extend(_builtin_validation_notes(result.files))
        if errors:
            report.outcome = Outcome.SYNTH_ERROR
            report.reason = f"CDK reported {len(errors)} error(s): {errors[0]}"
            report.stderr_head = "\n".join(errors[:10])
            return report
        templates = {
            name: text for name, text in sorted(result.files.items()) if name.endswith(".json")
        }
        templates = {k: v for k, v in templates.items() if k.endswith(".template.json")}
        if not templates:
            report.outcome = Outcome.SYNTH_ERROR
            report.reason = "the app defines no stacks (the cloud assembly has no templates)"
            return report
        report.templates = [PurePosixPath(name).name for name in templates]
        count = 0
        for name, text in templates.items():
            try:
                count += _count_resources(json.loads(text))
            except ValueError:
                report.outcome = Outcome.SYNTH_ERROR
                report.reason = f"{name} is not valid JSON"
                return report
        report.resource_count = count
        if self.options.lint:
            try:
                findings: list[LintFinding] = []
                for name, text in templates.items():
                    findings += lint_template(
                        text, PurePosixPath(name).name, regions=self.options.regions
                    )
            except Exception as error:  # cfn-lint itself failing is not the app's fault
                report.outcome = Outcome.INFRA_ERROR
                report.reason = f"cfn-lint failed: {type(error).__name__}: {error}"
                return report
            report.lint = findings
            failing = [f for f in findings if f.severity in self.options.fail_on]
            if failing:
                report.outcome = Outcome.LINT_ERROR
                first = failing[0]
                report.reason = (
                    f"cfn-lint found {len(failing)} failing finding(s); first: {first.rule} "
                    f"{first.message} ({first.template})"
                )
                return report
        report.outcome = Outcome.PASSED
        lint_note = f", {len(report.lint)} non-failing lint finding(s)" if report.lint else ""
        report.reason = f"synthesized {len(templates)} template(s), {count} resource(s){lint_note}"
        return report

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()


def synthesize_many(
    apps: Sequence[ExtractedApp], synthesizer: CdkSynthesizer, *, workers: int | None = None
) -> list[SynthReport]:
    """Synthesize several apps concurrently (the pool bounds the parallelism)."""
    size = workers or (synthesizer._pool.size if synthesizer._pool else 1)
    with ThreadPoolExecutor(max_workers=size) as executor:
        return list(executor.map(synthesizer.check_app, apps))
