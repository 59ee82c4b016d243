"""`plumbline cdk check FILE` for benchmark authors debugging a prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from plumbline.cli.main import main
from plumbline.sandbox import bwrap as bwrap_module

GOOD_APP = Path(__file__).parent / "apps/good/queue_table_env.py"


@pytest.mark.slow
def test_check_a_response_prints_outcome_files_and_log(tmp_path: Path) -> None:
    response = tmp_path / "response.md"
    response.write_text(
        "Two files.\n\n**app.py**\n```python\n"
        + GOOD_APP.read_text().replace("app.synth()", "print('synthesizing')\napp.synth()")
        + "```\n"
    )
    result = CliRunner().invoke(main, ["cdk", "check", str(response)], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "passed" in result.output
    assert "app.py" in result.output and "OrdersStack.template.json" in result.output
    assert "synthesizing" in result.output  # the app's own output, from the log


def test_check_json_for_a_response_without_code(tmp_path: Path) -> None:
    response = tmp_path / "response.txt"
    response.write_text("I cannot do that.")
    result = CliRunner().invoke(main, ["cdk", "check", str(response), "--json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert data["outcome"] == "extraction_failed" and data["passed"] is False
    assert data["read_as"] == "response"


def test_check_refuses_without_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = tmp_path / "app.py"
    app.write_text(GOOD_APP.read_text())
    monkeypatch.setenv("PATH", str(tmp_path))
    bwrap_module.probe_sandbox.cache_clear()
    try:
        result = CliRunner().invoke(main, ["cdk", "check", str(app)])
    finally:
        bwrap_module.probe_sandbox.cache_clear()
    assert result.exit_code == 3
    assert "refusing to run model-written code" in result.output
    assert "--unsafe-no-sandbox" in result.output
