"""`app.publish`: a producing command's outputs made once from the typed result.

`leaderboard -o --html --store` builds its document once, parses it never and checks its
consistency once: the real functions are wrapped by counting spies that still call through,
and every output is checked to be there.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.small_inputs import write_suite
from tests.support.store_results import mini_logs

from plumbline.cli.main import main
from plumbline.leaderboard import board, check, document
from plumbline.leaderboard.result import LeaderboardDocument


def _spy(calls: Counter[str], name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[name] += 1
        return function(*args, **kwargs)

    return counted


def test_leaderboard_with_every_output_builds_once_parses_never_checks_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = mini_logs(tmp_path, correct=30)
    suite = write_suite(tmp_path / "mini.toml")
    calls: Counter[str] = Counter()
    monkeypatch.setattr(
        board.Leaderboard, "document", _spy(calls, "build", board.Leaderboard.document)
    )
    monkeypatch.setattr(document, "parse_document", _spy(calls, "parse", document.parse_document))
    monkeypatch.setattr(check, "review_document", _spy(calls, "parse", check.review_document))
    validate = LeaderboardDocument.model_validate
    monkeypatch.setattr(LeaderboardDocument, "model_validate", _spy(calls, "parse", validate))
    monkeypatch.setattr(
        document, "consistency_problems", _spy(calls, "check", document.consistency_problems)
    )
    output, site, store = tmp_path / "board.json", tmp_path / "site", tmp_path / "h.db"
    arguments = ["leaderboard", str(logs), "--suite", str(suite), "-o", str(output)]
    arguments += ["--html", str(site), "--store", str(store)]
    arguments += ["--markdown", str(tmp_path / "b.md"), "--csv", str(tmp_path / "b.csv")]
    result = CliRunner().invoke(main, arguments, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert calls == Counter(build=1, check=1)  # and no parse
    written = json.loads(output.read_text(encoding="utf-8"))
    assert written["models"][0]["overall"] == pytest.approx(0.75)
    assert (site / "board" / "index.html").is_file()
    assert json.loads((site / "data" / "board.json").read_text(encoding="utf-8")) == written
    assert (tmp_path / "b.md").is_file() and (tmp_path / "b.csv").is_file()
    with sqlite3.connect(store) as connection:
        assert connection.execute("select kind from results").fetchall() == [("leaderboard",)]


def test_reading_the_written_file_back_parses_and_checks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spies see what they count: the same board given to `report` is parsed (it comes in
    from a file) and checked."""
    logs = mini_logs(tmp_path, correct=10)
    suite = write_suite(tmp_path / "mini.toml")
    output = tmp_path / "board.json"
    runner = CliRunner()
    built = runner.invoke(
        main, ["leaderboard", str(logs), "--suite", str(suite), "-o", str(output)]
    )
    assert built.exit_code == 0, built.output
    calls: Counter[str] = Counter()
    monkeypatch.setattr(document, "parse_document", _spy(calls, "parse", document.parse_document))
    monkeypatch.setattr(
        document, "consistency_problems", _spy(calls, "check", document.consistency_problems)
    )
    shown = runner.invoke(main, ["report", str(output), "-o", str(tmp_path / "site")])
    assert shown.exit_code == 0, shown.output
    assert calls["parse"] >= 1 and calls["check"] >= 1
