"""Leaderboards from Inspect logs: weighted multi-category scores with honest uncertainty.

    from plumbline.leaderboard import build_leaderboard, write_leaderboard

    board = build_leaderboard("logs/", "sa-bench", errors="zero")
    write_leaderboard("leaderboard.json", board.document())  # validated, atomic

The pipeline is read (`collect`) → score (`scores`) → rank with tie groups (`ties`) →
document (`board` builds `result.LeaderboardDocument`; `document` validates, writes and
reads it); `check` compares a fresh leaderboard with a published one.
"""

from plumbline.leaderboard.board import Leaderboard, build_leaderboard
from plumbline.leaderboard.check import check_reproducibility
from plumbline.leaderboard.check_result import CheckResult, Deviation
from plumbline.leaderboard.collect import CategoryData, collect
from plumbline.leaderboard.document import (
    LeaderboardFileError,
    leaderboard_schema,
    read_leaderboard,
    recompute_overall,
    validate_document,
    write_leaderboard,
)
from plumbline.leaderboard.result import (
    AdjacentPair,
    ErrorPolicy,
    LeaderboardDocument,
    LeaderboardRow,
    Problem,
)
from plumbline.leaderboard.scores import CategoryScore, ModelScores
from plumbline.leaderboard.suite import Category, Suite, SuiteError, load_suite, parse_suite
from plumbline.leaderboard.upgrade import upgrade_document

__all__ = [
    "AdjacentPair",
    "Category",
    "CategoryData",
    "CategoryScore",
    "CheckResult",
    "Deviation",
    "ErrorPolicy",
    "Leaderboard",
    "LeaderboardDocument",
    "LeaderboardFileError",
    "LeaderboardRow",
    "ModelScores",
    "Problem",
    "Suite",
    "SuiteError",
    "build_leaderboard",
    "check_reproducibility",
    "collect",
    "leaderboard_schema",
    "load_suite",
    "parse_suite",
    "read_leaderboard",
    "recompute_overall",
    "upgrade_document",
    "validate_document",
    "write_leaderboard",
]
