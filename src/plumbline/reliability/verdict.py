"""One line per model: what its reliability figures let a reader rely on, and what they do not.

Built from a model's entry in the `plumbline reliability` JSON document, so the page (which only
has the document) and the terminal and Markdown views say the same thing. The reading:

- semantic agreement (mean cosine similarity of responses to one prompt): ≥ 0.9 with its lower
  bound ≥ 0.8, answers repeat; below 0.7, they vary between trials;
- error rate: its Wilson upper bound ≤ 5%, errors are rare; otherwise failures are a risk;
- the seed's consistency score is not relied on when it disagrees sharply with agreement (its
  coefficient-of-variation pathology, `metrics.CV_PATHOLOGY`);
- the performance score is CERT's length/structure/prompt-similarity heuristic, never a
  measure of correctness;
- fewer than `analysis.APPROXIMATE_BELOW` prompts: the intervals are approximate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plumbline.reliability.analysis import APPROXIMATE_BELOW
from plumbline.reliability.metrics import CV_PATHOLOGY_AGREEMENT, CV_PATHOLOGY_CONSISTENCY

RELIABLE_AGREEMENT = 0.9
RELIABLE_AGREEMENT_LOW = 0.8
VARYING_AGREEMENT = 0.7
RARE_ERRORS_PERCENT = 5.0


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _estimate(entry: Mapping[str, Any], key: str) -> tuple[float | None, float | None, int]:
    estimate = entry.get(key)
    if not isinstance(estimate, Mapping):
        return None, None, 0
    interval = estimate.get("interval")
    low = _number(interval.get("low")) if isinstance(interval, Mapping) else None
    n = estimate.get("n")
    return _number(estimate.get("statistic")), low, int(n) if isinstance(n, int) else 0


def model_verdict(entry: Mapping[str, Any]) -> str:
    """`<model> (n = T trials, P prompts): can rely on …; cannot rely on ….`"""
    model = str(entry.get("model", "?"))
    trials = entry.get("trials", 0)
    prompts = len(entry.get("prompts") or [])
    can: list[str] = []
    cannot: list[str] = []

    agreement, agreement_low, _ = _estimate(entry, "agreement")
    consistency, _, _ = _estimate(entry, "consistency")
    if agreement is not None:
        if agreement >= RELIABLE_AGREEMENT and (agreement_low or 0.0) >= RELIABLE_AGREEMENT_LOW:
            can.append(f"answers repeat across trials (agreement {agreement:.2f})")
        elif agreement < VARYING_AGREEMENT:
            cannot.append(f"the same answer twice (agreement {agreement:.2f})")
        else:
            cannot.append(f"identical answers (agreement {agreement:.2f}, moderate)")
    else:
        cannot.append("answer stability (fewer than 2 responses per prompt)")
    if (
        consistency is not None
        and agreement is not None
        and consistency <= CV_PATHOLOGY_CONSISTENCY
        and agreement >= CV_PATHOLOGY_AGREEMENT
    ):
        cannot.append(
            f"the seed's consistency score ({consistency:.2f}: its CV formula misreads "
            "near-identical answers)"
        )

    robustness = entry.get("robustness")
    if isinstance(robustness, Mapping):
        rate = _number(robustness.get("error_rate"))
        interval = robustness.get("error_rate_interval")
        high = _number(interval.get("high")) if isinstance(interval, Mapping) else None
        if rate is not None and high is not None:
            if high <= RARE_ERRORS_PERCENT:
                can.append(f"few failures (error rate {rate:.0f}%, at most {high:.0f}%)")
            else:
                cannot.append(f"every call succeeding (error rate {rate:.0f}%, up to {high:.0f}%)")
    if isinstance(entry.get("performance"), Mapping):
        cannot.append("correctness (the performance score is a length/structure heuristic)")

    parts = [f"{model} (n = {trials} trials, {prompts} prompts)"]
    body = []
    if can:
        body.append("can rely on " + ", ".join(can))
    if cannot:
        body.append("cannot rely on " + ", ".join(cannot))
    line = parts[0] + ": " + "; ".join(body or ["nothing measured"])
    if 0 < prompts < APPROXIMATE_BELOW:
        line += f"; intervals approximate with fewer than {APPROXIMATE_BELOW} prompts"
    return line + "."
