"""A leaderboard document typed and reviewed as the site does it, for tests of its views."""

from __future__ import annotations

from typing import Any

from plumbline.leaderboard.check import review_document
from plumbline.leaderboard.document import as_document
from plumbline.leaderboard.result import DocumentReview, LeaderboardDocument


def typed_leaderboard(document: Any) -> tuple[LeaderboardDocument, DocumentReview]:
    """What `app.site.site_input` gives a leaderboard's pages: the typed document and its review."""
    typed = as_document(document)
    return typed, review_document(typed.to_json())
