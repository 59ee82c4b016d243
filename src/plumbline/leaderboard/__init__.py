"""Leaderboards from Inspect logs: weighted multi-category scores with honest uncertainty.

    from plumbline.leaderboard import build_leaderboard, write_leaderboard

    board = build_leaderboard("logs/", "sa-bench", errors="zero")
    write_leaderboard("leaderboard.json", board.to_dict())  # validated, atomic

The pipeline is read (`collect`) → score (`scores`) → rank with tie groups (`ties`) →
document (`board`, `document`) → render (`render`); `check` compares a fresh leaderboard with a
published one.
"""

from plumbline.leaderboard.board import Leaderboard, build_leaderboard
from plumbline.leaderboard.check import CheckResult, Deviation, check_reproducibility
from plumbline.leaderboard.collect import CategoryData, ErrorPolicy, Problem, collect
from plumbline.leaderboard.document import (
    LeaderboardFileError,
    leaderboard_schema,
    read_leaderboard,
    recompute_overall,
    validate_document,
    write_leaderboard,
)
from plumbline.leaderboard.outputs import write_outputs
from plumbline.leaderboard.render import render_check, render_csv, render_markdown, render_terminal
from plumbline.leaderboard.scores import CategoryScore, Interval, ModelScores
from plumbline.leaderboard.suite import Category, Suite, SuiteError, load_suite, parse_suite
from plumbline.leaderboard.ties import Comparison

__all__ = [
    "Category",
    "CategoryData",
    "CategoryScore",
    "CheckResult",
    "Comparison",
    "Deviation",
    "ErrorPolicy",
    "Interval",
    "Leaderboard",
    "LeaderboardFileError",
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
    "render_check",
    "render_csv",
    "render_markdown",
    "render_terminal",
    "validate_document",
    "write_leaderboard",
    "write_outputs",
]
