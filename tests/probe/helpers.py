"""Helpers: run the real `plumbline` CLI against the local OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer

# A recognisable fake key: it must never show up in any output.
FAKE_KEY = "sk-plumbline-FAKE-9f8e7d6c5b4a3210"
SERVICE = "local"


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def cli_env(server: OpenAIServer) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "LOCAL_BASE_URL": server.base_url,
            "LOCAL_API_KEY": FAKE_KEY,
            "INSPECT_LOG_LEVEL": "warning",
            "NO_COLOR": "1",
            "COLUMNS": "200",
        }
    )
    return env


def run_cli(args: list[str], env: dict[str, str], timeout: float = 300) -> CliResult:
    completed = subprocess.run(
        [sys.executable, "-m", "plumbline", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return CliResult(completed.returncode, completed.stdout, completed.stderr)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def model_name(name: str) -> str:
    return f"openai-api/{SERVICE}/{name}"


def start_until_written(
    args: list[str], env: dict[str, str], out: Path, lines: int, seconds: float = 240
) -> subprocess.Popen[bytes]:
    """Start `plumbline ARGS` and return it, still running, once `out` holds `lines` records."""
    process = subprocess.Popen(
        [sys.executable, "-m", "plumbline", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + seconds
        while not (out.exists() and out.read_text().count("\n") >= lines):
            if process.poll() is not None:
                pytest.fail(f"plumbline {args[0]} ended before {out.name} held {lines} lines")
            if time.monotonic() > deadline:
                pytest.fail(f"plumbline {args[0]} made no progress")
            time.sleep(0.02)
    except BaseException:
        process.kill()
        process.wait()
        raise
    return process


def kill_once_written(args: list[str], env: dict[str, str], out: Path, lines: int = 10) -> int:
    """Start `plumbline ARGS`, SIGKILL it once `out` holds `lines` records; the lines left."""
    process = start_until_written(args, env, out, lines)
    try:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == -signal.SIGKILL
    return out.read_text().count("\n")
