"""The agent run's page: `agent run --json` then `report`, and `history --html` linking it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from tests.agent.helpers import fake_agent, one_task, write_suite

from plumbline.cli.main import main


def test_an_agent_run_gets_a_page_and_an_index_card(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", {"tasks": one_task()})
    document = tmp_path / "agent_run.json"
    store = tmp_path / "h.db"
    runner = CliRunner()
    arguments = ["agent", "run", str(suite), "--agent", fake_agent(), "--profile", "claude-code"]
    arguments += ["-o", str(tmp_path / "out"), "--repeats", "1", "--no-meter"]
    arguments += ["--kill-grace", "0.3", "--json", str(document), "--store", str(store)]
    ran = runner.invoke(main, arguments)
    assert ran.exit_code == 0, ran.output
    arms = list(json.loads(document.read_text(encoding="utf-8"))["arms"])  # in its order
    site = tmp_path / "site"
    shown = runner.invoke(main, ["report", str(document), "-o", str(site)])
    assert shown.exit_code == 0, shown.output
    page = (site / "agent-run" / "index.html").read_text(encoding="utf-8")
    assert f"Agent run: {', '.join(arms)}" in page and "Runs per arm" in page
    index = (site / "index.html").read_text(encoding="utf-8")
    assert "Agent run" in index and 'href="agent-run/index.html"' in index
    history = runner.invoke(main, ["history", "--store", str(store), "--html", str(site)])
    assert history.exit_code == 0, history.output
    assert (site / "result-1" / "index.html").is_file()  # the stored run's own page
