"""A stand-in for `claude -p PROMPT --output-format json|stream-json`, run as a real process.

It works in its current directory like a coding agent: with a `HINT.md` there it applies the
fixes the hint names ("replace `X` with `Y` in `FILE`") and reports a short, cheap session;
without one it makes an unhelpful edit and reports a long, expensive one. It prints Claude
Code's documented result shape (usage, cost, turns, session id; tool calls as `tool_use`
blocks in stream-json). Test behaviours are switched on by environment variables:

- FAKE_REPORT=1: write `.agent-report.json` (what the agent could see) into the workspace;
- FAKE_CHEAT=1: also rewrite the protected test files so they pass;
- FAKE_SIGNAL_DIR=DIR: write DIR/<pid>.started (with the pid) when starting;
- FAKE_BLOCK_AT=N: with FAKE_SIGNAL_DIR, the N-th agent started there never finishes (it
  first starts a `sleep` in its process group and writes its pid to DIR/<pid>.child);
- FAKE_GRANDCHILD_PIDFILE=PATH: start a grandchild `sleep` and write its pid there;
- FAKE_IGNORE_TERM=1: ignore SIGTERM (the harness must escalate to SIGKILL);
- FAKE_SLEEP=SECONDS: sleep that long before answering (past a time limit, on request);
- FAKE_BAD_USAGE=1: report a negative input token count and a string cost (malformed output);
- FAKE_SECRET_NAME=NAME: print the value of $NAME (a passed-through key) on stdout and stderr;
- FAKE_TOOL_INPUT=TEXT: in stream-json, give every `tool_use` block this string as `input`;
- FAKE_STDOUT=TEXT: print TEXT instead of the result (output of an unexpected shape);
- FAKE_SHELL=COMMAND: run a shell command in the workspace first (an agent tampering with its
  `.git`, its workspace, or the directories above it).
- FAKE_MODEL_CALL=1: make one Anthropic Messages call to $ANTHROPIC_BASE_URL (the metering
  proxy's route, in a metered trial) before answering.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

FIX = re.compile(r"replace `([^`]+)` with `([^`]+)` in `([^`]+)`")


def call_model() -> None:
    """One Messages call (not streamed) to the base URL the agent was given."""
    body = {
        "model": "claude-fake",
        "max_tokens": 16,
        "messages": [{"role": "user", "content": "hi"}],
    }
    request = urllib.request.Request(
        os.environ["ANTHROPIC_BASE_URL"].rstrip("/") + "/v1/messages",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-api-key": "fake-agent-key"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        json.loads(response.read())


def observe(prompt: str) -> dict[str, object]:
    here = Path.cwd()
    ancestors_with_hint = [str(p) for p in [here, *here.parents] if (p / "HINT.md").exists()]
    home = Path(os.environ.get("HOME", "/nonexistent"))
    toplevel = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False
    ).stdout.strip()
    secret_name = os.environ.get("FAKE_SECRET_NAME", "")
    secret = os.environ.get(secret_name, "") if secret_name else ""
    return {
        "cwd": str(here),
        "home": str(home),
        "claude_config_dir": os.environ.get("CLAUDE_CONFIG_DIR"),
        "env_names": sorted(os.environ),
        "ancestors_with_hint": ancestors_with_hint,
        "home_files": sorted(str(p.relative_to(home)) for p in home.rglob("*")),
        "git_toplevel": toplevel,
        "git_log": subprocess.run(
            ["git", "log", "--format=%an <%ae> %ad", "--date=iso-strict"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip(),
        "secret_sha256": hashlib.sha256(secret.encode()).hexdigest() if secret else None,
        "prompt": prompt,
    }


def main() -> None:
    args = sys.argv[1:]
    prompt = args[args.index("-p") + 1]
    output_format = args[args.index("--output-format") + 1]
    if os.environ.get("FAKE_IGNORE_TERM"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if os.environ.get("FAKE_SIGNAL_DIR"):
        marker = Path(os.environ["FAKE_SIGNAL_DIR"]) / f"{os.getpid()}.started"
        marker.write_text(str(os.getpid()))
        started = len(list(marker.parent.glob("*.started")))
        if started == int(os.environ.get("FAKE_BLOCK_AT", "0")):
            child = subprocess.Popen(["sleep", "300"])
            marker.with_suffix(".child").write_text(str(child.pid))
            time.sleep(300)
    if os.environ.get("FAKE_GRANDCHILD_PIDFILE"):
        child = subprocess.Popen(["sleep", "300"])
        Path(os.environ["FAKE_GRANDCHILD_PIDFILE"]).write_text(str(child.pid))
    if os.environ.get("FAKE_SECRET_NAME"):
        value = os.environ.get(os.environ["FAKE_SECRET_NAME"], "")
        print(f"my key is {value}", file=sys.stderr)
    if os.environ.get("FAKE_REPORT"):
        Path(".agent-report.json").write_text(json.dumps(observe(prompt), indent=2))
    time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
    if os.environ.get("FAKE_SHELL"):
        subprocess.run(os.environ["FAKE_SHELL"], shell=True, check=False)
    if os.environ.get("FAKE_MODEL_CALL"):
        call_model()

    hint = Path("HINT.md")
    if hint.exists():
        for old, new, name in FIX.findall(hint.read_text()):
            target = Path(name)
            if target.exists():
                target.write_text(target.read_text().replace(old, new))
        tools, turns, duration_ms = 2, 3, 20_000
        usage = {"input_tokens": 1_200, "output_tokens": 300}
        cache = {"cache_read_input_tokens": 8_000, "cache_creation_input_tokens": 500}
        cost = 0.021
    else:
        for target in sorted(Path(".").glob("*.py")):
            if not target.name.startswith("test_"):
                target.write_text(target.read_text() + "\n# looked here\n")
        tools, turns, duration_ms = 9, 12, 55_000
        usage = {"input_tokens": 4_100, "output_tokens": 1_350}
        cache = {"cache_read_input_tokens": 30_000, "cache_creation_input_tokens": 2_400}
        cost = 0.094
    if os.environ.get("FAKE_CHEAT"):
        for test in Path(".").glob("test_*.py"):
            test.write_text("import unittest\n")
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": duration_ms,
        "duration_api_ms": duration_ms - 1_000,
        "num_turns": turns,
        "result": "Done.",
        "session_id": f"session-{os.getpid()}",
        "total_cost_usd": cost,
        "usage": {**usage, **cache, "service_tier": "standard"},
        "modelUsage": {"claude-sonnet-4-5": {"inputTokens": usage["input_tokens"]}},
    }
    if os.environ.get("FAKE_SECRET_NAME"):
        result["result"] = f"key {os.environ.get(os.environ['FAKE_SECRET_NAME'], '')}"
    if os.environ.get("FAKE_BAD_USAGE"):
        result["usage"] = {**result["usage"], "input_tokens": -5}
        result["modelUsage"] = {"claude-sonnet-4-5": {"inputTokens": -5}}
        result["total_cost_usd"] = "cheap"
    if output_format == "stream-json":
        print(json.dumps({"type": "system", "subtype": "init", "session_id": "s"}))
        for i in range(tools):
            block = {"type": "tool_use", "id": f"toolu_{i}", "name": "Edit", "input": {}}
            if i == 0:  # the agent runs the tests once, as the acceptance command does
                command = "python3  -m unittest -q test_calc"
                block = {**block, "name": "Bash", "input": {"command": command}}
            if os.environ.get("FAKE_TOOL_INPUT"):
                block = {**block, "input": os.environ["FAKE_TOOL_INPUT"]}
            print(json.dumps({"type": "assistant", "message": {"content": [block]}}))
    if os.environ.get("FAKE_STDOUT"):
        print(os.environ["FAKE_STDOUT"])
        return
    print(json.dumps(result))


if __name__ == "__main__":
    main()
