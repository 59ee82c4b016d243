"""Analysis edge cases, with a deterministic bag-of-words embedding (no model needed)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from plumbline.cli.output import dumps
from plumbline.records.trial_record import ErrorClass, GenerationSettings, TrialRecord
from plumbline.reliability.analysis import analyze
from plumbline.views.reliability import render_markdown


def bag_of_words(texts: Sequence[str]) -> npt.NDArray[np.float64]:
    vectors = np.zeros((len(texts), 64))
    for row, text in enumerate(texts):
        for word in text.lower().split():
            vectors[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        vectors[row, 63] += 0.01  # never a zero vector
    return vectors


def record(model: str, prompt_id: str, trial: int, **fields: Any) -> TrialRecord:
    values: dict[str, Any] = {
        "model": model,
        "provider": model.split("/")[0],
        "prompt_id": prompt_id,
        "prompt": f"Question {prompt_id}?",
        "trial": trial,
        "timestamp": datetime(2026, 1, 1, tzinfo=UTC),
        "config": GenerationSettings(temperature=0.7, seed=42 + trial),
        "latency_seconds": 0.5 + 0.01 * trial,
        **fields,
    }
    return TrialRecord(**values)


def test_a_model_that_only_fails_still_gets_robustness() -> None:
    records = [
        record("p/down", "q", t, error_class=ErrorClass.SERVER, http_status=503) for t in range(5)
    ]
    records += [record("p/up", "q", t, response=f"answer number {t}.") for t in range(5)]
    report = analyze(records, bag_of_words)
    down = next(m for m in report.models if m.model == "p/down")
    assert down.successful == 0
    assert down.latency is None and down.performance is None and down.consistency is None
    assert down.robustness.error_rate == 100.0
    assert down.robustness.exceptions["ServerError"] == 5
    assert any("robustness rests on 5 trials" in w for w in report.warnings_for("p/down"))
    latency = next(c for c in report.comparisons if c.metric == "latency_seconds")
    assert latency.effect is None and latency.note
    json.loads(dumps(report))  # strict JSON, no NaN
    assert "p/down" in render_markdown(report)


def test_several_prompts_duplicates_and_empty_responses() -> None:
    records = [record("p/m", "a", t, response="same words every time.") for t in range(4)]
    records += [record("p/m", "b", t, response=f"different {t} words here.") for t in range(4)]
    records.append(record("p/m", "b", 4, response="   "))  # empty: dropped by consistency
    records.append(record("p/m", "a", 0, response="a duplicate of trial 0."))
    report = analyze(records, bag_of_words)
    (model,) = report.models
    assert model.trials == 9
    assert any("duplicate trial" in w.message for w in report.warnings)
    prompts = {p.prompt_id: p for p in model.prompts}
    assert prompts["a"].consistency is not None
    assert prompts["a"].consistency.score == 1.0
    assert prompts["b"].valid_responses == 4
    assert model.consistency is not None and model.consistency.n == 2
    assert 0.0 <= model.consistency.interval.low <= model.consistency.interval.high <= 1.0
    assert model.performance_by_prompt is not None
    markdown = render_markdown(report)
    assert "| prompt | valid responses | consistency | agreement |" in markdown


def test_configurations_of_a_model_are_reported_separately_never_pooled() -> None:
    from plumbline.reliability.analysis import Price

    hot = [record("p/m", "q", t, response=f"warm answer {t}.") for t in range(4)]
    cold = [
        record(
            "p/m",
            "q",
            t,  # the same (model, prompt, trial) keys: not duplicates, another configuration
            response="cold answer.",
            config=GenerationSettings(temperature=0.0, seed=42 + t, max_tokens=64),
        )
        for t in range(4)
    ]
    other = [
        record(
            "p/other",
            "q",
            t,
            response="x.",
            config=GenerationSettings(temperature=0.2, seed=7 + t),
        )
        for t in range(4)
    ]
    report = analyze([*hot, *cold, *other], bag_of_words, prices={"p/m": Price(1.0, 1.0)})
    names = sorted(m.model for m in report.models)
    assert names == [
        "p/m (max_tokens=64, temperature=0.0)",
        "p/m (max_tokens=none, temperature=0.7)",
        "p/other",
    ]
    assert all(m.trials == 4 for m in report.models)
    assert not any("duplicate trial" in w.message for w in report.warnings)
    assert any("p/m was run with 2 generation configurations" in w.message for w in report.warnings)
    assert not any("prices given for models without trials" in w.message for w in report.warnings)
    # one configuration per model, but they differ between models: said
    single = analyze([*hot, *other], bag_of_words)
    assert [m.model for m in single.models] == ["p/m", "p/other"]
    assert any("differing in temperature" in w.message for w in single.warnings)
    assert "2 generation configurations" in render_markdown(report)


def test_the_report_document_states_its_version_and_units() -> None:
    """JSON is `model_dump(mode="json")`, valid under the shipped schema; CERT's error and
    timeout rates are percentages, every other rate a proportion (0-1)."""
    import jsonschema

    from plumbline.core.result import schema_version
    from plumbline.core.schema_files import shipped
    from plumbline.reliability.result import ReliabilityReport

    records = [
        record("p/m", "q", t, error_class=ErrorClass.TIMEOUT, timed_out=True)
        if t % 4 == 0
        else record("p/m", "q", t, response=f"answer number {t}.")
        for t in range(12)
    ]
    report = analyze(records, bag_of_words)
    document = report.json_document()
    assert document["schema_version"] == schema_version("reliability", 1)
    assert document == json.loads(json.dumps(report.model_dump(mode="json")))
    assert ReliabilityReport.model_validate(document) == report
    schema = shipped("reliability_report.schema.json")
    jsonschema.Draft202012Validator(schema).validate(document)

    definitions = schema["$defs"]
    robustness = definitions["RobustnessResult"]["properties"]
    assert robustness["error_rate"]["unit"] == "percent"
    assert robustness["timeout_rate"]["unit"] == "percent"
    assert definitions["ErrorClassRate"]["properties"]["rate"]["unit"] == "proportion"
    robust = report.models[0].robustness
    assert robust.error_rate == 25.0 and robust.timeout_rate == 25.0  # CERT: percent
    timeout = next(c for c in robust.error_classes if c.error_class == "TimeoutError")
    assert timeout.rate == 0.25  # a proportion
    assert timeout.interval.low is not None and timeout.interval.high is not None
    assert 0 <= timeout.interval.low <= 0.25 <= timeout.interval.high <= 1
    assert robust.error_rate_interval.high is not None
    assert robust.error_rate_interval.high == 100 * timeout.interval.high


def test_one_prompt_id_with_two_texts_is_a_problem_never_pooled() -> None:
    """Issue 27: one `prompt_id` with two different prompt texts was pooled silently (the
    answers to two questions read as one prompt's inconsistency)."""
    records = [
        record("p/m", "q", t, prompt="What is a queue?", response="a line of items.")
        for t in range(3)
    ]
    records += [
        record("p/m", "q", t, prompt="What is a stack?", response="last in, first out.")
        for t in range(3, 6)
    ]
    report = analyze(records, bag_of_words)
    [problem] = [w.message for w in report.warnings if "different prompt texts" in w.message]
    assert "prompt id 'q' is used for 2 different prompt texts" in problem
    assert "What is a queue?" in problem and "What is a stack?" in problem
    (model,) = report.models
    prompts = {p.prompt_id: p for p in model.prompts}
    assert set(prompts) == {"q", "q~2"}
    assert prompts["q"].valid_responses == 3 == prompts["q~2"].valid_responses
    consistency = [prompts[key].consistency for key in ("q", "q~2")]
    assert all(c is not None and c.score == 1.0 for c in consistency)
    assert "different prompt texts" in render_markdown(report)


def test_each_interval_over_prompts_names_its_question() -> None:
    """Issue 37: the t interval over prompts is about these prompts; the population interval
    beside it (JSON, Markdown) is guaranteed for any population; Cohen's d at 3 prompts is
    labelled approximate."""
    from plumbline.views.reliability import render_markdown
    from validation.coverage import (
        SimulatedModel,
        embedding_table,
        partner_of,
        simulated_prompts,
        simulated_records,
    )

    model = SimulatedModel(hard_share=0.25)
    drawn = simulated_prompts(3, np.random.default_rng(4), model, "n")
    paired = simulated_prompts(3, np.random.default_rng(4), partner_of(model), "n")
    rng = np.random.default_rng(5)
    records = simulated_records(drawn, 6, rng, model)
    records += simulated_records(paired, 6, rng, partner_of(model))
    report = analyze(records, embedding_table(drawn + paired))
    entry = report.models[0]
    for estimate in (entry.consistency, entry.agreement, entry.performance_by_prompt):
        assert estimate is not None and estimate.population_interval is not None
        assert estimate.interval.method.startswith("these prompts: ")
        population = estimate.population_interval
        assert population.method.startswith("prompt population: ")
        assert population.coverage == "guaranteed" and population.prompts == 3
        # at 3 prompts the population interval is at least as wide
        assert population.low is not None and population.high is not None
        assert estimate.interval.low is not None and estimate.interval.high is not None
        assert population.high - population.low >= estimate.interval.high - estimate.interval.low
    assert entry.performance is not None and entry.performance.population_ci_95 is not None
    effect = report.comparisons[0].effect
    assert effect is not None and effect.interval.coverage == "approximate"
    assert effect.interval.simulated_coverage == pytest.approx(0.915)
    text = " ".join(render_markdown(report).split())
    assert "these prompts;" in text and "prompt population" in text
