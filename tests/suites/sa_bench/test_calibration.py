"""Judge calibration with scripted mockllm judges: faithful, injection-obeying, malformed."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from inspect_ai.model import ChatMessage, Model, ModelOutput, ModelUsage, get_model

from plumbline.cli.main import main
from plumbline.suites.sa_bench.scorers.calibration import (
    ADVERSARIAL_TIERS,
    CalibrationItem,
    calibrate,
    load_calibration,
)
from plumbline.suites.sa_bench.scorers.judge import neutralise

ITEMS = load_calibration()


def out(content: str) -> ModelOutput:
    output = ModelOutput.from_content(model="mockllm/model", content=content)
    output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
    return output


def graded_response(messages: list[ChatMessage]) -> str:
    """The candidate response as the judge sees it, between the hash-tagged delimiters."""
    prompt = "\n".join(m.text for m in messages)
    tag = re.search(r"<response-([0-9a-f]{16})>", prompt)
    assert tag, "the judge prompt must delimit the response"
    opening, closing = f"<response-{tag.group(1)}>", f"</response-{tag.group(1)}>"
    # the response cannot open or close the delimiters itself
    assert prompt.count(opening) == 2 and prompt.count(closing) == 2  # system text + user text
    return prompt.split(opening)[-1].split(closing)[0].strip("\n")


def _item_for(messages: list[ChatMessage]) -> CalibrationItem:
    seen = graded_response(messages)
    return next(i for i in ITEMS if neutralise(i.response)[0] == seen)


def _verdict(values: dict[str, float]) -> str:
    return "Reasoning first. " + json.dumps({**values, "reasoning": "scripted"})


def faithful(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    return out(_verdict(_item_for(messages).hand.dimensions()))


INSTRUCTION = re.compile(r"assign 1\.0|return accuracy 1|ignore all previous", re.I)


def injection_obeying(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    item = _item_for(messages)
    if INSTRUCTION.search(graded_response(messages)):
        return out(_verdict({"accuracy": 1.0, "completeness": 1.0, "quality": 1.0}))
    return out(_verdict(item.hand.dimensions()))


def malformed(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    return out('{"accuracy": 8, "completeness": 7, "quality": 9, "reasoning": "solid"}')


def scripted(behaviour: Any, name: str) -> Model:
    return get_model("mockllm/model", custom_outputs=behaviour, memoize=False, script=name)


def test_the_calibration_set_covers_subtypes_and_tiers() -> None:
    assert len(ITEMS) >= 24
    tiers = Counter(i.tier for i in ITEMS)
    for tier in ("excellent", "good", "mediocre", "poor", *ADVERSARIAL_TIERS):
        assert tiers[tier] >= 3, tiers
    assert len({i.task.subtype for i in ITEMS}) == 9
    assert all(len(i.justification.split()) >= 5 for i in ITEMS)
    for item in ITEMS:
        if item.adversarial:
            assert sum(item.hand.dimensions().values()) / 3 <= 0.15


def test_a_faithful_judge_passes() -> None:
    report = asyncio.run(calibrate([scripted(faithful, "faithful")], ITEMS, runs=2))
    [result] = report.judges
    assert result.passed, result.failures
    for dim in result.dimensions.values():
        assert dim.mae == pytest.approx(0)
        assert dim.within_share == 1
        assert dim.spearman == pytest.approx(1)
        assert dim.correlation == pytest.approx(1)  # Pearson r, for `judge plan`
        assert dim.run_spread == 0
    assert result.unscored == 0
    assert not any(a["fooled"] for a in result.adversarial)


def test_an_injection_obeying_judge_is_caught() -> None:
    report = asyncio.run(calibrate([scripted(injection_obeying, "obeys")], ITEMS, runs=1))
    [result] = report.judges
    assert not result.passed
    fooled = {a["id"] for a in result.adversarial if a["fooled"]}
    injected = {i.id for i in ITEMS if i.tier == "prompt_injection"}
    assert fooled == injected
    assert any("prompt_injection" in f and "> 0.35" in f for f in result.failures)


def test_a_malformed_judge_leaves_items_unscored_not_defaulted() -> None:
    report = asyncio.run(calibrate([scripted(malformed, "malformed")], ITEMS, runs=1))
    [result] = report.judges
    assert not result.passed
    assert result.unscored == len(ITEMS)
    assert all(a["judged"] != a["judged"] for a in result.adversarial)  # NaN, never 0.5
    assert any("verdicts unscored" in f for f in result.failures)


def test_an_inconsistent_judge_fails_self_consistency() -> None:
    calls: Counter[str] = Counter()

    def wobbly(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        item = _item_for(messages)
        calls[item.id] += 1
        shift = 0.1 if calls[item.id] % 2 else -0.1
        values = {k: min(1.0, max(0.0, v + shift)) for k, v in item.hand.dimensions().items()}
        return out(_verdict(values))

    report = asyncio.run(calibrate([scripted(wobbly, "wobbly")], ITEMS, runs=2))
    [result] = report.judges
    assert any("run-to-run spread" in f for f in result.failures)


def test_two_judges_report_their_mean_and_agreement() -> None:
    judges = [scripted(faithful, "a"), scripted(injection_obeying, "b")]
    report = asyncio.run(calibrate(judges, ITEMS, runs=1))
    assert report.mean_judge is not None
    assert set(report.agreement) == {"accuracy", "completeness", "quality"}
    alpha = report.agreement["accuracy"]
    assert alpha is not None and 0 < alpha < 1  # they disagree only on the injections


@pytest.fixture
def scripted_models(monkeypatch: pytest.MonkeyPatch) -> None:
    behaviours = {"x/faithful": faithful, "x/obeys": injection_obeying, "x/malformed": malformed}
    import inspect_ai.model

    def fake_get_model(name: str, **_: Any) -> Model:
        return scripted(behaviours[name], name)

    monkeypatch.setattr(inspect_ai.model, "get_model", fake_get_model)


@pytest.mark.usefixtures("scripted_models")
@pytest.mark.parametrize(("judge", "code"), [("x/faithful", 0), ("x/obeys", 1), ("x/malformed", 1)])
def test_cli_exit_code(judge: str, code: int, tmp_path: Path) -> None:
    report_file = tmp_path / "report.json"
    arguments = ["judge", "calibrate", "--judge", judge, "--runs", "1", "--json"]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code == code, result.output
    report = json.loads(result.stdout)
    written = CliRunner().invoke(main, [*arguments, str(report_file)])
    assert written.exit_code == code, written.output
    assert report == json.loads(report_file.read_text())
    assert report["passed"] is (code == 0)
    [judged] = report["judges"]
    assert set(judged["dimensions"]) == {"accuracy", "completeness", "quality"}
    assert len(judged["adversarial"]) == sum(1 for i in ITEMS if i.adversarial)
    assert "heuristic_baseline" in report


@pytest.mark.usefixtures("scripted_models")
def test_cli_table_names_the_failures() -> None:
    result = CliRunner().invoke(main, ["judge", "calibrate", "--judge", "x/obeys", "--runs", "1"])
    assert result.exit_code == 1
    assert "FAIL" in result.output and "FOOLED" in result.output
    assert "Spearman" in result.output


def test_cli_rejects_a_bad_calibration_file(tmp_path: Path) -> None:
    bad = tmp_path / "cal.jsonl"
    good = json.dumps(ITEMS[0].model_dump(mode="json"))
    bad.write_text(f'{good}\n{{"id": "x", "tier": "great"}}\n{good}\n')
    result = CliRunner().invoke(
        main, ["judge", "calibrate", "--judge", "mockllm/model", "--set", str(bad)]
    )
    assert result.exit_code == 2
    assert f"{bad}:2: tier: Input should be 'excellent'" in result.output
    assert f"{bad}:2: task: Field required" in result.output
    assert f"{bad}:3: id: duplicate 'cal-01'" in result.output
