"""The CERT benchmark configuration and CERT's minimum sample sizes."""

from __future__ import annotations

import math
from dataclasses import dataclass

DEFAULT_EMBEDDING_MODEL = "all-MiniLM-L6-v2"

# CERT's "Minimum Sample Sizes" table: (minimum, recommended range).
MINIMUM_TRIALS: dict[str, int] = {
    "consistency": 10,
    "performance": 5,
    "latency": 10,
    "output_quality": 10,
    "robustness": 20,
}
RECOMMENDED_TRIALS: dict[str, tuple[int, int]] = {
    "consistency": (20, 50),
    "performance": (15, 30),
    "latency": (30, 100),
    "output_quality": (20, 50),
    "robustness": (50, 100),
}


@dataclass(frozen=True)
class BenchmarkConfig:
    """Configuration of a CERT benchmark run; invalid values raise `ValueError`.

    Defaults are the original's: 20 consistency trials (at least 10), 15 performance trials
    (at least 5), `all-MiniLM-L6-v2`, max_tokens 1024, temperature 0.7, timeout 30 s, seed 42.
    """

    consistency_trials: int = 20
    performance_trials: int = 15
    embedding_model_name: str = DEFAULT_EMBEDDING_MODEL
    max_tokens: int = 1024
    temperature: float = 0.7
    timeout: float = 30.0
    random_seed: int = 42
    bootstrap_resamples: int = 2000

    def __post_init__(self) -> None:
        if not isinstance(self.consistency_trials, int) or self.consistency_trials < 10:
            raise ValueError(
                f"consistency_trials must be an integer of at least 10, "
                f"got {self.consistency_trials!r}"
            )
        if not isinstance(self.performance_trials, int) or self.performance_trials < 5:
            raise ValueError(
                f"performance_trials must be an integer of at least 5, "
                f"got {self.performance_trials!r}"
            )
        if not self.embedding_model_name or not self.embedding_model_name.strip():
            raise ValueError("embedding_model_name must name a sentence-transformers model")
        if not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {self.max_tokens!r}")
        if not (math.isfinite(self.temperature) and 0 <= self.temperature <= 2):
            raise ValueError(f"temperature must be between 0 and 2, got {self.temperature!r}")
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, got {self.timeout!r}")
        if not isinstance(self.random_seed, int) or self.random_seed < 0:
            raise ValueError(
                f"random_seed must be a non-negative integer, got {self.random_seed!r}"
            )
        if not isinstance(self.bootstrap_resamples, int) or self.bootstrap_resamples < 100:
            raise ValueError(
                f"bootstrap_resamples must be an integer of at least 100, "
                f"got {self.bootstrap_resamples!r}"
            )


def sample_size_warning(metric: str, n: int, subject: str) -> str | None:
    """A warning when `n` is below CERT's minimum for `metric`, else None."""
    minimum = MINIMUM_TRIALS[metric]
    if n >= minimum:
        return None
    low, high = RECOMMENDED_TRIALS[metric]
    return (
        f"{subject}: {metric} rests on {n} trial{'s' if n != 1 else ''}, below the minimum of "
        f"{minimum} (recommended {low}-{high}); treat it as indicative only"
    )
