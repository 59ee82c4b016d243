"""Scorers for SA Bench's architecture_design category.

- `architecture_scorer()`: the heuristic (accuracy, completeness, quality from expected elements).
- `llm_judge_scorer(...)`: an LLM judge with versioned rubrics, blended with the heuristic.
- `structured`: finding a diagram in a response and validating it (JSON here; `mermaid`,
  `mermaid_grammar` and `plantuml` for the others; `diagram` for the result).
- `aws_services`: the service catalogue with aliases used for matching.
"""

from plumbline.suites.sa_bench.scorers.architecture import (
    ArchitectureScore,
    architecture_scorer,
    score_architecture,
)
from plumbline.suites.sa_bench.scorers.diagram import ValidationResult
from plumbline.suites.sa_bench.scorers.judge import llm_judge_scorer
from plumbline.suites.sa_bench.scorers.mermaid import validate_mermaid
from plumbline.suites.sa_bench.scorers.plantuml import validate_plantuml
from plumbline.suites.sa_bench.scorers.structured import (
    validate_diagram,
    validate_json_architecture,
)

__all__ = [
    "ArchitectureScore",
    "ValidationResult",
    "architecture_scorer",
    "llm_judge_scorer",
    "score_architecture",
    "validate_diagram",
    "validate_json_architecture",
    "validate_mermaid",
    "validate_plantuml",
]
