"""`plumbline probe` against a real local HTTP server, through Inspect's openai-api provider."""

from __future__ import annotations

import os
from collections import Counter
from datetime import datetime
from pathlib import Path
from traceback import format_exception
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from tests.probe.helpers import (
    FAKE_KEY,
    CliResult,
    cli_env,
    kill_once_written,
    model_name,
    read_jsonl,
    run_cli,
    start_until_written,
)
from tests.support.openai_server import FAULTS, Latency, ModelProfile

from plumbline.cli.main import main
from plumbline.records.trial_record import trial_record_schema

# The class (and HTTP status) each injected fault must be counted as.
EXPECTED = {
    "400": ("InvalidRequestError", 400),
    "401": ("AuthenticationError", 401),
    "403": ("PermissionError", 403),
    "404": ("NotFoundError", 404),
    "422": ("InvalidRequestError", 422),
    "429": ("RateLimitError", 429),
    "500": ("ServerError", 500),
    "503": ("ServerError", 503),
    "529": ("ServerError", 529),
    "content_filter": ("ContentFilterError", None),
    "timeout": ("TimeoutError", None),
    "reset": ("ConnectionError", None),
    # an answer (HTTP 200) that is not a completion (issue 27): its own class, status 200
    "malformed": ("MalformedResponseError", 200),
    "empty_choices": ("MalformedResponseError", 200),
    "no_message": ("MalformedResponseError", 200),
    "error_body": ("MalformedResponseError", 200),
}


@pytest.mark.slow
@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streaming"])
def test_every_injected_fault_is_counted_in_its_class(
    server_factory: Any, tmp_path: Path, stream: bool
) -> None:
    # context_length is not an exception in Inspect's OpenAI provider (it answers with stop
    # reason model_length); the judge's tests cover it
    # (tests/suites/sa_bench/test_calibration_http.py)
    faults = [fault for fault in FAULTS if fault != "context_length"]
    assert set(EXPECTED) == set(faults)
    profile = ModelProfile(
        latency=Latency("constant", 0.05), faults=faults, hang_seconds=120, api_key=FAKE_KEY
    )
    server = server_factory({"faulty": profile})
    out = tmp_path / "trials.jsonl"
    trials = len(faults) + 3
    args = [
        "probe",
        "--model",
        model_name("faulty"),
        "--prompt",
        "Explain what a circuit breaker does.",
        "--trials",
        str(trials),
        "--concurrency",
        str(trials),
        "--timeout",
        "10",
        "-o",
        str(out),
        "--no-progress",
        "--json",
    ]
    if stream:
        args.append("--stream")
    result = run_cli(args, cli_env(server))
    assert result.returncode == 0, result.stderr

    records = read_jsonl(out)
    assert len(records) == trials
    # retries are off at every layer: one request per trial, no more
    served = server.requests_for("faulty")
    assert len(served) == trials
    assert all(entry.authorized for entry in served)
    assert all(entry.stream == stream for entry in served)

    expected = Counter(EXPECTED[fault] for fault in faults)
    found = Counter(
        (r["error_class"], r["http_status"]) for r in records if r["error_class"] is not None
    )
    assert found == expected
    assert sum(1 for r in records if r["error_class"] is None) == 3
    for record in records:
        assert record["timed_out"] == (record["error_class"] == "TimeoutError")
        assert record["attempts"] == 1
        if record["error_class"] is None:
            assert record["response"].startswith("Here is an answer about")
            assert record["output_tokens"] > 0 and record["input_tokens"] > 0
            assert (record["ttft_seconds"] is not None) == stream
            if stream:
                assert 0 < record["ttft_seconds"] <= record["latency_seconds"]
        else:
            assert record["response"] is None
            assert record["error_message"]
    timeout_record = next(r for r in records if r["error_class"] == "TimeoutError")
    assert 10 <= timeout_record["latency_seconds"] < 40
    # every record is valid against the published JSON Schema
    validator = jsonschema.Draft202012Validator(trial_record_schema())
    for record in records:
        validator.validate(record)


@pytest.mark.slow
def test_retries_are_counted_per_trial(server_factory: Any, tmp_path: Path) -> None:
    server = server_factory(
        {
            "flaky": ModelProfile(latency=Latency("constant", 0.01), faults=["500", "429"]),
            "denied": ModelProfile(latency=Latency("constant", 0.01), faults=["401"]),
        }
    )
    out = tmp_path / "trials.jsonl"
    args = ["probe", "--model", model_name("flaky"), "--model", model_name("denied")]
    args += ["--prompt", "hi there", "--trials", "1", "--retries", "2", "-o", str(out)]
    result = run_cli([*args, "--no-progress"], cli_env(server))
    assert result.returncode == 0, result.stderr
    records = {r["model"]: r for r in read_jsonl(out)}
    flaky = records[model_name("flaky")]
    assert flaky["error_class"] is None
    assert flaky["attempts"] == 3  # a 500, a 429, then the answer
    assert flaky["config"]["retries"] == 2
    assert len(server.requests_for("flaky")) == 3
    denied = records[model_name("denied")]
    assert denied["error_class"] == "AuthenticationError"
    assert denied["attempts"] == 1  # a 401 will fail the same way again: never retried
    assert len(server.requests_for("denied")) == 1


def run_in_process(args: list[str], env: dict[str, str]) -> CliResult:
    """`plumbline ARGS` in this process, for the runs that call no model (a resume with
    nothing left, a refused configuration change): what they read is the journal on disk,
    written by the subprocess runs before them. An exception is shown as a traceback."""
    result = CliRunner().invoke(main, args, env=env)
    error = result.exception
    shown = error is not None and not isinstance(error, SystemExit)
    traceback = "".join(format_exception(error)) if shown else ""
    return CliResult(result.exit_code, result.stdout, result.stderr + traceback)


@pytest.mark.slow
def test_rerun_resumes_and_extends(server_factory: Any, tmp_path: Path) -> None:
    server = server_factory(default=ModelProfile(latency=Latency("constant", 0.01)))
    out = tmp_path / "trials.jsonl"
    base = ["probe", "--model", model_name("a"), "--model", model_name("b")]
    base += ["--prompt", "first prompt", "--prompt", "second prompt", "-o", str(out)]
    env = cli_env(server)
    assert run_cli([*base, "--trials", "3", "--no-progress"], env).returncode == 0
    assert len(read_jsonl(out)) == 12
    again = run_in_process([*base, "--trials", "3", "--no-progress", "--json"], env)
    assert again.returncode == 0, again.stderr
    assert '"completed": 0' in again.stdout and '"already_done": 12' in again.stdout
    assert len(server.log) == 12  # nothing was called twice
    assert run_cli([*base, "--trials", "5", "--no-progress"], env).returncode == 0
    records = read_jsonl(out)
    keys = Counter((r["model"], r["prompt_id"], r["trial"]) for r in records)
    assert len(keys) == 2 * 2 * 5 and set(keys.values()) == {1}
    assert len(server.log) == 20
    # trial i is sent seed + i, so reruns are reproducible and trials differ
    assert {r["config"]["seed"] - r["trial"] for r in records} == {42}
    # another temperature or max tokens into the same journal: refused, nothing called
    for change, words in (
        (["--temperature", "0.2"], "temperature 0.7 -> 0.2"),
        (["--max-tokens", "64"], "max_tokens 1024 -> 64"),
        (["-M", "reasoning_effort=low"], "model_args none -> {'reasoning_effort': 'low'}"),
    ):
        refused = run_in_process([*base, "--trials", "5", *change, "--no-progress"], env)
        assert refused.returncode != 0
        assert words in refused.stderr and "--allow-config-change" in refused.stderr
        assert "Traceback" not in refused.stderr
    assert len(server.log) == 20 and len(read_jsonl(out)) == 20
    # told to, it adds the new configuration (every trial runs again under it)
    forced = ["--temperature", "0.2", "--allow-config-change", "--json"]
    changed = run_cli([*base, "--trials", "5", *forced], env)
    assert changed.returncode == 0, changed.stderr
    assert '"config_mismatches": 20' in changed.stdout and '"completed": 20' in changed.stdout
    assert {r["config"]["temperature"] for r in read_jsonl(out)} == {0.7, 0.2}
    again = run_in_process([*base, "--trials", "5", *forced], env)
    assert '"completed": 0' in again.stdout  # resumable under the new configuration too


@pytest.mark.slow
def test_one_probe_writes_a_journal_at_a_time(server_factory: Any, tmp_path: Path) -> None:
    server = server_factory(default=ModelProfile(latency=Latency("constant", 0.5)))
    out = tmp_path / "trials.jsonl"
    args = ["probe", "--model", model_name("a"), "--prompt", "p", "--trials", "40"]
    args += ["--concurrency", "1", "-o", str(out), "--no-progress"]
    env = cli_env(server)
    first = start_until_written(args, env, out, lines=1, seconds=120)
    try:
        second = run_cli(args, env)
        assert first.poll() is None, "the first probe finished before the second was refused"
        assert second.returncode != 0
        assert "is being written by another `plumbline probe` (pid" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        first.kill()
        first.wait()
    keys = Counter((r["model"], r["prompt_id"], r["trial"]) for r in read_jsonl(out))
    assert set(keys.values()) == {1}  # the refused probe wrote nothing
    # the killed holder's lock is gone with it: the next run resumes
    rest = run_cli([*args, "--concurrency", "8"], env)
    assert rest.returncode == 0, rest.stderr
    assert len(read_jsonl(out)) == 40


@pytest.mark.slow
def test_sigkill_mid_run_then_rerun_gives_every_trial_exactly_once(
    server_factory: Any, tmp_path: Path
) -> None:
    server = server_factory(default=ModelProfile(latency=Latency("uniform", 0.2, 0.4)))
    out = tmp_path / "trials.jsonl"
    args = ["probe", "--model", model_name("a"), "--model", model_name("b")]
    args += ["--prompt", "Why is the sky blue?", "--prompt", "Define entropy."]
    args += ["--trials", "15", "--concurrency", "4", "-o", str(out), "--no-progress"]
    env = cli_env(server)
    killed_at = kill_once_written(args, env, out)
    before = read_jsonl(out) if out.read_text().endswith("\n") else None
    assert 10 <= killed_at < 60

    result = run_cli(args, env)
    assert result.returncode == 0, result.stderr
    records = read_jsonl(out)
    keys = Counter((r["model"], r["prompt_id"], r["trial"]) for r in records)
    assert len(keys) == 60
    assert set(keys.values()) == {1}
    if before is not None:
        assert records[: len(before)] == before  # completed trials are kept as they were


@pytest.mark.slow
def test_api_key_never_appears_in_any_output(server_factory: Any, tmp_path: Path) -> None:
    server = server_factory(
        {
            "good": ModelProfile(latency=Latency("constant", 0.01), api_key=FAKE_KEY),
            "bad": ModelProfile(latency=Latency("constant", 0.01), api_key="another-key-1234"),
            "echo": ModelProfile(
                latency=Latency("constant", 0.01),
                api_key=FAKE_KEY,
                responses=[f"my key is {FAKE_KEY}"],
                faults=["400"],
            ),
        }
    )
    out = tmp_path / "trials.jsonl"
    env = cli_env(server)
    args = ["probe", "--prompt", "hello", "--trials", "3", "-o", str(out), "--json"]
    for name in ("good", "bad", "echo"):
        args += ["--model", model_name(name)]
    probe = run_cli(args, env)
    assert probe.returncode == 0, probe.stderr
    # the key was really used: the good model's requests carried it
    assert all(entry.authorized for entry in server.requests_for("good"))
    assert {e.authorized for e in server.requests_for("bad")} == {False}
    records = read_jsonl(out)
    assert {r["error_class"] for r in records if r["model"] == model_name("bad")} == {
        "AuthenticationError"
    }
    report_json = tmp_path / "report.json"
    report_md = tmp_path / "report.md"
    report = run_cli(
        ["reliability", str(out), "--json", str(report_json), "--markdown", str(report_md)], env
    )
    assert report.returncode == 0, report.stderr
    outputs = {
        "probe stdout": probe.stdout,
        "probe stderr": probe.stderr,
        "journal": out.read_text(),
        "report stdout": report.stdout,
        "report stderr": report.stderr,
        "report.json": report_json.read_text(),
        "report.md": report_md.read_text(),
    }
    for name, text in outputs.items():
        assert FAKE_KEY not in text, f"the API key leaked into {name}"
        assert FAKE_KEY[:20] not in text, f"part of the API key leaked into {name}"
    assert "[REDACTED]" in out.read_text()  # the echoed key was caught


@pytest.mark.slow
def test_a_key_passed_as_a_model_argument_is_redacted_in_every_encoding(
    server_factory: Any, tmp_path: Path
) -> None:
    """`-M api_key=...` (not in the environment) is sent, echoed back by the server in several
    encodings, and none of them reaches the journal or the terminal."""
    import base64
    import json
    from urllib.parse import quote

    from plumbline.core.redaction import encoded_forms

    key = "sk-arg/key+0123456789=abc"
    echoes = [
        f"plain {key}",
        f"b64 {base64.b64encode(key.encode()).decode()}",
        f"url {quote(key, safe='')}",
        f"json {json.dumps({'k': key})}",
        f"hex {key.encode().hex()}",
    ]
    server = server_factory(
        {"echo": ModelProfile(latency=Latency("constant", 0.01), api_key=key, responses=echoes)}
    )
    out = tmp_path / "trials.jsonl"
    args = ["probe", "--model", model_name("echo"), "--prompt", "hi", "--trials", "10"]
    probe = run_cli([*args, "-M", f"api_key={key}", "-o", str(out), "--json"], cli_env(server))
    assert probe.returncode == 0, probe.stderr
    assert all(entry.authorized for entry in server.requests_for("echo"))  # the key was used
    records = read_jsonl(out)
    assert all(r["error_class"] is None for r in records)
    assert sum(r["response"].count("[REDACTED]") for r in records) == 10
    outputs = {"journal": out.read_text(), "out": probe.stdout, "err": probe.stderr}
    for name, text in outputs.items():
        for form in encoded_forms(key):
            assert form not in text, (name, form)


def test_bad_setup_is_a_clear_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOWHERE_")}
    result = run_cli(
        ["probe", "--model", "openai-api/nowhere/m", "--prompt", "x", "-o", str(tmp_path / "t")],
        env,
    )
    assert result.returncode != 0
    assert "NOWHERE_API_KEY" in result.stderr or "NOWHERE_BASE_URL" in result.stderr
    assert "Traceback" not in result.stderr


def test_every_trial_records_its_own_start_time(server_factory: Any, tmp_path: Path) -> None:
    """The regression check orders a run's trials by `timestamp` to keep bursts of failures
    together (`reliability.bursts`): each record holds the time its own trial started, so one
    at a time, each starts after the one before has taken its latency."""
    server = server_factory({"steady": ModelProfile(latency=Latency("constant", 0.05))})
    out = tmp_path / "trials.jsonl"
    args = ["probe", "--model", model_name("steady"), "--prompt", "hi there", "--trials", "6"]
    result = run_cli(
        [*args, "--concurrency", "1", "--no-progress", "-o", str(out)], cli_env(server)
    )
    assert result.returncode == 0, result.stderr
    records = sorted(read_jsonl(out), key=lambda r: r["timestamp"])
    starts = [datetime.fromisoformat(r["timestamp"]).timestamp() for r in records]
    assert len(set(starts)) == 6
    for before, after, record in zip(starts, starts[1:], records, strict=False):
        assert after >= before + record["latency_seconds"] - 1e-3
