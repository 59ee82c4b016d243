"""Suites are data: the built-in sa-bench suite and validation of user suites."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from plumbline.leaderboard import SuiteError, load_suite, parse_suite


def category(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "key": "k",
        "name": "K",
        "description": "d",
        "weight": 1.0,
        "scoring": "binary",
        "tasks": ["t"],
        "scorer": "s",
    }
    return base | overrides


def test_builtin_sa_bench_matches_sa_bench() -> None:
    suite = load_suite("sa-bench")
    assert suite.name == "sa-bench" and suite.title == "SA Bench"
    assert suite.weights == {"practice_exam": 0.34, "architecture_design": 0.33, "cdk_synth": 0.33}
    assert {c.key: c.scoring for c in suite.categories} == {
        "practice_exam": "binary",
        "architecture_design": "rubric",
        "cdk_synth": "binary",
    }
    assert {c.key: c.scorer for c in suite.categories} == {
        "practice_exam": "choice",
        "architecture_design": "architecture_scorer",
        "cdk_synth": "cdk_verify",
    }
    # plumbline's task names, and the original SA Bench project's (its logs are read as they are)
    assert {c.key: c.tasks for c in suite.categories} == {
        "practice_exam": ("practice_exam", "aws_solutions_architect"),
        "architecture_design": (
            "architecture_design",
            "architecture_interpretation",
            "architecture_design_llm_judge",
        ),
        "cdk_synth": ("cdk_synth", "aws_cdk_synth", "aws_cdk_synth_local"),
    }
    assert suite.category("cdk_synth").scorers == ("cdk_verify", "cdk_verify_local")
    # the original project's three architecture tasks run one dataset: one question set
    architecture = suite.category("architecture_design")
    assert architecture.scorers == ("architecture_scorer", "llm_judge_scorer")
    assert {architecture.question_set(t) for t in architecture.tasks} == {"architecture_design"}
    assert [c.name for c in suite.categories] == [
        "Practice Exam",
        "Architecture Design",
        "CDK Synthesis",
    ]
    assert suite.formula() == (
        "overall = (practice_exam × 0.34) + (architecture_design × 0.33) + (cdk_synth × 0.33)"
    )


def test_suite_file_round_trip(tmp_path: Path) -> None:
    builtin = Path(__file__).parents[2] / "src/plumbline/suites/sa_bench/suite.toml"
    copy = tmp_path / "mine.toml"
    copy.write_text(builtin.read_text(encoding="utf-8"), encoding="utf-8")
    assert load_suite(copy) == load_suite("sa-bench")
    assert load_suite(str(copy)) == load_suite("sa-bench")


def test_weights_must_sum_to_one_and_the_error_shows_the_sum() -> None:
    data = {
        "suite": {"name": "old"},
        "category": [
            category(key="a", weight=0.4),
            category(key="b", weight=0.6),
            category(key="c", weight=0.6),
        ],
    }
    with pytest.raises(SuiteError) as raised:
        parse_suite(data, "old.toml")
    assert "weights sum to 1.6 (0.4 + 0.6 + 0.6)" in str(raised.value)
    assert str(raised.value).startswith("old.toml: ")


def test_keys_must_be_unique() -> None:
    data = {"suite": {"name": "x"}, "category": [category(weight=0.5), category(weight=0.5)]}
    with pytest.raises(SuiteError, match=r"category\[1\]\.key: 'k' is already used"):
        parse_suite(data)


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"scoring": "likert"}, "category[0].scoring"),
        ({"weight": 1.5}, "category[0].weight"),
        ({"key": "has space"}, "category[0].key"),
        ({"key": "overall"}, "category[0].key"),
        ({"tasks": []}, "category[0].tasks"),
        ({"scorer": ""}, "category[0].scorer"),
        ({"unknown": 1}, "category[0].unknown"),
    ],
)
def test_every_field_is_validated(override: dict[str, Any], field: str) -> None:
    with pytest.raises(SuiteError) as raised:
        parse_suite({"suite": {"name": "x"}, "category": [category(**override)]})
    assert any(problem.startswith(f"{field}:") for problem in raised.value.problems)


def test_missing_fields_and_sections() -> None:
    broken = category()
    del broken["description"]
    with pytest.raises(SuiteError, match=r"category\[0\]\.description: Field required"):
        parse_suite({"suite": {"name": "x"}, "category": [broken]})
    with pytest.raises(SuiteError, match="suite: Field required"):
        parse_suite({"category": [category()]})


def test_unknown_suite_and_bad_toml(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="built-in: sa-bench"):
        load_suite("no-such-suite")
    bad = tmp_path / "bad.toml"
    bad.write_text("[suite\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="invalid TOML"):
        load_suite(bad)


def test_glob_patterns_match_task_names() -> None:
    suite = parse_suite({"suite": {"name": "x"}, "category": [category(tasks=["cdk_*", "exact"])]})
    (only,) = suite.categories
    assert only.matches("cdk_synth") and only.matches("exact")
    assert not only.matches("practice_exam")
    assert suite.categories_for_task("cdk_local") == [only]


def test_builtin_toml_parses_as_plain_toml() -> None:
    path = Path(__file__).parents[2] / "src/plumbline/suites/sa_bench/suite.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert sum(c["weight"] for c in data["category"]) == pytest.approx(1.0)


def test_a_task_file_entry_matches_the_task_name_inspect_logs() -> None:
    from plumbline.leaderboard.suite import Category

    fields = {
        "key": "k",
        "name": "K",
        "description": "d",
        "weight": 1.0,
        "scoring": "binary",
        "scorer": "choice",
    }
    category = Category.model_validate({**fields, "tasks": ["my_tasks.py@quiz"]})
    assert category.matches("quiz")
    assert not category.matches("my_tasks.py")


def test_scorer_is_shorthand_for_scorers_and_both_are_validated() -> None:
    def first(**override: Any) -> Any:
        data = {key: value for key, value in category(**override).items() if value is not None}
        return parse_suite({"suite": {"name": "x"}, "category": [data]})

    assert first().categories[0].scorers == ("s",)
    listed = first(scorer=None, scorers=["cdk_verify", "cdk_verify_local"]).categories[0]
    assert listed.scorers == ("cdk_verify", "cdk_verify_local") and listed.scorer == "cdk_verify"
    assert listed.scorer_in({"cdk_verify_local", "other"}) == "cdk_verify_local"
    assert listed.scorer_in({"cdk_verify", "cdk_verify_local"}) == "cdk_verify"
    assert listed.scorer_in({"other"}) is None
    for override, field in [
        ({"scorers": ["a"]}, "category[0].scorer"),  # both given
        ({"scorer": None, "scorers": ["a", "a"]}, "category[0].scorers"),
        ({"scorer": None, "scorers": []}, "category[0].scorers"),
    ]:
        data = category(**override)
        if data.get("scorer") is None:
            del data["scorer"]
        with pytest.raises(SuiteError) as raised:
            parse_suite({"suite": {"name": "x"}, "category": [data]})
        assert any(problem.startswith(f"{field}:") for problem in raised.value.problems), (
            raised.value.problems
        )


def test_the_shipped_suite_schema_is_generated_from_the_model() -> None:
    """The published schema never drifts from `Suite`: regenerate it when this fails with
    `python -m plumbline.core.schema_files`."""
    import json

    import jsonschema

    from plumbline.leaderboard.suite import generated_schema, suite_schema

    assert suite_schema() == json.loads(json.dumps(generated_schema()))
    validator = jsonschema.Draft202012Validator(suite_schema())
    validator.check_schema(suite_schema())
    builtin = Path(__file__).parents[2] / "src/plumbline/suites/sa_bench/suite.toml"
    assert list(validator.iter_errors(tomllib.loads(builtin.read_text(encoding="utf-8")))) == []
    one = {"suite": {"name": "x"}, "category": [category()]}
    assert validator.is_valid(one)
    both = {"suite": {"name": "x"}, "category": [category(scorers=["a"])]}
    neither = {"suite": {"name": "x"}, "category": [category(scorer=None)]}
    del neither["category"][0]["scorer"]
    assert not validator.is_valid(both) and not validator.is_valid(neither)
    # The README's worked example validates against the schema and loads.
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    example = readme.split("<!-- suite-example -->", 2)[1].split("```toml", 1)[1].split("```")[0]
    data = tomllib.loads(example)
    assert list(validator.iter_errors(data)) == []
    assert parse_suite(data).category("infra").scorers == ("terraform_plan", "terraform_plan_local")
