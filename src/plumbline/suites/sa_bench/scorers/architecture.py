"""The heuristic architecture scorer: accuracy, completeness and quality from expected elements.

SA Bench scores an architecture answer on three dimensions in [0, 1]; the sample score is their
mean. The reference heuristic credited a service when *any word* of its name appeared and a role
when any word of it did ("and", "the"), so a 53-word keyword salad scored 0.56. Here:

- **Names** match as whole normalised phrases with catalogue aliases ("Amazon S3" = "S3" =
  "Simple Storage Service"); a single word of a longer name never counts.
- **Explanations** count only inside a *reasoning sentence* (at least 5 words, of which at least
  two are function words, and at least 15% of its words; or a definition line such as
  `- **Amazon S3**: stores the uploads` with at least 3 words after the separator): the
  sentence that names the element,
  or the one after it, must contain the content words of its role, purpose, issue or mitigation
  (stemmed, stopwords never count, the element's own name words excluded; services named in
  the facet are alternatives, so naming any one of them counts as one word). A label in a
  valid diagram of the required format counts as a reasoning context too.

Per element: `credit = 0.25·named + 0.75·named·(explained facets / facets)`.

- completeness = mean element credit (key concepts, when given, weigh 20%)
- accuracy = (mean explained share over the named elements) × precision, where precision
  penalises naming many services that neither the task nor the reference answer involves:
  `min(1, (3 + n_expected) / n_unexpected)`
- quality = relevance × mean(prose, justification, organisation[, format]) with
  relevance = min(1, completeness / 0.5), prose from the share of function words,
  justification from causal connectives, organisation from the number of reasoning sentences,
  and format = 1 valid / 0.4 invalid / 0 missing diagram (creation tasks only).

Parroting the answer key is not an answer: when more than 80% of the prose's content words are
copied from the expected elements' names and descriptions (`echo_share`, counted when the
prose has at least 12 content words), all three dimensions are multiplied by the
`originality_factor = clip((0.95 − echo_share) / 0.15)`, which reaches 0 at 95%.

Everything that decided the score is recorded in `ArchitectureScore.details` (and so in the
Inspect score metadata).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from inspect_ai.scorer import (
    Score,
    Scorer,
    Target,
    mean,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from plumbline.suites.sa_bench.scorers.aws_services import find_services, lookup, phrases_for
from plumbline.suites.sa_bench.scorers.diagram import FORMATS, DiagramFormat, ValidationResult
from plumbline.suites.sa_bench.scorers.prose import (
    STOPWORDS,
    content_stems,
    is_reasoning_sentence,
    stem,
    words,
)
from plumbline.suites.sa_bench.scorers.structured import validate_diagram

DIMENSIONS: tuple[str, ...] = ("accuracy", "completeness", "quality")

NAMED_CREDIT = 0.25
CONCEPT_WEIGHT = 0.2
PRECISION_TOLERANCE = 3
ECHO_FREE = 0.8
ECHO_ZERO = 0.95
ECHO_MIN_WORDS = 12
FORMAT_INVALID_CREDIT = 0.4


_JUSTIFICATION = re.compile(
    r"\b(because|since|so that|therefore|thus|hence|which|ensures?|allows?|enables?|prevents?|"
    r"reduces?|avoids?|instead|rather than|trade-?offs?|otherwise|in order to|as a result|"
    r"so|if|when|without|by)\b"
)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_FENCED = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.M | re.S)


@dataclass(frozen=True)
class Element:
    """One expected element: what names it and the facets an answer must explain."""

    kind: str
    label: str
    names: tuple[tuple[str, ...], ...]  # every group must be present; each group lists aliases
    facets: tuple[str, ...]
    free_text: bool = False  # names are a description (an issue), matched by content words


def _name_element(kind: str, name: str, facets: Iterable[str]) -> Element:
    return Element(kind, name, (phrases_for(name),), tuple(f for f in facets if f))


def expected_elements(expected: Mapping[str, Any]) -> tuple[list[Element], list[Element]]:
    """Primary elements and key concepts from a task's `expected` mapping."""
    elements: list[Element] = []
    for item in expected.get("services") or []:
        elements.append(_name_element("service", item["name"], [item.get("role", "")]))
    for item in expected.get("security_components") or []:
        elements.append(
            _name_element("security_component", item["name"], [item.get("purpose", "")])
        )
    for item in expected.get("bottlenecks") or []:
        elements.append(
            _name_element(
                "bottleneck", item["component"], [item.get("issue", ""), item.get("mitigation", "")]
            )
        )
    for item in expected.get("cost_factors") or []:
        elements.append(
            _name_element(
                "cost_factor",
                item["component"],
                [item.get("driver", ""), item.get("optimization", "")],
            )
        )
    for item in expected.get("flow_steps") or []:
        source, target = item.get("from") or item.get("from_", ""), item["to"]
        elements.append(
            Element(
                "flow_step",
                f"{source} -> {target}",
                (phrases_for(source), phrases_for(target)),
                (item.get("description", ""),),
            )
        )
    for item in expected.get("issues") or []:
        elements.append(
            Element(
                "issue",
                item["issue"],
                ((item["issue"],),),
                (item.get("recommendation", ""),),
                free_text=True,
            )
        )
    concepts = [
        Element("key_concept", concept, (phrases_for(concept),), ())
        for concept in expected.get("key_concepts") or []
    ]
    return elements, concepts


@dataclass
class _Text:
    """A response prepared for matching: normalised whole text and prose sentences."""

    normalised: str
    sentences: list[str]
    sentence_norm: list[str]
    sentence_stems: list[set[str]]
    reasoning: list[bool]

    @classmethod
    def of(cls, response: str, diagram: ValidationResult | None) -> _Text:
        prose = _FENCED.sub("\n", response)
        sentences = [s.strip() for s in _SENTENCE_SPLIT.split(prose) if s and s.strip()]
        reasoning = [is_reasoning_sentence(s) for s in sentences]
        if diagram is not None and diagram.valid:
            # each node with its incident edge labels is one reasoning context
            for node_id, label in diagram.nodes.items():
                incident = [e.label for e in diagram.edges if node_id in (e.source, e.target)]
                sentences.append(" ".join([label, *incident]))
                reasoning.append(True)
            for edge in diagram.edges:
                ends = [
                    diagram.nodes.get(edge.source, edge.source),
                    diagram.nodes.get(edge.target, edge.target),
                ]
                sentences.append(" ".join([ends[0], edge.label, ends[1]]))
                reasoning.append(True)
        norm = [" " + " ".join(words(s)) + " " for s in sentences]
        return cls(
            normalised=" " + " ".join(words(response)) + " ",
            sentences=sentences,
            sentence_norm=norm,
            sentence_stems=[content_stems(s) for s in sentences],
            reasoning=reasoning,
        )


def _has_phrase(haystack: str, phrases: Sequence[str]) -> bool:
    return any(f" {p} " in haystack for p in phrases if p)


def _free_text_match(element_text: str, stems: set[str]) -> bool:
    wanted = content_stems(element_text)
    if not wanted:
        return False
    return len(wanted & stems) >= max(1, math.ceil(0.6 * len(wanted)))


_SERVICE_TOKEN = "\x00service"


def _facet_need(facet_stems: set[str]) -> int:
    return max(1, min(3, math.ceil(len(facet_stems) / 3)))


@dataclass(frozen=True)
class ElementResult:
    label: str
    kind: str
    named: bool
    facets_found: tuple[str, ...]
    facets_missing: tuple[str, ...]
    credit: float

    @property
    def explained_share(self) -> float:
        total = len(self.facets_found) + len(self.facets_missing)
        return len(self.facets_found) / total if total else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "kind": self.kind,
            "named": self.named,
            "facets_found": list(self.facets_found),
            "facets_missing": list(self.facets_missing),
            "credit": round(self.credit, 4),
        }


def _evaluate(element: Element, text: _Text) -> ElementResult:
    if element.free_text:
        mentions = [
            i
            for i, stems in enumerate(text.sentence_stems)
            if _free_text_match(element.names[0][0], stems)
        ]
        named = bool(mentions)
        name_stems = content_stems(element.names[0][0])
    else:
        named = all(_has_phrase(text.normalised, group) for group in element.names)
        mentions = [
            i
            for i, sentence in enumerate(text.sentence_norm)
            if all(
                _has_phrase(sentence, group)
                or (
                    i + 1 < len(text.sentence_norm)
                    and _has_phrase(text.sentence_norm[i + 1], group)
                )
                for group in element.names
            )
            and any(_has_phrase(sentence, group) for group in element.names)
        ]
        name_stems = set().union(*(content_stems(p) for g in element.names for p in g))
    found: list[str] = []
    missing: list[str] = []
    for facet in element.facets:
        # services named in a facet are alternatives ("ElastiCache or DynamoDB"): naming any
        # one of them counts as one matched word, however many words their names have
        own = {n for group in element.names for p in group for n in find_services(p)}
        services = [p for name in find_services(facet) - own for p in phrases_for(name)]
        service_stems = set().union(*(content_stems(p) for p in services)) if services else set()
        wanted = content_stems(facet) - name_stems - service_stems
        if services:
            wanted.add(_SERVICE_TOKEN)
        ok = False
        if named and wanted:
            need = _facet_need(wanted)
            for index in mentions:
                if not text.reasoning[index]:
                    continue
                context = set(text.sentence_stems[index])
                window = [index]
                if index + 1 < len(text.sentence_stems) and text.reasoning[index + 1]:
                    context |= text.sentence_stems[index + 1]
                    window.append(index + 1)
                if services and any(_has_phrase(text.sentence_norm[i], services) for i in window):
                    context.add(_SERVICE_TOKEN)
                if len(wanted & context) >= need:
                    ok = True
                    break
        (found if ok else missing).append(facet)
    if not element.facets:
        # a key concept: full credit when used in a reasoning sentence
        in_prose = any(text.reasoning[i] for i in mentions)
        credit = 1.0 if in_prose else (NAMED_CREDIT if named else 0.0)
        return ElementResult(element.label, element.kind, named, (), (), credit)
    share = len(found) / len(element.facets)
    credit = (NAMED_CREDIT + (1 - NAMED_CREDIT) * share) if named else 0.0
    return ElementResult(element.label, element.kind, named, tuple(found), tuple(missing), credit)


@dataclass(frozen=True)
class DimensionScores:
    """A score on each of the three dimensions (`DIMENSIONS`), and their mean (`value`)."""

    accuracy: float
    completeness: float
    quality: float

    @property
    def value(self) -> float:
        return (self.accuracy + self.completeness + self.quality) / 3

    def dimensions(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in DIMENSIONS}


@dataclass(frozen=True)
class ArchitectureScore(DimensionScores):
    """The three dimensions, their mean (`value`) and everything that decided them."""

    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            **{k: round(v, 4) for k, v in self.dimensions().items()},
            "score": round(self.value, 4),
            **self.details,
        }


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


def _allowed_services(elements: Sequence[Element], context: Iterable[str]) -> set[str]:
    allowed: set[str] = set()
    for element in elements:
        for group in element.names:
            for phrase in group:
                service = lookup(phrase)
                if service is not None:
                    allowed.add(service.name)
        allowed |= find_services(" ".join(element.facets))
    for text in context:
        allowed |= find_services(text)
    return allowed


def _echo_share(
    prose: Sequence[str], elements: Sequence[Element], concepts: Sequence[Element]
) -> float:
    """Share of the prose's content words that are copied from the expected elements."""
    vocabulary: set[str] = set()
    for element in [*elements, *concepts]:
        for text in [element.label, *element.facets]:
            vocabulary |= content_stems(text)
    tokens = [stem(w) for w in prose if w not in STOPWORDS and len(w) > 1]
    if len(tokens) < ECHO_MIN_WORDS:
        return 0.0  # too short to tell parroting from a terse answer
    return sum(1 for t in tokens if t in vocabulary) / len(tokens)


def _checked_task(
    metadata: Mapping[str, Any],
) -> tuple[list[Element], list[Element], str | None]:
    """The expected elements, key concepts and output format, or ValueError when malformed."""
    expected = metadata.get("expected") or {}
    if not isinstance(expected, Mapping):
        raise ValueError("metadata.expected must be a mapping of expected elements")
    elements, concepts = expected_elements(expected)
    if not elements:
        raise ValueError(
            "metadata.expected has no elements to score against; "
            "give services, flow_steps, security_components, bottlenecks, cost_factors or issues"
        )
    fmt = metadata.get("output_format")
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(
            f"metadata.output_format must be one of {', '.join(FORMATS)} or null, got {fmt!r}"
        )
    return elements, concepts, fmt


def _completeness(results: Sequence[ElementResult], concepts: Sequence[ElementResult]) -> float:
    """Mean element credit, with the key concepts (when any) weighing CONCEPT_WEIGHT."""
    completeness = sum(r.credit for r in results) / len(results)
    if concepts:
        concept_part = sum(r.credit for r in concepts) / len(concepts)
        completeness = (1 - CONCEPT_WEIGHT) * completeness + CONCEPT_WEIGHT * concept_part
    return completeness


@dataclass(frozen=True)
class _Accuracy:
    """Accuracy before originality: explained share over named elements times precision."""

    named: int
    explained: float
    unexpected: list[str]
    precision: float

    @property
    def value(self) -> float:
        return self.explained * self.precision


def _accuracy(
    response: str,
    results: Sequence[ElementResult],
    elements: Sequence[Element],
    context: Iterable[str],
) -> _Accuracy:
    """How well the named elements are explained, penalised for naming unrelated services."""
    named = [r for r in results if r.named]
    explained = sum(r.explained_share for r in named) / len(named) if named else 0.0
    allowed = _allowed_services(elements, context)
    unexpected = sorted(find_services(response) - allowed)
    tolerance = PRECISION_TOLERANCE + len(elements)
    precision = min(1.0, tolerance / len(unexpected)) if unexpected else 1.0
    return _Accuracy(len(named), explained, unexpected, precision)


@dataclass(frozen=True)
class _Quality:
    """Quality before originality: relevance times the mean of its parts."""

    parts: dict[str, float]
    relevance: float
    function_share: float
    reasoning_sentences: int

    @property
    def value(self) -> float:
        return self.relevance * sum(self.parts.values()) / len(self.parts)


def _quality(
    response: str,
    prose_words: Sequence[str],
    element_count: int,
    diagram: ValidationResult | None,
    completeness: float,
) -> _Quality:
    """Prose, justification, organisation (and format) of the answer, scaled by relevance."""
    function_share = (
        sum(1 for w in prose_words if w in STOPWORDS) / len(prose_words) if prose_words else 0.0
    )
    reasoning_sentences = sum(
        1
        for s in _SENTENCE_SPLIT.split(_FENCED.sub("\n", response))
        if s and is_reasoning_sentence(s)
    )
    parts = {
        "prose": _clip((function_share - 0.1) / 0.15),
        "justification": _clip(len(_JUSTIFICATION.findall(response.lower())) / 2),
        "organisation": _clip(reasoning_sentences / max(3, math.ceil(element_count / 2))),
    }
    if diagram is not None:
        parts["format"] = (
            1.0 if diagram.valid else (FORMAT_INVALID_CREDIT if diagram.found else 0.0)
        )
    return _Quality(parts, _clip(completeness / 0.5), function_share, reasoning_sentences)


def score_architecture(
    response: str,
    metadata: Mapping[str, Any],
    reference_answer: str | None = None,
) -> ArchitectureScore:
    """Score one response to an architecture task (pure: no I/O, no model calls).

    `metadata` is the task's sample metadata (`subtype`, `expected`, `output_format`,
    `question`); `reference_answer` widens the set of services a good answer may mention.
    """
    elements, concepts, fmt = _checked_task(metadata)
    if not response.strip():
        return ArchitectureScore(0.0, 0.0, 0.0, {"reason": "empty response"})

    diagram = validate_diagram(response, cast(DiagramFormat, fmt)) if fmt else None
    text = _Text.of(response, diagram)
    results = [_evaluate(e, text) for e in elements]
    concept_results = [_evaluate(c, text) for c in concepts]

    completeness = _completeness(results, concept_results)
    acc = _accuracy(
        response, results, elements, [reference_answer or "", str(metadata.get("question", ""))]
    )
    prose_words = words(_FENCED.sub(" ", response))
    qual = _quality(response, prose_words, len(elements), diagram, completeness)

    echo = _echo_share(prose_words, elements, concepts)
    originality = _clip((ECHO_ZERO - echo) / (ECHO_ZERO - ECHO_FREE))
    accuracy, completeness, quality = (
        acc.value * originality,
        completeness * originality,
        qual.value * originality,
    )

    details: dict[str, Any] = {
        "scorer": "architecture_scorer",
        "subtype": metadata.get("subtype"),
        "elements": [r.to_dict() for r in results],
        "key_concepts": [r.to_dict() for r in concept_results],
        "named": acc.named,
        "explained_share": round(acc.explained, 4),
        "unexpected_services": acc.unexpected,
        "precision_factor": round(acc.precision, 4),
        "quality_parts": {k: round(v, 4) for k, v in qual.parts.items()},
        "relevance": round(qual.relevance, 4),
        "function_word_share": round(qual.function_share, 4),
        "echo_share": round(echo, 4),
        "originality_factor": round(originality, 4),
        "reasoning_sentences": qual.reasoning_sentences,
        "format": diagram.to_dict() if diagram is not None else None,
    }
    return ArchitectureScore(_clip(accuracy), _clip(completeness), _clip(quality), details)


# ---------------------------------------------------------------------------------------------
# Inspect integration


def response_text(state: TaskState) -> str:
    """The model's final answer text from an Inspect `TaskState`."""
    return str(state.output.completion or "")


def task_metadata(state: TaskState) -> dict[str, Any]:
    """The task fields the scorers need, from the sample metadata."""
    metadata = dict(state.metadata or {})
    if "expected" not in metadata or "subtype" not in metadata:
        raise ValueError(
            "architecture scorers need sample metadata with 'subtype' and 'expected' "
            "(use the architecture_design task, which sets them)"
        )
    return metadata


@scorer(metrics=[mean(), stderr()], name="architecture_scorer")
def architecture_scorer() -> Scorer:
    """Heuristic architecture scorer: the mean of accuracy, completeness and quality."""

    async def score(state: TaskState, target: Target) -> Score:
        response = response_text(state)
        result = score_architecture(response, task_metadata(state), target.text)
        return Score(
            value=result.value,
            answer=response[:200],
            explanation=(
                f"accuracy {result.accuracy:.2f}, completeness {result.completeness:.2f}, "
                f"quality {result.quality:.2f}"
            ),
            metadata=result.to_dict(),
        )

    return score
