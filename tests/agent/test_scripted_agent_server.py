"""The scripted model of the real-agent test (tests/support/agent_server.py), over real HTTP:
each API's streamed answer, the step read from the conversation, side requests, `{cwd}`, and the
proxy trap. Fast: no agent CLI involved."""

from __future__ import annotations

import http.client
import json
import urllib.request
from typing import Any

import pytest
from tests.support.agent_server import ProxyTrap, Reply, Script, ScriptedAgentServer, ToolCall

SCRIPT = Script(
    [
        ToolCall("shell", {"cmd": "cat {cwd}/mean.py"}),
        ToolCall("apply_patch", "*** Begin Patch\n*** End Patch\n"),
        Reply("done"),
    ]
)


def post(server: ScriptedAgentServer, path: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST a JSON body; the `data:` payloads of the event stream (or the JSON answer)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    response = connection.getresponse()
    assert response.status == 200
    text = response.read().decode()
    connection.close()
    if response.getheader("content-type") == "application/json":
        return [json.loads(text)]
    return [
        json.loads(line[len("data: ") :])
        for line in text.splitlines()
        if line.startswith("data: ") and line != "data: [DONE]"
    ]


def test_responses_api_steps_follow_the_tool_results_in_the_request() -> None:
    tools = [{"type": "function", "name": "shell"}, {"type": "custom", "name": "apply_patch"}]
    system = {"type": "message", "role": "developer", "content": "<cwd>/work/trial</cwd>"}
    with ScriptedAgentServer(SCRIPT) as server:
        first = post(server, "/v1/responses", {"model": "m", "tools": tools, "input": [system]})
        output = {"type": "function_call_output", "call_id": "call_0000", "output": "x"}
        second = post(
            server, "/v1/responses", {"model": "m", "tools": tools, "input": [system, output]}
        )
        served = server.scripted()
    call = next(e["item"] for e in first if e["type"] == "response.output_item.done")
    assert call["type"] == "function_call" and call["name"] == "shell"
    assert json.loads(call["arguments"]) == {"cmd": "cat /work/trial/mean.py"}
    patch = next(e["item"] for e in second if e["type"] == "response.output_item.done")
    assert patch["type"] == "custom_tool_call" and patch["input"].startswith("*** Begin Patch")
    usage = second[-1]["response"]["usage"]
    assert second[-1]["type"] == "response.completed"
    assert usage["input_tokens"] == 1100 and usage["input_tokens_details"]["cached_tokens"] == 800
    assert [s.step for s in served] == [0, 1]


def test_chat_completions_stream_a_tool_call_and_side_requests_get_text() -> None:
    script = Script([ToolCall("bash", {"command": "ls"}), Reply("done")])
    tools = [{"type": "function", "function": {"name": "bash"}}]
    with ScriptedAgentServer(script) as server:
        title = post(server, "/v1/chat/completions", {"model": "m", "stream": True, "messages": []})
        chunks = post(
            server,
            "/v1/chat/completions",
            {"model": "m", "stream": True, "tools": tools, "messages": [{"role": "user"}]},
        )
        done = post(
            server,
            "/v1/chat/completions",
            {"model": "m", "tools": tools, "messages": [{"role": "user"}, {"role": "tool"}]},
        )
        served = list(server.served)
    assert title[0]["choices"][0]["delta"]["content"] == SCRIPT.side_reply
    call = chunks[0]["choices"][0]["delta"]["tool_calls"][0]
    assert call["function"]["name"] == "bash" and chunks[1]["choices"][0]["finish_reason"]
    assert chunks[-1]["usage"]["prompt_tokens_details"]["cached_tokens"] == 800
    assert done[0]["choices"][0]["message"]["content"] == "done"
    assert [s.step for s in served] == [None, 0, 1]


def test_messages_api_fills_the_working_directory_and_splits_cache_tokens() -> None:
    script = Script([ToolCall("Read", {"file_path": "{cwd}/mean.py"}), Reply("done")])
    body = {
        "model": "claude-sonnet-4-5",
        "stream": True,
        "system": [{"type": "text", "text": "env\n - Primary working directory: /tmp/t/ws\n"}],
        "tools": [{"name": "Read"}],
        "messages": [{"role": "user", "content": "fix it"}],
    }
    with ScriptedAgentServer(script) as server:
        events = post(server, "/v1/messages", body)
    start = events[0]["message"]["usage"]
    assert start["input_tokens"] == 1000 - 800 - 50 and start["cache_read_input_tokens"] == 800
    assert start["cache_creation_input_tokens"] == 50
    delta = next(e["delta"] for e in events if e["type"] == "content_block_delta")
    assert json.loads(delta["partial_json"]) == {"file_path": "/tmp/t/ws/mean.py"}
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_a_step_that_needs_the_working_directory_fails_without_one() -> None:
    script = Script([ToolCall("Read", {"file_path": "{cwd}/mean.py"})])
    body = {"model": "m", "tools": [{"name": "Read"}], "messages": []}
    with ScriptedAgentServer(script) as server, pytest.raises(ValueError, match="directory"):
        server.answer("messages", body)


def test_the_proxy_trap_records_and_forwards_nothing() -> None:
    with ProxyTrap() as trap:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": trap.url}))
        with pytest.raises(OSError):
            opener.open("http://telemetry.invalid/v1/event", timeout=10)
    assert trap.requests == ["GET http://telemetry.invalid/v1/event HTTP/1.1"]
