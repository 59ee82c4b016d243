"""Correcting a biased judge with human labels: `judge sample` → label → `leaderboard --labels`.

The logs come from running a real Inspect task (tests/leaderboard/judge_scenario.py): the judge
prefers the worse model; 80 human labels per model must put the better model first, with each
corrected interval holding the human truth.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from judge_scenario import JudgedLogs, generate_judged_logs

from plumbline.cli.main import main
from plumbline.core.schema_files import shipped

# One xdist group: the module's tests share one judged Inspect run (`judged`), which `--dist
# loadgroup` would otherwise run once in each worker that gets one of them.
pytestmark = pytest.mark.xdist_group("leaderboard_labels")

FIELDS = {
    "estimate",
    "judge_only",
    "human_only",
    "n_labelled",
    "n_judged",
    "lambda",
    "correlation",
}


def run(*args: Any) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> JudgedLogs:
    return generate_judged_logs(tmp_path_factory.mktemp("judged"))


def _label(judged: JudgedLogs, rows_path: Path, out: Path) -> list[dict[str, Any]]:
    """Fill in `value` from the human truth, as a person labelling the rows would."""
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()]
    for row in rows:
        row["value"] = judged.human[row["model"].split("/")[-1]][row["sample_id"]]
    out.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return rows


def _model(document: dict[str, Any], name: str) -> dict[str, Any]:
    return next(row for row in document["models"] if row["model"] == f"mockllm/{name}")


def test_eighty_labels_per_model_put_the_better_model_first(
    judged: JudgedLogs, tmp_path: Path
) -> None:
    judge_only = json.loads(
        run("leaderboard", judged.logs, "--suite", judged.suite, "--json").output
    )
    assert judge_only["models"][0]["model"] == "mockllm/worse"  # the judge's preference

    to_label = tmp_path / "to_label.jsonl"
    sampled = run(
        "judge", "sample", judged.logs, "--suite", judged.suite, "--per-model", 80, "-o", to_label
    )
    assert sampled.exit_code == 0, sampled.output
    labels = tmp_path / "labels.jsonl"
    rows = _label(judged, to_label, labels)
    assert len(rows) == 160
    assert {row["explanation"] for row in rows} <= {
        "The judge finds the answer acceptable.",
        "The judge finds the answer not acceptable.",
    }
    # the same questions for both models, so the difference pairs up
    by_model: dict[str, set[str]] = {}
    for row in rows:
        by_model.setdefault(row["model"], set()).add(row["sample_id"])
    assert by_model["mockllm/better"] == by_model["mockllm/worse"]

    board = tmp_path / "board.json"
    markdown = tmp_path / "board.md"
    result = run(
        "leaderboard", judged.logs, "--suite", judged.suite, "--labels", labels,
        "-o", board, "--markdown", markdown, "--half-width", 0.05,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(board.read_text())
    jsonschema.validate(document, shipped("leaderboard.schema.json"))
    assert document["models"][0]["model"] == "mockllm/better"
    assert document["models"][0]["rank"] == 1
    for name in ("better", "worse"):
        row = _model(document, name)
        fix = row["corrections"]["answers"]
        assert set(fix) >= FIELDS
        assert fix["n_labelled"] == 80 and fix["n_judged"] == 300
        assert row["answers"] == fix["estimate"] == row["overall"]
        interval = row["intervals"]["answers"]
        assert "PPI" in interval["method"]
        assert interval["low"] <= judged.truth(name) <= interval["high"], (name, interval)
        assert fix["judge_only"] == pytest.approx(sum(judged.judge[name].values()) / 300)
        assert len(fix["labelled"]) == 80
        assert fix["requested_half_width"] == 0.05
        assert fix.get("more_labels_needed", 0) >= 0  # absent: unreachable with 300 judged
    # the judge-only interval of the worse model misses its human truth: the bias is real
    worse = _model(document, "worse")["corrections"]["answers"]
    assert worse["judge_only_interval"]["low"] > judged.truth("worse")
    pair = document["comparisons"][0]
    assert pair["higher"] == "mockllm/better" and not pair["tied"]
    assert pair["interval"]["low"] > 0
    text = markdown.read_text()
    assert "Judge corrected with human labels" in text and "judge only" in text
    assert "Judge corrected with human labels" in result.output


def test_label_problems_are_named(judged: JudgedLogs, tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    good = [("better", f"j{i:03d}", judged.human["better"][f"j{i:03d}"]) for i in range(10)]
    lines = ["model,task,sample_id,epoch,value"]
    lines += [f"mockllm/{m},judged_answers,{q},1,{v}" for m, q, v in good]
    lines.append("mockllm/better,judged_answers,nope,1,1")  # line 12: matches nothing
    lines.append("mockllm/better,judged_answers,j050,1,1.5")  # line 13: out of range
    lines.append("mockllm/better,judged_answers,j000,1,0")  # line 14: duplicate
    lines.append("mockllm/better,judged_answers,j001,3,0")  # line 15: no epoch 3
    labels.write_text("\n".join(lines) + "\n")
    result = run("leaderboard", judged.logs, "--suite", judged.suite, "--labels", labels, "--json")
    document = json.loads(result.output)
    problems = {p["kind"]: p for p in reversed(document["problems"])}  # the first of a kind
    assert problems["label_unmatched"]["path"].endswith("labels.csv:12")
    assert "'nope'" in problems["label_unmatched"]["message"]
    assert problems["label_out_of_range"]["path"].endswith("labels.csv:13")
    assert problems["label_duplicate"]["path"].endswith("labels.csv:14")
    unmatched = [p["path"] for p in document["problems"] if p["kind"] == "label_unmatched"]
    assert any(path.endswith("labels.csv:15") for path in unmatched)
    assert _model(document, "better")["corrections"]["answers"]["n_labelled"] == 10
    assert "corrections" not in _model(document, "worse")


def test_a_broken_labels_file_is_a_usage_error(judged: JudgedLogs, tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"model": "m", "task": "t", "sample_id": "a", "value": 1}\n{"model": "m"\n')
    result = run("leaderboard", judged.logs, "--suite", judged.suite, "--labels", labels)
    assert result.exit_code == 2
    # records.io locates a parse error where the parser stopped: the end of the cut record
    assert "labels.jsonl:3: <json>: invalid JSON" in result.output
    labels.write_text('{"model": "m", "task": "t", "sample_id": "a", "value": "high"}\n')
    result = run("leaderboard", judged.logs, "--suite", judged.suite, "--labels", labels)
    assert result.exit_code == 2
    assert "labels.jsonl:1: value: not a number" in result.output


def test_sample_writes_csv_ready_to_label(judged: JudgedLogs, tmp_path: Path) -> None:
    out = tmp_path / "to_label.csv"
    first = run(
        "judge", "sample", judged.logs, "--suite", judged.suite, "--per-model", 5, "-o", out
    )
    assert first.exit_code == 0, first.output
    rows = list(csv.DictReader(out.read_text().splitlines()))
    assert len(rows) == 10 and {row["value"] for row in rows} == {""}
    assert {"question", "response", "judge_score", "explanation"} <= set(rows[0])
    again = tmp_path / "again.csv"
    run("judge", "sample", judged.logs, "--suite", judged.suite, "--per-model", 5, "-o", again)
    assert again.read_text() == out.read_text()  # seeded
    other = tmp_path / "other.csv"
    run("judge", "sample", judged.logs, "--suite", judged.suite, "--per-model", 5, "-o", other,
        "--seed", 7)  # fmt: skip
    assert other.read_text() != out.read_text()


def test_plan_says_how_many_labels() -> None:
    result = run(
        "judge", "plan", "--correlation", 0.9, "--judged", 1000, "--half-width", 0.05, "--json"
    )
    plan = json.loads(result.output)
    assert plan["labels_needed_without_judge"] == 385
    assert 0 < plan["labels_needed"] < 385 / 3
    text = run("judge", "plan", "--correlation", 0.9, "--judged", 1000, "--half-width", 0.05)
    assert f"{plan['labels_needed']} labels" in text.output
    bad = run("judge", "plan", "--correlation", 2, "--judged", 1000, "--half-width", 0.05)
    assert bad.exit_code == 2


TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorials" / "judge-labels.md"


def _tutorial_commands() -> list[list[str]]:
    import shlex

    commands: list[list[str]] = []
    in_block = False
    for line in TUTORIAL.read_text("utf-8").replace("\\\n", " ").splitlines():
        if line.startswith("```"):
            in_block = not in_block
        elif in_block and line.startswith("plumbline "):
            commands.append(shlex.split(line)[1:])
    return commands


def test_the_tutorial_runs_end_to_end(
    judged: JudgedLogs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command of docs/tutorials/judge-labels.md, as written, on the generated logs (the
    suite of the logs added, and the labelling step done from the human truth)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").symlink_to(judged.logs, target_is_directory=True)
    commands = _tutorial_commands()
    assert [words[:2] for words in commands] == [
        ["judge", "sample"],
        ["leaderboard", "logs/"],
        ["judge", "plan"],
    ]
    for words in commands:
        suite = ["--suite", str(judged.suite)] if words[:2] != ["judge", "plan"] else []
        result = run(*words, *suite)
        assert result.exit_code == 0, (words, result.output)
        if words[:2] == ["judge", "sample"]:
            rows = _label(judged, tmp_path / "to_label.jsonl", tmp_path / "labels.jsonl")
            assert len(rows) == 100  # 50 per model
    document = json.loads((tmp_path / "leaderboard.json").read_text())
    assert document["models"][0]["model"] == "mockllm/better"
    for name in ("better", "worse"):
        interval = _model(document, name)["intervals"]["answers"]
        assert interval["low"] <= judged.truth(name) <= interval["high"]


def test_the_page_shows_judge_only_next_to_corrected_and_the_agreement_plot(
    judged: JudgedLogs, tmp_path: Path
) -> None:
    to_label = tmp_path / "to_label.jsonl"
    run("judge", "sample", judged.logs, "--suite", judged.suite, "--per-model", 30, "-o", to_label)
    labels = tmp_path / "labels.jsonl"
    _label(judged, to_label, labels)
    site = tmp_path / "site"
    board = tmp_path / "board.json"
    result = run(
        "leaderboard", judged.logs, "--suite", judged.suite, "--labels", labels,
        "-o", board, "--html", site,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(board.read_text())
    page = next(site.glob("*/index.html")).read_text()
    assert "Judge corrected with human labels" in page
    assert page.count('class="agreement"') == 2  # one group of points per model
    assert page.count('<circle class="point"') == 60
    for name in ("better", "worse"):
        fix = _model(document, name)["corrections"]["answers"]
        assert f"{fix['judge_only'] * 100:.1f}%" in page
        assert f"{fix['estimate'] * 100:.1f}%" in page


def test_hand_picked_labels_are_flagged_in_every_view(judged: JudgedLogs, tmp_path: Path) -> None:
    """Labels put only on questions the judge accepted (a labeller checking the judge's "yes")
    are not a uniform draw: the judge's mean on them is 1 against its mean on the rest, and the
    1%-level check says so in the JSON, the terminal, the Markdown and the page. A uniform draw
    (`judge sample`) is not flagged."""
    labels = tmp_path / "picked.jsonl"
    rows = []
    for name in ("better", "worse"):
        accepted = [sid for sid, score in sorted(judged.judge[name].items()) if score == 1][:40]
        rows += [
            {"model": f"mockllm/{name}", "task": "judged_answers", "sample_id": sid,
             "value": judged.human[name][sid]}
            for sid in accepted
        ]  # fmt: skip
    labels.write_text("".join(json.dumps(row) + "\n" for row in rows))
    board, markdown, site = tmp_path / "board.json", tmp_path / "board.md", tmp_path / "site"
    result = run(
        "leaderboard", judged.logs, "--suite", judged.suite, "--labels", labels,
        "-o", board, "--markdown", markdown, "--html", site,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    document = json.loads(board.read_text())
    jsonschema.validate(document, shipped("leaderboard.schema.json"))
    for name in ("better", "worse"):
        fix = _model(document, name)["corrections"]["answers"]
        assert fix["labels_look_chosen"] is True
        assert fix["judge_labelled_mean"] == 1.0
        assert fix["selection_pvalue"] < 0.01 and fix["selection_alpha"] == 0.01
        assert "hypergeometric" in fix["selection_method"]
    kinds = [problem["kind"] for problem in document["problems"]]
    assert kinds.count("labels_not_random") == 2
    terminal = " ".join(result.output.split())
    assert "labels_not_random" in terminal and "look chosen, not drawn at random" in terminal
    text = markdown.read_text()
    assert "labels_not_random" in text and "NO: look chosen" in text
    page = next(site.glob("*/index.html")).read_text()
    assert "look chosen" in page and "labels_not_random" in page
    assert "a test at the 1% level" in page

    # the same number of labels drawn by `judge sample` is not flagged
    to_label, uniform = tmp_path / "to_label.jsonl", tmp_path / "uniform.jsonl"
    run("judge", "sample", judged.logs, "--suite", judged.suite, "--per-model", 40, "-o", to_label)
    _label(judged, to_label, uniform)
    drawn = json.loads(
        run(
            "leaderboard", judged.logs, "--suite", judged.suite, "--labels", uniform, "--json"
        ).output
    )
    for name in ("better", "worse"):
        fix = _model(drawn, name)["corrections"]["answers"]
        assert fix["labels_look_chosen"] is False and fix["selection_pvalue"] >= 0.01
        assert fix["lambda_method"].startswith("cross-fitted")
    assert all(problem["kind"] != "labels_not_random" for problem in drawn["problems"])
    for name in ("better", "worse"):
        assert _model(drawn, name)["corrections"]["answers"]["selection_can_tell"] is True


def test_a_few_hand_picked_labels_are_never_called_random(
    judged: JudgedLogs, tmp_path: Path
) -> None:
    """Issue 45: at 5–7 labels the check may be unable to reach its level; then the view says
    'cannot tell at n labels' and points to `judge sample`, never 'yes'."""
    for count in (5, 7):
        labels = tmp_path / f"picked{count}.jsonl"
        rows = []
        for name in ("better", "worse"):
            accepted = [sid for sid, score in sorted(judged.judge[name].items()) if score == 1]
            rows += [
                {"model": f"mockllm/{name}", "task": "judged_answers", "sample_id": sid,
                 "value": judged.human[name][sid]}
                for sid in accepted[:count]
            ]  # fmt: skip
        labels.write_text("".join(json.dumps(row) + "\n" for row in rows))
        board = tmp_path / f"board{count}.json"
        result = run(
            "leaderboard", judged.logs, "--suite", judged.suite, "--labels", labels, "-o", board
        )
        assert result.exit_code == 0, result.output
        terminal = " ".join(result.output.split())
        document = json.loads(board.read_text())
        for name in ("better", "worse"):
            fix = _model(document, name)["corrections"]["answers"]
            assert fix["judge_labelled_mean"] == 1.0
            # judge yes rates ≈ 0.68 and 0.87: 2 × 0.68⁵ ≈ 0.29, the check cannot reach 1%
            assert fix["labels_look_chosen"] is False
            assert fix["selection_can_tell"] is False
            assert fix["selection_floor_pvalue"] >= 0.01
            assert f"cannot tell at {count} labels" in terminal
            assert "plumbline judge sample" in terminal
        assert "| yes (" not in terminal and "│ yes (" not in terminal


def test_plan_gains_nothing_from_a_negative_correlation() -> None:
    """Issue 45: the estimator clips λ to [0, 1], so a negative correlation plans as many
    labels as no judge at all."""
    negative = json.loads(
        run("judge", "plan", "--correlation", -0.8, "--judged", 1000, "--half-width", 0.08,
            "--json").output
    )  # fmt: skip
    positive = json.loads(
        run("judge", "plan", "--correlation", 0.8, "--judged", 1000, "--half-width", 0.08,
            "--json").output
    )  # fmt: skip
    assert negative["labels_needed"] == negative["labels_needed_without_judge"] == 151
    assert negative["lambda_planned"] == 0.0 and positive["lambda_planned"] == 0.8
    assert positive["labels_needed"] < negative["labels_needed"]
    text = " ".join(
        run(
            "judge", "plan", "--correlation", -0.8, "--judged", 1000, "--half-width", 0.08
        ).output.split()
    )
    assert "151 labels" in text and "gains nothing" in text
