"""`report` never contradicts the document it renders (issue 27): a leaderboard given with
extra logs (a rerun with more questions, here) rendered sample numbers that contradicted the
leaderboard. A (model, category) whose logs disagree with the document now shows no samples
and says why; the others are unchanged."""

from __future__ import annotations

from pathlib import Path

from tests.views.report_scenario import SEED, Scenario

from plumbline.leaderboard.samples import read_leaderboard_samples


def _rerun_with_more_questions(root: Path) -> Path:
    from inspect_ai import eval as inspect_eval

    from plumbline.suites.sa_bench.tasks import practice_exam

    extra = root / "extra-logs"
    [log] = inspect_eval(
        [practice_exam(seed=SEED + 1, limit=5)],
        model="scripted/oracle",
        log_dir=str(extra),
        display="none",
        log_format="eval",
    )
    assert log.status == "success"
    return extra


def test_logs_that_disagree_with_the_leaderboard_are_named_not_shown(
    scenario: Scenario, tmp_path: Path
) -> None:
    extra = _rerun_with_more_questions(tmp_path)
    alone = read_leaderboard_samples(scenario.document, [scenario.logs])
    assert alone.problems == []
    mixed = read_leaderboard_samples(scenario.document, [scenario.logs, extra])
    [problem] = mixed.problems
    assert problem.startswith("scripted/oracle: practice_exam: the logs given hold ")
    assert "the leaderboard states 3 question(s)" in problem
    assert "not the logs it was built from" in problem
    oracle = mixed.for_model("scripted/oracle")
    assert {s.category for s in oracle} == {"architecture_design"}
    shown = {(s.model, s.category, s.sample_id) for s in mixed.samples}
    before = {(s.model, s.category, s.sample_id) for s in alone.samples}
    assert shown == {key for key in before if key[:2] != ("scripted/oracle", "practice_exam")}
