"""What the two scripted models answer, as pure functions of the recognised sample.

`oracle_*` answer from the reference data: the correct letters, the reference answer, the
reference CDK solution. `weak_*` imitate a weak model with a `random.Random` the caller seeds
from the generation seed and the prompt (see `prompt_rng`), so every answer is reproducible and
independent of the order in which samples run:

- practice exam: right with probability `WEAK_CORRECT_PROBABILITY`; otherwise a wrong single
  letter, or for a multi-answer question a strict subset of the right letters (half the time)
  or the right set with one letter swapped for a wrong one;
- architecture: the first 10–35% of the reference answer's prose sentences, and its diagram
  block only half the time (so creation tasks often lose their format credit);
- CDK: the reference solution with probability 0.4, else one of the failure modes real models
  show: a syntax error, no `app.synth()`, or a CDK v1 import (`aws_cdk.core`).
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from typing import Literal

from plumbline.models.reference import ArchitectureMatch, CdkMatch, ExamMatch

WEAK_CORRECT_PROBABILITY = 0.55
"""How often the weak model answers a practice exam question correctly."""

CdkVariant = Literal["reference", "syntax_error", "missing_synth", "cdk_v1_import"]

WEAK_CDK_VARIANTS: tuple[tuple[CdkVariant, float], ...] = (
    ("reference", 0.4),
    ("syntax_error", 0.2),
    ("missing_synth", 0.2),
    ("cdk_v1_import", 0.2),
)
"""The weak model's CDK answers and their probabilities."""


@dataclass(frozen=True)
class Reply:
    """A scripted answer and what the script did (recorded in the output's metadata)."""

    content: str
    behaviour: str


def prompt_rng(seed: int, policy: str, prompt: str) -> random.Random:
    """A generator seeded by SHA-256 of (seed, policy, prompt): reproducible, order-independent.

    Python's `hash()` is salted per process, so a digest is used to get the same stream in
    every run.
    """
    digest = hashlib.sha256(f"{seed}\x00{policy}\x00{prompt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def answer_line(letters: list[str]) -> str:
    """The line Inspect's multiple_choice templates ask for: `ANSWER: B` or `ANSWER: A,C`."""
    return "ANSWER: " + ",".join(sorted(letters))


def python_block(source: str) -> str:
    return f"```python\n{source.rstrip()}\n```\n"


# ---------------------------------------------------------------------------------------------
# oracle


def oracle_exam(match: ExamMatch) -> Reply:
    """The correct letter(s) as shown in the prompt; the choice text when no letters were shown."""
    if not match.letters:
        return Reply("\n".join(match.question.correct_choices), "correct choice text")
    return Reply(answer_line(match.correct_letters), "correct")


def oracle_architecture(match: ArchitectureMatch) -> Reply:
    return Reply(match.task.reference_answer, "reference answer")


def oracle_cdk(match: CdkMatch) -> Reply:
    return Reply(python_block(match.solution), "reference")


# ---------------------------------------------------------------------------------------------
# weak


def weak_exam(match: ExamMatch, rng: random.Random) -> Reply:
    """Right with probability 0.55; otherwise a plausible wrong answer (see the module doc)."""
    if not match.letters:
        return Reply(rng.choice(match.question.choices), "choice text")
    correct = match.correct_letters
    if rng.random() < WEAK_CORRECT_PROBABILITY:
        return Reply(answer_line(correct), "correct")
    wrong = [letter for letter in match.shown_letters if letter not in correct]
    if len(correct) == 1:
        return Reply(answer_line([rng.choice(wrong)]), "wrong")
    if rng.random() < 0.5:
        subset = rng.sample(correct, rng.randint(1, len(correct) - 1))
        return Reply(answer_line(subset), "subset of the correct answers")
    kept = rng.sample(correct, len(correct) - 1)
    return Reply(answer_line([*kept, rng.choice(wrong)]), "one correct answer swapped")


_FENCED = re.compile(r"^```[^\n]*\n.*?^```[ \t]*$", re.DOTALL | re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def weak_architecture(match: ArchitectureMatch, rng: random.Random) -> Reply:
    """A short, partly correct answer: the start of the reference's prose, maybe its diagram."""
    reference = match.task.reference_answer
    blocks = _FENCED.findall(reference)
    prose = _FENCED.sub(" ", reference)
    sentences = [sentence for sentence in _SENTENCE_END.split(prose.strip()) if sentence]
    keep = max(1, round(len(sentences) * rng.uniform(0.1, 0.35)))
    parts = [" ".join(sentences[:keep])]
    behaviour = f"first {keep} of {len(sentences)} reference sentences"
    if blocks:
        if rng.random() < 0.5:
            parts.append(blocks[0])
            behaviour += ", diagram kept"
        else:
            behaviour += ", diagram dropped"
    return Reply("\n\n".join(parts), behaviour)


def break_cdk(source: str, variant: CdkVariant) -> str:
    """The reference solution with one failure mode applied (`reference` returns it unchanged)."""
    if variant == "reference":
        return source
    if variant == "missing_synth":
        return re.sub(r"^[ \t]*app\.synth\(\)[ \t]*\n?", "", source, flags=re.MULTILINE)
    if variant == "cdk_v1_import":
        # CDK v1 kept App, Stack, Duration, ... in aws_cdk.core, which v2 removed
        broken, count = re.subn(
            r"^from aws_cdk import (?=[^\n]*\bApp\b)",
            "from aws_cdk.core import ",
            source,
            count=1,
            flags=re.MULTILINE,
        )
        return (
            broken
            if count
            else "from aws_cdk import core\n" + source.replace("App()", "core.App()")
        )
    # syntax_error: the colon dropped from the first top-level class header (a `def` may sit
    # inside an inline Lambda handler string, where a missing colon breaks nothing)
    broken, count = re.subn(
        r"^(class \w+\([^\n]*\)):[ \t]*$", r"\1", source, count=1, flags=re.MULTILINE
    )
    return broken if count else source + "\ndef synth_helper(:\n    pass\n"


def weak_cdk_variant(rng: random.Random) -> CdkVariant:
    variants = [variant for variant, _ in WEAK_CDK_VARIANTS]
    weights = [weight for _, weight in WEAK_CDK_VARIANTS]
    return rng.choices(variants, weights=weights)[0]


def weak_cdk(match: CdkMatch, rng: random.Random) -> Reply:
    variant = weak_cdk_variant(rng)
    return Reply(python_block(break_cdk(match.solution, variant)), variant)
