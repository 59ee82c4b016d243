"""The leaderboard: built from logs (read → validate → compute), turned into its typed document.

`Leaderboard` holds the computation (scores, question sets, pairs); `Leaderboard.document()` is
the one place that turns it into the `LeaderboardDocument` every view renders and the JSON is
dumped from: every number a view shows is computed here, once.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from plumbline.core.prices import PriceTable
from plumbline.leaderboard.collect import CategoryData, Collected, ProgressCallback, collect
from plumbline.leaderboard.cost import board_costs
from plumbline.leaderboard.labels import (
    HumanLabel,
    correct_category,
    match_labels,
    more_labels_needed,
)
from plumbline.leaderboard.result import (
    AdaptiveRun,
    AdjacentPair,
    CategoryCounts,
    CategoryMetadata,
    ErrorPolicy,
    FailedModel,
    JudgeCorrection,
    LeaderboardDocument,
    LeaderboardMetadata,
    LeaderboardRow,
    ModelCost,
    ParetoEntry,
    Problem,
    SuiteName,
    TieGroup,
)
from plumbline.leaderboard.scores import (
    LEVEL,
    CategoryScore,
    ModelScores,
    confidence_label,
    margin_label,
    overall_score,
    score_model,
)
from plumbline.leaderboard.suite import Suite, load_suite
from plumbline.leaderboard.ties import ALPHA, SA_BENCH_EQUIVALENCE, rank_models
from plumbline.records.log_pool import LogReader

TIE_RULE = (
    "adjacent models are tied unless the paired MOVER interval of their overall difference, "
    f"inverted to a p-value, rejects equal overall at α = {ALPHA:g} after Holm correction"
)


#: The tie rule of an adaptive run's leaderboard (`leaderboard.adaptive`).
ADAPTIVE_TIE_RULE = (
    "adaptive run: a model shares the group above unless its pair with every member is decided "
    "(anytime-valid confidence sequences, Bonferroni over all pairs)"
)


def format_timestamp(moment: datetime) -> str:
    """ISO 8601 in UTC with a `Z`, as SA Bench writes it (`2026-01-07T00:00:00Z`)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_run_id(moment: datetime) -> str:
    """The CI run id when there is one (`GITHUB_RUN_ID`), else `local-YYYYMMDD-HHMMSS`."""
    github = os.environ.get("GITHUB_RUN_ID")
    if github:
        return github
    return "local-" + moment.astimezone(UTC).strftime("%Y%m%d-%H%M%S")


@dataclass(frozen=True)
class Leaderboard:
    """Ranked models with category scores, intervals, tie groups, and every input problem."""

    suite: Suite
    models: list[ModelScores]
    comparisons: list[AdjacentPair]
    problems: list[Problem]
    sample_counts: dict[str, int]
    generated_at: datetime
    run_id: str
    errors_policy: ErrorPolicy
    log_count: int = 0
    logs_used: int = 0
    question_labels: dict[str, list[str]] = field(default_factory=dict, repr=False)
    #: category key -> why it was not run at all (e.g. no sandbox for CDK synthesis)
    not_run: dict[str, str] = field(default_factory=dict)
    failed: list[FailedModel] = field(default_factory=list)
    scorers_read: dict[str, list[str]] = field(default_factory=dict)
    """Per category, the score names actually read from the logs (aliases in use)."""
    half_width: float | None = None
    """The half-width `--labels` runs plan more labels for."""
    suite_weights: dict[str, float] = field(default_factory=dict)
    """The suite's own weights when categories were not run (`suite` then holds them
    renormalised over the categories that ran, see `ran_suite`); empty otherwise."""
    costs: dict[str, ModelCost] = field(default_factory=dict)
    """Each model's cost (`leaderboard.cost`), when a price table was given."""
    pareto: list[ParetoEntry] = field(default_factory=list)
    """The priced models' probabilities of being on the cost–score front."""
    adaptive: AdaptiveRun | None = None
    """How an adaptive run chose its questions (`leaderboard.adaptive.adaptive_board`)."""

    def model(self, name: str) -> ModelScores:
        for entry in self.models:
            if entry.model == name:
                return entry
        raise KeyError(name)

    def category_half_width(self, key: str) -> float | None:
        """The widest interval half-width among models scored in a category.

        SA Bench states one margin per category ("scores are reliable within ±N%"); the widest
        model interval is the figure that statement holds for.
        """
        scored = [entry.categories[key] for entry in self.models]
        widths = [s.half_width for s in scored if not s.missing and s.half_width is not None]
        if not widths or len(widths) < sum(not s.missing for s in scored):
            return None
        return max(widths)

    def document(self) -> LeaderboardDocument:
        """The leaderboard document: SA Bench's fields plus intervals, counts, groups, pairs
        and problems."""
        categories: dict[str, CategoryMetadata] = {}
        for category in self.suite.categories:
            half_width = self.category_half_width(category.key)
            missing = [m.model for m in self.models if m.categories[category.key].missing]
            categories[category.key] = CategoryMetadata(
                name=category.name,
                description=category.description,
                weight=category.weight,
                sample_count=self.sample_counts.get(category.key, 0),
                scoring=category.scoring,
                confidence=confidence_label(half_width),
                margin=margin_label(half_width),
                half_width=half_width,
                scorer=category.scorer,
                scorers=list(category.scorers) if len(category.scorers) > 1 else None,
                scorers_read=self.scorers_read.get(category.key) or None,
                tasks=list(category.tasks),
                models_scored=len(self.models) - len(missing),
                models_missing=missing,
                not_run=self.not_run.get(category.key),
                suite_weight=self.suite_weights.get(category.key),
            )
        groups: dict[int, list[str]] = {}
        for scores in self.models:
            groups.setdefault(scores.tie_group, []).append(scores.model)
        return LeaderboardDocument(
            metadata=LeaderboardMetadata(
                generated_at=format_timestamp(self.generated_at),
                run_id=self.run_id,
                model_count=len(self.models),
                categories=categories,
                suite=SuiteName(name=self.suite.name, title=self.suite.title),
                overall_formula=self.suite.formula(),
                overall_note=(
                    overall_note(self.suite, self.suite_weights, self.not_run)
                    if self.suite_weights
                    else None
                ),
                errors_policy=self.errors_policy,
                level=LEVEL,
                alpha=ALPHA,
                tie_rule=ADAPTIVE_TIE_RULE if self.adaptive is not None else TIE_RULE,
                sa_bench_equivalence=SA_BENCH_EQUIVALENCE,
                log_count=self.log_count,
                logs_used=self.logs_used,
                problem_count=len(self.problems),
            ),
            models=[self._row(scores) for scores in self.models],
            tie_groups=[
                TieGroup(group=group, size=len(names), models=names)
                for group, names in groups.items()
            ],
            comparisons=list(self.comparisons),
            problems=list(self.problems),
            failed_models=list(self.failed),
            pareto=list(self.pareto),
            adaptive=self.adaptive,
        )

    def _row(self, scores: ModelScores) -> LeaderboardRow:
        keys = self.suite.keys
        category: dict[str, CategoryScore] = scores.categories
        values: dict[str, Any] = {
            key: category[key].value for key in keys if category[key].value is not None
        }
        standard_errors = {key: category[key].standard_error for key in keys}
        standard_errors["overall"] = scores.overall_standard_error
        half_widths = {key: category[key].half_width for key in keys}
        half_widths["overall"] = scores.overall_interval.half_width
        return LeaderboardRow(
            model=scores.model,
            **values,
            overall=scores.overall,
            rank=scores.rank,
            tie_group=scores.tie_group,
            sa_bench_group=scores.sa_bench_group,
            missing=scores.missing,
            errors=scores.errors,
            intervals={
                **{key: category[key].interval for key in keys},
                "overall": scores.overall_interval,
            },
            standard_errors=standard_errors,
            half_widths=half_widths,
            counts={
                key: CategoryCounts(
                    n=score.n,
                    epochs=score.epochs,
                    errors=score.errors,
                    excluded=score.excluded,
                    missing=score.missing,
                    logs=len(score.logs),
                )
                for key, score in ((key, category[key]) for key in keys)
            },
            corrections=self._corrections(scores) or None,
            cost=self.costs.get(scores.model),
        )

    def _corrections(self, scores: ModelScores) -> dict[str, JudgeCorrection]:
        found: dict[str, JudgeCorrection] = {}
        for key in self.suite.keys:
            correction = scores.categories[key].correction
            if correction is None:
                continue
            result = correction.result
            details = result.details
            more = (
                None if self.half_width is None else more_labels_needed(correction, self.half_width)
            )
            found[key] = JudgeCorrection(
                estimate=result.statistic,
                judge_only=correction.judge_value,
                judge_only_interval=correction.judge_interval,
                human_only=float(details["human_only"]),
                n_labelled=int(details["n_labelled"]),
                n_judged=int(details["n_judged"]),
                lambda_=float(details["lambda"]),
                correlation=details["correlation"],
                interval=scores.categories[key].interval,
                labelled=[
                    [float(j), float(h)]
                    for j, h in zip(correction.judge_labelled, correction.human, strict=True)
                ],
                more_labels_needed=more,
                requested_half_width=self.half_width,
                lambda_method=details.get("lambda_method"),
                judge_labelled_mean=correction.selection.labelled_mean,
                judge_unlabelled_mean=correction.selection.unlabelled_mean,
                selection_pvalue=correction.selection.pvalue,
                selection_alpha=correction.selection.alpha,
                selection_method=correction.selection.method,
                labels_look_chosen=correction.selection.chosen,
                selection_floor_pvalue=correction.selection.floor_pvalue,
                selection_can_tell=correction.selection.can_tell,
            )
        return found

    def to_dict(self) -> dict[str, Any]:
        """The leaderboard JSON: `document().model_dump(mode="json")`."""
        return self.document().to_json()


def unpaired_problems(comparisons: Iterable[AdjacentPair]) -> list[Problem]:
    """One problem per adjacent pair and category compared unpaired (fewer than 2 shared questions).

    Pairing is what makes a difference between two models on the same questions precise; a
    third-party task shuffled without a fixed seed gives each model different questions, and the
    comparison silently loses that precision unless it is said.
    """
    problems: list[Problem] = []
    for comparison in comparisons:
        for key in comparison.unpaired:
            shared = comparison.shared_questions.get(key, 0)
            problems.append(
                Problem(
                    kind="unpaired",
                    message=(
                        f"{comparison.higher} and {comparison.lower} share {shared} questions in "
                        f"{key!r}; their difference there is compared unpaired (as independent "
                        "samples), which is wider and cannot use question difficulty; fix the "
                        "task's sample order (a seed for shuffling) so both models see the same "
                        "questions"
                    ),
                    model=f"{comparison.higher} vs {comparison.lower}",
                    category=key,
                    count=shared,
                )
            )
    return problems


def _failure_problems(failed: list[FailedModel]) -> list[Problem]:
    """A `model_failed` problem for each model with not one scored sample."""
    return [
        Problem(
            kind="model_failed",
            message=(
                f"not one sample scored ({failure.errors} errored or unscored in "
                f"{', '.join(failure.categories)}); listed as failed, not ranked"
            ),
            model=failure.model,
            count=failure.errors,
        )
        for failure in failed
    ]


def _scorers_read(
    data: dict[tuple[str, str], CategoryData], failed_names: set[str]
) -> dict[str, list[str]]:
    """The scorers read in each category, in order of first appearance, failed models aside."""
    scorers_read: dict[str, list[str]] = {}
    for (model, key), category_data in sorted(data.items()):
        if model not in failed_names:
            known = scorers_read.setdefault(key, [])
            known.extend(name for name in category_data.scorers if name not in known)
    return scorers_read


def _sample_counts(suite: Suite, ranked: list[ModelScores]) -> dict[str, int]:
    """How many distinct questions each category holds across the ranked models."""
    sample_counts: dict[str, int] = {}
    for category in suite.categories:
        questions: set[int] = set()
        for entry in ranked:
            questions.update(entry.categories[category.key].questions.tolist())
        sample_counts[category.key] = len(questions)
    return sample_counts


def _with_not_run(problems: list[Problem], skipped: dict[str, str]) -> list[Problem]:
    """The problems led by one `category_not_run` per category skipped on purpose."""
    return [
        *(
            Problem(kind="category_not_run", message=reason, category=key)
            for key, reason in sorted(skipped.items())
        ),
        # a category not run on purpose is said once, as not run, not also as empty
        *(p for p in problems if not (p.kind == "category_empty" and p.category in skipped)),
    ]


def build_leaderboard(
    logs: str | Path | Iterable[str | Path],
    suite: Suite | str | Path = "sa-bench",
    *,
    errors: ErrorPolicy = "zero",
    run_id: str | None = None,
    generated_at: datetime | None = None,
    progress: ProgressCallback | None = None,
    not_run: Mapping[str, str] | None = None,
    labels: list[HumanLabel] | None = None,
    half_width: float | None = None,
    workers: int | None = None,
    fast: bool = True,
    reader: LogReader | None = None,
    prices: PriceTable | None = None,
) -> Leaderboard:
    """Build a leaderboard from Inspect logs (files and/or directories, searched recursively).

    `suite` is a `Suite`, a built-in suite name (`"sa-bench"`) or a suite TOML path. `errors`
    decides what an errored or unscored sample is worth: "zero" (the default, as SA Bench's
    binary scoring implies) or "exclude" (left out; either way counted per model × category).
    Problems with the input (unreadable logs, unmatched tasks, missing scorers, duplicates) are
    collected in `Leaderboard.problems`; none of them raises. `not_run` names categories that
    were not run at all and why (each becomes a `category_not_run` problem too). `labels`
    (`leaderboard.labels.read_labels`) correct each labelled category by prediction-powered
    inference: its value and interval become the PPI ones, and ranks, tie groups, overall and
    differences use them; `half_width` asks how many more labels would reach it. `workers`
    and `fast` choose how logs are read (`collect`; same result); `prices` prices the usage.
    """
    resolved = suite if isinstance(suite, Suite) else load_suite(suite)
    skipped = {key: reason for key, reason in (not_run or {}).items() if key in resolved.keys}
    suite_weights = resolved.weights
    resolved = ran_suite(resolved, skipped)
    paths = [logs] if isinstance(logs, str | Path) else list(logs)
    moment = generated_at or datetime.now(UTC)
    collected = collect(
        paths,
        resolved,
        errors=errors,
        progress=progress,
        workers=workers,
        fast=fast,
        reader=reader,
        prices=prices,
    )
    failed = failed_models(collected.models, collected.data)
    problems = [*collected.problems, *_failure_problems(failed)]
    failed_names = {failure.model for failure in failed}
    scored = [
        score_model(resolved, model, collected.data)
        for model in collected.models
        if model not in failed_names
    ]
    if labels:
        scored = _apply_labels(resolved, collected, labels, scored, problems)
    ranked, comparisons = rank_models(resolved, scored)
    problems.extend(question_set_problems(resolved, ranked))
    problems.extend(unpaired_problems(comparisons))
    scorers_read = _scorers_read(collected.data, failed_names)
    sample_counts = _sample_counts(resolved, ranked)
    problems = _with_not_run(problems, skipped)
    board = Leaderboard(
        suite=resolved,
        models=ranked,
        comparisons=comparisons,
        problems=problems,
        not_run=skipped,
        sample_counts=sample_counts,
        generated_at=moment,
        run_id=run_id or default_run_id(moment),
        errors_policy=errors,
        log_count=collected.logs_read,
        logs_used=collected.logs_used,
        question_labels=collected.question_labels,
        failed=failed,
        scorers_read=scorers_read,
        half_width=half_width,
        suite_weights=suite_weights if skipped else {},
    )
    return _with_costs(board, collected, prices)


def _with_costs(board: Leaderboard, collected: Collected, prices: PriceTable | None) -> Leaderboard:
    """The board with each model's cost and the cost–score front (`leaderboard.cost`), when a
    price table was given."""
    if prices is None:
        return board
    costs, front = board_costs(board.suite, collected.data, board.models, prices)
    return replace(board, costs=costs, pareto=front)


def _apply_labels(
    suite: Suite,
    collected: Collected,
    labels: list[HumanLabel],
    scored: list[ModelScores],
    problems: list[Problem],
) -> list[ModelScores]:
    """Every model's scores with its labelled categories corrected (label problems appended)."""
    human, label_problems = match_labels(suite, collected.data, collected.question_labels, labels)
    problems.extend(label_problems)
    return [_corrected(suite, entry, human, problems) for entry in scored]


def _corrected(
    suite: Suite,
    scores: ModelScores,
    human: dict[tuple[str, str], dict[int, float]],
    problems: list[Problem],
) -> ModelScores:
    """A model's scores with every labelled category corrected, and its overall recomputed."""
    categories = dict(scores.categories)
    changed = False
    for key in suite.keys:
        by_code = human.get((scores.model, key))
        if not by_code:
            continue
        corrected, problem = correct_category(categories[key], by_code, scores.model)
        if problem is not None:
            problems.append(problem)
        changed = changed or corrected is not categories[key]
        categories[key] = corrected
    if not changed:
        return scores
    overall, interval, standard_error = overall_score(suite, categories)
    return ModelScores(
        model=scores.model,
        categories=categories,
        overall=overall,
        overall_interval=interval,
        overall_standard_error=standard_error,
    )


def ran_suite(suite: Suite, not_run: Mapping[str, str]) -> Suite:
    """The suite the overall is computed over when categories were not run: their weight 0,
    the others' renormalised to sum to 1 (`w / Σ w over the categories that ran`). The suite
    itself when every category ran, or when none did (nothing to renormalise over)."""
    ran = math.fsum(c.weight for c in suite.categories if c.key not in not_run)
    if not not_run or ran <= 0:
        return suite
    categories = tuple(
        category.model_copy(
            update={"weight": 0.0 if category.key in not_run else category.weight / ran}
        )
        for category in suite.categories
    )
    return suite.model_copy(update={"categories": categories})


def overall_note(suite: Suite, suite_weights: Mapping[str, float], not_run: Iterable[str]) -> str:
    """The sentence every view shows when categories were not run."""
    skipped = sorted(not_run)
    changed = ", ".join(
        f"{c.key} {suite_weights[c.key]:.4g} → {c.weight:.4g}"
        for c in suite.categories
        if c.key not in skipped
    )
    return (
        f"Not run: {', '.join(skipped)}. The overall is over the categories that ran, their "
        f"weights renormalised to sum to 1 ({changed})."
    )


def failed_models(
    models: Iterable[str], data: dict[tuple[str, str], CategoryData]
) -> list[FailedModel]:
    """Models whose logs hold not one scored sample in any category (all errored/unscored)."""
    failed: list[FailedModel] = []
    for model in models:
        parts = [part for (name, _), part in sorted(data.items()) if name == model]
        if parts and all(part.scored == 0 for part in parts):
            failed.append(
                FailedModel(
                    model=model,
                    errors=sum(part.errors for part in parts),
                    categories=[part.category for part in parts],
                )
            )
    return failed


def question_set_problems(suite: Suite, models: list[ModelScores]) -> list[Problem]:
    """Every pair of models not scored on the same questions of a category (they share fewer
    than either has): their scores then rest partly on different questions (e.g. a `--limit`
    subset drawn differently per model, or errors excluded), and the paired comparison covers
    only the shared ones."""
    problems: list[Problem] = []
    for category in suite.categories:
        scored = [
            (entry.model, set(entry.categories[category.key].questions.tolist()))
            for entry in models
            if not entry.categories[category.key].missing
        ]
        for index, (first, first_questions) in enumerate(scored):
            for second, second_questions in scored[index + 1 :]:
                expected = max(len(first_questions), len(second_questions))
                shared = len(first_questions & second_questions)
                if shared < expected:
                    problems.append(
                        Problem(
                            kind="unpaired_questions",
                            message=(
                                f"{first} and {second} share {shared} of their questions in "
                                f"{category.key!r} ({len(first_questions)} and "
                                f"{len(second_questions)} scored): their scores partly rest on "
                                "different questions; rerun them on the same sample ids"
                            ),
                            category=category.key,
                            count=shared,
                        )
                    )
    return problems
