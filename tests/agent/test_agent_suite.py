"""Suites: the example loads, the shipped schema is the models' schema, problems are located."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from tests.agent.helpers import EXAMPLE, example_data, one_task

from plumbline.agent.suite import SuiteError, agent_suite_schema, generated_schema, load_suite
from plumbline.cli.main import main


def test_example_suite_loads_with_paths_relative_to_the_suite() -> None:
    loaded = load_suite(EXAMPLE / "suite.toml")
    suite = loaded.suite
    assert [a.name for a in suite.arms] == ["without_hint", "with_hint"]
    assert suite.control == "without_hint"
    assert loaded.prompt(suite.task("fix-mean")).startswith("The tests in test_mean.py fail")
    hint = suite.arm("with_hint").add_files[0]
    assert loaded.file_content(hint) == (EXAMPLE / "hints" / "HINT.md").read_bytes()
    assert len(loaded.digest) == 64


def test_shipped_schema_is_generated_from_the_models_and_accepts_the_example() -> None:
    assert agent_suite_schema() == json.loads(json.dumps(generated_schema()))
    validator = jsonschema.Draft202012Validator(agent_suite_schema())
    assert list(validator.iter_errors(example_data())) == []
    broken = {**example_data(), "arms": [{"name": "only", "colour": "red"}]}
    assert list(validator.iter_errors(broken))


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"tasks": one_task(acceptance=None)},
            "tasks.0.acceptance: Input should be a valid string",
        ),
        (
            {"tasks": one_task(prompt_file="prompts/fix-mean.md")},
            "tasks.0: Value error, give exactly one of `prompt` or `prompt_file`",
        ),
        (
            {"arms": [{"name": "a"}, {"name": "a"}]},
            "<suite>: Value error, arm names must be unique: a",
        ),
        ({"control": "nobody"}, "<suite>: Value error, control 'nobody' is not one of the arms"),
        (
            {
                "arms": [
                    {"name": "a", "add_files": [{"path": "../x", "content": "x"}]},
                    {"name": "b"},
                ]
            },
            "arms.0.add_files.0.path: Value error, '../x' must be a relative path",
        ),
        (
            {"tasks": one_task(prompt=None, prompt_file="nope.md")},
            "tasks.0.prompt_file: no such file",
        ),
        ({"tasks": one_task(source={"dir": "missing"})}, "tasks.0.source.dir: no such directory"),
        (
            {"tasks": one_task(timeout_seconds=0)},
            "tasks.0.timeout_seconds: Input should be greater",
        ),
        ({"arms": [{"name": "only"}]}, "arms: List should have at least 2 items"),
        ({"prompt_template": "no placeholder"}, "prompt_template: Value error, must contain"),
        ({"surprise": 1}, "surprise: Extra inputs are not permitted"),
    ],
)
def test_problems_read_file_field_problem(
    make_suite: Callable[..., Path], changes: dict[str, object], expected: str
) -> None:
    path = make_suite({"control": None, **changes} if "control" not in changes else changes)
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    assert any(p.startswith(f"{path}: ") and expected in p for p in caught.value.problems), (
        caught.value.problems
    )


def test_bad_toml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "suite.toml"
    bad.write_text("name = [unclosed\n")
    with pytest.raises(SuiteError, match=rf"^{bad}: <suite>: not valid TOML or JSON"):
        load_suite(bad)
    with pytest.raises(SuiteError, match="no such file"):
        load_suite(tmp_path / "absent.toml")


def test_cli_reports_a_bad_suite_with_exit_code_2(make_suite: Callable[..., Path]) -> None:
    path = make_suite({"tasks": one_task(acceptance=None)})
    result = CliRunner().invoke(main, ["agent", "plan", str(path)])
    assert result.exit_code == 2
    assert f"{path}: tasks.0.acceptance:" in result.output


def test_git_source_revision_must_name_a_commit(make_suite: Callable[..., Path]) -> None:
    path = make_suite({"tasks": one_task(source={"git": "repo", "rev": "HEAD"})})
    result = CliRunner().invoke(main, ["agent", "plan", str(path)])
    assert result.exit_code == 2
    assert "tasks.0.source:" in result.output and "does not name a commit" in result.output
