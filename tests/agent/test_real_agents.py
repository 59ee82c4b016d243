"""Real coding agents end to end: Codex CLI, OpenCode and Claude Code, the published npm
packages (pinned, installed by `make agents` into .tools/agents/), each run through
`plumbline agent run` on the example suite's fix-mean task against a scripted local model
(tests/support/agent_server.py) that answers with tool calls: read mean.py, edit it, run the
tests, then a final message. Each agent must solve the task (the acceptance test passes); its
model calls go through the harness's metering proxy (the server's origin allowed with
`--allow-host`), whose counted tokens must equal what the server sent, and its own tokens, cost
and turns, parsed by its profile from its REAL output, must equal them too. The key the agent
gets is a per-trial credential: the server sees the real one, swapped in by the proxy.

Every trial runs in plumbline's bubblewrap sandbox (the default), with the agent's install
prefix (.tools/agents/node_modules, found from the executable) mounted read-only by the
harness; nothing else of the host is mounted. The network is the default, `isolated`: each
trial has its own network namespace where the only endpoints are the harness's metering proxy
(which forwards to the scripted model on the host's loopback) and, through `--bridge`, a proxy
that forwards nothing (`ProxyTrap`, on a Unix socket): every other host goes to it, and no
agent may try one. What each agent needed besides (no
network used but 127.0.0.1: telemetry, update checks, model-list and plugin downloads off):
- Codex CLI: a HOME file, `--home-file FILE:.codex/config.toml` (the harness sets
  CODEX_HOME to HOME/.codex), naming a model provider of its own (`base_url`, `wire_api =
  "responses"`: SSE at /v1/responses, `env_key`) with analytics, feedback and plugins off (the
  plugin catalog is synced from github.com and chatgpt.com at every start): its built-in
  OpenAI provider ignores `OPENAI_BASE_URL` and tries a WebSocket to api.openai.com; the key
  through `--pass-env`; `--dangerously-bypass-approvals-and-sandbox` (the profile's command),
  because its own sandbox cannot start inside a trial (it refuses to install its sandbox
  helper under a temporary directory, and would nest bubblewrap in plumbline's).
- OpenCode: the whole configuration in `OPENCODE_CONFIG_CONTENT` (an openai-compatible
  provider with `baseURL`, the key as `{env:...}`, per-token prices so it reports a cost), and
  `OPENCODE_DISABLE_AUTOUPDATE`, `OPENCODE_DISABLE_MODELS_FETCH`,
  `OPENCODE_DISABLE_LSP_DOWNLOAD`, `OPENCODE_DISABLE_DEFAULT_PLUGINS`, and
  `npm_config_offline=true` (else it installs `@opencode-ai/plugin` from the npm registry into
  its config directory at every start).
- Claude Code: `ANTHROPIC_BASE_URL` (the Messages API at /v1/messages), `ANTHROPIC_API_KEY`,
  `ANTHROPIC_MODEL`, `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`, `DISABLE_TELEMETRY`,
  `DISABLE_AUTOUPDATER`, `DISABLE_ERROR_REPORTING`; `--allowedTools` for its edit and shell
  tools (`-p` mode denies what is not allowed; `--dangerously-skip-permissions` is refused to
  root).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.agent.helpers import example_data, read_jsonl, write_suite
from tests.support.agent_server import (
    ProxyTrap,
    Reply,
    Script,
    ScriptedAgentServer,
    Served,
    Step,
    ToolCall,
)

from plumbline.cli.main import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
#: Where `make agents` installs the three CLIs (npm --prefix).
AGENTS_PREFIX = ROOT / ".tools" / "agents"
BIN = AGENTS_PREFIX / "node_modules" / ".bin"
INSTALL_TARGET = "make agents"

FIXED = "return sum(values) / len(values)"
BROKEN = "return sum(values) / (len(values) - 1)"
TESTS = "python3 -m unittest -q test_mean"
DONE = "Fixed mean.py: it divided by one too few; the tests pass."
#: The key each agent is given (through --pass-env): the server does not check it.
KEY = "sk-local-scripted-0123456789"

#: Anthropic's list prices of claude-sonnet-4-5 per token (input, output, cache read, cache
#: write), which Claude Code prices its usage with.
SONNET_PRICES = (3e-6, 15e-6, 0.3e-6, 3.75e-6)
#: The per-million-token prices OpenCode is configured with (it multiplies its usage by them).
OPENCODE_COST = {"input": 2.0, "output": 8.0, "cache_read": 0.5, "cache_write": 2.5}


@dataclass(frozen=True)
class RealAgent:
    """One published agent CLI: its profile, executable, script and environment."""

    profile: str
    executable: str
    steps: list[Step]
    env: Callable[[ScriptedAgentServer], dict[str, str]]
    key_variable: str
    #: Files the agent needs in its HOME (path below HOME -> content), given with --home-file.
    home_files: Callable[[ScriptedAgentServer], dict[str, str]] = lambda server: {}

    @property
    def path(self) -> Path:
        return BIN / self.executable


def _codex_env(server: ScriptedAgentServer) -> dict[str, str]:
    return {}


def _codex_home_files(server: ScriptedAgentServer) -> dict[str, str]:
    # $CODEX_HOME/config.toml (the harness sets CODEX_HOME to HOME/.codex): a provider of its
    # own, since the built-in OpenAI one ignores OPENAI_BASE_URL and tries a WebSocket first.
    config = f"""model = "gpt-5.5"
model_provider = "scripted"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

# Else it syncs a plugin catalog from github.com and chatgpt.com at start-up.
[features]
plugins = false

[model_providers.scripted]
name = "Scripted"
base_url = "{server.base_url}"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"
"""
    return {".codex/config.toml": config}


def _opencode_env(server: ScriptedAgentServer) -> dict[str, str]:
    config = {
        "$schema": "https://opencode.ai/config.json",
        "model": "scripted/scripted-model",
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            "scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": server.base_url, "apiKey": "{env:SCRIPTED_API_KEY}"},
                "models": {"scripted-model": {"name": "scripted-model", "cost": OPENCODE_COST}},
            }
        },
    }
    return {
        "OPENCODE_CONFIG_CONTENT": json.dumps(config),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        # Else it installs @opencode-ai/plugin from the npm registry into every config
        # directory at start-up, in the background; offline, that fails with a warning.
        "npm_config_offline": "true",
    }


def _claude_env(server: ScriptedAgentServer) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": server.origin,
        "ANTHROPIC_MODEL": "claude-sonnet-4-5",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


AGENTS = {
    "codex": RealAgent(
        "codex",
        "codex",
        [
            ToolCall("exec_command", {"cmd": "cat mean.py"}),
            # apply_patch is a freeform tool: its input is the patch text, not JSON.
            ToolCall(
                "apply_patch",
                f"*** Begin Patch\n*** Update File: mean.py\n@@\n-    {BROKEN}\n+    {FIXED}\n"
                "*** End Patch\n",
            ),
            ToolCall("exec_command", {"cmd": TESTS}),
            Reply(DONE),
        ],
        _codex_env,
        "SCRIPTED_API_KEY",
        _codex_home_files,
    ),
    "opencode": RealAgent(
        "opencode",
        "opencode",
        [
            ToolCall("read", {"filePath": "mean.py"}),
            ToolCall("edit", {"filePath": "mean.py", "oldString": BROKEN, "newString": FIXED}),
            ToolCall("bash", {"command": TESTS, "description": "Run the tests of mean"}),
            Reply(DONE),
        ],
        _opencode_env,
        "SCRIPTED_API_KEY",
    ),
    "claude-code": RealAgent(
        "claude-code",
        "claude",
        [
            # Claude Code's file tools take absolute paths only.
            ToolCall("Read", {"file_path": "{cwd}/mean.py"}),
            ToolCall(
                "Edit", {"file_path": "{cwd}/mean.py", "old_string": BROKEN, "new_string": FIXED}
            ),
            ToolCall("Bash", {"command": TESTS, "description": "Run the tests of mean"}),
            Reply(DONE),
        ],
        _claude_env,
        "ANTHROPIC_API_KEY",
    ),
}


def installed(agent: RealAgent) -> Path:
    """The agent's executable; a failure (never a skip) naming the make target without it."""
    if not agent.path.is_file() or not os.access(agent.path, os.X_OK):
        pytest.fail(
            f"{agent.profile}: {agent.path.relative_to(ROOT)} is not installed; "
            f"`{INSTALL_TARGET}` installs the pinned agent CLIs (npm) into "
            f"{AGENTS_PREFIX.relative_to(ROOT)}/",
            pytrace=False,
        )
    return agent.path


def fix_mean_suite(directory: Path, env: dict[str, str]) -> Path:
    """The example suite with its fix-mean task alone, once per arm, with the agent's env."""
    task = next(t for t in example_data()["tasks"] if t["id"] == "fix-mean")
    return write_suite(
        directory,
        {"tasks": [task], "repeats": 1, "timeout_seconds": 300, "env": env},
    )


def served_totals(served: list[Served]) -> dict[str, int]:
    return {
        "input": sum(s.usage.input for s in served),
        "cached": sum(s.usage.cached for s in served),
        "cache_write": sum(s.usage.cache_write for s in served),
        "output": sum(s.usage.output for s in served),
    }


def sent_tokens(served: list[Served]) -> dict[str, int]:
    """The tokens the server's answers stated, kept the way records keep them: the uncached
    input apart from cache reads and writes (Chat Completions states no cache writes: they
    stay in its input)."""
    totals = dict.fromkeys(("input", "output", "cache_read", "cache_write"), 0)
    for s in served:
        written = 0 if s.api == "chat" else s.usage.cache_write
        totals["input"] += s.usage.input - s.usage.cached - written
        totals["output"] += s.usage.output
        totals["cache_read"] += s.usage.cached
        totals["cache_write"] += written
    return totals


def agent_environments(out: Path) -> list[str]:
    """Everything the harness saved (the agent's own output included) as text."""
    return [p.read_text(errors="replace") for p in out.rglob("*") if p.is_file()]


def expected_fields(profile: str, served: list[Served]) -> dict[str, Any]:
    """What the profile must parse from the agent's output, from what the server sent it."""
    t = served_totals(served)
    if profile == "codex":
        # OpenAI counts cache reads and writes inside input_tokens; the record keeps them apart.
        return {
            "input_tokens": t["input"] - t["cached"] - t["cache_write"],
            "output_tokens": t["output"],
            "cache_read_tokens": t["cached"],
            "cache_write_tokens": t["cache_write"],
            "total_cost_usd": None,  # Codex reports no cost
            "step_count": None,  # nor how many model requests a turn made
            "tool_call_count": 3,
        }
    if profile == "opencode":
        # Chat completions report no cache writes: the write share stays in the input.
        uncached = t["input"] - t["cached"]
        prices = {k: v / 1e6 for k, v in OPENCODE_COST.items()}
        cost = (
            uncached * prices["input"]
            + t["output"] * prices["output"]
            + t["cached"] * prices["cache_read"]
        )
        return {
            "input_tokens": uncached,
            "output_tokens": t["output"],
            "cache_read_tokens": t["cached"],
            "cache_write_tokens": 0,
            "total_cost_usd": pytest.approx(cost, rel=1e-9),
            "step_count": len(served),
            "tool_call_count": 3,
        }
    uncached = t["input"] - t["cached"] - t["cache_write"]
    price_in, price_out, price_read, price_write = SONNET_PRICES
    cost = (
        uncached * price_in
        + t["output"] * price_out
        + t["cached"] * price_read
        + t["cache_write"] * price_write
    )
    return {
        "input_tokens": uncached,
        "output_tokens": t["output"],
        "cache_read_tokens": t["cached"],
        "cache_write_tokens": t["cache_write"],
        "total_cost_usd": pytest.approx(cost, rel=1e-9),
        "step_count": len(served),
        "tool_call_count": 3,
    }


@pytest.mark.parametrize("name", list(AGENTS))
def test_a_real_agent_solves_the_example_task_through_agent_run(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = AGENTS[name]
    executable = installed(agent)
    monkeypatch.setenv(agent.key_variable, KEY)
    # The README's command: `--agent <profile>` with the CLI on PATH (the harness resolves it
    # there and mounts its install prefix read-only in the sandbox).
    monkeypatch.setenv("PATH", f"{executable.parent}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "results"
    with (
        ProxyTrap(tmp_path / "trap.sock") as trap,
        ScriptedAgentServer(Script(agent.steps)) as server,
    ):
        # Every host but loopback goes through the trap: the agent must try to reach none.
        suite = fix_mean_suite(tmp_path / "suite", {**agent.env(server), **trap.environment()})
        home_files: list[str] = []
        for destination, content in agent.home_files(server).items():
            source = tmp_path / "home-files" / destination
            source.parent.mkdir(parents=True, exist_ok=True)
            source.write_text(content)
            home_files += ["--home-file", f"{source}:{destination}"]
        result = CliRunner().invoke(
            main,
            [
                "agent",
                "run",
                str(suite),
                "--agent",
                agent.profile,
                "--sandbox",
                "bubblewrap",
                "--bridge",
                trap.bridge,
                "--pass-env",
                agent.key_variable,
                "--allow-host",
                f"127.0.0.1:{server.port}",
                *home_files,
                "-o",
                str(out),
                "--json",
            ],
            catch_exceptions=False,
        )
        served = server.scripted()
        everything = list(server.served)
        credentials = list(server.credentials)
        paths = {path for path, _ in server.requests}
    assert result.exit_code == 0, result.output
    records = read_jsonl(out / "records.jsonl")
    logs = "\n".join(
        p.read_text(errors="replace") for p in (out / "logs").rglob("*") if p.is_file()
    )
    assert len(records) == 2, logs[-4000:]
    # Both trials solved the task: the acceptance test passes on the agent's edit.
    for record in records:
        assert record["success"] is True, (record, logs[-4000:])
        assert record["agent"] == agent.profile and not record["infra_failure"]
        assert record["sandbox"] == "bubblewrap" and record["network"] == "isolated"
        diff = (out / record["diff_file"]).read_text()
        assert f"-    {BROKEN}" in diff and f"+    {FIXED}" in diff
        # The agent ran the acceptance command itself once (its output names its commands).
        assert record["acceptance_cmd_count"] == 1
    # Every step of the script was asked for by each trial, in order, on the agent's own API.
    assert [s.step for s in served] == [0, 1, 2, 3] * 2
    assert all(KEY not in line for line in logs.splitlines())
    api = {"codex": "/v1/responses", "opencode": "/v1/chat/completions"}.get(name, "/v1/messages")
    assert api in paths
    # No telemetry, update check, plugin or model-list download: no host but the model's.
    assert trap.requests == []
    # Every call went through the proxy, which put the real key back for the server; the
    # agent itself held a per-trial credential only.
    assert credentials and set(credentials) == {KEY}
    assert all(KEY not in value for value in agent_environments(out))
    # The harness counted every token the server sent (side requests included), and the
    # records' tokens are those counts.
    for record in records:
        assert record["usage_source"] == "metered" and record["duration_source"] == "harness"
    metered = {
        kind: sum(r["metered_usage"][f"{kind}_tokens"] for r in records)
        for kind in ("input", "output", "cache_read", "cache_write")
    }
    assert metered == sent_tokens(everything)
    assert sum(r["metered_usage"]["calls"] for r in records) == len(everything)
    for record in records:
        for kind in ("input", "output", "cache_read", "cache_write"):
            assert record[f"{kind}_tokens"] == record["metered_usage"][f"{kind}_tokens"]
    # Tokens, cost and turns parsed from the agent's real output equal what the server sent,
    # kept beside the metered ones.
    for record, trial in zip(records, (served[:4], served[4:]), strict=True):
        own = record["agent_reported_usage"]
        for field, wanted in expected_fields(name, trial).items():
            value = own[field] if field in own else record[field]
            assert value == wanted, (field, value, wanted)


#: A tool process the model starts that forges Claude Code's final report: it finds the CLI
#: among its ancestors, detaches, and traces the CLI (ptrace, as a process may trace another of
#: its own user's) to stop it at its exit, when the real `result` line is written and its
#: standard output still open; there it appends a far cheaper result and lets the CLI end. The
#: profile takes the last result. (Watching the output for the `result` line instead raced
#: twice: the output is a pipe the harness drains, so the watcher saw the line only when it
#: read it first, and the CLI could exit before the watcher stopped it.)
FORGER = r"""
import ctypes, json, os, sys
pid = os.getppid()
while pid > 1:
    if open(f"/proc/{pid}/comm").read().strip() in ("claude", "node"):
        break
    pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
if os.fork():
    sys.exit(0)
os.setsid()
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
out = os.open(f"/proc/{pid}/fd/1", os.O_WRONLY | os.O_APPEND)
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_CONT, PTRACE_DETACH, PTRACE_SEIZE = 7, 17, 0x4206
PTRACE_O_TRACEEXIT, PTRACE_EVENT_EXIT, WALL = 0x40, 6, 0x40000000
if libc.ptrace(PTRACE_SEIZE, pid, None, PTRACE_O_TRACEEXIT) != 0:
    sys.exit(1)
forged = {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 900,
          "num_turns": 1, "result": "done", "session_id": "forged", "total_cost_usd": 0.000001,
          "usage": {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0}}
while True:
    _, status = os.waitpid(pid, WALL)
    if not os.WIFSTOPPED(status):
        break  # gone without the exit stop: nothing to forge
    if status >> 16 == PTRACE_EVENT_EXIT:
        os.write(out, (json.dumps(forged) + "\n").encode())
        libc.ptrace(PTRACE_DETACH, pid, None, None)
        break
    # Any other stop: a signal on its way to the CLI, passed on (an event stop: none).
    sig = 0 if status >> 16 else os.WSTOPSIG(status)
    libc.ptrace(PTRACE_CONT, pid, None, sig)
"""


def test_claude_code_forging_its_final_report_changes_no_counted_usage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = AGENTS["claude-code"]
    executable = installed(agent)
    monkeypatch.setenv(agent.key_variable, KEY)
    monkeypatch.setenv("PATH", f"{executable.parent}{os.pathsep}{os.environ['PATH']}")
    steps: list[Step] = [
        ToolCall("Bash", {"command": f"python3 - <<'EOF'\n{FORGER}\nEOF", "description": "x"}),
        *agent.steps,
    ]
    out = tmp_path / "results"
    with ProxyTrap() as trap, ScriptedAgentServer(Script(steps)) as server:
        suite = fix_mean_suite(tmp_path / "suite", {**agent.env(server), **trap.environment()})
        arguments = ["agent", "run", str(suite), "--agent", agent.profile, "-o", str(out)]
        arguments += ["--pass-env", agent.key_variable, "--allow-host", f"127.0.0.1:{server.port}"]
        result = CliRunner().invoke(main, [*arguments, "--json"], catch_exceptions=False)
        everything = list(server.served)
    assert result.exit_code == 0, result.output
    records = read_jsonl(out / "records.jsonl")
    assert len(records) == 2
    for record in records:
        stdout = (out / "logs" / record["run_id"] / "agent.stdout").read_text()
        # The counted usage is the proxy's whatever the agent's output says.
        assert record["usage_source"] == "metered"
        assert record["input_tokens"] == record["metered_usage"]["input_tokens"] > 3
        assert record["total_cost_usd"] != 0.000001
        # The forgery landed after the real report: the agent's report is the forged one,
        # and the record flags the difference.
        lines = stdout.rstrip().splitlines()
        assert lines[-1].startswith('{"type": "result"'), lines[-3:]
        assert json.loads(lines[-2])["type"] == "result", lines[-2:]  # the real one
        own = record["agent_reported_usage"]
        assert own["input_tokens"] == 3 and own["output_tokens"] == 4
        assert own["total_cost_usd"] == 0.000001
        assert record["usage_discrepancy_flagged"] is True
        assert record["usage_discrepancy"] < -0.99
    metered = {
        kind: sum(r["metered_usage"][f"{kind}_tokens"] for r in records)
        for kind in ("input", "output", "cache_read", "cache_write")
    }
    assert metered == sent_tokens(everything)
