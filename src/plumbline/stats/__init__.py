"""Statistics core: pure, typed functions returning result objects with named fields.

Every function validates its inputs (a `ValueError` names the argument), never reads files or
prints, and documents its formula and a reference.
"""

from plumbline.stats.agreement import krippendorff_alpha
from plumbline.stats.bootstrap import (
    bootstrap_interval,
    bootstrap_percentile_intervals,
    cluster_bootstrap,
    paired_bootstrap,
)
from plumbline.stats.change import ChangeDetection, detect_change
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
from plumbline.stats.multiple import benjamini_hochberg, holm
from plumbline.stats.paired import hodges_lehmann, mcnemar_exact, sign_test, wilcoxon_signed_rank
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
from plumbline.stats.ppi import (
    LabelBudget,
    SelectionCheck,
    label_budget,
    ppi_mean,
    ppi_mean_difference,
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

__all__ = [
    "ChangeDetection",
    "ConfidenceInterval",
    "DetectableEffectResult",
    "EstimateResult",
    "LabelBudget",
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
