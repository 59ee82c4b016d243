"""Every number of a leaderboard built from real Inspect logs, against an independent computation.

Expected values come from the scenario's script tables (conftest.py) and textbook formulas
written out here with numpy/scipy; the code under test reads them back from the logs.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from leaderboard_scenario import (
    ARCH_SCRIPT,
    CDK_SCRIPT,
    PE_QUESTIONS,
    PE_SCRIPT,
    PE_SCRIPT_ALPHA_RERUN,
    Fixture,
    run_task,
    task_factories,
)
from scipy import stats

from plumbline.leaderboard import build_leaderboard, load_suite
from plumbline.stats import proportion_bounds

WEIGHTS = {"practice_exam": 0.34, "architecture_design": 0.33, "cdk_synth": 0.33}
Z = stats.norm.ppf(0.975)


def wilson(k: int, n: int) -> tuple[float, float]:
    p = k / n
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z / (1 + Z**2 / n) * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2))
    return max(0.0, centre - half), min(1.0, centre + half)


def question_means(model: str) -> dict[str, np.ndarray]:
    """Each category's per-question means for a model, straight from the script."""
    pe_script = PE_SCRIPT_ALPHA_RERUN if model == "alpha" else PE_SCRIPT[model]
    out = {"practice_exam": np.array([np.mean(pe_script[q]) for q in PE_QUESTIONS], dtype=float)}
    if model in ARCH_SCRIPT:
        out["architecture_design"] = np.array(list(ARCH_SCRIPT[model].values()))
    if model in CDK_SCRIPT and model != "delta":  # delta's cdk log has the wrong scorer
        out["cdk_synth"] = np.array([1.0 if v == "ok" else 0.0 for v in CDK_SCRIPT[model].values()])
    return out


def t_se(values: np.ndarray) -> float:
    return float(values.std(ddof=1) / math.sqrt(values.size))


@pytest.fixture(scope="module")
def board(inspect_logs: Fixture):  # type: ignore[no-untyped-def]
    return build_leaderboard(inspect_logs.logs, "sa-bench")


@pytest.mark.parametrize("model", ["alpha", "beta", "gamma", "delta"])
def test_category_values_intervals_and_overall(board, model: str) -> None:  # type: ignore[no-untyped-def]
    entry = board.model(f"mockllm/{model}")
    means = question_means(model)
    parts: list[tuple[float, float, float, float]] = []  # (weight, estimate, low, high)
    for key, weight in WEIGHTS.items():
        score = entry.categories[key]
        if key not in means:
            assert score.missing and score.value is None and score.n == 0
            continue
        values = means[key]
        assert score.value == pytest.approx(values.mean(), abs=1e-12)
        assert score.n == values.size
        se = t_se(values)
        assert score.standard_error == pytest.approx(se, abs=1e-12)
        assert score.interval is not None
        if np.all((values == 0) | (values == 1)):
            low, high = wilson(int(values.sum()), values.size)
            assert score.interval.method == "Wilson"
        else:
            # Wilson at Korn & Graubard's effective n (question means in (0, 1))
            p = values.mean()
            ratio = Z / stats.t.ppf(0.975, values.size - 1)
            n_eff = p * (1 - p) / se**2 * ratio**2
            low, high = (float(b) for b in proportion_bounds(p * n_eff, n_eff))
            assert score.interval.method.startswith("Wilson, effective n")
        assert score.interval.low == pytest.approx(low, abs=1e-9)
        assert score.interval.high == pytest.approx(high, abs=1e-9)
        parts.append((weight, values.mean(), low, high))
    expected = sum(WEIGHTS[k] * means[k].mean() for k in means)
    assert entry.overall == pytest.approx(expected, abs=1e-12)
    interval = entry.overall_interval
    # MOVER over the category intervals; a missing category adds nothing
    below = math.sqrt(sum((w * (e - lo)) ** 2 for w, e, lo, _ in parts))
    above = math.sqrt(sum((w * (hi - e)) ** 2 for w, e, _, hi in parts))
    assert interval.low == pytest.approx(expected - below, abs=1e-9)
    assert interval.high == pytest.approx(expected + above, abs=1e-9)
    assert 0.0 <= interval.low <= interval.high <= 1.0


def test_ranking_epochs_errors_and_missing(board) -> None:  # type: ignore[no-untyped-def]
    assert [m.model for m in board.models] == [
        "mockllm/alpha",
        "mockllm/beta",
        "mockllm/delta",
        "mockllm/gamma",
    ]
    assert [m.rank for m in board.models] == [1, 2, 3, 4]
    alpha = board.model("mockllm/alpha")
    assert alpha.categories["practice_exam"].epochs == 2
    assert alpha.categories["cdk_synth"].epochs == 1
    beta = board.model("mockllm/beta")
    assert beta.categories["cdk_synth"].errors == 2
    assert beta.categories["cdk_synth"].value == pytest.approx(2 / 6)
    assert beta.errors == 2
    assert board.model("mockllm/gamma").missing == ["cdk_synth"]
    assert board.model("mockllm/delta").missing == ["architecture_design", "cdk_synth"]
    # gamma's architecture_design pools two logs over disjoint items.
    gamma_arch = board.model("mockllm/gamma").categories["architecture_design"]
    assert gamma_arch.n == 5 and len(gamma_arch.logs) == 2


def test_problems_are_reported_not_dropped(board, inspect_logs: Fixture) -> None:  # type: ignore[no-untyped-def]
    by_kind = {p.kind: p for p in board.problems}
    assert set(by_kind) == {"duplicate_samples", "no_category", "scorer_missing", "unreadable_log"}
    duplicate = by_kind["duplicate_samples"]
    assert duplicate.count == len(PE_QUESTIONS) * 2
    assert duplicate.path == str(inspect_logs.alpha_pe_old)
    assert str(inspect_logs.alpha_pe_new) in duplicate.message
    assert by_kind["no_category"].path == str(inspect_logs.unmatched)
    assert "other_task" in by_kind["no_category"].message
    assert by_kind["scorer_missing"].path == str(inspect_logs.wrong_scorer)
    assert "cdk_lint_only" in by_kind["scorer_missing"].message
    assert by_kind["unreadable_log"].path == str(inspect_logs.truncated)
    assert board.log_count == 14  # logs.json is not a log; the truncated copy is
    assert board.logs_used == 11


def test_newest_duplicate_wins(inspect_logs: Fixture, tmp_path: Path) -> None:
    """Only alpha's two practice_exam logs: the newer one's answers count, whatever the order."""
    board = build_leaderboard([inspect_logs.alpha_pe_new, inspect_logs.alpha_pe_old])
    value = board.model("mockllm/alpha").categories["practice_exam"].value
    assert value == pytest.approx(question_means("alpha")["practice_exam"].mean())
    older_only = build_leaderboard([inspect_logs.alpha_pe_old])
    old_means = [np.mean(PE_SCRIPT["alpha"][q]) for q in PE_QUESTIONS]
    old_value = older_only.model("mockllm/alpha").categories["practice_exam"].value
    assert old_value == pytest.approx(np.mean(old_means))
    assert old_value != pytest.approx(value)


def test_errors_exclude_policy(clean_logs: Path) -> None:
    board = build_leaderboard(clean_logs, errors="exclude")
    cdk = board.model("mockllm/beta").categories["cdk_synth"]
    assert cdk.value == pytest.approx(2 / 4)
    assert (cdk.n, cdk.errors, cdk.excluded) == (4, 2, 2)
    low, high = wilson(2, 4)
    assert cdk.interval is not None
    assert (cdk.interval.low, cdk.interval.high) == (pytest.approx(low), pytest.approx(high))
    assert board.to_dict()["_metadata"]["errors_policy"] == "exclude"


def test_clean_input_has_no_problems_and_sample_counts(clean_logs: Path) -> None:
    board = build_leaderboard(clean_logs)
    assert board.problems == []
    document = board.to_dict()
    categories = document["_metadata"]["categories"]
    assert categories["practice_exam"]["sample_count"] == 8
    assert categories["architecture_design"]["sample_count"] == 5
    assert categories["cdk_synth"]["sample_count"] == 6
    assert categories["cdk_synth"]["models_missing"] == ["mockllm/gamma"]


def test_confidence_and_margin_derive_from_the_widest_interval(board) -> None:  # type: ignore[no-untyped-def]
    document = board.to_dict()
    for key, meta in document["_metadata"]["categories"].items():
        widths = [m["half_widths"][key] for m in document["models"] if key not in m["missing"]]
        widest = max(widths)
        assert meta["half_width"] == widest
        assert meta["margin"] == f"±{math.ceil(round(widest * 100, 9))}%"
        expected = "high" if widest <= 0.05 else "medium" if widest <= 0.10 else "low"
        assert meta["confidence"] == expected
    # 8 questions cannot give SA Bench's hard-coded "high, ±5%".
    assert document["_metadata"]["categories"]["practice_exam"]["confidence"] == "low"


def test_custom_suite_with_glob_patterns(inspect_logs: Fixture, tmp_path: Path) -> None:
    suite_file = tmp_path / "suite.toml"
    suite_file.write_text(
        """
[suite]
name = "mini"

[[category]]
key = "knowledge"
name = "Knowledge"
description = "MCQ"
weight = 0.5
scoring = "binary"
tasks = ["practice_*"]
scorer = "choice"

[[category]]
key = "other"
name = "Other"
description = "The task nobody else reads"
weight = 0.5
scoring = "binary"
tasks = ["other_task"]
scorer = "cdk_verify"
""",
        encoding="utf-8",
    )
    board = build_leaderboard(inspect_logs.logs, load_suite(suite_file))
    delta = board.model("mockllm/delta")
    assert delta.categories["knowledge"].value == pytest.approx(7 / 8)
    # other_task ran on delta with CDK_SCRIPT["delta"]: all "synth-ok".
    assert delta.categories["other"].value == pytest.approx(1.0)
    assert delta.overall == pytest.approx(0.5 * 7 / 8 + 0.5 * 1.0)
    kinds = {p.kind for p in board.problems}
    assert "no_category" in kinds  # architecture_design and cdk_synth logs match nothing here


def test_progress_callback_sees_every_log(clean_logs: Path) -> None:
    seen: list[tuple[int, int]] = []
    build_leaderboard(clean_logs, progress=lambda done, total, path: seen.append((done, total)))
    total = seen[-1][1]
    assert [done for done, _ in seen] == list(range(1, total + 1))
    assert total == len(list(clean_logs.rglob("*.eval"))) + len(list(clean_logs.rglob("*.json")))


def test_scores_outside_unit_interval_are_errors_not_clamped(tmp_path: Path) -> None:
    log = run_task(task_factories()["architecture_design"](), "epsilon", tmp_path)
    board = build_leaderboard(log)
    score = board.model("mockllm/epsilon").categories["architecture_design"]
    assert score.errors == 2
    assert score.value == pytest.approx((0 + 0.5 + 0.25 + 0 + 1.0) / 5)
    (problem,) = [p for p in board.problems if p.kind == "out_of_range"]
    assert problem.count == 2 and problem.path == str(log)
    excluded = build_leaderboard(log, errors="exclude").model("mockllm/epsilon")
    assert excluded.categories["architecture_design"].value == pytest.approx(1.75 / 3)


def test_a_failed_run_is_reported_and_its_samples_used(tmp_path: Path) -> None:
    """beta's cdk_synth errors on two prompts; with fail_on_error the whole eval fails."""
    log = run_task(task_factories()["cdk_synth"](), "beta", tmp_path, fail_on_error=True)
    board = build_leaderboard(log)
    (problem,) = [p for p in board.problems if p.kind == "incomplete_log"]
    assert problem.path == str(log) and "'error'" in problem.message
    score = board.model("mockllm/beta").categories["cdk_synth"]
    # Every recorded sample-epoch is scored (one epoch: one per question); errors count 0.
    assert score.n == problem.count and 1 <= score.n <= len(CDK_SCRIPT["beta"])
    assert score.errors >= 1
    assert score.value is not None and score.value * score.n <= 2 + 1e-9  # only c0, c2 pass
