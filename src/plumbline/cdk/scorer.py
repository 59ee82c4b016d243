"""The Inspect AI scorer ``cdk_verify``: does the model's CDK app synthesize and lint clean?

Value 1 for ``passed``, 0 for every failure of the model (``extraction_failed``,
``python_error``, ``synth_error``, ``lint_error``, ``timeout``, ``resource_limit``,
``forged_output``). An ``infra_error`` (sandbox or toolchain broken) is returned as
``Score.unscored`` (value NaN), which Inspect's metrics and reducers skip: it is reported,
never counted against the model.

Score metadata: ``outcome``, ``reason``, ``exception_type``, ``stderr_head``,
``resource_count``, ``templates``, ``lint_counts``, ``lint`` (findings, capped), ``entry``,
``files`` (names), ``notes`` and ``engine``, so a leaderboard can show failure modes per model.

When no sandbox can be created the scorer refuses to run model code: creating the scorer
raises ``SandboxUnavailable`` with the reason, unless ``unsafe_no_sandbox=True``.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from plumbline.cdk.extract import ExtractedApp
from plumbline.cdk.outcomes import Outcome, SynthReport
from plumbline.cdk.synth import CdkSynthesizer, SynthOptions
from plumbline.core.registry import Registry
from plumbline.sandbox import ResourceLimits

MAX_LINT_IN_METADATA = 50


class Synthesizer(Protocol):
    """What the scorer needs of a synthesizer (`CdkSynthesizer`, `RaySynthesizer`)."""

    @property
    def engine(self) -> str: ...

    def check_app(self, app: ExtractedApp) -> SynthReport: ...

    async def acheck_response(self, response: str) -> SynthReport: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class CdkExecutor:
    """Where synth jobs run: the name of a registered synthesizer ("local": a warm pool in
    this process; "ray": Ray actors on the cluster at `address`, each with its own warm pool,
    registered by `plumbline.cluster.cdk`)."""

    kind: str = "local"
    address: str | None = None
    actors: int | None = None


SynthesizerFactory = Callable[[SynthOptions, CdkExecutor], Synthesizer]

#: Synthesizers by executor kind; other packages add theirs in the `plumbline.synthesizers`
#: entry-point group (`ray`: `plumbline.cluster.cdk:ray_synthesizer`).
SYNTHESIZERS: Registry[SynthesizerFactory] = Registry("CDK synthesizer", "plumbline.synthesizers")


@SYNTHESIZERS.register("local")
def local_synthesizer(options: SynthOptions, executor: CdkExecutor) -> Synthesizer:
    """A warm sandbox pool in this process."""
    return CdkSynthesizer(options)


def make_synthesizer(options: SynthOptions, executor: CdkExecutor | None = None) -> Synthesizer:
    """A synthesizer for `options` on `executor` (default: the one `use_executor` set)."""
    return SYNTHESIZERS.get((executor or SHARED.executor).kind)(
        options, executor or SHARED.executor
    )


class SharedSynthesizers:
    """The synthesizers scorers share: one (and its warm pool) per distinct options and
    executor, for the life of the process or of a `use_executor` block."""

    def __init__(self) -> None:
        self.executor = CdkExecutor()
        self._synthesizers: dict[tuple[SynthOptions, CdkExecutor], Synthesizer] = {}
        self._lock = threading.Lock()

    def get(self, options: SynthOptions) -> Synthesizer:
        with self._lock:
            key = (options, self.executor)
            synthesizer = self._synthesizers.get(key)
            if synthesizer is None:
                synthesizer = make_synthesizer(options, self.executor)
                self._synthesizers[key] = synthesizer
                atexit.register(synthesizer.close)
            return synthesizer

    @contextlib.contextmanager
    def use(self, executor: CdkExecutor) -> Iterator[None]:
        previous, self.executor = self.executor, executor
        try:
            yield
        finally:
            self.executor = previous
            if executor.kind != "local":
                with self._lock:
                    for key in [key for key in self._synthesizers if key[1] == executor]:
                        self._synthesizers.pop(key).close()


SHARED = SharedSynthesizers()


def use_executor(executor: CdkExecutor) -> contextlib.AbstractContextManager[None]:
    """Send the synth jobs of scorers used in this block to `executor` (`--cdk-executor`);
    the synthesizers it started are closed when the block ends."""
    return SHARED.use(executor)


def shared_synthesizer(options: SynthOptions) -> Synthesizer:
    """One synthesizer (and warm pool) per distinct options and executor, for the life of
    the process (or of the `use_executor` block)."""
    return SHARED.get(options)


def score_metadata(report: SynthReport) -> dict[str, Any]:
    """The score metadata for a report (JSON-ready, bounded in size)."""
    data = report.to_dict(include_files=False)
    data["lint"] = data["lint"][:MAX_LINT_IN_METADATA]
    data["files"] = sorted(report.files)
    return data


def report_to_score(report: SynthReport) -> Score:
    """Turn a synthesis report into an Inspect score (NaN / unscored for infra_error)."""
    answer = report.files.get(report.entry or "", None)
    metadata = score_metadata(report)
    if report.outcome is Outcome.INFRA_ERROR:
        return Score.unscored(
            reason="infra_error", answer=answer, explanation=report.reason, metadata=metadata
        )
    return Score(
        value=1 if report.outcome.passed else 0,
        answer=answer,
        explanation=f"{report.outcome.value}: {report.reason}",
        metadata=metadata,
    )


@scorer(metrics=[accuracy(), stderr()], name="cdk_verify")
def cdk_verify(
    timeout: float = 60.0,
    fail_on: list[str] | None = None,
    lint: bool = True,
    workers: int | None = None,
    unsafe_no_sandbox: bool = False,
    builtin_validation: bool = False,
) -> Scorer:
    """Score a CDK (Python, v2) app by synthesizing it in a bubblewrap sandbox.

    Args:
        timeout: wall-clock seconds per sample (also its CPU-second budget).
        fail_on: cfn-lint severities that fail a sample (default ``["error"]``).
        lint: run cfn-lint on the templates.
        workers: samples synthesized at once (default: CPUs, at least 2).
        unsafe_no_sandbox: run model code directly on this host. Only if you accept the risk.
        builtin_validation: also run aws-cdk-lib's built-in CloudFormation validator (see
            `SynthOptions.builtin_validation`).
    """
    options = SynthOptions(
        limits=ResourceLimits(wall_seconds=timeout, cpu_seconds=max(1, int(timeout))),
        fail_on=tuple(fail_on or ("error",)),
        lint=lint,
        pool_size=workers,
        unsafe_no_sandbox=unsafe_no_sandbox,
        builtin_validation=builtin_validation,
    )
    synthesizer = shared_synthesizer(options)

    async def score(state: TaskState, target: Target) -> Score:
        report = await synthesizer.acheck_response(state.output.completion)
        return report_to_score(report)

    return score
