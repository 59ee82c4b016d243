"""Recognise an SA Bench sample from the prompt a model receives, and read its reference data.

The scripted models see exactly what any provider sees: the chat messages. They find the sample
by searching that text for a dataset question (the practice exam's stem, an architecture task's
question, a CDK prompt), never through sample ids or metadata, so a scripted run exercises the
same prompt-building path as a run against a real model. When several dataset texts occur in a
prompt the longest wins (a short question quoted inside a longer one cannot steal the match).

For a practice exam question the choice letters are read back from the prompt, because the task
shuffles the choices: the correct answer is a choice *text*, and its letter is whatever letter
that text was printed under in this prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from inspect_ai.model import ChatMessage

from plumbline.suites.sa_bench.datasets import (
    LETTERS,
    ArchitectureTask,
    CdkPrompt,
    PracticeExamQuestion,
    load_architecture_design,
    load_cdk_synth,
    load_practice_exam,
)

_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Whitespace collapsed to single spaces, so line-ending or wrapping changes still match."""
    return _SPACE.sub(" ", text).strip()


def prompt_text(messages: Sequence[ChatMessage]) -> str:
    """The text of every message, in order (images and other content are ignored)."""
    return "\n".join(message.text for message in messages)


@dataclass(frozen=True)
class ExamMatch:
    """A practice exam question found in a prompt; `letters` maps choice text to its letter."""

    question: PracticeExamQuestion
    letters: dict[str, str]

    @property
    def sample_id(self) -> str:
        return self.question.id

    @property
    def shown_letters(self) -> list[str]:
        """The letters the prompt offers, in order (empty when the choices were not found)."""
        return sorted(self.letters.values())

    @property
    def correct_letters(self) -> list[str]:
        """The letters of the correct choices as shown in this prompt, sorted."""
        return sorted(self.letters[text] for text in self.question.correct_choices)


@dataclass(frozen=True)
class ArchitectureMatch:
    task: ArchitectureTask

    @property
    def sample_id(self) -> str:
        return self.task.id


@dataclass(frozen=True)
class CdkMatch:
    prompt: CdkPrompt

    @property
    def sample_id(self) -> str:
        return self.prompt.id

    @property
    def solution(self) -> str:
        """The reference solution's source code."""
        return self.prompt.solution


Match = ExamMatch | ArchitectureMatch | CdkMatch


def read_choice_letters(text: str, question: PracticeExamQuestion) -> dict[str, str]:
    """Map each choice's text to the letter it is printed under after the question stem.

    Reads Inspect's `multiple_choice` layout (`A) text`, one per line) in whitespace-normalised
    text: at each letter, the choice whose text follows it and is itself followed by the next
    letter (or the end) is taken; the longest such choice wins, so a choice that is a prefix of
    another is not mistaken for it. Returns an empty dict when the choices cannot all be placed.
    """
    flat = normalise(text)
    stem = normalise(question.question)
    start = flat.find(stem)
    if start < 0:
        return {}
    tail = flat[start + len(stem) :]
    remaining = {normalise(choice): choice for choice in question.choices}
    letters: dict[str, str] = {}
    position = tail.find(f"{LETTERS[0]}) ")
    if position < 0:
        return {}
    for index in range(len(question.choices)):
        letter = LETTERS[index]
        head = f"{letter}) "
        if not tail.startswith(head, position):
            return {}
        body = position + len(head)
        following = f" {LETTERS[index + 1]}) " if index + 1 < len(question.choices) else None
        fits = []
        for flat_choice in remaining:
            end = body + len(flat_choice)
            if tail.startswith(flat_choice, body) and (
                (following is not None and tail.startswith(following, end))
                or (following is None and (end == len(tail) or tail[end] == " "))
            ):
                fits.append(flat_choice)
        if not fits:
            return {}
        chosen = max(fits, key=len)
        letters[remaining.pop(chosen)] = letter
        position = body + len(chosen) + 1
    return letters


class ReferenceIndex:
    """The packaged SA Bench datasets, searchable by prompt text."""

    def __init__(
        self,
        questions: Sequence[PracticeExamQuestion],
        tasks: Sequence[ArchitectureTask],
        prompts: Sequence[CdkPrompt],
    ) -> None:
        self._entries: list[tuple[str, PracticeExamQuestion | ArchitectureTask | CdkPrompt]] = [
            (normalise(question.question), question) for question in questions
        ]
        self._entries += [(normalise(task.question), task) for task in tasks]
        self._entries += [(normalise(prompt.prompt), prompt) for prompt in prompts]
        # longest first: the first text found in a prompt is the most specific one
        self._entries.sort(key=lambda entry: len(entry[0]), reverse=True)

    def match(self, text: str) -> Match | None:
        """The sample whose question occurs in `text`, or None when no SA Bench sample does."""
        flat = normalise(text)
        for key, record in self._entries:
            if key in flat:
                if isinstance(record, PracticeExamQuestion):
                    return ExamMatch(record, read_choice_letters(text, record))
                if isinstance(record, ArchitectureTask):
                    return ArchitectureMatch(record)
                return CdkMatch(record)
        return None


@cache
def packaged_index() -> ReferenceIndex:
    """The index over the packaged datasets (loaded and validated once per process)."""
    return ReferenceIndex(load_practice_exam(), load_architecture_design(), load_cdk_synth())
