"""plumbline's Inspect tasks and scorers, registered under `plumbline/` for `inspect eval`.

    inspect eval plumbline/practice_exam --model scripted/oracle -T limit=5
    inspect eval plumbline/cdk_synth --model openai/gpt-4o

Inspect imports the `inspect_ai` entry point (`plumbline.models.providers`, which imports this
module) whenever it resolves a `plumbline/...` name, and sometimes when it loads every entry
point. So this module stays cheap: each registered task or scorer has the implementation's exact
signature (a test holds them equal) and imports the implementation only when called. The
implementation modules register the same names when imported, so either path gives one object.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspect_ai import Task, task
from inspect_ai.scorer import Scorer, accuracy, mean, scorer, stderr

from plumbline import inspect_metrics as inspect_metrics  # registers plumbline/<metric>

if TYPE_CHECKING:
    from collections.abc import Sequence

    from inspect_ai.model import Model

DEFAULT_SEED = 42


@task(name="practice_exam")
def practice_exam(
    seed: int = DEFAULT_SEED,
    limit: int | None = None,
    epochs: int = 1,
    shuffle_choices: bool = True,
    cot: bool = False,
) -> Task:
    """SA Bench's practice exam (AWS certification-style MCQ, all-or-nothing)."""
    from plumbline.suites.sa_bench import tasks

    return tasks.practice_exam(
        seed=seed, limit=limit, epochs=epochs, shuffle_choices=shuffle_choices, cot=cot
    )


@task(name="architecture_design")
def architecture_design(
    seed: int = DEFAULT_SEED,
    limit: int | None = None,
    epochs: int = 1,
    judge: str | Model | list[str | Model] | None = None,
) -> Task:
    """SA Bench's architecture tasks (heuristic rubric; `-T judge=MODEL` adds an LLM judge)."""
    from plumbline.suites.sa_bench import tasks

    return tasks.architecture_design(seed=seed, limit=limit, epochs=epochs, judge=judge)


@task(name="cdk_synth")
def cdk_synth(
    seed: int = DEFAULT_SEED,
    limit: int | None = None,
    epochs: int = 1,
    timeout: float = 60.0,
    workers: int | None = None,
) -> Task:
    """SA Bench's CDK synthesis prompts, scored by `cdk_verify` (sandboxed synth + cfn-lint)."""
    from plumbline.suites.sa_bench import tasks

    return tasks.cdk_synth(seed=seed, limit=limit, epochs=epochs, timeout=timeout, workers=workers)


@scorer(metrics=[accuracy(), stderr()], name="cdk_verify")
def cdk_verify(
    timeout: float = 60.0,
    fail_on: list[str] | None = None,
    lint: bool = True,
    workers: int | None = None,
    unsafe_no_sandbox: bool = False,
    builtin_validation: bool = False,
) -> Scorer:
    """Synthesize a CDK (Python, v2) app in a bubblewrap sandbox, then cfn-lint it."""
    from plumbline.cdk.scorer import cdk_verify as implementation

    return implementation(
        timeout=timeout,
        fail_on=fail_on,
        lint=lint,
        workers=workers,
        unsafe_no_sandbox=unsafe_no_sandbox,
        builtin_validation=builtin_validation,
    )


@scorer(metrics=[mean(), stderr()], name="architecture_scorer")
def architecture_scorer() -> Scorer:
    """Heuristic architecture scorer: the mean of accuracy, completeness and quality."""
    from plumbline.suites.sa_bench.scorers.architecture import architecture_scorer as impl

    return impl()


@scorer(metrics=[mean(), stderr()], name="llm_judge_scorer")
def llm_judge_scorer(
    judges: Sequence[str | Model] | str | Model | None = None,
    *,
    heuristic_weight: float = 0.3,
    rubric_version: str = "v1",
    seed: int = DEFAULT_SEED,
    adjust: bool = True,
) -> Scorer:
    """LLM-as-judge architecture scorer (several judges averaged, blended with the heuristic)."""
    from plumbline.suites.sa_bench.scorers.judge import llm_judge_scorer as impl

    return impl(
        judges,
        heuristic_weight=heuristic_weight,
        rubric_version=rubric_version,
        seed=seed,
        adjust=adjust,
    )


#: The registered tasks and scorers, and the implementation each forwards to ("module:name").
IMPLEMENTATIONS: dict[str, str] = {
    "practice_exam": "plumbline.suites.sa_bench.tasks:practice_exam",
    "architecture_design": "plumbline.suites.sa_bench.tasks:architecture_design",
    "cdk_synth": "plumbline.suites.sa_bench.tasks:cdk_synth",
    "cdk_verify": "plumbline.cdk.scorer:cdk_verify",
    "architecture_scorer": "plumbline.suites.sa_bench.scorers.architecture:architecture_scorer",
    "llm_judge_scorer": "plumbline.suites.sa_bench.scorers.judge:llm_judge_scorer",
}
