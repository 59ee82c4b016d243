"""Statistics core: pure, typed functions returning result objects with named fields.

Every function validates its inputs (a `ValueError` names the argument), never reads files or
prints, and documents its formula and a reference.

The package imports nothing until a name is asked for (PEP 562): a command that needs only the
result types (`plumbline.stats.result`) does not pay for scipy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plumbline.stats.agreement import krippendorff_alpha
    from plumbline.stats.bootstrap import (
        bootstrap_interval,
        bootstrap_percentile_intervals,
        paired_bootstrap,
    )
    from plumbline.stats.change import ChangeDetection, detect_change
    from plumbline.stats.clustered import cluster_bootstrap
    from plumbline.stats.effect_sizes import (
        cliffs_delta,
        cohens_d,
        cohens_d_clustered,
        geometric_mean_ratio,
    )
    from plumbline.stats.means import (
        cert_ci_95,
        clustered_mean,
        normal_interval,
        repeated_measures_mean,
        t_interval,
    )
    from plumbline.stats.multiple import MinPStepDown, benjamini_hochberg, holm, min_p_step_down
    from plumbline.stats.paired import (
        hodges_lehmann,
        mcnemar_exact,
        sign_test,
        wilcoxon_signed_rank,
    )
    from plumbline.stats.percentiles import percentile
    from plumbline.stats.power import (
        DetectableEffectResult,
        SampleSizeResult,
        mcnemar_minimum_detectable_effect,
        mcnemar_sample_size,
        paired_minimum_detectable_effect,
        paired_sample_size,
        repeat_variance_factor,
        two_proportion_minimum_detectable_effect,
        two_proportion_sample_size,
    )
    from plumbline.stats.ppi import ppi_mean, ppi_mean_difference
    from plumbline.stats.ppi_labels import (
        LabelBudget,
        SelectionCheck,
        label_budget,
        selection_check,
    )
    from plumbline.stats.proportions import (
        clopper_pearson_interval,
        proportion_bounds,
        proportion_interval,
        wald_interval,
        wilson_interval,
    )
    from plumbline.stats.result import ConfidenceInterval, EstimateResult, TestResult, check_level
    from plumbline.stats.sequential import (
        SequentialPlan,
        SequentialResult,
        expected_pairs,
        plan_sequential,
        plan_sequential_continuous,
        run_sequential,
    )

#: Where each public name lives.
_WHERE = {
    "ChangeDetection": "plumbline.stats.change",
    "ConfidenceInterval": "plumbline.stats.result",
    "DetectableEffectResult": "plumbline.stats.power",
    "EstimateResult": "plumbline.stats.result",
    "LabelBudget": "plumbline.stats.ppi_labels",
    "SampleSizeResult": "plumbline.stats.power",
    "SelectionCheck": "plumbline.stats.ppi_labels",
    "SequentialPlan": "plumbline.stats.sequential",
    "SequentialResult": "plumbline.stats.sequential",
    "TestResult": "plumbline.stats.result",
    "benjamini_hochberg": "plumbline.stats.multiple",
    "bootstrap_interval": "plumbline.stats.bootstrap",
    "bootstrap_percentile_intervals": "plumbline.stats.bootstrap",
    "cert_ci_95": "plumbline.stats.means",
    "check_level": "plumbline.stats.result",
    "cliffs_delta": "plumbline.stats.effect_sizes",
    "clopper_pearson_interval": "plumbline.stats.proportions",
    "cluster_bootstrap": "plumbline.stats.clustered",
    "clustered_mean": "plumbline.stats.means",
    "cohens_d": "plumbline.stats.effect_sizes",
    "cohens_d_clustered": "plumbline.stats.effect_sizes",
    "detect_change": "plumbline.stats.change",
    "expected_pairs": "plumbline.stats.sequential",
    "geometric_mean_ratio": "plumbline.stats.effect_sizes",
    "hodges_lehmann": "plumbline.stats.paired",
    "holm": "plumbline.stats.multiple",
    "min_p_step_down": "plumbline.stats.multiple",
    "MinPStepDown": "plumbline.stats.multiple",
    "krippendorff_alpha": "plumbline.stats.agreement",
    "label_budget": "plumbline.stats.ppi_labels",
    "mcnemar_exact": "plumbline.stats.paired",
    "mcnemar_minimum_detectable_effect": "plumbline.stats.power",
    "mcnemar_sample_size": "plumbline.stats.power",
    "normal_interval": "plumbline.stats.means",
    "paired_bootstrap": "plumbline.stats.bootstrap",
    "paired_minimum_detectable_effect": "plumbline.stats.power",
    "paired_sample_size": "plumbline.stats.power",
    "percentile": "plumbline.stats.percentiles",
    "plan_sequential": "plumbline.stats.sequential",
    "plan_sequential_continuous": "plumbline.stats.sequential",
    "ppi_mean": "plumbline.stats.ppi",
    "ppi_mean_difference": "plumbline.stats.ppi",
    "proportion_bounds": "plumbline.stats.proportions",
    "proportion_interval": "plumbline.stats.proportions",
    "repeat_variance_factor": "plumbline.stats.power",
    "repeated_measures_mean": "plumbline.stats.means",
    "run_sequential": "plumbline.stats.sequential",
    "selection_check": "plumbline.stats.ppi_labels",
    "sign_test": "plumbline.stats.paired",
    "t_interval": "plumbline.stats.means",
    "two_proportion_minimum_detectable_effect": "plumbline.stats.power",
    "two_proportion_sample_size": "plumbline.stats.power",
    "wald_interval": "plumbline.stats.proportions",
    "wilcoxon_signed_rank": "plumbline.stats.paired",
    "wilson_interval": "plumbline.stats.proportions",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'plumbline.stats' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "ChangeDetection",
    "ConfidenceInterval",
    "DetectableEffectResult",
    "EstimateResult",
    "LabelBudget",
    "MinPStepDown",
    "SampleSizeResult",
    "SelectionCheck",
    "SequentialPlan",
    "SequentialResult",
    "TestResult",
    "benjamini_hochberg",
    "bootstrap_interval",
    "bootstrap_percentile_intervals",
    "cert_ci_95",
    "check_level",
    "cliffs_delta",
    "clopper_pearson_interval",
    "cluster_bootstrap",
    "clustered_mean",
    "cohens_d",
    "cohens_d_clustered",
    "detect_change",
    "expected_pairs",
    "geometric_mean_ratio",
    "hodges_lehmann",
    "holm",
    "krippendorff_alpha",
    "label_budget",
    "mcnemar_exact",
    "mcnemar_minimum_detectable_effect",
    "mcnemar_sample_size",
    "min_p_step_down",
    "normal_interval",
    "paired_bootstrap",
    "paired_minimum_detectable_effect",
    "paired_sample_size",
    "percentile",
    "plan_sequential",
    "plan_sequential_continuous",
    "ppi_mean",
    "ppi_mean_difference",
    "proportion_bounds",
    "proportion_interval",
    "repeat_variance_factor",
    "repeated_measures_mean",
    "run_sequential",
    "selection_check",
    "sign_test",
    "t_interval",
    "two_proportion_minimum_detectable_effect",
    "two_proportion_sample_size",
    "wald_interval",
    "wilcoxon_signed_rank",
    "wilson_interval",
]
