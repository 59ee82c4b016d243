"""The judge's verdict: strict parsing of its final JSON object (no default score, no clamping)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from plumbline.suites.sa_bench.scorers.architecture import DIMENSIONS, DimensionScores

MAX_REASONING_CHARS = 600


# ---------------------------------------------------------------------------------------------
# parsing


class JudgeParseError(ValueError):
    """The judge's reply is not a valid verdict; the message says what to fix."""


@dataclass(frozen=True)
class JudgeVerdict(DimensionScores):
    """A judge's three dimension scores and its reasoning."""

    reasoning: str


def _json_objects(text: str) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    position = 0
    while (start := text.find("{", position)) >= 0:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        if isinstance(value, dict):
            found.append(value)
        position = end
    return found


def parse_verdict(text: str) -> JudgeVerdict:
    """Parse the judge's final JSON object strictly (see the module docstring)."""
    objects = _json_objects(text)
    if not objects:
        raise JudgeParseError("no JSON object found; reply with exactly one JSON object")
    verdict = objects[-1]
    missing = [d for d in DIMENSIONS if d not in verdict]
    if missing:
        raise JudgeParseError(f"the JSON object lacks {', '.join(missing)}")
    values: dict[str, float] = {}
    for dimension in DIMENSIONS:
        raw = verdict[dimension]
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
            raise JudgeParseError(f"{dimension}={raw!r} is not a number between 0 and 1")
        values[dimension] = float(raw)
    out_of_range = {d: v for d, v in values.items() if not 0 <= v <= 1}
    if out_of_range:
        listing = ", ".join(f"{d}={v:g}" for d, v in out_of_range.items())
        hint = (
            "a 0-10 scale"
            if all(v <= 10 for v in out_of_range.values())
            else "a percentage or another scale"
        )
        raise JudgeParseError(
            f"{listing} outside [0, 1] (looks like {hint}); every dimension must be in [0, 1]"
        )
    reasoning = verdict.get("reasoning", "")
    if not isinstance(reasoning, str):
        raise JudgeParseError("reasoning must be a string")
    return JudgeVerdict(
        values["accuracy"],
        values["completeness"],
        values["quality"],
        reasoning[:MAX_REASONING_CHARS],
    )
