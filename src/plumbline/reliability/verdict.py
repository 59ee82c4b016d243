"""One line per model: what its reliability figures let a reader rely on, and what they do not.

Computed once by the analysis (`ModelReliability.verdict`), so the page, the terminal and the
Markdown say the same thing. The reading:

- semantic agreement (mean cosine similarity of responses to one prompt): ≥ 0.9 with its lower
  bound ≥ 0.8, answers repeat; below 0.7, they vary between trials;
- error rate: its Wilson upper bound ≤ 5%, errors are rare; otherwise failures are a risk;
- CERT's consistency score is not relied on when it disagrees sharply with agreement (its
  coefficient-of-variation pathology, `metrics.CV_PATHOLOGY`);
- the performance score is CERT's length/structure/prompt-similarity heuristic, never a
  measure of correctness;
- one prompt: nothing is said about other prompts (no interval over prompts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from plumbline.core.present import fixed, percent_value
from plumbline.reliability.metrics import CV_PATHOLOGY_AGREEMENT, CV_PATHOLOGY_CONSISTENCY

if TYPE_CHECKING:
    from plumbline.reliability.result import ModelReliability

RELIABLE_AGREEMENT = 0.9
RELIABLE_AGREEMENT_LOW = 0.8
VARYING_AGREEMENT = 0.7
RARE_ERRORS_PERCENT = 5.0


def model_verdict(entry: ModelReliability) -> str:
    """`<model> (n = T trials, P prompts): can rely on …; cannot rely on ….`"""
    prompts = len(entry.prompts)
    can: list[str] = []
    cannot: list[str] = []

    agreement = entry.agreement.statistic if entry.agreement is not None else None
    agreement_low = entry.agreement.interval.low if entry.agreement is not None else None
    consistency = entry.consistency.statistic if entry.consistency is not None else None
    if agreement is not None:
        shown = fixed(agreement, 2)
        if agreement >= RELIABLE_AGREEMENT and (agreement_low or 0.0) >= RELIABLE_AGREEMENT_LOW:
            can.append(f"answers repeat across trials (agreement {shown})")
        elif agreement < VARYING_AGREEMENT:
            cannot.append(f"the same answer twice (agreement {shown})")
        else:
            cannot.append(f"identical answers (agreement {shown}, moderate)")
    else:
        cannot.append("answer stability (fewer than 2 responses per prompt)")
    if (
        consistency is not None
        and agreement is not None
        and consistency <= CV_PATHOLOGY_CONSISTENCY
        and agreement >= CV_PATHOLOGY_AGREEMENT
    ):
        cannot.append(
            f"CERT's consistency score ({fixed(consistency, 2)}: its CV formula misreads "
            "near-identical answers)"
        )

    robustness = entry.robustness
    rate, high = robustness.error_rate, robustness.error_rate_interval.high
    if high is not None:
        if high <= RARE_ERRORS_PERCENT:
            can.append(
                f"few failures (error rate {percent_value(rate, 0)}, "
                f"at most {percent_value(high, 0)})"
            )
        else:
            cannot.append(
                f"every call succeeding (error rate {percent_value(rate, 0)}, "
                f"up to {percent_value(high, 0)})"
            )
    if entry.performance is not None:
        cannot.append("correctness (the performance score is a length/structure heuristic)")

    body = []
    if can:
        body.append("can rely on " + ", ".join(can))
    if cannot:
        body.append("cannot rely on " + ", ".join(cannot))
    line = f"{entry.model} (n = {entry.trials} trials, {prompts} prompts): " + "; ".join(
        body or ["nothing measured"]
    )
    if prompts == 1:
        line += "; one prompt says nothing about other prompts"
    return line + "."
