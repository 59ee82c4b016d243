"""Judge calibration: how closely a judge reproduces hand scores, and whether it can be fooled.

The calibration set (`data/calibration.jsonl`) holds responses to architecture tasks across
subtypes and quality tiers (excellent, good, mediocre, poor, and the adversarial tiers
keyword_salad, prompt_injection, off_topic), each scored by hand on the three dimensions with a
one-line justification. Calibration measures the judge *alone*: raw judge verdicts, no blending
with the heuristic and no adjustment factors.

Per judge and dimension it reports the mean absolute error against the hand scores, the share
within ±0.15, Spearman's rank correlation, and self-consistency across runs (the mean standard
deviation of an item's score across runs); it lists what each adversarial item received, and
counts unscored verdicts. A judge **passes** when, on every dimension,

- Spearman ρ ≥ 0.70, MAE ≤ 0.15 and at least 70% of items within ±0.15 of the hand score,
- the mean across-run standard deviation is ≤ 0.05 (temperature 0 should be near-deterministic),

and no adversarial item's mean judged score exceeds 0.35, and at most 5% of verdicts are
unscored. `plumbline judge calibrate` exits with status 1 when any judge fails.
"""

from __future__ import annotations

import asyncio
import math
import random
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from inspect_ai.model import Model
from pydantic import BaseModel, ConfigDict, Field
from scipy import stats as scipy_stats

from plumbline.records.io import RecordError, read_records
from plumbline.stats.agreement import krippendorff_alpha
from plumbline.stats.arrays import BoolArray, FloatArray
from plumbline.suites.sa_bench.scorers.architecture import DIMENSIONS, score_architecture
from plumbline.suites.sa_bench.scorers.judge import (
    DEFAULT_RUBRIC,
    DEFAULT_SEED,
    JUDGE_MAX_TOKENS,
    JudgeOutcome,
    build_judge_messages,
    run_judge,
)
from plumbline.suites.sa_bench.scorers.judge_verdict import JudgeVerdict

CALIBRATION_FILE = Path(__file__).resolve().parents[1] / "data" / "calibration.jsonl"

SPEARMAN_MIN = 0.70
MAE_MAX = 0.15
WITHIN = 0.15
WITHIN_SHARE_MIN = 0.70
RUN_SPREAD_MAX = 0.05
ADVERSARIAL_MAX = 0.35
UNSCORED_SHARE_MAX = 0.05

Tier = Literal[
    "excellent", "good", "mediocre", "poor", "keyword_salad", "prompt_injection", "off_topic"
]
ADVERSARIAL_TIERS: tuple[str, ...] = ("keyword_salad", "prompt_injection", "off_topic")


class HandScores(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    accuracy: float = Field(ge=0, le=1)
    completeness: float = Field(ge=0, le=1)
    quality: float = Field(ge=0, le=1)

    def dimensions(self) -> dict[str, float]:
        return {
            "accuracy": self.accuracy,
            "completeness": self.completeness,
            "quality": self.quality,
        }


class CalibrationTask(BaseModel):
    """The task a calibration response answers (the sample metadata plus the reference)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    subtype: str
    question: str
    expected: dict[str, Any]
    output_format: Literal["mermaid", "plantuml", "json"] | None = None
    difficulty: str = "associate"
    reference_answer: str

    def metadata(self) -> dict[str, Any]:
        return self.model_dump(exclude={"reference_answer"})


class CalibrationItem(BaseModel):
    """One hand-scored response."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    tier: Tier
    task: CalibrationTask
    response: str
    hand: HandScores
    justification: str = Field(min_length=10)

    @property
    def adversarial(self) -> bool:
        return self.tier in ADVERSARIAL_TIERS


class CalibrationSetError(ValueError):
    """An invalid calibration set; `errors` lists every problem as `file:line: field: problem`."""

    def __init__(self, errors: Sequence[RecordError]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(str(error) for error in self.errors))


def load_calibration(path: str | Path | None = None) -> list[CalibrationItem]:
    """Read and validate a calibration set; raise `CalibrationSetError` listing every problem."""
    result = read_records([path or CALIBRATION_FILE], CalibrationItem)
    errors = list(result.errors)
    seen: set[str] = set()
    for item, location in zip(result.records, result.locations, strict=True):
        if item.id in seen:
            errors.append(RecordError(location.path, location.line, "id", f"duplicate {item.id!r}"))
        seen.add(item.id)
    if errors:
        raise CalibrationSetError(errors)
    if not result.records:
        raise CalibrationSetError(
            [RecordError(str(path or CALIBRATION_FILE), 1, "<file>", "empty")]
        )
    return result.records


def calibration_subset(
    items: list[CalibrationItem], limit: int, seed: int
) -> list[CalibrationItem]:
    """A seeded subset of `limit` items in set order: one adversarial item for certain (if the
    set has any), the rest drawn from all the others, so even a small subset asks both
    questions (agreement with hand scores, resistance to gaming)."""
    if limit >= len(items):
        return list(items)
    rng = random.Random(seed)
    adversarial = [i for i, item in enumerate(items) if item.adversarial]
    chosen = set(rng.sample(adversarial, 1)) if adversarial else set()
    others = [i for i in range(len(items)) if i not in chosen]
    chosen |= set(rng.sample(others, limit - len(chosen)))
    return [items[i] for i in sorted(chosen)]


@dataclass(frozen=True)
class DimensionReport:
    mae: float
    within_share: float
    spearman: float
    run_spread: float
    passed: bool
    correlation: float = float("nan")
    """Pearson r of judge and hand scores: what `plumbline judge plan --correlation` takes."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "mae": self.mae,
            "within_0_15": self.within_share,
            "spearman": self.spearman,
            "correlation": self.correlation,
            "run_spread": self.run_spread,
            "passed": self.passed,
        }


@dataclass(frozen=True)
class JudgeCalibration:
    """One judge's calibration: per-dimension agreement, adversarial scores and failures."""

    judge: str
    runs: int
    items: int
    dimensions: dict[str, DimensionReport]
    adversarial: list[dict[str, Any]]
    unscored: int
    failures: list[str]
    per_item: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "runs": self.runs,
            "items": self.items,
            "passed": self.passed,
            "failures": self.failures,
            "unscored": self.unscored,
            "unscored_share": self.unscored / (self.runs * self.items),
            "dimensions": {k: v.to_dict() for k, v in self.dimensions.items()},
            "adversarial": self.adversarial,
            "per_item": self.per_item,
        }


def _spearman(x: np.ndarray[Any, Any], y: np.ndarray[Any, Any]) -> float:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(scipy_stats.spearmanr(x, y).statistic)


def _score_cube(outcomes: Sequence[Sequence[JudgeOutcome]], n_items: int) -> FloatArray:
    """scores[run, item, dimension] of the verdicts, NaN when unscored."""
    scores = np.full((len(outcomes), n_items, len(DIMENSIONS)), np.nan)
    for r, run in enumerate(outcomes):
        for i, outcome in enumerate(run):
            if outcome.verdict is not None:
                values = outcome.verdict.dimensions()
                scores[r, i] = [values[d] for d in DIMENSIONS]
    return scores


def _dimension_report(
    name: str, judged: FloatArray, truth: FloatArray, spread: FloatArray
) -> tuple[DimensionReport, list[str]]:
    """One dimension's agreement with the hand scores, and the thresholds it misses."""
    if judged.size:
        error = np.abs(judged - truth)
        mae, within = float(error.mean()), float((error <= WITHIN + 1e-9).mean())
    else:
        mae, within = float("nan"), 0.0
    rho = _spearman(judged, truth)
    run_spread = float(np.nanmean(spread)) if judged.size else float("nan")
    problems = []
    if not (rho >= SPEARMAN_MIN):
        problems.append(f"{name}: Spearman {rho:.2f} < {SPEARMAN_MIN}")
    if not (mae <= MAE_MAX):
        problems.append(f"{name}: MAE {mae:.3f} > {MAE_MAX}")
    if not (within >= WITHIN_SHARE_MIN):
        problems.append(f"{name}: {within:.0%} within ±{WITHIN} < {WITHIN_SHARE_MIN:.0%}")
    if not (run_spread <= RUN_SPREAD_MAX):
        problems.append(f"{name}: run-to-run spread {run_spread:.3f} > {RUN_SPREAD_MAX}")
    pearson = (
        float(np.corrcoef(judged, truth)[0, 1])
        if judged.size >= 3 and np.ptp(judged) > 0 and np.ptp(truth) > 0
        else float("nan")
    )
    return DimensionReport(mae, within, rho, run_spread, not problems, pearson), problems


def _item_entries(
    items: Sequence[CalibrationItem],
    outcomes: Sequence[Sequence[JudgeOutcome]],
    mean_scores: FloatArray,
    hand: FloatArray,
    scored: BoolArray,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """Each item's entry, the adversarial items' entries, and the adversarial failures."""
    adversarial = []
    per_item = []
    failures: list[str] = []
    for i, item in enumerate(items):
        judged_overall = float(np.mean(mean_scores[i])) if scored[i] else float("nan")
        entry = {
            "id": item.id,
            "tier": item.tier,
            "subtype": item.task.subtype,
            "hand": float(np.mean(hand[i])),
            "judged": judged_overall,
            **{f"judged_{d}": float(mean_scores[i, k]) for k, d in enumerate(DIMENSIONS)},
        }
        errors = [e for run in outcomes for e in run[i].errors]
        if errors:
            entry["errors"] = errors[:4]
        per_item.append(entry)
        if item.adversarial:
            # an item the judge never scored was not shown to fool it: `fooled` is None
            # (unknown), and the calibration still fails, because it proved nothing
            fooled = bool(judged_overall > ADVERSARIAL_MAX) if scored[i] else None
            adversarial.append({**entry, "fooled": fooled})
            if fooled:
                failures.append(
                    f"{item.id} ({item.tier}) scored {judged_overall:.2f} > {ADVERSARIAL_MAX}"
                )
            elif fooled is None:
                failures.append(f"{item.id} ({item.tier}) was never scored")
    return per_item, adversarial, failures


def summarise(
    judge: str, items: Sequence[CalibrationItem], outcomes: Sequence[Sequence[JudgeOutcome]]
) -> JudgeCalibration:
    """Calibration metrics from `outcomes[run][item]` (pure)."""
    runs = len(outcomes)
    scores = _score_cube(outcomes, len(items))
    unscored = int(np.isnan(scores[:, :, 0]).sum())
    hand = np.array([[item.hand.dimensions()[d] for d in DIMENSIONS] for item in items])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NaN for unscored items is intended
        mean_scores = np.nanmean(scores, axis=0)  # item × dimension
        spread = np.nanstd(scores, axis=0) if runs > 1 else np.zeros_like(mean_scores)
    failures: list[str] = []
    reports: dict[str, DimensionReport] = {}
    scored = ~np.isnan(mean_scores[:, 0])
    for d, name in enumerate(DIMENSIONS):
        reports[name], problems = _dimension_report(
            name, mean_scores[scored, d], hand[scored, d], spread[scored, d]
        )
        failures.extend(problems)
    per_item, adversarial, item_failures = _item_entries(items, outcomes, mean_scores, hand, scored)
    failures.extend(item_failures)
    share = unscored / (runs * len(items))
    if share > UNSCORED_SHARE_MAX:
        failures.append(f"{unscored} of {runs * len(items)} verdicts unscored ({share:.0%})")
    return JudgeCalibration(
        judge, runs, len(items), reports, adversarial, unscored, failures, per_item
    )


@dataclass(frozen=True)
class CalibrationReport:
    judges: list[JudgeCalibration]
    agreement: dict[str, float | None]  # Krippendorff's alpha between judges per dimension
    mean_judge: JudgeCalibration | None
    thresholds: dict[str, float]

    @property
    def passed(self) -> bool:
        return all(j.passed for j in self.judges)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "thresholds": self.thresholds,
            "judges": [j.to_dict() for j in self.judges],
            "mean_of_judges": self.mean_judge.to_dict() if self.mean_judge else None,
            "agreement_krippendorff_alpha": self.agreement,
        }


THRESHOLDS = {
    "spearman_min": SPEARMAN_MIN,
    "mae_max": MAE_MAX,
    "within": WITHIN,
    "within_share_min": WITHIN_SHARE_MIN,
    "run_spread_max": RUN_SPREAD_MAX,
    "adversarial_max": ADVERSARIAL_MAX,
    "unscored_share_max": UNSCORED_SHARE_MAX,
}


def _mean_outcomes(
    per_judge: Sequence[Sequence[Sequence[JudgeOutcome]]],
) -> list[list[JudgeOutcome]]:
    runs, items = len(per_judge[0]), len(per_judge[0][0])
    merged: list[list[JudgeOutcome]] = []
    for r in range(runs):
        row = []
        for i in range(items):
            verdicts = [j[r][i].verdict for j in per_judge if j[r][i].verdict is not None]
            if not verdicts:
                row.append(JudgeOutcome("mean", None, 0))
                continue
            dims = {
                d: sum(v.dimensions()[d] for v in verdicts if v is not None) / len(verdicts)
                for d in DIMENSIONS
            }
            row.append(JudgeOutcome("mean", JudgeVerdict(**dims, reasoning=""), 1))
        merged.append(row)
    return merged


def _agreement(per_judge: Sequence[Sequence[Sequence[JudgeOutcome]]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for d in DIMENSIONS:
        matrix = [
            [
                (o.verdict.dimensions()[d] if o.verdict is not None else math.nan)
                for o in judge[0]  # the first run of each judge
            ]
            for judge in per_judge
        ]
        try:
            out[d] = krippendorff_alpha(matrix, n_resamples=0).statistic
        except ValueError:
            out[d] = None
    return out


async def calibrate(
    judges: Sequence[Model],
    items: Sequence[CalibrationItem],
    *,
    runs: int = 3,
    seed: int = DEFAULT_SEED,
    rubric_version: str = DEFAULT_RUBRIC,
    max_concurrency: int = 8,
    names: Sequence[str] | None = None,
    max_tokens: int = JUDGE_MAX_TOKENS,
) -> CalibrationReport:
    """Run every judge `runs` times over the calibration items and summarise.

    `names` labels the judges in the report (default: each model's own name); `max_tokens`
    caps each verdict (a reply cut off there is a parse failure: unscored).
    """
    if runs < 1:
        raise ValueError(f"runs must be ≥ 1, got {runs}")
    if not judges:
        raise ValueError("judges: give at least one judge model")
    if not items:
        raise ValueError("items: the calibration set is empty")
    semaphore = asyncio.Semaphore(max_concurrency)
    prompts = [
        build_judge_messages(
            item.response,
            item.task.metadata(),
            item.task.reference_answer,
            rubric_version=rubric_version,
        )[0]
        for item in items
    ]

    async def one(model: Model, index: int) -> JudgeOutcome:
        async with semaphore:
            return await run_judge(model, prompts[index], seed=seed, max_tokens=max_tokens)

    per_judge: list[list[list[JudgeOutcome]]] = []
    for model in judges:
        judge_runs = []
        for _ in range(runs):
            judge_runs.append(
                list(await asyncio.gather(*(one(model, i) for i in range(len(items)))))
            )
        per_judge.append(judge_runs)
    if names is not None and len(names) != len(judges):
        raise ValueError(f"names: {len(names)} names for {len(judges)} judges")
    labels = list(names) if names is not None else [str(model) for model in judges]
    reports = [
        summarise(name, items, result) for name, result in zip(labels, per_judge, strict=True)
    ]
    mean_judge = None
    agreement: dict[str, float | None] = {}
    if len(judges) > 1:
        mean_judge = summarise("mean of judges", items, _mean_outcomes(per_judge))
        agreement = _agreement(per_judge)
    return CalibrationReport(reports, agreement, mean_judge, dict(THRESHOLDS))


def heuristic_baseline(items: Sequence[CalibrationItem]) -> JudgeCalibration:
    """The heuristic scorer summarised like a judge on the same items (one run)."""
    outcomes = []
    for item in items:
        result = score_architecture(item.response, item.task.metadata(), item.task.reference_answer)
        verdict = JudgeVerdict(result.accuracy, result.completeness, result.quality, "heuristic")
        outcomes.append(JudgeOutcome("architecture_scorer", verdict, 1))
    return summarise("architecture_scorer (heuristic)", items, [outcomes])
