"""`plumbline leaderboard` end to end: written files, schema, self-consistency, and `check`."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from leaderboard_scenario import Fixture

from plumbline.cli.main import main
from plumbline.core.schema_files import shipped

SCHEMA = Path(__file__).parents[2] / "src/plumbline/schemas/leaderboard.schema.json"


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["leaderboard", *map(str, args)], catch_exceptions=False)


def assert_self_consistent(document: dict[str, Any]) -> None:
    """Recompute every overall from the file's own category values and weights."""
    categories = document["_metadata"]["categories"]
    assert math.fsum(c["weight"] for c in categories.values()) == pytest.approx(1.0, abs=1e-12)
    for model in document["models"]:
        recomputed = math.fsum(c["weight"] * model.get(k, 0.0) for k, c in categories.items())
        assert model["overall"] == pytest.approx(recomputed, abs=1e-12), model["model"]
        for key in model["missing"]:
            assert key not in model  # never shown as a real 0
            assert model["counts"][key]["missing"] is True
            assert model["intervals"][key] is None


@pytest.fixture(scope="module")
def written(inspect_logs: Fixture, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("written")
    result = run(
        inspect_logs.logs,
        "-o",
        out / "leaderboard.json",
        "--csv",
        out / "leaderboard.csv",
        "--markdown",
        out / "leaderboard.md",
        "--run-id",
        "test-run",
    )
    assert result.exit_code == 0, result.output
    return {"out": out, "output": result.output}


def test_every_written_json_validates_and_recomputes(written: dict[str, Any]) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    paths = list(written["out"].glob("*.json"))
    assert paths
    for path in paths:
        document = json.loads(path.read_text(encoding="utf-8"))
        jsonschema.validate(document, schema, cls=jsonschema.Draft202012Validator)
        assert_self_consistent(document)
        metadata = document["_metadata"]
        assert metadata["run_id"] == "test-run"
        assert metadata["generated_at"].endswith("Z")
        assert metadata["model_count"] == len(document["models"]) == 4
        assert {p["kind"] for p in document["problems"]} == {
            "duplicate_samples",
            "no_category",
            "scorer_missing",
            "unreadable_log",
        }
    # atomic writes leave no temporary files behind
    assert not [p for p in written["out"].iterdir() if p.name.startswith(".")]


def test_terminal_output_marks_missing_and_problems(written: dict[str, Any]) -> None:
    output = written["output"]
    assert "missing" in output
    assert "unreadable_log" in output and "duplicate_samples" in output
    assert "mockllm/alpha" in output


def test_csv_and_markdown(written: dict[str, Any]) -> None:
    rows = list(csv.DictReader(io.StringIO((written["out"] / "leaderboard.csv").read_text())))
    document = json.loads((written["out"] / "leaderboard.json").read_text())
    assert [row["model"] for row in rows] == [m["model"] for m in document["models"]]
    gamma = next(row for row in rows if row["model"] == "mockllm/gamma")
    assert gamma["cdk_synth"] == "" and gamma["cdk_synth.missing"] == "True"
    assert float(gamma["overall"]) == pytest.approx(
        next(m for m in document["models"] if m["model"] == "mockllm/gamma")["overall"]
    )
    markdown = (written["out"] / "leaderboard.md").read_text()
    assert "*missing*" in markdown
    assert "| 1 | 1 | mockllm/alpha |" in markdown


def test_json_flag_prints_the_document(clean_logs: Path) -> None:
    result = run(clean_logs, "--json")
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert_self_consistent(document)
    assert document["problems"] == []


def test_build_subcommand_form_and_strict(inspect_logs: Fixture) -> None:
    result = run("build", inspect_logs.logs, "--json", "--strict")
    assert result.exit_code == 1  # the scenario has problems
    assert json.loads(result.stdout)["models"]


def test_bad_suite_is_a_clear_error(clean_logs: Path, tmp_path: Path) -> None:
    suite = tmp_path / "bad.toml"
    suite.write_text(
        '[suite]\nname = "x"\n[[category]]\nkey = "a"\nname = "A"\ndescription = "d"\n'
        'weight = 0.4\nscoring = "binary"\ntasks = ["t"]\nscorer = "s"\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["leaderboard", str(clean_logs), "--suite", str(suite)])
    assert result.exit_code == 2
    assert "weights sum to 0.4" in result.output


def _check(new: Path, published: Path, *extra: str) -> Any:
    return run("check", new, "--against", published, *extra)


def test_check_reproducible_and_not(written: dict[str, Any], tmp_path: Path) -> None:
    new = written["out"] / "leaderboard.json"
    same = _check(new, new, "--json")
    assert same.exit_code == 0
    report = json.loads(same.stdout)
    assert report["reproducible"] is True
    assert all(d["within_interval"] for d in report["deviations"])

    document = json.loads(new.read_text())
    shifted = json.loads(new.read_text())
    shifted["models"][0]["overall"] += 0.08  # outside ±5 points
    shifted["models"][1]["overall"] -= 0.03  # inside
    shifted["models"].pop()  # a model only in the new file
    shifted["models"].append({"model": "published/only", "overall": 0.5})
    published = tmp_path / "published.json"
    published.write_text(json.dumps(shifted))
    result = _check(new, published, "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    jsonschema.Draft202012Validator(shipped("leaderboard_check.schema.json")).validate(report)
    assert report["schema_version"] == "plumbline.leaderboard_check/1"
    assert (report["shared"], report["outside_tolerance"]) == (len(document["models"]) - 1, 1)
    deviations = {d["model"]: d for d in report["deviations"]}
    first, second = document["models"][0]["model"], document["models"][1]["model"]
    assert deviations[first]["deviation"] == pytest.approx(-0.08)
    assert deviations[first]["within_tolerance"] is False
    assert deviations[second]["within_tolerance"] is True
    assert report["only_new"] == [document["models"][-1]["model"]]
    assert report["only_published"] == ["published/only"]
    # with a wider tolerance the same files pass
    assert _check(new, published, "--tolerance", "0.1").exit_code == 0
    table = _check(new, published)
    assert "Only in the published file: published/only" in table.output


def test_check_combined_interval_uses_both_standard_errors(
    written: dict[str, Any], tmp_path: Path
) -> None:
    new = written["out"] / "leaderboard.json"
    document = json.loads(new.read_text())
    model = document["models"][0]
    se = model["standard_errors"]["overall"]
    published = json.loads(new.read_text())
    published["models"][0]["overall"] = model["overall"] - 0.01
    path = tmp_path / "p.json"
    path.write_text(json.dumps(published))
    report = json.loads(_check(new, path, "--json").stdout)
    deviation = next(d for d in report["deviations"] if d["model"] == model["model"])
    assert deviation["combined_half_width"] == pytest.approx(1.959963984540054 * math.sqrt(2) * se)
    assert deviation["interval_basis"] == "both"


def test_check_rejects_unreadable_files(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"models": [{"model": "m"}]}')
    result = _check(broken, broken)
    assert result.exit_code == 2
    assert "models[0].overall" in result.output


def test_options_before_the_log_directory(clean_logs: Path) -> None:
    result = run("--errors", "exclude", clean_logs, "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["_metadata"]["errors_policy"] == "exclude"


def test_no_scorable_logs_exits_1(tmp_path: Path) -> None:
    result = run(tmp_path / "nowhere", "--json")
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert document["models"] == []
    assert document["problems"][0]["kind"] == "path_not_found"
