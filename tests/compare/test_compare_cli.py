"""`plumbline compare` end to end: outputs, exit codes, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from plumbline.cli.main import main

FAST = ["--resamples", "500"]
ARMS = ["-t", "with_skelly", "-c", "without_skelly"]


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, ["compare", *args], catch_exceptions=False)


def test_terminal_shows_the_decision_first_then_gates_deltas_and_warnings(
    example_path: Path,
) -> None:
    result = invoke(str(example_path), *ARMS, *FAST)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("mixed results - inspect paired deltas")
    text = result.output
    positions = [text.index(s) for s in ("Gates", "Paired deltas", "Arm summaries", "Warnings")]
    assert positions == sorted(positions)
    assert "median_duration_seconds" in text and "95% CI of mean" in text


def test_json_on_stdout_and_to_files(example_path: Path, tmp_path: Path) -> None:
    printed = invoke(str(example_path), *ARMS, *FAST, "--json")
    assert printed.exit_code == 0
    data = json.loads(printed.output)
    assert data["decision"] == "mixed results - inspect paired deltas"
    assert data["settings"]["n_resamples"] == 500

    out_json, out_md = tmp_path / "analysis.json", tmp_path / "analysis.md"
    written = invoke(
        str(example_path), *ARMS, *FAST, "--json", str(out_json), "--markdown", str(out_md)
    )
    assert written.exit_code == 0
    assert json.loads(out_json.read_text()) == data  # same seed, same analysis
    assert written.output.splitlines()[0].startswith("mixed results")
    markdown = out_md.read_text()
    assert "**Decision: mixed results - inspect paired deltas**" in markdown
    assert "| success_rate | 74.3% | 80.6% | favours without_skelly |" in markdown
    assert "### Per task" in markdown


def test_fail_unless_prefer_treatment_gives_an_exit_code(
    example_path: Path, tmp_path: Path, run: Any
) -> None:
    mixed = invoke(str(example_path), *ARMS, *FAST, "--fail-unless", "prefer-treatment")
    assert mixed.exit_code == 1
    path = tmp_path / "good.jsonl"
    rows = [
        run(task_id=t, arm=arm, repeat=k, duration_seconds=5.0 if arm == "new" else 9.0)
        for t in ("a", "b")
        for arm in ("new", "old")
        for k in range(5)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    good = invoke(str(path), *FAST, "-t", "new", "-c", "old", "--fail-unless", "prefer-treatment")
    assert good.exit_code == 0, good.output
    assert good.output.startswith("prefer new")


def test_invalid_records_are_listed_on_stderr_and_strict_fails(tmp_path: Path, run: Any) -> None:
    path = tmp_path / "runs.jsonl"
    rows = [run(arm=a, repeat=k) for a in ("with_skelly", "without_skelly") for k in range(5)]
    rows.insert(3, run(arm="with_skelly", repeat=9, duration_seconds=-4))
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = invoke(str(path), *ARMS, *FAST)
    # README, exit codes: invalid records are exit 1, after the comparison of the valid ones
    assert result.exit_code == 1
    assert "1 invalid run record(s) were left out" in result.stderr
    assert f"{path}:4: duration_seconds: Input should be greater than or equal to 0" in (
        result.stderr
    )
    strict = invoke(str(path), *ARMS, *FAST, "--strict")
    assert strict.exit_code == 2
    assert f"{path}:4: duration_seconds" in strict.stderr


def test_unnamed_arms_and_bad_options_are_usage_errors(tmp_path: Path, run: Any) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(run(arm=a)) + "\n" for a in ("x", "y")))
    unnamed = invoke(str(path))
    assert unnamed.exit_code == 2
    flat = " ".join(unnamed.stderr.split())
    assert "name the arms to compare with --treatment ARM (repeatable) and --control ARM" in flat
    assert "(e.g. --treatment x --control y); arms found: x, y" in flat
    margin = invoke(str(path), "-t", "x", "--rule", "ci", "--margin", "speed=1")
    assert margin.exit_code == 2 and "names success, duration, tokens" in margin.stderr
    clobber = invoke(str(path), "-t", "x", "--json", str(path))
    assert clobber.exit_code == 2 and "both an input and an output" in clobber.stderr
    assert json.loads(path.read_text().splitlines()[0])["arm"] == "x"
    swallowed = invoke("--json", str(path))
    assert swallowed.exit_code == 2 and "--json took" in swallowed.stderr
    assert json.loads(path.read_text().splitlines()[0])["arm"] == "x"


def test_several_treatments_on_the_command_line(tmp_path: Path, run: Any) -> None:
    path = tmp_path / "runs.jsonl"
    rows = [
        run(task_id=t, arm=arm, repeat=k, duration_seconds=d + k)
        for t in ("a", "b", "c")
        for arm, d in (("fast", 5.0), ("slow", 20.0), ("base", 10.0))
        for k in range(5)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = invoke(str(path), *FAST, "-c", "base", "--json")
    data = json.loads(result.output)
    assert [(c["treatment"], c["decision"]) for c in data["comparisons"]] == [
        ("fast", "prefer fast"),
        ("slow", "prefer base"),
    ]
    assert "pvalue_holm" in data["comparisons"][0]["tests"]["wilcoxon_duration_seconds"]
    failing = invoke(str(path), *FAST, "-c", "base", "--fail-unless", "prefer-treatment")
    assert failing.exit_code == 1


def test_rule_schema_and_the_deprecated_spelling_seed(example_path: Path) -> None:
    """`--rule seed` still works for one release, says it is deprecated on stderr, and gives
    the same analysis as `--rule schema` (the default)."""
    schema = invoke(str(example_path), *ARMS, *FAST, "--rule", "schema", "--json")
    assert schema.exit_code == 0 and schema.stderr == ""
    data = json.loads(schema.stdout)
    assert data["rule"] == data["settings"]["rule"] == "schema"
    old = invoke(str(example_path), *ARMS, *FAST, "--rule", "seed", "--json")
    assert old.exit_code == 0
    assert "--rule seed is deprecated" in old.stderr and "use --rule schema" in old.stderr
    assert json.loads(old.stdout) == data
    default = invoke(str(example_path), *ARMS, *FAST, "--json")
    assert json.loads(default.stdout) == data
    wrong = invoke(str(example_path), *ARMS, "--rule", "strict")
    assert wrong.exit_code == 2 and "'strict' is not one of 'schema', 'ci'" in wrong.stderr
    helped = invoke("--help")
    assert "[schema|ci]" in helped.output and "seed" not in helped.output.split("--seed")[0]


def test_bundled_arm_names_are_not_defaults(example_path: Path) -> None:
    """The issue removed the built-in arm names: two arms without flags is a usage error."""
    result = invoke(str(example_path), *FAST)
    assert result.exit_code == 2
    flat = " ".join(result.stderr.split())
    assert "--treatment with_skelly --control without_skelly" in flat
    assert "arms found: with_skelly, without_skelly" in flat
