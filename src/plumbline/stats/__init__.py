"""Statistics core: pure, typed functions returning result objects with named fields."""

from plumbline.stats.result import ConfidenceInterval, EstimateResult, TestResult, check_level

__all__ = ["ConfidenceInterval", "EstimateResult", "TestResult", "check_level"]
