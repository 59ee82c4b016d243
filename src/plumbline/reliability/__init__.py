"""Reliability (CERT): repeated trials against models and the five metrics.

- `runner`: the trial runner (Inspect AI model API, bounded concurrency, resumable journal)
- `errors`: error classification from exception types and HTTP status; secret redaction
- `metrics`: consistency, performance, latency, output quality, robustness; semantic agreement
- `embeddings`: one sentence-transformers model, batched, cached by text hash, offline
- `analysis`: records → per-model report with intervals, and model comparison
- `render`: terminal and Markdown output
"""

from plumbline.reliability.config import MINIMUM_TRIALS, BenchmarkConfig
from plumbline.reliability.errors import Classification, classify_exception, redact
from plumbline.reliability.metrics import (
    agreement_conflict,
    consistency_score,
    latency_metrics,
    output_quality,
    performance_scores,
    repetition_score,
    robustness,
    semantic_agreement,
)

__all__ = [
    "MINIMUM_TRIALS",
    "BenchmarkConfig",
    "Classification",
    "agreement_conflict",
    "classify_exception",
    "consistency_score",
    "latency_metrics",
    "output_quality",
    "performance_scores",
    "redact",
    "repetition_score",
    "robustness",
    "semantic_agreement",
]
