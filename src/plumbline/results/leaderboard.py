"""The `leaderboard` kind: an SA Bench leaderboard (older files upgraded), fed by Inspect logs.

Its metrics: `overall` and every category of every ranked model (a category's n is its
questions scored, overall's the sum over categories) and, for a priced model,
`cost.per_sample_usd` (with its interval) and `cost.total_usd`.
"""

from __future__ import annotations

from typing import Any

from plumbline.leaderboard.result import DocumentReview, LeaderboardDocument, LeaderboardRow
from plumbline.results.errors import ResultDocumentError
from plumbline.results.kinds import ResultKind, result_kind
from plumbline.results.metric_rows import finite, metric_row
from plumbline.results.rows import MetricRow


@result_kind("leaderboard")
class Leaderboard(ResultKind[LeaderboardDocument]):
    """A leaderboard document."""

    model = LeaderboardDocument
    sources = ("inspect_logs",)
    made_by = "plumbline leaderboard LOGDIR -o leaderboard.json"

    def read(self, document: Any) -> LeaderboardDocument:
        """Parsed (older versions upgraded) and checked, a stale overall allowed: a published
        file may be valid yet stale, and its views say so model by model."""
        from plumbline.leaderboard.document import consistency_problems, parse_document

        parsed, problems = parse_document(document)
        if parsed is None:
            raise ResultDocumentError(problems)
        problems = consistency_problems(parsed, check_overall=False)
        if problems:
            raise ResultDocumentError(problems)
        return parsed

    def check(self, result: LeaderboardDocument) -> list[str]:
        """Every rule of `consistency_problems`, overalls included."""
        from plumbline.leaderboard.document import consistency_problems

        return consistency_problems(result)

    def review(self, result: LeaderboardDocument, problems: list[str]) -> DocumentReview | None:
        """Clean when `check` found nothing (its rules are stricter than the review's: an
        overall within 1e-9 of Σ weight × category, not 1e-3); None otherwise (the site then
        reviews the document itself)."""
        if problems:
            return None
        weights = {key: meta.weight for key, meta in result.categories.items()}
        return DocumentReview(valid=True, problems=[], weights=weights or None)

    def to_json(self, result: LeaderboardDocument) -> dict[str, Any]:
        return result.to_json()

    def subjects(self, result: LeaderboardDocument) -> tuple[str, ...]:
        return tuple(row.model for row in result.models)

    def suite(self, result: LeaderboardDocument) -> str | None:
        suite = result.metadata.suite
        return suite.name if suite is not None else None

    def created_at(self, result: LeaderboardDocument) -> str | None:
        return result.metadata.generated_at

    def metrics(self, result: LeaderboardDocument) -> list[MetricRow]:
        return leaderboard_metrics(result)


def leaderboard_metrics(document: LeaderboardDocument) -> list[MetricRow]:
    """`overall` and every category of every ranked model; a category's n is its questions
    scored, overall's the sum over categories."""
    rows: list[MetricRow] = []
    for model in document.models:
        overall = model.interval("overall")
        rows.append(
            metric_row(model.model, "overall", model.overall, overall, _overall_n(document, model))
        )
        for key in document.categories:
            counts = model.count(key)
            rows.append(
                metric_row(
                    model.model,
                    key,
                    model.score(key),
                    model.interval(key),
                    None if counts is None else counts.n,
                )
            )
        rows.extend(_cost_rows(model, _overall_n(document, model)))
    return rows


def _cost_rows(model: LeaderboardRow, n: int | None) -> list[MetricRow]:
    """A priced model's `cost.per_sample_usd` (with its interval) and `cost.total_usd`."""
    cost = model.cost
    if cost is None or cost.per_sample_usd.estimate is None:
        return []
    per_sample = cost.per_sample_usd
    return [
        MetricRow(
            subject=model.model,
            metric="cost.per_sample_usd",
            estimate=finite(per_sample.estimate),
            low=finite(per_sample.low),
            high=finite(per_sample.high),
            level=per_sample.level,
            method=per_sample.method,
            n=n,
        ),
        metric_row(model.model, "cost.total_usd", cost.total_usd, None, n),
    ]


def _overall_n(document: LeaderboardDocument, model: LeaderboardRow) -> int | None:
    counts = [model.count(key) for key in document.categories]
    known = [c.n for c in counts if c is not None]
    return sum(known) if known else None
