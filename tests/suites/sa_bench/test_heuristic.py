"""The heuristic scorer as a pure function: anti-gaming acceptance and matching rules."""

from __future__ import annotations

from typing import Any

import pytest
from arch_helpers import (
    TASKS_FILE,
    answer_key_salad,
    element_names,
    every_service,
    keyword_salad,
    load_tasks,
    metadata,
)

from plumbline.records.io import Located, iter_json_values
from plumbline.suites.sa_bench.datasets import ARCHITECTURE_DESIGN_FILE, ArchitectureTask
from plumbline.suites.sa_bench.scorers.architecture import score_architecture
from plumbline.suites.sa_bench.scorers.aws_services import find_services, lookup, phrases_for


def _dataset_tasks() -> list[dict[str, Any]]:
    tasks = []
    for item in iter_json_values(ARCHITECTURE_DESIGN_FILE):
        assert isinstance(item, Located), str(item)
        task = ArchitectureTask.model_validate(item.value)
        tasks.append({**task.metadata(), "reference_answer": task.reference_answer})
    return tasks


OUR_TASKS = load_tasks(TASKS_FILE)
DATASET_TASKS = _dataset_tasks()
ALL_TASKS = OUR_TASKS + DATASET_TASKS


def _ids(tasks: list[dict[str, Any]]) -> list[str]:
    return [f"{t['id']}-{t['subtype']}" for t in tasks]


def test_the_packaged_dataset_is_covered() -> None:
    assert DATASET_TASKS, f"{ARCHITECTURE_DESIGN_FILE} has no tasks"


@pytest.mark.parametrize("task", ALL_TASKS, ids=_ids(ALL_TASKS))
def test_reference_answer_scores_at_least_0_8(task: dict[str, Any]) -> None:
    result = score_architecture(task["reference_answer"], metadata(task), task["reference_answer"])
    assert result.value >= 0.8, result.to_dict()


@pytest.mark.parametrize("task", ALL_TASKS, ids=_ids(ALL_TASKS))
def test_keyword_salad_scores_below_0_35(task: dict[str, Any]) -> None:
    result = score_architecture(keyword_salad(task), metadata(task), task["reference_answer"])
    assert result.value < 0.35, result.to_dict()


@pytest.mark.parametrize("task", ALL_TASKS, ids=_ids(ALL_TASKS))
def test_answer_key_salad_scores_below_0_35(task: dict[str, Any]) -> None:
    result = score_architecture(answer_key_salad(task), metadata(task), task["reference_answer"])
    assert result.value < 0.35, result.to_dict()
    assert result.details["originality_factor"] < 1


@pytest.mark.parametrize("task", ALL_TASKS, ids=_ids(ALL_TASKS))
def test_listing_every_aws_service_scores_below_0_35(task: dict[str, Any]) -> None:
    result = score_architecture(every_service(), metadata(task), task["reference_answer"])
    assert result.value < 0.35, result.to_dict()


@pytest.mark.parametrize("task", ALL_TASKS, ids=_ids(ALL_TASKS))
@pytest.mark.parametrize("empty", ["", "   \n\t "])
def test_empty_response_scores_zero(task: dict[str, Any], empty: str) -> None:
    result = score_architecture(empty, metadata(task), task["reference_answer"])
    assert (result.accuracy, result.completeness, result.quality, result.value) == (0, 0, 0, 0)


def _service_task() -> dict[str, Any]:
    return next(t for t in OUR_TASKS if t["subtype"] == "service_identification")


def test_aliases_name_the_same_service() -> None:
    assert lookup("S3") is lookup("Simple Storage Service") is lookup("amazon s3")
    assert "simple storage service" in phrases_for("Amazon S3")
    assert find_services("Objects live in the Simple Storage Service.") == {"Amazon S3"}


def test_a_single_word_of_a_name_credits_nothing() -> None:
    # the reference credited "Amazon S3" whenever "amazon" appeared
    assert find_services("Amazon sells books and the service is gateway-free.") == set()
    task = _service_task()
    result = score_architecture(
        "Amazon is the company whose service runs the gateway and the function for the storage.",
        metadata(task),
    )
    assert result.details["named"] == 0
    assert result.value < 0.1


def test_ordinary_words_need_their_prefix() -> None:
    assert find_services("We config the batch job and back up to glue.") == set()
    assert find_services("AWS Config and AWS Batch and AWS Glue") == {
        "AWS Config",
        "AWS Batch",
        "AWS Glue",
    }


def test_stopwords_in_a_role_never_count() -> None:
    task = _service_task()
    # names every service in real sentences, but the words shared with the roles are stopwords
    response = (
        "Amazon API Gateway is there and it is the one for the team. "
        "AWS Lambda is also there and it is in the middle of the picture. "
        "Amazon S3 is on the left and it is next to the other box. "
        "Amazon DynamoDB is at the bottom and it is the last one here."
    )
    result = score_architecture(response, metadata(task), task["reference_answer"])
    assert result.details["named"] == 4
    assert all(not e["facets_found"] for e in result.details["elements"])
    assert result.accuracy == 0
    assert result.value < 0.35


def test_metadata_says_which_elements_were_found_and_why() -> None:
    task = _service_task()
    response = (
        "Amazon S3 stores the uploaded images and their thumbnails. "
        "The rest of the diagram is not clear to me at all."
    )
    result = score_architecture(response, metadata(task), task["reference_answer"])
    by_label = {e["label"]: e for e in result.details["elements"]}
    assert by_label["Amazon S3"]["named"] is True
    assert by_label["Amazon S3"]["facets_found"] == ["stores the uploaded images and thumbnails"]
    assert by_label["AWS Lambda"]["named"] is False
    assert result.details["named"] == 1
    assert result.completeness == pytest.approx(0.8 * (1 / 4) + 0.2 * 0)
    for key in ("accuracy", "completeness", "quality", "score", "quality_parts", "format"):
        assert key in result.to_dict()


def test_a_partial_answer_scores_between_salad_and_reference() -> None:
    task = _service_task()
    partial = (
        "Amazon API Gateway is the entry point: it receives upload requests from mobile and web "
        "clients and passes them on. AWS Lambda resizes every image after upload, because doing "
        "that work on the server keeps the clients simple."
    )
    meta = metadata(task)
    score = score_architecture(partial, meta, task["reference_answer"]).value
    salad = score_architecture(keyword_salad(task), meta, task["reference_answer"]).value
    full = score_architecture(task["reference_answer"], meta, task["reference_answer"]).value
    assert salad < score < full


def test_creation_task_without_its_diagram_loses_format_credit() -> None:
    task = next(t for t in OUR_TASKS if t["output_format"] == "mermaid")
    prose_only = task["reference_answer"].split("```")[-1]
    with_diagram = score_architecture(task["reference_answer"], metadata(task))
    without = score_architecture(prose_only, metadata(task))
    assert with_diagram.details["format"]["valid"] is True
    assert without.details["format"]["found"] is False
    assert without.details["quality_parts"]["format"] == 0
    assert without.quality < with_diagram.quality


def test_bad_metadata_is_rejected_with_a_useful_message() -> None:
    with pytest.raises(ValueError, match="no elements"):
        score_architecture("text", {"subtype": "service_identification", "expected": {}})
    with pytest.raises(ValueError, match="output_format"):
        score_architecture(
            "text",
            {"expected": {"services": [{"name": "S3", "role": "x"}]}, "output_format": "svg"},
        )


def test_a_terse_bullet_list_answer_is_credited() -> None:
    task = _service_task()
    answer = (
        "Here are the services in the diagram:\n\n"
        "- **Amazon API Gateway**: receives the upload requests from mobile and web clients.\n"
        "- **AWS Lambda**: resizes each image and writes the thumbnails.\n"
        "- **Amazon S3**: stores the original uploads and thumbnails.\n"
        "- **Amazon DynamoDB**: holds per-image metadata such as owner and size.\n\n"
        "Overall it is an event-driven pipeline: an upload triggers the processing."
    )
    result = score_architecture(answer, metadata(task), task["reference_answer"])
    assert all(e["facets_found"] for e in result.details["elements"])
    assert result.value >= 0.8


@pytest.mark.parametrize("task", ALL_TASKS, ids=_ids(ALL_TASKS))
def test_keyword_salad_as_a_bullet_list_scores_below_0_35(task: dict[str, Any]) -> None:
    names = element_names(task)
    for response in (
        "\n".join(f"- **{name}**" for name in names),
        "## Components\n" + "\n".join(f"{i}. {name}" for i, name in enumerate(names, 1)),
    ):
        result = score_architecture(response, metadata(task), task["reference_answer"])
        assert result.value < 0.35, result.to_dict()


def test_one_of_several_alternative_services_satisfies_a_facet() -> None:
    task = next(t for t in OUR_TASKS if t["subtype"] == "problem_solving")
    # the recommendation reads "move session state to ElastiCache or DynamoDB"
    response = (
        "Sessions also live on the web servers, and a replaced server loses them, "
        "so keep the sessions in ElastiCache."
    )
    result = score_architecture(response, metadata(task), task["reference_answer"])
    sessions = result.details["elements"][1]
    assert sessions["facets_found"] == ["move session state to ElastiCache or DynamoDB"]
    # a service the issue itself names is not an alternative answer to its recommendation
    salad = "the database runs in a single Availability Zone"
    result = score_architecture(salad, metadata(task), task["reference_answer"])
    assert result.details["elements"][0]["facets_found"] == []
