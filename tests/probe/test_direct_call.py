"""The direct provider call of `openai-api/...` models (lean or not) sends the requests and
gives the records `Model.generate` gives."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.probe.helpers import FAKE_KEY, model_name
from tests.support.openai_server import FAULTS, Latency, ModelProfile

from plumbline.probe.caller import InspectCaller
from plumbline.probe.runner import run_probe
from plumbline.probe.settings import ProbeSettings, Prompt

ROOT = Path(__file__).resolve().parents[2]
# what differs between two runs of the same trials whatever the path (and the path itself)
_MEASURED = ("latency_seconds", "ttft_seconds", "timestamp", "call_path")


def _records(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in _MEASURED} for r in records]


# (direct, lean): the lean request path, the provider's own request path, Model.generate
_PATHS = ((True, True), (True, False), (False, False))
# (direct, lean, PLUMBLINE_COMPAT, the call path taken): the fast paths, and the fast path asked
# for with adapters forced to their public paths (plumbline.compat)
_RUNS = (
    (True, True, "", "prepared_request"),
    (True, False, "", "inspect_provider"),
    (False, False, "", "model_generate"),
    (True, True, "public:openai", "inspect_provider"),
    (True, True, "public:inspect", "model_generate"),
    (True, True, "public", "model_generate"),
)


@pytest.mark.slow
def test_every_call_path_sends_and_writes_identical_records(
    server_factory: Any, tmp_path: Path
) -> None:
    faults = ["ok", *FAULTS, "ok"]
    journals: dict[str, list[dict[str, Any]]] = {}
    bodies: dict[str, list[Any]] = {}
    headers: dict[str, list[dict[str, str]]] = {}
    paths: dict[str, set[str]] = {}
    for direct, lean, compat, path in _RUNS:
        run = f"{int(direct)}{int(lean)}-{compat or 'fast'}"
        # a fresh server per path, so every path sees the same fault sequence (concurrency 1:
        # the k-th request gets faults[k])
        profile = ModelProfile(
            latency=Latency("constant", 0.01), faults=faults, hang_seconds=30, api_key=FAKE_KEY
        )
        server = server_factory({"m": profile})
        out = tmp_path / f"direct-{run}.jsonl"
        # each path in a fresh interpreter, as the CLI runs it (the script checks the path is
        # really taken)
        env = {
            **os.environ,
            "LOCAL_BASE_URL": server.base_url,
            "LOCAL_API_KEY": FAKE_KEY,
            "PLUMBLINE_COMPAT": compat,
        }
        arguments = [out, model_name("m"), len(faults), int(direct), int(lean), path]
        finished = subprocess.run(
            [sys.executable, "-m", "tests.support.probe_path", *map(str, arguments)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert finished.returncode == 0, finished.stderr[-2000:]
        requests = server.requests_for("m")
        assert len(requests) == len(faults)
        assert all(request.authorized for request in requests)
        bodies[run] = sorted((r.body for r in requests), key=lambda b: b["seed"])
        in_order = sorted(requests, key=lambda r: r.body["seed"])
        # the host names each path's own server; Inspect's provider adds its request id
        # (`x-irid`, for its transcript) on the provider's paths
        headers[run] = [
            {**{k: v for k, v in r.headers.items() if k != "x-irid"}, "host": "server"}
            for r in in_order
        ]
        journals[run] = sorted(_records(out), key=lambda r: r["trial"])
        paths[run] = {json.loads(line)["call_path"] for line in out.read_text().splitlines()}
        assert paths[run] == {path}, run
    # the server received the same requests, and the journals hold the same records
    first, *others = journals
    for run in others:
        assert bodies[run] == bodies[first], run
        assert headers[run] == headers[first], run
        assert journals[run] == journals[first], run
    assert {"authorization", "user-agent", "x-stainless-retry-count"} <= set(headers[first][0])
    classes = {r["error_class"] for r in journals[first]}
    # the comparison covers answers and every kind of failure
    assert None in classes and {"TimeoutError", "ServerError", "ContentFilterError"} <= classes
    assert "MalformedResponseError" in classes and "RateLimitError" in classes
    assert "ConnectionError" in classes and "InvalidRequestError" in classes


def test_a_streamed_probe_goes_through_model_generate() -> None:
    settings = ProbeSettings(
        models=("openai-api/local/m",), prompts=(Prompt("p", "hi"),), stream=True
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LOCAL_BASE_URL", "http://127.0.0.1:9/v1")
        patch.setenv("LOCAL_API_KEY", FAKE_KEY)
        caller = InspectCaller(settings)
    # time to first token is measured by Model.generate's stream observer only
    assert caller._direct == {"openai-api/local/m": [None]}


def test_high_concurrency_spreads_calls_over_clients_of_32_connections() -> None:
    settings = ProbeSettings(
        models=("openai-api/local/m",), prompts=(Prompt("p", "hi"),), concurrency=100
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PLUMBLINE_COMPAT", raising=False)  # the fast path, whatever the run's
        patch.setenv("LOCAL_BASE_URL", "http://127.0.0.1:9/v1")
        patch.setenv("LOCAL_API_KEY", FAKE_KEY)
        caller = InspectCaller(settings)
    models = caller._models["openai-api/local/m"]
    # four clients, each with its own connection pool, all on the lean direct path
    assert len(models) == 4
    assert len({id(model.api.http_client) for model in models}) == 4
    assert all(call is not None and call.lean for call in caller._direct["openai-api/local/m"])
    assert caller.call_path("openai-api/local/m") == "prepared_request"


def _completion(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "An answer."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
    }
    for path, value in changes.items():
        *parents, leaf = path.split("__")
        target: Any = body
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[leaf] = value
    return body


# plain answers (read directly) and answers that are not (read by the SDK and Inspect)
_ANSWERS = {
    "plain": _completion(),
    "length": _completion(choices__0__finish_reason="length"),
    "no finish reason": _completion(choices__0__finish_reason=None),
    "odd finish reason": _completion(choices__0__finish_reason="eos_token"),
    "empty text": _completion(choices__0__message__content=""),
    "no usage": _completion(usage=None),
    "cached tokens": _completion(
        usage__prompt_tokens_details={"cached_tokens": 4, "audio_tokens": 0},
        usage__completion_tokens_details={"reasoning_tokens": 0},
    ),
    "think tag": _completion(choices__0__message__content="<think>hmm</think>The answer."),
    "reasoning field": _completion(choices__0__message__reasoning_content="hmm"),
    "refusal": _completion(choices__0__message__refusal="I cannot."),
    "null content": _completion(choices__0__message__content=None),
    "tool call": _completion(
        choices__0__message__tool_calls=[
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ]
    ),
    "logprobs": _completion(choices__0__logprobs={"content": []}),
    "vllm prompt logprobs": _completion(prompt_logprobs=None),
    "two choices": _completion(
        choices=[
            {"index": 1, "message": {"role": "assistant", "content": "b"}, "finish_reason": "stop"},
            {"index": 0, "message": {"role": "assistant", "content": "a"}, "finish_reason": "stop"},
        ]
    ),
}
_PLAIN = {
    "plain",
    "length",
    "no finish reason",
    "odd finish reason",
    "empty text",
    "no usage",
    "cached tokens",
}


@pytest.mark.parametrize("name", list(_ANSWERS))
def test_a_plain_answer_is_read_as_inspect_reads_it(name: str) -> None:
    from inspect_ai.model._model_output import as_stop_reason
    from inspect_ai.model._openai import chat_choices_from_openai, model_output_from_openai
    from openai._models import construct_type
    from openai.types.chat import ChatCompletion

    from plumbline.probe.answers import Answer, plain_answer

    body = _ANSWERS[name]
    completion = construct_type(type_=ChatCompletion, value=json.loads(json.dumps(body)))
    expected = Answer.of(
        model_output_from_openai(completion, chat_choices_from_openai(completion, []))
    )
    read = plain_answer(body, as_stop_reason)
    assert (read is not None) == (name in _PLAIN)
    if read is not None:
        assert read == expected


@pytest.mark.slow
def test_an_eval_run_earlier_in_the_process_does_not_turn_retries_on(
    server_factory: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inspect's model calls inherit the last eval's retries and timeout from a context
    variable it leaves set; a probe's calls (on every path) keep retries off."""
    from inspect_ai import Task, eval_set
    from inspect_ai.dataset import Sample

    faults = ["500", "429", "503", "ok"]
    profiles = {
        "task": ModelProfile(latency=Latency("constant", 0.01), api_key=FAKE_KEY),
        "m": ModelProfile(latency=Latency("constant", 0.01), faults=faults * 4, api_key=FAKE_KEY),
    }
    server = server_factory(profiles)
    monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
    monkeypatch.setenv("LOCAL_API_KEY", FAKE_KEY)
    done, [log] = eval_set(
        Task(dataset=[Sample(input="hi")]),
        model=model_name("task"),
        log_dir=str(tmp_path / "logs"),
        display="none",
        max_retries=5,
        timeout=30,
    )
    assert done and log.status == "success"
    settings = ProbeSettings(
        models=(model_name("m"),),
        prompts=(Prompt("p", "Explain."),),
        trials=len(faults),
        concurrency=1,
        timeout=1.0,
    )
    # and on the public path, where the probe cannot reset Inspect's active config: its calls
    # pass their whole config instead
    for direct, lean, compat in [*((d, le, "") for d, le in _PATHS), (True, True, "public")]:
        monkeypatch.setenv("PLUMBLINE_COMPAT", compat)
        out = tmp_path / f"after-eval-{direct}-{lean}-{compat}.jsonl"
        caller = InspectCaller(settings, direct=direct, lean=lean)
        summary = asyncio.run(run_probe(settings, out, caller=caller))
        records = _records(out)
        assert summary.completed == len(faults)
        # every call was made once: the server faults are recorded as such, not retried away
        assert sorted(str(r["error_class"]) for r in records) == sorted(
            ["ServerError", "RateLimitError", "ServerError", "None"]
        ), (direct, lean, compat)
        assert all(r["attempts"] == 1 for r in records)
    assert len(server.requests_for("m")) == 4 * len(faults)
