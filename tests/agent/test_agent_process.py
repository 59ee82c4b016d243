"""Time limits hold for the agent's whole process group: children and grandchildren too."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tests.agent.helpers import gone

from plumbline.agent.process import ProcessRegistry, run_process

# Starts a grandchild (through a shell, like an agent running a tool), records both pids,
# optionally ignores SIGTERM, then either sleeps or exits leaving the grandchild behind.
SCRIPT = r"""
import os, signal, subprocess, sys, time
out, mode = sys.argv[1], sys.argv[2]
if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["/bin/sh", "-c", "sleep 300 & echo $! > " + out + ".grandchild; wait"])
with open(out + ".child", "w") as handle:
    handle.write(str(child.pid))
while not os.path.exists(out + ".grandchild") or not open(out + ".grandchild").read().strip():
    time.sleep(0.01)
print("ready", flush=True)
if mode != "leave":
    time.sleep(300)
"""


def _run(tmp_path: Path, mode: str, timeout: float) -> tuple[int | None, bool, list[int]]:
    """Run SCRIPT under `run_process`. The time limits leave the script ample time to start
    its grandchild (a loaded CI machine starts Python slowly); it then sleeps far longer."""
    script = tmp_path / "agent.py"
    script.write_text(SCRIPT)
    marker = tmp_path / "pids"
    result = run_process(
        [sys.executable, str(script), str(marker), mode],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
        timeout=timeout,
        stdout=tmp_path / "out",
        stderr=tmp_path / "err",
        grace=0.3,
    )
    pids = [int(Path(f"{marker}.{n}").read_text()) for n in ("child", "grandchild")]
    return result.exit_code, result.timed_out, pids


def test_timeout_kills_the_whole_group(tmp_path: Path) -> None:
    exit_code, timed_out, pids = _run(tmp_path, "sleep", timeout=4.0)
    assert timed_out
    assert exit_code == -15  # SIGTERM ended the leader
    assert all(gone(pid) for pid in pids)


def test_a_leader_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path: Path) -> None:
    exit_code, timed_out, pids = _run(tmp_path, "ignore-term", timeout=4.0)
    assert timed_out and exit_code == -9
    assert all(gone(pid) for pid in pids)


def test_processes_left_behind_by_a_finished_agent_are_killed(tmp_path: Path) -> None:
    exit_code, timed_out, pids = _run(tmp_path, "leave", timeout=60.0)
    assert not timed_out and exit_code == 0
    assert all(gone(pid) for pid in pids)


def test_missing_executable_is_a_start_error_not_an_exit_code(tmp_path: Path) -> None:
    result = run_process(
        ["no-such-agent-binary"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout=5,
        stdout=tmp_path / "out",
        stderr=tmp_path / "err",
    )
    assert isinstance(result.start_error, FileNotFoundError)
    assert result.exit_code is None


def test_a_stopping_registry_starts_nothing(tmp_path: Path) -> None:
    registry = ProcessRegistry()
    registry.kill_all()
    result = run_process(
        ["true"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout=5,
        stdout=tmp_path / "out",
        stderr=tmp_path / "err",
        registry=registry,
    )
    assert result.start_error is not None and result.exit_code is None


class _StoppedWhileStarting(ProcessRegistry):
    """A registry whose `kill_all` runs just before the new group is registered: the moment
    a stopping harness snapshots its groups without this one."""

    def add(self, pgid: int) -> None:
        self.kill_all()
        super().add(pgid)


def test_a_group_started_while_the_harness_stops_is_killed(tmp_path: Path) -> None:
    registry = _StoppedWhileStarting()
    result = run_process(
        ["sleep", "120"],
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"]},
        timeout=600,
        stdout=tmp_path / "out",
        stderr=tmp_path / "err",
        registry=registry,
    )
    assert result.exit_code == -9 and result.timed_out is False
