"""A probe whose calls are shared by worker processes writes what one process writes."""

from __future__ import annotations

import asyncio
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from tests.probe.helpers import (
    FAKE_KEY,
    cli_env,
    kill_once_written,
    model_name,
    read_jsonl,
    run_cli,
)
from tests.support.openai_server import Latency, ModelProfile

from plumbline.probe.runner import run_probe
from plumbline.probe.settings import ProbeSettings, Prompt
from plumbline.probe.shards import SHARD_CONCURRENCY, process_count

# what differs between two runs of the same trials however they are run
_MEASURED = ("latency_seconds", "ttft_seconds", "timestamp")


def _records(path: Path) -> list[dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    kept = [{k: v for k, v in r.items() if k not in _MEASURED} for r in records]
    return sorted(kept, key=lambda r: (r["model"], r["prompt_id"], r["trial"]))


def _settings(concurrency: int, trials: int = 12) -> ProbeSettings:
    return ProbeSettings(
        models=(model_name("a"), model_name("b")),
        prompts=(Prompt("p", "Why is the sky blue?"), Prompt("q", "Define entropy.")),
        trials=trials,
        concurrency=concurrency,
    )


def test_worker_processes_only_at_high_concurrency_and_never_more_than_trials() -> None:
    assert process_count(_settings(SHARD_CONCURRENCY - 1), 1000) == 1
    cores = len(os.sched_getaffinity(0))
    assert process_count(_settings(256), 1000) == min(cores, 256 // 32)
    assert process_count(_settings(256), 1) == 1
    assert process_count(_settings(4), 1000, processes=2) == 2


@pytest.mark.slow
def test_two_processes_write_the_records_one_process_writes(
    server_factory: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = server_factory(default=ModelProfile(latency=Latency("constant", 0.01)))
    monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
    monkeypatch.setenv("LOCAL_API_KEY", FAKE_KEY)
    settings = _settings(concurrency=8)
    journals = {}
    for processes in (1, 2):
        out = tmp_path / f"trials-{processes}.jsonl"
        summary = asyncio.run(run_probe(settings, out, processes=processes))
        assert summary.completed == summary.planned == 48 and not summary.errors
        journals[processes] = _records(out)
    assert journals[1] == journals[2]
    assert len(server.log) == 96  # every trial called once per run


def test_a_worker_that_cannot_set_up_its_model_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOWHERE_BASE_URL", raising=False)
    monkeypatch.delenv("NOWHERE_API_KEY", raising=False)
    settings = ProbeSettings(models=("openai-api/nowhere/m",), prompts=(Prompt("p", "x"),))
    with pytest.raises(RuntimeError, match="NOWHERE_"):
        asyncio.run(run_probe(settings, tmp_path / "t.jsonl", processes=2))


@pytest.mark.slow
def test_sigkill_of_a_sharded_run_then_rerun_gives_every_trial_exactly_once(
    server_factory: Any, tmp_path: Path
) -> None:
    server = server_factory(default=ModelProfile(latency=Latency("uniform", 0.2, 0.4)))
    out = tmp_path / "trials.jsonl"
    args = ["probe", "--model", model_name("a"), "--model", model_name("b")]
    args += ["--prompt", "Why is the sky blue?", "--prompt", "Define entropy."]
    args += ["--trials", "100", "--concurrency", "64", "-o", str(out), "--no-progress"]
    killed_at = kill_once_written(args, cli_env(server), out)
    assert 10 <= killed_at < 400

    result = run_cli(args, cli_env(server))
    assert result.returncode == 0, result.stderr
    keys = Counter((r["model"], r["prompt_id"], r["trial"]) for r in read_jsonl(out))
    assert len(keys) == 400
    assert set(keys.values()) == {1}
