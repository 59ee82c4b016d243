"""Regression test after a model update: a current run against a baseline run, paired by prompt.

CERT names "regression testing after model updates" as a use: `plumbline reliability NEW.jsonl
--baseline OLD.jsonl`. For each pair of models (by name; when each run holds one model, those
two, whatever their names; or as `--pair OLD=NEW` says) and each metric, on the prompts both
runs share, the change `current − baseline` gets an interval and a verdict:

- consistency, agreement, performance: paired t over the shared prompts of the per-prompt
  differences (the prompt is the unit; trials are averaged within it first);
- latency p50 and p95: percentile bootstrap of the difference of the two runs' percentiles,
  resampling trials within each prompt of each run (the runs are independent samples);
- error rate: Newcombe's hybrid score interval (MOVER over Wilson intervals) of the difference
  of two independent proportions, in percentage points, at the effective sample sizes of
  failures that come in bursts (`reliability.bursts.design_effect`).

Cost per trial, when the user asks for it (`--test-metric cost` or `--margin cost=FRACTION`,
with the models priced by `--price` or `--prices`): the paired studentized bootstrap over
prompts of each prompt's change of mean trial cost (`changes.cost_change`), tested by the same
relabelling of each prompt's trials, and adjusted with the scores and latencies; the family is
then seven metrics (each interval at `1 − 0.05/7`, the error rate's share 1/7).

Multiplicity (Bonferroni): each of the six intervals of a model pair is at `1 − 0.05/6`
(99.17%), so the chance that any of them misses its true change is at most 5%.

Verdicts, with the worse direction of each metric (lower scores, higher latency and errors):
`unchanged` when the whole interval lies inside ±margin (equivalence, TOST-style: Schuirmann
1987). Otherwise `regressed` or `improved` when the stratified permutation test of no change
(`reliability.no_change`: each prompt's trials of both runs relabelled at random) rejects on
that side after Westfall–Young's step-down min-p over the metrics at 0.05 (Westfall & Young
1993: every metric's p-value on every relabelling, so the adjustment pays for the metrics'
dependence, not for six independent tests as Holm's would): when nothing changed, the chance of
any false `regressed` for the pair is at most 5% over all metrics, at any number of prompts and
trials, whatever the prompts and the latency tails (the trials of a prompt being exchangeable
between the runs). Else `inconclusive`, with the smallest change the test could have detected
(80% power: `(z_c + z_0.8) · SE`, c the raw p-value the adjustment's first step rejects, SE
the spread of its statistic over the relabellings), or, when no outcome of this many trials
could reach an adjusted p-value of 0.05, the reason.

Errors come in bursts in time (provider incidents), so the error rate is not tested by
relabelling single trials: its test relabels blocks of consecutive trials of each run, ordered
by the trials' recorded start times (`reliability.bursts`), and the family's 0.05 is split
between the two kinds of test in proportion to their metrics (weighted Bonferroni: the five
others adjusted together by Westfall–Young at 5/6 of it, the error rate at 1/6). Measured in
`benchmarks/bench_reliability_regression.py` (docs/statistics.md).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from scipy import stats as sps

from plumbline.records.trial_record import TrialRecord
from plumbline.reliability.bursts import (
    BLOCK_METHOD,
    BlockTest,
    block_error_test,
)
from plumbline.reliability.changes import (
    CHANGE_RANGE,
    POWER,
    Change,
    cost_change,
    error_change,
    in_time,
    latency_change,
    paired_scores,
)
from plumbline.reliability.config_split import split_by_config
from plumbline.reliability.cost import Price, Pricing, price_problem, priced_cost, pricing_of
from plumbline.reliability.model_pairs import model_pairing, pair_models, records_by_model
from plumbline.reliability.no_change import (
    TESTED,
    NoChange,
    permutation_tests,
    pooled_digest,
)
from plumbline.reliability.pooled_trials import prompt_trials
from plumbline.reliability.result import (
    METRICS,
    BaselineComparison,
    Difference,
    MetricChange,
    ModelPairing,
    NoChangeTest,
    Verdict,
)
from plumbline.stats import min_p_step_down
from plumbline.stats.arrays import FloatArray

if TYPE_CHECKING:
    from plumbline.core.prices import PriceTable
    from plumbline.reliability.analysis import Embed
    from plumbline.reliability.result import ModelReliability, ReliabilityReport


#: Default equivalence margins: score points for the scores, a fraction of the baseline value for
#: latencies, percentage points for the error rate.
DEFAULT_MARGINS: dict[str, float] = {
    "consistency": 0.05,
    "agreement": 0.05,
    "performance": 0.05,
    "latency_p50": 0.10,
    "latency_p95": 0.10,
    "error_rate": 2.0,
}
#: Cost per trial, compared only when asked for (`--test-metric cost`, `--margin cost=...`).
COST = "cost"
#: Its default equivalence margin: a fraction of the baseline's cost per trial, as latency's.
COST_MARGIN = 0.10
HIGHER_IS_BETTER = {
    "consistency": True,
    "agreement": True,
    "performance": True,
    "latency_p50": False,
    "latency_p95": False,
    "error_rate": False,
    COST: False,
}
LABELS = {
    "consistency": "CERT consistency",
    "agreement": "semantic agreement",
    "performance": "performance heuristic",
    "latency_p50": "latency p50 (s)",
    "latency_p95": "latency p95 (s)",
    "error_rate": "error rate (%)",
    COST: "cost per trial (USD)",
}
FAMILY_LEVEL = 0.95
RESAMPLES = 4000
TEST_METHOD = (
    "stratified permutation test of no change: each prompt's trials of both runs relabelled at "
    "random (Good 2005, §3.5), p = (1 + #{T* at least as extreme}) / (1 + B) (Phipson & Smyth "
    "2010); Westfall–Young step-down min-p over the metrics on the same relabellings "
    "(Westfall & Young 1993, Algorithm 2.8), with the family level split with the error "
    "rate's block test (weighted Bonferroni); exact under exchangeable trials"
)


def margin_text(metric: str, margin: float) -> str:
    """How a margin reads: `±0.05`, `±10% of the baseline`, `±2 points`."""
    if metric.startswith("latency") or metric == COST:
        return f"±{margin:.0%} of the baseline"
    if metric == "error_rate":
        return f"±{margin:g} percentage points"
    return f"±{margin:g}"


def verdict_of(
    low: float, high: float, margin: float, higher_is_better: bool
) -> Literal["regressed", "improved", "unchanged", "inconclusive"]:
    """Equivalence first (the interval inside ±margin), then the side of 0 it lies on."""
    if -margin <= low and high <= margin:
        return "unchanged"
    if high < 0:
        return "regressed" if higher_is_better else "improved"
    if low > 0:
        return "improved" if higher_is_better else "regressed"
    return "inconclusive"


def _prompt_values(entry: ModelReliability, metric: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for prompt in entry.prompts:
        if metric == "consistency" and prompt.consistency is not None:
            values[prompt.prompt_id] = prompt.consistency.score
        elif metric == "agreement" and prompt.agreement is not None:
            values[prompt.prompt_id] = prompt.agreement.similarity
        elif metric == "performance" and prompt.performance is not None:
            values[prompt.prompt_id] = prompt.performance
    return values


@dataclass(frozen=True)
class _PairRuns:
    """A baseline model's and a current model's entries and records, and their pricing when
    cost is compared."""

    old: ModelReliability
    new: ModelReliability
    old_records: Sequence[TrialRecord]
    new_records: Sequence[TrialRecord]
    pricing: tuple[Pricing, Pricing] | None = None

    def costs(self, current: bool) -> dict[str, list[float]]:
        """Each shared prompt's priced trial costs in one run."""
        if self.pricing is None:
            return {}
        wanted = set(self.shared)
        found: dict[str, list[float]] = defaultdict(list)
        for record in self.new_records if current else self.old_records:
            usd = priced_cost(record, self.pricing[current])
            if record.prompt_id in wanted and math.isfinite(usd):
                found[record.prompt_id].append(usd)
        return dict(found)

    @property
    def old_prompts(self) -> set[str]:
        return {p.prompt_id for p in self.old.prompts}

    @property
    def new_prompts(self) -> set[str]:
        return {p.prompt_id for p in self.new.prompts}

    @property
    def shared(self) -> list[str]:
        return sorted(self.old_prompts & self.new_prompts)


#: What each test's level rests on (stated with every test, in the output and the docs).
EXCHANGEABLE = (
    "the trials of a prompt are exchangeable between the runs (answers and latencies of one "
    "run independent of when they were drawn)"
)
IN_BURSTS = (
    "failures may come in bursts in time (provider incidents) shorter than a block; blocks "
    "of consecutive trials of one run are exchangeable between the runs"
)


@dataclass(frozen=True)
class _Group:
    """Metrics adjusted together by Westfall–Young on shared relabellings, and the share of
    the family level spent on them (weighted Bonferroni between groups)."""

    names: list[str]
    statistics: FloatArray
    share: float

    def adjusted(self, alpha: float) -> dict[str, NoChangeTest]:
        # smaller is more extreme: a column per metric, negated where the side is "higher"
        lower_is_worse = np.array([HIGHER_IS_BETTER[m] for m in self.names])
        worse = min_p_step_down(np.where(lower_is_worse, self.statistics, -self.statistics))
        better = min_p_step_down(np.where(lower_is_worse, -self.statistics, self.statistics))
        critical = min(worse.critical_p(alpha * self.share), better.critical_p(alpha * self.share))
        scale = 1 / self.share
        return {
            m: NoChangeTest(
                method=TEST_METHOD,
                statistic=float(self.statistics[0, i]),
                z=0.0,
                null_standard_error=0.0,
                p_worse=float(worse.pvalues[i]),
                p_worse_adjusted=min(1.0, scale * float(worse.adjusted[i])),
                p_better=float(better.pvalues[i]),
                p_better_adjusted=min(1.0, scale * float(better.adjusted[i])),
                alpha=alpha,
                metrics_tested=0,
                critical_p=critical,
                prompts=0,
                resamples=0,
                smallest_p=0.0,
                attainable_p_worse=min(1.0, scale * float(worse.attainable[i])),
                attainable_p_better=min(1.0, scale * float(better.attainable[i])),
                assumption=EXCHANGEABLE,
            )
            for i, m in enumerate(self.names)
        }


@dataclass(frozen=True)
class _Tests:
    """Every metric's test of no change of one model pair: the scores and latencies by
    relabelling each prompt's trials, the error rate by relabelling blocks of consecutive
    trials (`reliability.bursts`). Westfall–Young's step-down min-p adjusts the metrics of
    each kind on its shared relabellings, and the family level is split between the two kinds
    in proportion to their metrics (weighted Bonferroni: 5/6 and 1/6 of 0.05 with all six)."""

    tests: Mapping[str, NoChangeTest]
    #: The metrics that may be called regressed or improved (`--test-metric`; default all).
    tested: frozenset[str]

    @classmethod
    def of(
        cls, runs: _PairRuns, embed: Embed, seed: int, resamples: int, tested: Sequence[str]
    ) -> _Tests:
        trials = prompt_trials(runs.old_records, runs.new_records, runs.shared, embed, runs.pricing)
        rng = np.random.default_rng([seed, pooled_digest(trials)])
        found = permutation_tests(trials, rng=rng, resamples=resamples)
        blocked = None
        if "error_rate" in found:
            blocked = block_error_test(
                in_time(runs.old_records, runs.shared),
                in_time(runs.new_records, runs.shared),
                prompts=found["error_rate"].prompts,
                rng=rng,
                resamples=resamples,
            )
            found.pop("error_rate")
            if blocked is not None:
                found["error_rate"] = blocked.test
        names = [m for m in TESTED if m in found and m in tested]
        if not names:
            return cls({}, frozenset(tested))
        kinds = [[m for m in names if m != "error_rate"], [m for m in names if m == "error_rate"]]
        tests: dict[str, NoChangeTest] = {}
        for kind in (k for k in kinds if k):
            statistics = np.column_stack([found[m].statistics for m in kind])
            group = _Group(kind, statistics, len(kind) / len(names))
            for m, test in group.adjusted(1 - FAMILY_LEVEL).items():
                tests[m] = _completed(test, found[m], len(names), blocked)
        return cls({m: tests[m] for m in names}, frozenset(tested))


def _completed(
    test: NoChangeTest, found: NoChange, family: int, blocked: BlockTest | None
) -> NoChangeTest:
    """A group's adjusted test with the metric's own figures (and its blocks)."""
    update: dict[str, object] = {
        "z": found.z,
        "null_standard_error": found.null_standard_error,
        "metrics_tested": family,
        "prompts": found.prompts,
        "resamples": found.resamples,
        "smallest_p": found.smallest_p,
    }
    if blocked is not None and found is blocked.test:
        update |= {
            "method": BLOCK_METHOD + "; weighted Bonferroni with the other metrics",
            "block_length": blocked.block_length,
            "blocks": blocked.baseline_blocks + blocked.current_blocks,
            "assumption": IN_BURSTS,
        }
    return test.model_copy(update=update)


def _tested_verdict(test: NoChangeTest) -> tuple[Verdict, str]:
    """The verdict of a change that is not `unchanged`, and why it is inconclusive if it is."""
    if test.p_worse_adjusted <= test.alpha:
        return "regressed", ""
    if test.p_better_adjusted <= test.alpha:
        return "improved", ""
    reachable = min(test.attainable_p_worse, test.attainable_p_better)
    if reachable > test.alpha:
        return "inconclusive", (
            f"too few trials to test: the smallest adjusted p-value their relabellings can give "
            f"is {reachable:.2g}, above {test.alpha:.2g} (0.05 over {test.metrics_tested} "
            "metrics)"
        )
    return "inconclusive", ""


def _measure(runs: _PairRuns, metric: str, level: float, seed: int, resamples: int) -> Change:
    """(baseline, current, difference, interval, detectable change) of one metric."""
    shared = runs.shared
    if metric in ("consistency", "agreement", "performance"):
        old_values = {k: v for k, v in _prompt_values(runs.old, metric).items() if k in shared}
        new_values = {k: v for k, v in _prompt_values(runs.new, metric).items() if k in shared}
        trials = sum(
            p.valid_responses
            for entry in (runs.old, runs.new)
            for p in entry.prompts
            if p.prompt_id in shared
        )
        return paired_scores(old_values, new_values, level, trials, CHANGE_RANGE[metric])
    if metric == COST:
        return cost_change(runs.costs(False), runs.costs(True), level, seed, resamples)
    if metric.startswith("latency"):
        q = 50.0 if metric == "latency_p50" else 95.0
        return latency_change(runs.old_records, runs.new_records, shared, q, level, seed, resamples)
    return error_change(runs.old_records, runs.new_records, shared, level)


def _metric_change(
    runs: _PairRuns,
    tests: _Tests,
    metric: str,
    margin: float,
    level: float,
    seed: int,
    resamples: int,
) -> MetricChange:
    """One metric's change, its margin in the difference's unit, and its verdict."""
    old_value, new_value, estimate, interval, detectable = _measure(
        runs, metric, level, seed, resamples
    )
    if metric.startswith("latency") or metric == COST:
        margin = margin * old_value if old_value is not None else math.nan
    better_high = HIGHER_IS_BETTER[metric]
    note = ""
    verdict: Verdict = "inconclusive"
    if interval is not None and interval.low is not None and interval.high is not None:
        # equivalence (the whole interval inside ±margin) is the one verdict the interval gives
        if verdict_of(interval.low, interval.high, margin, better_high) == "unchanged":
            verdict = "unchanged"
    elif estimate is None:
        note = "no values on shared prompts"
    else:
        note = "an interval needs at least 2 shared prompts with values"
    test = tests.tests.get(metric)
    if test is not None:
        detectable = (
            (float(sps.norm.isf(test.critical_p)) + float(sps.norm.ppf(POWER)))
            * test.null_standard_error
            if test.critical_p > 0
            else None
        )
        if verdict != "unchanged":
            verdict, reason = _tested_verdict(test)
            note = reason or note
    elif verdict != "unchanged" and not note:
        note = (
            "no test of no change: no shared prompt has trials in both runs"
            if metric in tests.tested
            else "not tested: outside --test-metric"
        )
    return MetricChange(
        model=runs.new.model,
        baseline_model=runs.old.model,
        metric=metric,
        label=LABELS[metric],
        baseline=old_value,
        current=new_value,
        difference=Difference(estimate=estimate, interval=interval),
        margin=margin if math.isfinite(margin) else 0.0,
        worse_when="lower" if better_high else "higher",
        verdict=verdict,
        detectable_change=detectable
        if detectable is not None and math.isfinite(detectable) and detectable > 0
        else None,
        test=test,
        note=note,
    )


def _family_text(family: Sequence[str], metrics: Sequence[str]) -> str:
    if len(family) == len(metrics):
        return f"{len(metrics)} metrics"
    return f"metrics chosen with --test-metric ({', '.join(family)})"


#: Every metric the check can compare: CERT's six, and cost per trial when asked for.
ALL_METRICS = (*METRICS, COST)


def _metrics_asked(
    margins: Mapping[str, float], tested: Sequence[str] | None
) -> tuple[tuple[str, ...], list[str], dict[str, float]]:
    """(metrics compared, the tested family, every compared metric's margin); cost is compared
    when `--test-metric cost` or `--margin cost=...` asks for it. Bad names raise."""
    unknown = sorted(set(margins) - set(ALL_METRICS))
    if unknown:
        raise ValueError(
            f"--margin: unknown metric {unknown[0]!r} (one of {', '.join(ALL_METRICS)})"
        )
    asked = COST in margins or (tested is not None and COST in tested)
    metrics = ALL_METRICS if asked else METRICS
    family = [m for m in metrics if tested is None or m in tested]
    if not family or (tested is not None and set(tested) - set(ALL_METRICS)):
        raise ValueError(f"--test-metric: name one or more of {', '.join(ALL_METRICS)}")
    chosen = {**DEFAULT_MARGINS, **({COST: COST_MARGIN} if asked else {}), **margins}
    if any(not (math.isfinite(v) and v >= 0) for v in chosen.values()):
        raise ValueError("--margin: a margin must be a non-negative number")
    return metrics, family, chosen


@dataclass(frozen=True)
class CostPrices:
    """How both runs' models are priced when cost is compared: `--price` rates by model name,
    then the `--prices` table."""

    prices: Mapping[str, Price]
    table: PriceTable | None = None

    def pair(
        self,
        old: tuple[str, str, Sequence[TrialRecord]],
        new: tuple[str, str, Sequence[TrialRecord]],
    ) -> tuple[Pricing, Pricing]:
        """Each model's pricing (its name in the report, the model it is a configuration of,
        its records); a model that cannot be priced raises with the reason (never a silent
        zero)."""
        found = []
        for run, (name, model, records) in (("baseline", old), ("current run", new)):
            pricing = pricing_of(name, model, self.prices, self.table)
            problem = price_problem(records, pricing)
            if pricing is None or problem is not None:
                raise ValueError(
                    f"cost: the {run}'s model {name!r} cannot be priced: {problem}; cost is "
                    "compared because --test-metric cost or --margin cost was given"
                )
            found.append(pricing)
        return found[0], found[1]


def compare_to_baseline(
    baseline: ReliabilityReport,
    baseline_records: Sequence[TrialRecord],
    current: ReliabilityReport,
    current_records: Sequence[TrialRecord],
    embed: Embed,
    *,
    margins: Mapping[str, float] | None = None,
    pairs: Mapping[str, str] | None = None,
    tested: Sequence[str] | None = None,
    seed: int = 42,
    resamples: int = RESAMPLES,
    prices: CostPrices | None = None,
) -> BaselineComparison:
    """Every metric's change from `baseline` to `current`, per model pair, on shared prompts.

    `tested`: the metrics that may be called regressed or improved, the family the 5% level
    is spent on (`--test-metric`; default all six, and cost when asked for). Cost per trial is
    compared when `tested` or `margins` name it, priced by `prices`."""
    metrics, family, chosen = _metrics_asked(dict(margins or {}), tested)
    level = 1 - (1 - FAMILY_LEVEL) / len(metrics)
    old_models = {m.model: m for m in baseline.models}
    new_models = {m.model: m for m in current.models}
    old_records = records_by_model(baseline_records)
    new_records = records_by_model(current_records)
    old_split = split_by_config(baseline_records).models
    new_split = split_by_config(current_records).models
    matched = pair_models(list(old_models), list(new_models), pairs)
    pairings: list[ModelPairing] = []
    entries: list[MetricChange] = []
    for old_name, new_name, how in matched:
        old_trials, new_trials = old_records.get(old_name, []), new_records.get(new_name, [])
        pricing = None
        if COST in metrics:
            pricing = (prices or CostPrices({})).pair(
                (old_name, old_split.get(old_name, old_name), old_trials),
                (new_name, new_split.get(new_name, new_name), new_trials),
            )
        runs = _PairRuns(
            old_models[old_name], new_models[new_name], old_trials, new_trials, pricing
        )
        tests = _Tests.of(runs, embed, seed, resamples, family)
        changes = [
            _metric_change(runs, tests, metric, chosen[metric], level, seed + index, resamples)
            for index, metric in enumerate(metrics)
        ]
        pairings.append(
            model_pairing(
                (runs.old.model, runs.new.model), (runs.old_prompts, runs.new_prompts), how, changes
            )
        )
        entries += changes
    used_old = {old for old, _, _ in matched}
    used_new = {new for _, new, _ in matched}
    return BaselineComparison(
        family_level=FAMILY_LEVEL,
        level=level,
        multiplicity=_multiplicity(level, family, metrics),
        tested_metrics=family,
        margins=chosen,
        pairs=pairings,
        entries=entries,
        unpaired_current=sorted(set(new_models) - used_new),
        unpaired_baseline=sorted(set(old_models) - used_old),
    )


def _multiplicity(level: float, family: Sequence[str], metrics: Sequence[str]) -> str:
    return (
        f"Bonferroni over the {len(metrics)} metrics of each model pair for the intervals: "
        f"each is at {level:.2%}, so the chance that any of them misses its true change is "
        f"at most {1 - FAMILY_LEVEL:.0%}; regressed and improved come from a permutation "
        f"test of no change per metric (each prompt's trials relabelled between the runs; "
        f"for the error rate, blocks of consecutive trials in time, so that bursts of "
        f"failures move as one), Westfall–Young's step-down min-p over the "
        f"{_family_text(family, metrics)} on each side, the level split between the two kinds of "
        f"test in proportion to their metrics, so the chance of any false 'regressed' for "
        f"the pair is at most {1 - FAMILY_LEVEL:.0%} whatever the prompts and the latency "
        f"tails (and of any false 'improved' likewise), assuming {EXCHANGEABLE} and that "
        f"{IN_BURSTS}"
    )
