"""The documented factors that multiply the blended judge score, each with its reason."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plumbline.suites.sa_bench.scorers.architecture import (
    DIMENSIONS,
)
from plumbline.suites.sa_bench.scorers.aws_services import phrases_for
from plumbline.suites.sa_bench.scorers.diagram import ValidationResult
from plumbline.suites.sa_bench.scorers.prose import words

# ---------------------------------------------------------------------------------------------
# blending and factors


@dataclass(frozen=True)
class Factor:
    name: str
    applies_to: tuple[str, ...]
    value: float
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "applies_to": list(self.applies_to),
            "factor": self.value,
            "reason": self.reason,
        }


def _distinct_sentence_share(response: str) -> float:
    sentences = [" ".join(words(s)) for s in re.split(r"(?<=[.!?])\s+|\n+", response) if words(s)]
    return len(set(sentences)) / len(sentences) if sentences else 1.0


def adjustment_factors(
    response: str,
    metadata: Mapping[str, Any],
    reference_answer: str,
    diagram: ValidationResult | None,
) -> list[Factor]:
    """The documented anti-gaming and structure factors that apply to this response."""
    factors: list[Factor] = []
    count = len(words(response))
    if count < 50:
        factors.append(Factor("length_floor", DIMENSIONS, 0.8, f"{count} words (< 50)"))
    if count >= 100 and (share := _distinct_sentence_share(response)) < 0.6:
        factors.append(
            Factor("repetition", DIMENSIONS, 0.9, f"only {share:.0%} of sentences are distinct")
        )
    reference_words = len(words(reference_answer))
    if count > 400 and reference_words and count > 3 * reference_words:
        factors.append(
            Factor(
                "padding",
                DIMENSIONS,
                0.9,
                f"{count} words, over 3× the reference answer's {reference_words}",
            )
        )
    if diagram is not None:
        if diagram.valid:
            factors.append(
                Factor("format_valid", ("quality",), 1.05, f"valid {diagram.format} diagram")
            )
            services = (metadata.get("expected") or {}).get("services") or []
            if services:
                labels = " " + " ".join(words(diagram.text)) + " "
                missing = [
                    s["name"]
                    for s in services
                    if not any(f" {p} " in labels for p in phrases_for(s["name"]))
                ]
                if missing:
                    share = len(missing) / len(services)
                    factors.append(
                        Factor(
                            "missing_components",
                            ("completeness",),
                            1 - 0.1 * share,
                            f"diagram lacks {', '.join(missing)}",
                        )
                    )
        else:
            why = "; ".join(diagram.errors[:3])
            factors.append(Factor("format_invalid", ("quality",), 0.8, why))
    return factors
