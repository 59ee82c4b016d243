"""`plumbline run`: suites through Inspect's eval_set against a local server; resume; checks."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.support.openai_server import Latency, ModelProfile, OpenAIServer

from plumbline.cli.main import main
from plumbline.leaderboard import read_leaderboard, recompute_overall
from plumbline.suites.registry import resolve_suite

# Inspect's own openai-api provider, pointed at a real local server: any Inspect model name
# works, and these two do without a provider account.
ALPHA = "openai-api/local/alpha"
BETA = "openai-api/local/beta"


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIServer]:
    """One server for the module: Inspect memoizes a model (and its base URL) per process."""
    quick = Latency("constant", 0.01)
    profiles = {
        "alpha": ModelProfile(latency=quick, responses=["Default output from the server."]),
        "beta": ModelProfile(latency=quick, responses=["Something else entirely."]),
        "blank": ModelProfile(latency=quick, responses=["I do not know."]),
        # The first request fails with an error Inspect does not retry: an interrupted run.
        "flaky": ModelProfile(
            latency=quick, responses=["Default output from the server."], faults=["400"]
        ),
        "refuses": ModelProfile(
            latency=quick, responses=["Default output from the server."], faults=["400"]
        ),
    }
    with OpenAIServer(profiles) as running, pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOCAL_BASE_URL", running.base_url)
        patch.setenv("LOCAL_API_KEY", "test-key")
        yield running


TASK_FILE = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def echo_check(size: int = 3) -> Task:
    samples = [
        Sample(id=f"q{i}", input=f"Say the default output ({i}).", target="Default output")
        for i in range(size)
    ]
    return Task(dataset=samples, solver=generate(), scorer=includes())


@task(name="renamed_task")
def another() -> Task:
    return Task(dataset=[Sample(input="hi", target="never said")], scorer=includes())
"""

SUITE = """
[suite]
name = "my-suite"

[[category]]
key = "echo"
name = "Echo"
description = "Does the model say the expected words."
weight = 0.75
scoring = "binary"
tasks = ["{echo}"]
scorer = "includes"

[[category]]
key = "other"
name = "Other"
description = "A task that always fails."
weight = 0.25
scoring = "binary"
tasks = ["{other}"]
scorer = "includes"
"""


def write_suite(tmp_path: Path, echo: str = "evals/mine.py@echo_check", other: str = "") -> Path:
    (tmp_path / "evals").mkdir(exist_ok=True)
    (tmp_path / "evals" / "mine.py").write_text(TASK_FILE, encoding="utf-8")
    path = tmp_path / "suite.toml"
    path.write_text(
        SUITE.format(echo=echo, other=other or "evals/mine.py@renamed_task"), encoding="utf-8"
    )
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["run", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def eval_logs(log_dir: Path) -> list[Path]:
    return sorted(log_dir.glob("*.eval"))


def test_user_suite_runs_resumes_and_adds_a_model(tmp_path: Path, server: OpenAIServer) -> None:
    suite = write_suite(tmp_path)
    logs = tmp_path / "logs"
    common = [str(suite), "--log-dir", str(logs), "--display", "none", "--retry-attempts", "0"]
    code, stdout, stderr = invoke(*common, "--model", ALPHA, "--json")
    assert code == 0, stderr
    document = json.loads(stdout)
    [entry] = document["models"]
    assert entry["model"] == ALPHA
    assert entry["echo"] == 1.0 and entry["other"] == 0.0
    assert entry["overall"] == pytest.approx(0.75)
    assert len(eval_logs(logs)) == 2
    written = read_leaderboard(logs / "leaderboard.json")
    [saved] = written.models
    assert saved.overall == pytest.approx(0.75) == recompute_overall(written, saved)

    # The same command again resumes: nothing is re-run.
    before = eval_logs(logs)
    served = len(server.requests_for("alpha"))
    code, stdout, stderr = invoke(*common, "--model", ALPHA, "--json")
    assert code == 0, stderr
    assert eval_logs(logs) == before
    assert [m["echo"] for m in json.loads(stdout)["models"]] == [1.0]  # reused logs count
    assert len(server.requests_for("alpha")) == served

    # Adding a model runs only its two tasks; the leaderboard has both models.
    code, stdout, stderr = invoke(*common, "--model", ALPHA, "--model", BETA, "--json")
    assert code == 0, stderr
    assert len(eval_logs(logs)) == 4
    assert set(before) < set(eval_logs(logs))
    assert len(server.requests_for("alpha")) == served  # only beta ran
    scores = {m["model"]: m["echo"] for m in json.loads(stdout)["models"]}
    assert scores == {ALPHA: 1.0, BETA: 0.0}


def test_an_interrupted_run_resumes_when_run_again(tmp_path: Path, server: OpenAIServer) -> None:
    suite = write_suite(tmp_path)
    logs = tmp_path / "logs"
    command = [str(suite), "--model", "openai-api/local/flaky", "--log-dir", str(logs)]
    command += ["--display", "none", "--retry-attempts", "0", "--fail-on-error", "--json"]
    code, _, stderr = invoke(*command)
    assert code == 1
    assert "did not finish; run the same command again to resume them" in stderr
    assert (logs / "leaderboard.json").is_file()  # written from what finished

    code, stdout, stderr = invoke(*command)
    assert code == 0, stderr
    [entry] = json.loads(stdout)["models"]
    assert (entry["echo"], entry["other"]) == (1.0, 0.0)


def test_limit_and_epochs_reach_user_tasks(tmp_path: Path, server: OpenAIServer) -> None:
    suite = write_suite(tmp_path)
    logs = tmp_path / "logs"
    code, _, stderr = invoke(
        str(suite), "--model", ALPHA, "--log-dir", str(logs), "--display", "none",
        "--retry-attempts", "0", "--limit", "2", "--epochs", "2",
    )  # fmt: skip
    assert code == 0, stderr
    from inspect_ai.log import read_eval_log

    echo = [read_eval_log(str(p)) for p in eval_logs(logs)]
    [log] = [log for log in echo if log.eval.task == "echo_check"]
    assert log.samples is not None and len(log.samples) == 4  # 2 samples × 2 epochs
    assert log.eval.config.epochs == 2


def test_sa_bench_runs_all_three_tasks(tmp_path: Path, server: OpenAIServer) -> None:
    logs = tmp_path / "logs"
    code, stdout, stderr = invoke(
        "sa-bench", "--model", "openai-api/local/blank", "--limit", "1", "--seed", "5",
        "--log-dir", str(logs), "--json",
    )  # fmt: skip
    assert code == 0, stderr
    document = json.loads(stdout)  # no --display: with --json, Inspect's display stays off
    [entry] = document["models"]
    # The model's fixed reply answers nothing: every category is scored, and scores 0.
    for key in ("practice_exam", "architecture_design", "cdk_synth"):
        assert entry[key] == 0.0, key
    assert set(document["_metadata"]["categories"]) == {
        "practice_exam",
        "architecture_design",
        "cdk_synth",
    }
    from inspect_ai.log import read_eval_log

    tasks = {read_eval_log(str(p)).eval.task: read_eval_log(str(p)) for p in eval_logs(logs)}
    assert set(tasks) == {"practice_exam", "architecture_design", "cdk_synth"}
    exam = tasks["practice_exam"].eval
    assert exam.task_args["seed"] == 5 and exam.task_args["limit"] == 1
    assert exam.metadata is not None and exam.metadata["choice_shuffle_seed"] == 5
    assert (logs / "leaderboard.json").is_file()


def test_missing_api_key_is_one_line_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("AZUREAI_OPENAI_API_KEY", raising=False)
    logs = tmp_path / "logs"
    code, stdout, stderr = invoke("sa-bench", "--model", "openai/gpt-4o", "--log-dir", str(logs))
    assert code == 2
    assert stdout == ""
    [line] = stderr.splitlines()
    assert line.startswith("error: model 'openai/gpt-4o': ")
    assert "OPENAI_API_KEY" in line and "[bold]" not in line
    assert not logs.exists()


def test_unknown_provider_and_judge_are_checked_too(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    code, _, stderr = invoke(
        "sa-bench", "--model", "mockllm/model", "--model", "nosuch/model",
        "--judge", "alsonot/judge", "--log-dir", str(logs),
    )  # fmt: skip
    assert code == 2
    assert stderr.splitlines() == [
        "error: model 'nosuch/model': Model API nosuch of model 'nosuch/model' not recognized.",
        "error: model 'alsonot/judge': Model API alsonot of model 'alsonot/judge' not recognized.",
    ]
    assert not logs.exists()


def test_bad_task_references_are_located(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, echo="evals/missing.py@x", other="evals/mine.py@nope")
    code, _, stderr = invoke(str(suite), "--model", "mockllm/model")
    assert code == 2
    lines = stderr.splitlines()
    assert lines[0].startswith(f"error: {suite}: category[0].tasks[0]: task file ")
    assert lines[0].endswith("missing.py does not exist")
    assert lines[1] == (
        f"error: {suite}: category[1].tasks[0]: {(tmp_path / 'evals' / 'mine.py')} defines no "
        "@task named 'nope' (found: echo_check, renamed_task)"
    )
    suite = write_suite(tmp_path, echo="echo_*")
    code, _, stderr = invoke(str(suite), "--model", "mockllm/model")
    assert code == 2
    assert "is a pattern, which names no task to run" in stderr


def test_judge_needs_the_architecture_task(tmp_path: Path) -> None:
    suite = write_suite(tmp_path)
    code, _, stderr = invoke(str(suite), "--model", "mockllm/model", "--judge", "mockllm/model")
    assert code == 2
    assert "--judge scores the architecture_design task" in stderr


def test_registry_resolves_files_builtins_and_the_judge_scorer(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, echo="evals/mine.py")
    resolved = resolve_suite(suite)
    assert [(ref.name, ref.builtin) for ref in resolved.tasks] == [
        ("echo_check", False),
        ("renamed_task", False),
    ]
    assert resolved.suite.category("echo").tasks == ("echo_check", "renamed_task")
    assert resolved.tasks[0].spec == f"{(tmp_path / 'evals' / 'mine.py').resolve()}@echo_check"
    # Both tasks feed "echo", and renamed_task also feeds "other": it runs once.
    assert resolved.tasks[1].categories == ("echo", "other")

    builtin = resolve_suite("sa-bench")
    assert [ref.name for ref in builtin.tasks] == [
        "practice_exam",
        "architecture_design",
        "cdk_synth",
    ]
    judged = builtin.with_judge()
    assert judged.suite.category("architecture_design").scorer == "llm_judge_scorer"
    assert builtin.suite.category("architecture_design").scorer == "architecture_scorer"
    assert judged.suite.category("practice_exam").scorer == "choice"


def test_sa_bench_tasks_can_join_a_user_suite(tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(
        textwrap.dedent(
            """
            [suite]
            name = "exam-only"
            [[category]]
            key = "practice_exam"
            name = "Practice Exam"
            description = "SA Bench's exam on its own."
            weight = 1.0
            scoring = "binary"
            tasks = ["practice_exam"]
            scorer = "choice"
            """
        ),
        encoding="utf-8",
    )
    [ref] = resolve_suite(path).tasks
    assert ref.builtin and ref.spec == "plumbline.suites.sa_bench.tasks:practice_exam"


def test_an_errored_sample_is_recorded_and_bounded_options_reach_inspect(
    tmp_path: Path, server: OpenAIServer
) -> None:
    # the first request fails with a 400 (not retried): by default the sample is recorded as
    # an error and the task finishes, rather than the whole task failing
    suite = write_suite(tmp_path)
    logs = tmp_path / "logs"
    code, stdout, stderr = invoke(
        str(suite), "--model", "openai-api/local/refuses", "--log-dir", str(logs),
        "--display", "none", "--retry-attempts", "0", "--max-tokens", "64", "--timeout", "30",
        "--max-retries", "1", "--json",
    )  # fmt: skip
    assert code == 0, stderr
    [entry] = json.loads(stdout)["models"]
    from inspect_ai.log import read_eval_log

    run_logs = [read_eval_log(str(p)) for p in eval_logs(logs)]
    assert [log.status for log in run_logs] == ["success", "success"]
    errored = [s for log in run_logs for s in (log.samples or []) if s.error is not None]
    assert (
        len(errored) == 1 == entry["counts"]["echo"]["errors"] + entry["counts"]["other"]["errors"]
    )
    for log in run_logs:
        config = log.plan.config
        assert (config.max_tokens, config.attempt_timeout, config.max_retries) == (64, 30, 1)


SHUFFLING_TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def shuffled(size: int = 12) -> Task:
    samples = [
        Sample(id=f"q{i:02d}", input=f"Say the default output ({i}).", target="Default output")
        for i in range(size)
    ]
    dataset = MemoryDataset(samples)
    dataset.shuffle()  # no seed: a third-party task's order differs on every load
    return Task(dataset=dataset, solver=generate(), scorer=includes())
"""


def test_limit_draws_the_same_sample_ids_for_every_model(
    tmp_path: Path, server: OpenAIServer
) -> None:
    (tmp_path / "shuffled.py").write_text(SHUFFLING_TASK, encoding="utf-8")
    suite = tmp_path / "suite.toml"
    suite.write_text(
        '[suite]\nname = "s"\n[[category]]\nkey = "echo"\nname = "Echo"\ndescription = "d"\n'
        'weight = 1.0\nscoring = "binary"\ntasks = ["shuffled.py@shuffled"]\nscorer = "includes"\n',
        encoding="utf-8",
    )
    logs = tmp_path / "logs"
    common = [str(suite), "--log-dir", str(logs), "--display", "none", "--limit", "4"]
    code, _, stderr = invoke(*common, "--model", ALPHA, "--model", BETA)
    assert code == 0, stderr
    code, stdout, stderr = invoke(*common, "--model", ALPHA, "--model", BETA, "--model",
                                  "openai-api/local/blank", "--json")  # fmt: skip
    assert code == 0, stderr
    from inspect_ai.log import read_eval_log

    from plumbline.suites.registry import choose_sample_ids

    expected = choose_sample_ids([f"q{i:02d}" for i in range(12)], 4, 42)
    chosen = {}
    for path in eval_logs(logs):
        log = read_eval_log(str(path))
        assert log.samples is not None
        chosen[log.eval.model] = sorted(str(sample.id) for sample in log.samples)
    assert len(chosen) == 3
    assert all(ids == expected for ids in chosen.values()), chosen
    document = json.loads(stdout)
    assert [p for p in document["problems"] if p["kind"] == "unpaired_questions"] == []


def test_choose_sample_ids_is_seeded_and_order_free() -> None:
    from plumbline.suites.registry import choose_sample_ids

    ids: list[int | str] = [5, 3, "b", 1, "a", 4, 2]
    first = choose_sample_ids(ids, 3, 7)
    assert first == choose_sample_ids(list(reversed(ids)), 3, 7)
    assert len(first) == 3 and set(first) <= set(ids)
    assert choose_sample_ids(ids, 10, 7) == [1, 2, 3, 4, 5, "a", "b"]
    draws = {tuple(choose_sample_ids(ids, 3, seed)) for seed in range(20)}
    assert len(draws) > 1  # the seed matters
