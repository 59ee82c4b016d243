"""The seed's interpretation bands, word for word, as functions of a metric's value."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Band:
    """How the seed reads a value: a label and what to do about it."""

    label: str
    recommendation: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def consistency_band(score: float) -> Band:
    if score > 0.9:
        return Band("Highly deterministic", "Safe for regulated workflows")
    if score >= 0.7:
        return Band("Reliably consistent", "Acceptable for production")
    if score >= 0.5:
        return Band("Moderate variance", "Review temperature/sampling")
    return Band("High variance", "May indicate model instability")


#: What CERT's performance score measures: not correctness, a heuristic on the text.
PERFORMANCE_HEURISTIC = "CERT heuristic: length, structure, similarity to the prompt"


def performance_band(score: float) -> Band:
    """The seed's performance bands (> 0.8, 0.6–0.8, 0.4–0.6, < 0.4), named for what the score
    is: a heuristic on length, structure and similarity to the prompt (seed 003's
    `relevance·0.5 + completeness·0.3 + structure·0.2`), not a judgement of quality or
    correctness. The seed's own band name is kept in the recommendation."""
    if score > 0.8:
        return Band(
            "High heuristic score", "seed band 'Excellent quality': not a correctness check"
        )
    if score >= 0.6:
        return Band("Fair heuristic score", "seed band 'Good quality': not a correctness check")
    if score >= 0.4:
        return Band("Middling heuristic score", "seed band 'Moderate quality': refine prompts")
    return Band("Low heuristic score", "seed band 'Poor quality': investigate model/prompt")


def p95_latency_band(p95_seconds: float) -> Band:
    if p95_seconds < 1:
        return Band("Excellent for interactive use", "P95 latency under 1 s")
    if p95_seconds <= 3:
        return Band("Acceptable for chatbots", "P95 latency 1-3 s")
    if p95_seconds <= 5:
        return Band("Suitable for batch processing", "P95 latency 3-5 s")
    return Band("May impact user experience", "P95 latency over 5 s")


def variation_band(coefficient_of_variation: float) -> Band:
    if coefficient_of_variation < 0.2:
        return Band("Predictable latency", "Coefficient of variation under 0.2")
    if coefficient_of_variation <= 0.5:
        return Band("Moderate variance", "Coefficient of variation 0.2-0.5")
    return Band("High variance (investigate)", "Coefficient of variation over 0.5")


def diversity_band(diversity: float) -> Band:
    if diversity > 0.6:
        return Band("High diversity (creative responses)", "Semantic diversity over 0.6")
    if diversity >= 0.3:
        return Band("Moderate diversity (consistent themes)", "Semantic diversity 0.3-0.6")
    return Band("Low diversity (repetitive across prompts)", "Semantic diversity under 0.3")


def repetition_band(score: float) -> Band:
    if score > 0.9:
        return Band("Minimal repetition (good)", "Repetition score over 0.9")
    if score >= 0.7:
        return Band("Some repetition (acceptable)", "Repetition score 0.7-0.9")
    return Band("Significant repetition (investigate)", "Repetition score under 0.7")


def error_rate_band(error_rate_percent: float) -> Band:
    if error_rate_percent == 0:
        return Band("Excellent", "Production-ready")
    if error_rate_percent < 5:
        return Band("Good", "Monitor for patterns")
    if error_rate_percent <= 15:
        return Band("Concerning", "Investigate error types")
    return Band("Critical", "Address before production")


def timeout_rate_band(timeout_rate_percent: float) -> Band:
    if timeout_rate_percent < 2:
        return Band("Within target", "Timeout rate should be <2% in production")
    return Band(
        "Above target",
        "Timeout rate should be <2% in production: check timeout settings, "
        "provider capacity and the network",
    )


def agreement_band(similarity: float) -> Band:
    """Bands for `semantic_agreement` (plumbline's, not the seed's)."""
    if similarity >= 0.9:
        return Band("Responses agree closely", "Near-identical meaning across trials")
    if similarity >= 0.7:
        return Band("Responses mostly agree", "Same substance, different wording")
    if similarity >= 0.5:
        return Band("Responses partly agree", "Read a sample of responses")
    return Band("Responses disagree", "Trials give different answers")
