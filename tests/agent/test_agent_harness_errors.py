"""A bug of the harness in one trial costs that trial alone: it is recorded as that trial's
infrastructure failure (`harness_error`, with the error), the other trials run and are
recorded, the run finishes, and a rerun with `--retry-infra` runs only that trial again.

The harness is the real one running the fake agent; a subclass raises, for one chosen unit,
where a bug could sit: before the trial starts (`run_trial`) and while its record is completed
and its diff and logs saved (`_completed`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.agent.helpers import fake_agent, read_jsonl

from plumbline.agent.harness import Harness, RunOptions
from plumbline.agent.plan import Plan, make_plan
from plumbline.agent.profiles import resolve_agent
from plumbline.agent.run_types import TrialOutput
from plumbline.agent.sandbox import SandboxOptions
from plumbline.agent.schedule import Unit
from plumbline.agent.suite import load_suite

Key = tuple[str, str, int]
RECORDS = "records.jsonl"


class BuggyHarness(Harness):
    """The harness, failing with an unexpected error in the given units."""

    before: Key | None = None
    recording: Key | None = None

    def run_trial(self, unit: Unit) -> TrialOutput:
        if unit.key == self.before:
            raise RuntimeError("a bug before the trial")
        return super().run_trial(unit)

    def _completed(self, output: TrialOutput, extra: dict[str, Any]) -> Any:
        record = output.record or {}
        if (record.get("task_id"), record.get("arm"), record.get("repeat")) == self.recording:
            raise KeyError("a bug while recording")
        return super()._completed(output, extra)


def _options(output: Path, **more: Any) -> RunOptions:
    return RunOptions(output=output, sandbox=SandboxOptions(kind="none"), meter=False, **more)


def test_a_harness_error_in_one_trial_is_its_infra_failure_and_the_run_finishes(
    make_suite: Callable[..., Path], tmp_path: Path
) -> None:
    plan: Plan = make_plan(
        load_suite(make_suite()), resolve_agent(fake_agent(), None), repeats=1, seed=5
    )
    units = [unit.key for unit in plan.schedule]
    assert len(units) == 4
    out = tmp_path / "results"
    harness = BuggyHarness(plan, _options(out, concurrency=2))
    harness.before, harness.recording = units[0], units[2]
    result = harness.run()

    assert result.ran == 4 and result.record_errors == []
    records = {(r["task_id"], r["arm"], r["repeat"]): r for r in read_jsonl(out / RECORDS)}
    assert set(records) == set(units)
    for key, error in ((units[0], "RuntimeError: a bug before"), (units[2], "KeyError")):
        failed = records[key]
        assert failed["infra_failure"] is True and failed["infra_failure_kind"] == "harness_error"
        assert failed["success"] is False
        assert error in failed["infra_failure_reason"]
        assert "the other trials went on" in failed["infra_failure_reason"]
    for key in (units[1], units[3]):
        assert records[key]["infra_failure"] is False
        assert records[key]["success"] is (key[1] == "with_hint")

    # A plain rerun has nothing left to run; with --retry-infra, only the two failed trials.
    assert Harness(plan, _options(out)).run().ran == 0
    again = Harness(plan, _options(out, retry_infra=True)).run()
    assert again.ran == 2 and again.record_errors == []
    lines = read_jsonl(out / RECORDS)
    assert Counter((r["task_id"], r["arm"], r["repeat"]) for r in lines) == Counter(
        {units[0]: 2, units[1]: 1, units[2]: 2, units[3]: 1}
    )
    assert len(again.records) == 6  # the counted: the failures retried, then their results
    decided = [r for r in again.records if not r.infra_failure]
    assert sorted((r.task_id, r.arm, r.repeat) for r in decided) == sorted(units)
