"""CERT's interpretation bands, word for word, as functions of a metric's value."""

from __future__ import annotations

from plumbline.reliability.result import Band, Tone


def _band(label: str, recommendation: str) -> Band:
    return Band(label=label, recommendation=recommendation, tone=TONES[label])


def consistency_band(score: float) -> Band:
    if score > 0.9:
        return _band("Highly deterministic", "Safe for regulated workflows")
    if score >= 0.7:
        return _band("Reliably consistent", "Acceptable for production")
    if score >= 0.5:
        return _band("Moderate variance", "Review temperature/sampling")
    return _band("High variance", "May indicate model instability")


#: What CERT's performance score measures: not correctness, a heuristic on the text.
PERFORMANCE_HEURISTIC = "CERT heuristic: length, structure, similarity to the prompt"


def performance_band(score: float) -> Band:
    """CERT's performance bands (> 0.8, 0.6–0.8, 0.4–0.6, < 0.4), named for what the score
    is: a heuristic on length, structure and similarity to the prompt (CERT's
    `relevance·0.5 + completeness·0.3 + structure·0.2`), not a judgement of quality or
    correctness. CERT's own band name is kept in the recommendation."""
    if score > 0.8:
        return _band(
            "High heuristic score", "CERT band 'Excellent quality': not a correctness check"
        )
    if score >= 0.6:
        return _band("Fair heuristic score", "CERT band 'Good quality': not a correctness check")
    if score >= 0.4:
        return _band("Middling heuristic score", "CERT band 'Moderate quality': refine prompts")
    return _band("Low heuristic score", "CERT band 'Poor quality': investigate model/prompt")


def p95_latency_band(p95_seconds: float) -> Band:
    if p95_seconds < 1:
        return _band("Excellent for interactive use", "P95 latency under 1 s")
    if p95_seconds <= 3:
        return _band("Acceptable for chatbots", "P95 latency 1-3 s")
    if p95_seconds <= 5:
        return _band("Suitable for batch processing", "P95 latency 3-5 s")
    return _band("May impact user experience", "P95 latency over 5 s")


def variation_band(coefficient_of_variation: float) -> Band:
    if coefficient_of_variation < 0.2:
        return _band("Predictable latency", "Coefficient of variation under 0.2")
    if coefficient_of_variation <= 0.5:
        return _band("Moderate variance", "Coefficient of variation 0.2-0.5")
    return _band("High variance (investigate)", "Coefficient of variation over 0.5")


def diversity_band(diversity: float) -> Band:
    if diversity > 0.6:
        return _band("High diversity (creative responses)", "Semantic diversity over 0.6")
    if diversity >= 0.3:
        return _band("Moderate diversity (consistent themes)", "Semantic diversity 0.3-0.6")
    return _band("Low diversity (repetitive across prompts)", "Semantic diversity under 0.3")


def repetition_band(score: float) -> Band:
    if score > 0.9:
        return _band("Minimal repetition (good)", "Repetition score over 0.9")
    if score >= 0.7:
        return _band("Some repetition (acceptable)", "Repetition score 0.7-0.9")
    return _band("Significant repetition (investigate)", "Repetition score under 0.7")


def error_rate_band(error_rate_percent: float) -> Band:
    if error_rate_percent == 0:
        return _band("Excellent", "Production-ready")
    if error_rate_percent < 5:
        return _band("Good", "Monitor for patterns")
    if error_rate_percent <= 15:
        return _band("Concerning", "Investigate error types")
    return _band("Critical", "Address before production")


def timeout_rate_band(timeout_rate_percent: float) -> Band:
    if timeout_rate_percent < 2:
        return _band("Within target", "Timeout rate should be <2% in production")
    return _band(
        "Above target",
        "Timeout rate should be <2% in production: check timeout settings, "
        "provider capacity and the network",
    )


def agreement_band(similarity: float) -> Band:
    """Bands for `semantic_agreement` (plumbline's, not CERT's)."""
    if similarity >= 0.9:
        return _band("Responses agree closely", "Near-identical meaning across trials")
    if similarity >= 0.7:
        return _band("Responses mostly agree", "Same substance, different wording")
    if similarity >= 0.5:
        return _band("Responses partly agree", "Read a sample of responses")
    return _band("Responses disagree", "Trials give different answers")


#: The tone of every band label above.
TONES: dict[str, Tone] = {
    **dict.fromkeys(
        (
            "Highly deterministic",
            "Reliably consistent",
            "High heuristic score",
            "Fair heuristic score",
            "Excellent for interactive use",
            "Acceptable for chatbots",
            "Predictable latency",
            "High diversity (creative responses)",
            "Moderate diversity (consistent themes)",
            "Minimal repetition (good)",
            "Excellent",
            "Good",
            "Within target",
            "Responses agree closely",
            "Responses mostly agree",
        ),
        "ok",
    ),
    **dict.fromkeys(
        (
            "Moderate variance",
            "Middling heuristic score",
            "Suitable for batch processing",
            "Low diversity (repetitive across prompts)",
            "Some repetition (acceptable)",
            "Concerning",
            "Responses partly agree",
        ),
        "warn",
    ),
    **dict.fromkeys(
        (
            "High variance",
            "Low heuristic score",
            "May impact user experience",
            "High variance (investigate)",
            "Significant repetition (investigate)",
            "Critical",
            "Above target",
            "Responses disagree",
        ),
        "bad",
    ),
}


def tone(label: str) -> str:
    """The badge class of a band label: `ok`, `warn`, `bad`, else `missing`."""
    return TONES.get(label, "missing")
