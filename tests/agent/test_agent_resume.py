"""A harness killed with SIGKILL mid-run leaves no half-written record; rerunning resumes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.agent.helpers import fake_agent, gone, one_task, read_jsonl

from plumbline.records.io import read_records
from plumbline.records.run_record import RunRecord


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 120
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


@pytest.fixture
def harness_tmp() -> Iterator[Path]:
    """A temporary directory for a harness's TMPDIR, removed after the test: short, as the
    metering proxy's Unix socket goes there (tmp_path's length would pass AF_UNIX's limit)."""
    path = Path(tempfile.mkdtemp(prefix="plumbline-test."))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_sigkill_then_rerun_gives_exactly_one_record_per_unit(
    make_suite: Callable[..., Path], tmp_path: Path, harness_tmp: Path
) -> None:
    signals = tmp_path / "signals"
    signals.mkdir()
    # The third agent to start never finishes: the harness is killed while it runs.
    suite = make_suite(
        {"tasks": one_task(), "env": {"FAKE_SIGNAL_DIR": str(signals), "FAKE_BLOCK_AT": "3"}}
    )
    out = tmp_path / "results"
    # Unconfined (--sandbox none): the agents signal through a host directory.
    command = [
        sys.executable,
        "-m",
        "plumbline",
        "agent",
        "run",
        str(suite),
        "--sandbox",
        "none",
        "--agent",
        fake_agent(),
        "-o",
        str(out),
        "--repeats",
        "2",
        "--json",
    ]
    # What a SIGKILLed harness cannot remove (its metering proxy's directory) goes in a
    # temporary directory of this test's, removed after it.
    env = {**os.environ, "TMPDIR": str(harness_tmp)}
    harness = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env
    )
    try:
        _wait_for(lambda: len(list(signals.glob("*.started"))) == 3, "the third agent")
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    # The blocked agent leads its own process group, which survives the harness: its lease
    # says where it works, and the rerun ends it before running anything.
    started = sorted(signals.glob("*.started"), key=lambda p: p.stat().st_mtime_ns)
    blocked = int(started[-1].read_text())
    leases = list((out / "running").glob("*.json"))
    assert len(leases) == 1 and not gone(blocked, timeout=0.2)
    lease = json.loads(leases[0].read_text())
    trial_root = Path(lease["trial_root"])
    assert trial_root.is_dir()
    # The pristine copies of `.git` live outside the trial directory, in the run's own place.
    baselines = Path(lease["baseline"]).parent
    assert baselines.name.startswith("plumbline-baselines.") and baselines.is_dir()
    assert not baselines.is_relative_to(trial_root)

    lines = (out / "records.jsonl").read_text().splitlines()
    assert len(lines) == 2  # the two finished runs; nothing of the one interrupted
    first_two = [json.loads(line) for line in lines]
    # A harness killed in the middle of an append leaves a partial line: simulate that too.
    with (out / "records.jsonl").open("a") as handle:
        handle.write('{"task_id": "fix-add", "arm": "with_h')

    try:
        rerun = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    finally:
        reclaimed_in_time = gone(blocked)
        if not reclaimed_in_time:
            os.killpg(blocked, signal.SIGKILL)
    assert rerun.returncode == 0, rerun.stderr
    assert reclaimed_in_time, "the rerun left the interrupted trial's agent running"
    document = json.loads(rerun.stdout)
    assert document["ran"] == 2 and document["skipped"] == 2
    assert [r["trial_root"] for r in document["reclaimed"]] == [str(trial_root)]
    assert document["reclaimed"][0]["killed"] >= 1
    assert not trial_root.exists() and list((out / "running").iterdir()) == []
    assert not baselines.exists()  # reclaimed with the lease
    found = read_jsonl(out / "records.jsonl")
    assert found[:2] == first_two
    counts = Counter((r["task_id"], r["arm"], r["repeat"]) for r in found)
    assert len(counts) == 4 and set(counts.values()) == {1}
    result = read_records([out / "records.jsonl"], RunRecord)
    assert result.errors == [] and len(result.records) == 4


def test_sigterm_stops_running_agents_and_records_nothing_for_them(
    make_suite: Callable[..., Path], tmp_path: Path
) -> None:
    signals = tmp_path / "signals"
    signals.mkdir()
    suite = make_suite(
        {"tasks": one_task(), "env": {"FAKE_SIGNAL_DIR": str(signals), "FAKE_BLOCK_AT": "1"}}
    )
    out = tmp_path / "results"
    command = [sys.executable, "-m", "plumbline", "agent", "run", str(suite)]
    # Unconfined (--sandbox none): the agents signal through a host directory.
    command += ["--sandbox", "none", "--agent", fake_agent(), "-o", str(out), "--repeats", "1"]
    harness = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _wait_for(lambda: len(list(signals.glob("*.started"))) == 1, "the first agent")
    agent = int(next(signals.glob("*.started")).read_text())
    harness.send_signal(signal.SIGTERM)
    _, stderr = harness.communicate(timeout=120)
    assert harness.returncode == 130
    assert b"rerun the same command to resume" in stderr
    assert gone(agent)
    assert (out / "records.jsonl").read_text() == ""


def _invoke(suite: Path, out: Path, agent: str, *extra: str) -> tuple[int, str]:
    command = [sys.executable, "-m", "plumbline", "agent", "run", str(suite), "--agent", agent]
    command += ["-o", str(out), "--repeats", "1", "--profile", "claude-code", *extra]
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
    )
    return result.returncode, result.stdout + result.stderr


def test_resuming_with_another_agent_or_changed_sources_is_refused(
    make_suite: Callable[..., Path], tmp_path: Path
) -> None:
    suite = make_suite({"tasks": one_task()})
    out = tmp_path / "results"
    code, output = _invoke(suite, out, fake_agent())
    assert code == 0, output
    code, output = _invoke(suite, out, fake_agent("stream-json"))
    assert code == 2 and "arm with_hint's agent was" in output and "--force" in output
    assert len(read_jsonl(out / "records.jsonl")) == 2
    # The repository a task copies is part of the experiment too.
    calc = suite.parent / "repo" / "calc.py"
    calc.write_text(calc.read_text().replace("a - b", "a + b"))
    code, output = _invoke(suite, out, fake_agent())
    assert code == 2 and "task fix-add's repository content changed" in output
    code, output = _invoke(suite, out, fake_agent(), "--force")
    assert code == 0, output
    # Forced, the plan records the new identity: a rerun of the same command is accepted.
    assert _invoke(suite, out, fake_agent())[0] == 0


def test_a_second_harness_on_the_same_output_fails_fast_and_reclaims_nothing(
    make_suite: Callable[..., Path], tmp_path: Path
) -> None:
    suite = make_suite({"tasks": one_task()})
    out = tmp_path / "results"
    (out / "running").mkdir(parents=True)
    # A lease of the harness holding the lock: its trial is running, not left over.
    trial = tmp_path / "plumbline-trial.busy"
    trial.mkdir()
    lease = out / "running" / "busy.json"
    lease.write_text(json.dumps({"run_id": "busy", "trial_root": str(trial)}))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            "f = open(sys.argv[1], 'a+'); fcntl.flock(f, fcntl.LOCK_EX)\n"
            "f.write('pid 4242'); f.flush(); print('locked', flush=True); time.sleep(300)",
            str(out / ".lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        code, output = _invoke(suite, out, fake_agent())
        assert code == 2 and "in use by another `plumbline agent run` (pid 4242)" in output
        assert lease.exists() and trial.is_dir()
        assert not (out / "records.jsonl").exists()
    finally:
        holder.kill()
        holder.wait()
    # The holder is gone, and with it the lock: the next run reclaims the lease and runs.
    code, output = _invoke(suite, out, fake_agent(), "--json")
    assert code == 0, output
    assert not lease.exists() and not trial.exists()
    assert len(read_jsonl(out / "records.jsonl")) == 2
