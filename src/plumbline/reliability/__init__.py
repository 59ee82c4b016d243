"""Reliability (CERT): the five metrics over the trials a probe recorded. Analysis only: the
probe that calls the models and writes the journal is `plumbline.probe`.

- `config`: the CERT benchmark configuration and minimum sample sizes
- `config_split`: each (model, generation configuration) reported on its own, never pooled
- `metrics`: consistency, performance, latency, output quality, robustness; semantic agreement
- `embeddings`: one sentence-transformers model, batched, cached by text hash, offline
- `intervals`, `bands`, `verdict`: each interval with its unit and basis, CERT's bands, the
  one-line verdict per model
- `analysis`: records → per-model report with intervals (`result`: the typed document)
- `regression`, `no_change`, `bursts`: a run against its baseline, the tests of no change

Views (`plumbline.views.reliability`, `views.reliability_page`) render the result.
"""

from plumbline.reliability.config import MINIMUM_TRIALS, BenchmarkConfig
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
    "agreement_conflict",
    "consistency_score",
    "latency_metrics",
    "output_quality",
    "performance_scores",
    "repetition_score",
    "robustness",
    "semantic_agreement",
]
