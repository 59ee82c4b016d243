"""The leaderboard document: schema, self-consistency checks, atomic writes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from plumbline.leaderboard import (
    LeaderboardFileError,
    build_leaderboard,
    read_leaderboard,
    validate_document,
    write_leaderboard,
)


@pytest.fixture(scope="module")
def document(clean_logs: Path) -> dict[str, Any]:
    return build_leaderboard(clean_logs, run_id="doc").to_dict()


SA_BENCH_EXAMPLE: dict[str, Any] = {
    "_metadata": {
        "generated_at": "2026-01-07T00:00:00Z",
        "run_id": "local-20260107-000000",
        "model_count": 1,
        "categories": {
            "practice_exam": {
                "name": "Practice Exam",
                "description": "AWS certification-style MCQ questions...",
                "weight": 1.0,
                "sample_count": 50,
                "scoring": "binary",
                "confidence": "high",
                "margin": "±5%",
            }
        },
    },
    "models": [{"model": "...", "practice_exam": 0.85, "overall": 0.85}],
}


def test_sa_bench_example_is_valid() -> None:
    validate_document(SA_BENCH_EXAMPLE)


def test_sa_bench_example_renders_as_a_leaderboard_report(tmp_path: Path) -> None:
    """SA Bench's own file has no `schema_version`; `report` still knows it as a leaderboard."""
    from click.testing import CliRunner

    from plumbline.cli.main import main

    source = tmp_path / "sa_bench.json"
    source.write_text(json.dumps(SA_BENCH_EXAMPLE), encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(source), "-o", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "site" / "sa-bench" / "index.html").read_text(encoding="utf-8")
    assert "Practice Exam" in page and "85.0%" in page


def test_published_leaderboard_from_an_old_weighting_is_rejected(document: dict[str, Any]) -> None:
    stale = copy.deepcopy(document)
    stale["models"][0]["overall"] = round(stale["models"][0]["overall"] + 0.07, 4)
    with pytest.raises(LeaderboardFileError, match=r"models\[0\]\.overall: .* is not Σ weight"):
        validate_document(stale, "stale.json")


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["_metadata"].__setitem__("generated_at", "yesterday"), "generated_at"),
        (lambda d: d["_metadata"].__setitem__("generated_at", "2026-01-07"), "generated_at"),
        (lambda d: d["_metadata"]["categories"]["cdk_synth"].__setitem__("margin", "5%"), "margin"),
        (
            lambda d: d["_metadata"]["categories"]["cdk_synth"].__setitem__("scoring", "x"),
            "scoring",
        ),
        (lambda d: d["_metadata"].__setitem__("model_count", 9), "model_count"),
        (lambda d: d["models"][0].__setitem__("practice_exam", 1.2), "practice_exam"),
        (lambda d: d["models"][0].pop("overall"), "overall"),
    ],
)
def test_invalid_documents_are_refused_and_never_written(
    document: dict[str, Any], tmp_path: Path, mutate: Any, field: str
) -> None:
    broken = copy.deepcopy(document)
    mutate(broken)
    target = tmp_path / "leaderboard.json"
    target.write_text("previous content")
    with pytest.raises(LeaderboardFileError) as raised:
        write_leaderboard(target, broken)
    assert field in str(raised.value)
    assert target.read_text() == "previous content"
    assert [p.name for p in tmp_path.iterdir()] == ["leaderboard.json"]


def test_write_then_read_round_trip(document: dict[str, Any], tmp_path: Path) -> None:
    target = tmp_path / "sub" / "leaderboard.json"
    write_leaderboard(target, document)
    assert read_leaderboard(target).to_json() == json.loads(json.dumps(document))
    with pytest.raises(LeaderboardFileError, match="line 1: invalid JSON"):
        (tmp_path / "bad.json").write_text("{")
        read_leaderboard(tmp_path / "bad.json")
