"""SA Bench's Inspect AI tasks, one per leaderboard category.

    inspect eval plumbline/suites/sa_bench/tasks.py@practice_exam --model openai/gpt-4o
    plumbline run sa-bench --model openai/gpt-4o            # all three, then the leaderboard

Task names equal the suite's category keys (`practice_exam`, `architecture_design`,
`cdk_synth`), so the built-in `sa-bench` suite maps logs to categories without patterns. Every
task accepts `seed`, `limit` and `epochs`:

- `seed` fixes everything random in the task: the practice exam's choice order (recorded in the
  task metadata as `choice_shuffle_seed`, so a run can be reproduced), the subset `limit` picks,
  and the generation seed passed to providers that support one.
- `limit` keeps a seeded random subset of that many samples, in dataset order, rather than the
  first N (the first N practice questions would all be associate level).
- `epochs` repeats each sample; the leaderboard averages repeats within a question before it
  computes intervals over questions.
"""

from __future__ import annotations

import base64
import hashlib
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    Model,
)
from inspect_ai.scorer import Scorer, choice
from inspect_ai.solver import (
    Generate,
    Solver,
    TaskState,
    generate,
    multiple_choice,
    solver,
    system_message,
)

from plumbline.suites.sa_bench.datasets import (
    ARCHITECTURE_DESIGN_FILE,
    CDK_SYNTH_FILE,
    PRACTICE_EXAM_FILE,
    ArchitectureTask,
    load_architecture_design,
    load_cdk_synth,
    load_practice_exam,
)

DEFAULT_SEED = 42
"""The seed every task uses unless told otherwise (CERT's default, too)."""

SUITE = "sa-bench"

ARCHITECT_SYSTEM_PROMPT = (
    "You are an experienced AWS Solutions Architect. Answer the task completely and "
    "precisely: name the AWS services involved and explain your reasoning."
)

CDK_SYSTEM_PROMPT = (
    "You are an expert in the AWS Cloud Development Kit v2 for Python (aws-cdk-lib). Reply "
    "with one self-contained Python file in a single fenced ```python code block. The file "
    "must create `App()`, define the stacks and end by calling `app.synth()`; it must not need "
    "AWS credentials, context lookups, Docker or files other than itself."
)

FORMAT_INSTRUCTIONS: dict[str, str] = {
    "mermaid": (
        "Output format: include the architecture as a Mermaid flowchart in a fenced ```mermaid "
        "code block (for example `flowchart LR`), with one node per component, labelled with "
        "its AWS service name, and an edge for each interaction. Explain your design "
        "decisions in prose outside the code block."
    ),
    "plantuml": (
        "Output format: include the architecture as a PlantUML diagram in a fenced ```plantuml "
        "code block that starts with @startuml and ends with @enduml, declaring every component "
        "(labelled with its AWS service name) and the relationships between them. Explain "
        "your design decisions in prose outside the code block."
    ),
    "json": (
        "Output format: include the architecture as JSON in a fenced ```json code block of the "
        'form {"architecture": {"components": [{"id": "api", "type": "Amazon API Gateway", '
        '"description": "..."}, ...], "relationships": [{"from": "api", "to": "fn", '
        '"description": "..."}, ...]}}, with at least two components and every relationship '
        "referring to component ids. Explain your design decisions in prose outside the code "
        "block."
    ),
}
"""The instruction appended to a task's question when it asks for a diagram in a format."""


def _check_arguments(limit: int | None, epochs: int) -> None:
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be a positive number of samples, got {limit}")
    if epochs < 1:
        raise ValueError(f"epochs must be at least 1, got {epochs}")


def select_samples(samples: Sequence[Sample], limit: int | None, seed: int) -> list[Sample]:
    """A seeded random subset of `limit` samples, kept in dataset order (all when None)."""
    if limit is None or limit >= len(samples):
        return list(samples)
    keep = sorted(random.Random(seed).sample(range(len(samples)), limit))
    return [samples[index] for index in keep]


def file_digest(path: Path) -> str:
    """The SHA-256 of a dataset file, recorded so a log says exactly which data it ran on."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _task_metadata(category: str, dataset: Path, seed: int, limit: int | None) -> dict[str, Any]:
    return {
        "suite": SUITE,
        "category": category,
        "seed": seed,
        "limit": limit,
        "dataset": dataset.name,
        "dataset_sha256": file_digest(dataset),
    }


# ---------------------------------------------------------------------------------------------
# practice_exam


@solver
def exam_answer(cot: bool = False) -> Solver:
    """Inspect's `multiple_choice`, with the multi-answer template only for list targets.

    A single-answer question shown the multi-answer template invites the model to pick several
    letters, which `choice()` then marks wrong; a multi-answer question shown the single-answer
    template cannot be answered correctly at all. The sample's `multi_answer` metadata decides.
    """
    single = multiple_choice(cot=cot)
    multiple = multiple_choice(cot=cot, multiple_correct=True)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        chosen = multiple if state.metadata.get("multi_answer") else single
        return await chosen(state, generate)

    return solve


def practice_exam_samples(seed: int = DEFAULT_SEED, shuffle: bool = True) -> MemoryDataset:
    """The practice exam as Inspect samples, choices shuffled with `seed` (targets remapped)."""
    samples = [
        Sample(
            id=question.id,
            input=question.question,
            choices=list(question.choices),
            target=list(question.target_letters) if question.is_multi_answer else question.target,
            metadata={
                "id": question.id,
                "level": question.level,
                "difficulty": question.difficulty,
                "domain": question.domain,
                "aws_services": list(question.aws_services),
                "multi_answer": question.is_multi_answer,
                "rationale": question.rationale,
            },
        )
        for question in load_practice_exam()
    ]
    dataset = MemoryDataset(samples, name="practice_exam", location=str(PRACTICE_EXAM_FILE))
    if shuffle:
        dataset.shuffle_choices(seed=seed)
    return dataset


@task
def practice_exam(
    seed: int = DEFAULT_SEED,
    limit: int | None = None,
    epochs: int = 1,
    shuffle_choices: bool = True,
    cot: bool = False,
) -> Task:
    """AWS certification-style multiple-choice questions, scored all-or-nothing by `choice()`.

    Args:
        seed: shuffles the choices (recorded as `choice_shuffle_seed`), picks the `limit`
            subset, and is the generation seed.
        limit: evaluate a seeded random subset of this many questions.
        epochs: repeats per question.
        shuffle_choices: shuffle the order of the choices (default True).
        cot: ask for step-by-step reasoning before the answer line.
    """
    _check_arguments(limit, epochs)
    dataset = practice_exam_samples(seed, shuffle=shuffle_choices)
    metadata = _task_metadata("practice_exam", PRACTICE_EXAM_FILE, seed, limit)
    metadata["choice_shuffle_seed"] = seed if shuffle_choices else None
    return Task(
        name="practice_exam",
        dataset=MemoryDataset(
            select_samples(list(dataset), limit, seed),
            name="practice_exam",
            location=str(PRACTICE_EXAM_FILE),
        ),
        solver=exam_answer(cot=cot),
        scorer=choice(),
        epochs=Epochs(epochs),
        config=GenerateConfig(seed=seed),
        metadata=metadata,
        version=1,
    )


# ---------------------------------------------------------------------------------------------
# architecture_design


def image_data_uri(path: Path) -> str:
    """A PNG as a data URI: the log then carries the exact image the model was shown."""
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def architecture_prompt(item: ArchitectureTask) -> str:
    """The text the model receives: the question, plus the output-format instruction if any."""
    if item.output_format is None:
        return item.question
    return f"{item.question}\n\n{FORMAT_INSTRUCTIONS[item.output_format]}"


def architecture_sample(item: ArchitectureTask) -> Sample:
    """One architecture task as a Sample: text (+ the diagram image for interpretation tasks)."""
    text = architecture_prompt(item)
    diagram = item.diagram_path
    content: str | list[ChatMessage]
    if diagram is None:
        content = text
    else:
        content = [
            ChatMessageUser(
                content=[ContentText(text=text), ContentImage(image=image_data_uri(diagram))]
            )
        ]
    return Sample(
        id=item.id,
        input=content,
        target=item.reference_answer,
        metadata=item.metadata(),
    )


def architecture_scorers(judge: str | Model | Sequence[str | Model] | None) -> list[Scorer]:
    """The heuristic scorer, plus the LLM judge when judge models are given.

    Both scores land in the log; the leaderboard reads exactly one of them per category (the
    suite's `scorer`), so the heuristic and the judge are never blended into one number.
    """
    from plumbline.suites.sa_bench.scorers import architecture_scorer, llm_judge_scorer

    scorers = [architecture_scorer()]
    if judge:
        scorers.append(llm_judge_scorer([judge] if isinstance(judge, str | Model) else judge))
    return scorers


@task
def architecture_design(
    seed: int = DEFAULT_SEED,
    limit: int | None = None,
    epochs: int = 1,
    judge: str | Model | list[str | Model] | None = None,
) -> Task:
    """Architecture tasks: diagram interpretation (the PNG is attached), creation, critique.

    Args:
        seed: picks the `limit` subset and is the generation seed.
        limit: evaluate a seeded random subset of this many tasks.
        epochs: repeats per task.
        judge: LLM judge model(s), by Inspect model name or as `Model`s; adds
            `llm_judge_scorer` beside the heuristic `architecture_scorer`.
    """
    _check_arguments(limit, epochs)
    samples = [architecture_sample(item) for item in load_architecture_design()]
    metadata = _task_metadata("architecture_design", ARCHITECTURE_DESIGN_FILE, seed, limit)
    judges = [] if not judge else [judge] if isinstance(judge, str | Model) else list(judge)
    metadata["judges"] = [str(model) for model in judges]
    return Task(
        name="architecture_design",
        dataset=MemoryDataset(
            select_samples(samples, limit, seed),
            name="architecture_design",
            location=str(ARCHITECTURE_DESIGN_FILE),
        ),
        solver=[system_message(ARCHITECT_SYSTEM_PROMPT), generate()],
        scorer=architecture_scorers(judges),
        epochs=Epochs(epochs),
        config=GenerateConfig(seed=seed),
        metadata=metadata,
        version=1,
    )


# ---------------------------------------------------------------------------------------------
# cdk_synth


@task
def cdk_synth(
    seed: int = DEFAULT_SEED,
    limit: int | None = None,
    epochs: int = 1,
    timeout: float = 60.0,
    workers: int | None = None,
) -> Task:
    """CDK synthesis prompts, scored by `cdk_verify` (sandboxed synth, then cfn-lint errors).

    The target is the reference solution's source: it proves the prompt is satisfiable and is
    what a judge or a reader compares an answer against; the scorer does not need it.

    Args:
        seed: picks the `limit` subset and is the generation seed.
        limit: evaluate a seeded random subset of this many prompts.
        epochs: repeats per prompt.
        timeout: seconds allowed per synthesis.
        workers: synthesis sandboxes run at once (default: the scorer's).
    """
    from plumbline.cdk.scorer import cdk_verify

    _check_arguments(limit, epochs)
    samples = [
        Sample(
            id=prompt.id,
            input=prompt.prompt,
            target=prompt.solution,
            metadata={
                "id": prompt.id,
                "level": prompt.level,
                "services": list(prompt.services),
            },
        )
        for prompt in load_cdk_synth()
    ]
    return Task(
        name="cdk_synth",
        dataset=MemoryDataset(
            select_samples(samples, limit, seed), name="cdk_synth", location=str(CDK_SYNTH_FILE)
        ),
        solver=[system_message(CDK_SYSTEM_PROMPT), generate()],
        scorer=cdk_verify(timeout=timeout, workers=workers),
        epochs=Epochs(epochs),
        config=GenerateConfig(seed=seed),
        metadata=_task_metadata("cdk_synth", CDK_SYNTH_FILE, seed, limit),
        version=1,
    )
