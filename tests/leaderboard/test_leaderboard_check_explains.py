"""`leaderboard check` explains: both files validated, a file that disagrees with its own weights
named (which models, by how much), categories compared, full model names in every table."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.leaderboards import typed_leaderboard

from plumbline.cli.main import main
from plumbline.views.leaderboard_page import leaderboard_view

LONG = "openrouter/anthropic/claude-sonnet-4.5-20250929-preview-edition"
OLD_WEIGHTS = {"practice_exam": 0.5, "architecture_design": 0.25, "cdk_synth": 0.25}


# one xdist group: the module's tests read its leaderboard files (`files`), built once
pytestmark = pytest.mark.xdist_group("leaderboard_check_explains")


@pytest.fixture(scope="module")
def files(original_logs: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """NEW: built by plumbline from the original project's logs, with one model renamed to a
    long provider path. PUBLISHED: the same scores, but overall computed with old weights under
    metadata that states the new ones (what the original's docs/leaderboard.json does)."""
    out = tmp_path_factory.mktemp("check")
    new_path = out / "new.json"
    result = CliRunner().invoke(main, ["leaderboard", str(original_logs), "-o", str(new_path)])
    assert result.exit_code == 0, result.output
    new = json.loads(new_path.read_text(encoding="utf-8"))
    for document_models in (new["models"], new["comparisons"]):
        for entry in document_models:
            for field in ("model", "higher", "lower"):
                if entry.get(field) == "mockllm/good":
                    entry[field] = LONG
    for group in new["tie_groups"]:
        group["models"] = [LONG if name == "mockllm/good" else name for name in group["models"]]
    new_path.write_text(json.dumps(new), encoding="utf-8")
    published = copy.deepcopy(new)
    for entry in published["models"]:
        entry["overall"] = sum(w * entry[key] for key, w in OLD_WEIGHTS.items())
        entry["architecture_design"] += 0.08 if entry["model"] == LONG else 0.0
        del entry["intervals"]
    published_path = out / "published.json"
    published_path.write_text(json.dumps(published), encoding="utf-8")
    return {"new": new_path, "published": published_path, "documents": (new, published)}


def check(files: dict[str, Any], *extra: str) -> Any:
    args = ["leaderboard", "check", str(files["new"]), "--against", str(files["published"])]
    return CliRunner().invoke(main, [*args, *extra], catch_exceptions=False, terminal_width=100)


def test_json_names_the_inconsistent_models_and_compares_categories(
    files: dict[str, Any],
) -> None:
    result = check(files, "--json", "--tolerance", "0.2")
    report = json.loads(result.stdout)
    assert report["new_file"]["valid"] is True
    published = report["published_file"]
    assert published["valid"] is False
    _new, old = files["documents"]
    stated = {m["model"]: m for m in old["models"]}
    by_model = {entry["model"]: entry for entry in published["inconsistent_overall"]}
    assert set(by_model) == {LONG, "mockllm/weak"}
    for name, entry in by_model.items():
        model = stated[name]
        recomputed = 0.34 * model["practice_exam"] + 0.33 * (
            model["architecture_design"] + model["cdk_synth"]
        )
        assert entry["recomputed"] == pytest.approx(recomputed, abs=1e-12)
        assert entry["difference"] == pytest.approx(model["overall"] - recomputed, abs=1e-12)
    categories = {(c["model"], c["category"]): c for c in report["categories"]}
    assert len(categories) == 6
    shifted = categories[(LONG, "architecture_design")]
    assert shifted["deviation"] == pytest.approx(-0.08, abs=1e-12)
    assert categories[("mockllm/weak", "cdk_synth")]["deviation"] == pytest.approx(0.0)
    # the verdict stays SA Bench's: overall within tolerance
    assert report["reproducible"] is True and result.exit_code == 0


def test_terminal_output_explains_with_full_model_names(files: dict[str, Any]) -> None:
    result = check(files, "--tolerance", "0.05")
    text = result.output
    assert "published file's overall disagrees with its own weights" in text
    assert f"{LONG}: states" in text
    assert "Categories" in text and "architecture_design" in text
    assert text.count(LONG) >= 5 and "…" not in text  # whole, in the note and both tables
    assert "1 category value(s) outside tolerance" in text
    assert result.exit_code == 0  # overall (SA Bench's rule) is within 5 points


def test_a_self_inconsistent_new_file_fails_the_check(files: dict[str, Any]) -> None:
    swapped = {"new": files["published"], "published": files["new"]}
    result = check(swapped, "--json", "--tolerance", "0.5")
    assert json.loads(result.stdout)["reproducible"] is False and result.exit_code == 1


def test_report_never_calls_a_formula_exact_for_a_file_it_does_not_reproduce(
    files: dict[str, Any],
) -> None:
    new, published = files["documents"]
    assert leaderboard_view(*typed_leaderboard(new)).formula_mismatches == ()
    mismatches = leaderboard_view(*typed_leaderboard(published)).formula_mismatches
    assert {entry.model for entry in mismatches} == {LONG, "mockllm/weak"}
    pages = {}
    for label in ("new", "published"):
        site = files["new"].parent / f"site-{label}"
        result = CliRunner().invoke(main, ["report", str(files[label]), "-o", str(site)])
        assert result.exit_code == 0, result.output
        pages[label] = "\n".join(p.read_text("utf-8") for p in site.rglob("index.html"))
    assert "exactly as computed" in pages["new"] and 'id="formula-mismatch"' not in pages["new"]
    assert "exactly as computed" not in pages["published"]
    assert 'id="formula-mismatch"' in pages["published"] and f"{LONG}: states" in pages["published"]


def test_a_model_listed_twice_is_named_and_not_reproducible(
    files: dict[str, Any], tmp_path: Path
) -> None:
    """Issue 27: `check` against a published file listing one model twice did not name it (the
    second row silently won)."""
    _new, published = files["documents"]
    doubled = copy.deepcopy(published)
    twin = copy.deepcopy(doubled["models"][0])
    twin["overall"] = 0.0  # a second row that would fail the check if it were the one read
    doubled["models"].append(twin)
    path = tmp_path / "doubled.json"
    path.write_text(json.dumps(doubled), encoding="utf-8")
    name = twin["model"]
    args = ["leaderboard", "check", str(files["new"]), "--against", str(path), "--json"]
    report = json.loads(CliRunner().invoke(main, [*args, "--tolerance", "0.2"]).stdout)
    problems = report["published_file"]["problems"]
    rows = f"models[0], models[{len(doubled['models']) - 1}]"
    assert f"models: {name!r} is listed 2 times (rows {rows})" in " ".join(problems)
    assert report["published_file"]["valid"] is False
    assert report["reproducible"] is False
    shared = {d["model"]: d for d in report["deviations"]}
    assert shared[name]["published"] == pytest.approx(doubled["models"][0]["overall"])
    text = CliRunner().invoke(main, args[:-1], terminal_width=100)
    assert text.exit_code == 1
    assert f"{name!r} is listed 2 times" in " ".join(text.output.split())
