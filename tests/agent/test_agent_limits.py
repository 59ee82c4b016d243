"""Trial limits: parsing `--limit NAME=VALUE`, the failure reasons, and a real trial cgroup (made,
joined by a real process before it runs anything, removed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from plumbline.agent.disk_watch import DiskWatch, used_bytes
from plumbline.agent.limits import (
    GiB,
    LimitError,
    MiB,
    TrialLimits,
    limit_failure,
    limits_record,
    parse_limits,
)
from plumbline.agent.limits_kernel import TrialCgroup, cgroup_parents, mechanism
from plumbline.agent.process import run_process
from plumbline.agent.sandbox import Confinement, NoSandbox


def test_limits_parse_sizes_counts_and_seconds() -> None:
    limits = parse_limits(["memory=512M", "disk=1.5G", "processes=64", "cpu=2.5", "wall=90.5"])
    assert limits.memory_bytes == 512 * MiB and limits.disk_bytes == 3 * GiB // 2
    assert limits.processes == 64 and limits.cpu_seconds == 3  # whole seconds, rounded up
    assert limits.wall_seconds == 90.5
    assert parse_limits(["MEMORY=4GiB"]).memory_bytes == 4 * GiB
    # Later values win; the rest keep their defaults.
    assert parse_limits(["processes=8", "processes=9"]) == TrialLimits(processes=9)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("memory", "expected NAME=VALUE"),
        ("speed=1", "expected NAME=VALUE with NAME one of memory, processes, cpu, wall, disk"),
        ("memory=lots", "memory must be positive (512M or 4G)"),
        ("processes=2.5", "processes must be positive (a whole number)"),
        ("wall=-1", "wall must be positive"),
        ("cpu=nan", "cpu must be positive"),
        ("disk=0", "disk must be positive"),
    ],
)
def test_a_bad_limit_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(LimitError, match=f"^--limit {text}: ") as error:
        parse_limits([text])
    assert problem in str(error.value)


def test_the_wall_limit_lowers_the_task_timeout_only() -> None:
    assert TrialLimits().timeout(600) == 600
    assert TrialLimits(wall_seconds=30).timeout(600) == 30
    assert TrialLimits(wall_seconds=900).timeout(600) == 600


def test_failure_reasons_name_the_limit_and_its_mechanism() -> None:
    limits = TrialLimits(memory_bytes=96 * MiB, cpu_seconds=2).for_task(45)
    assert limit_failure("memory", limits, "cgroup-v1") == (
        "limit exceeded: memory (96M, enforced by cgroup-v1)"
    )
    assert limit_failure("cpu", limits, "rlimit") == (
        "limit exceeded: cpu (2 CPU seconds, enforced by rlimit)"
    )
    assert limit_failure("wall", limits, "cgroup-v2") == (
        "limit exceeded: wall (45 seconds, enforced by the harness's clock)"
    )
    record = limits_record(limits, "cgroup-v1")
    assert record["mechanism"] == "cgroup-v1" and record["memory_bytes"] == 96 * MiB


needs_cgroup = pytest.mark.skipif(
    cgroup_parents() is None, reason="no delegated cgroup v2 and not root with cgroup v1"
)


@needs_cgroup
def test_a_trial_cgroup_holds_its_limits_and_is_removed() -> None:
    parents = cgroup_parents()
    assert parents is not None and mechanism() == parents.mechanism
    cgroup = TrialCgroup(parents, TrialLimits(memory_bytes=64 * MiB, processes=16))
    try:
        assert all(d.is_dir() for d in cgroup.directories)
        assert (cgroup.pids / "pids.max").read_text().strip() == "16"
        memory_file = "memory.max" if parents.mechanism == "cgroup-v2" else "memory.limit_in_bytes"
        assert int((cgroup.memory / memory_file).read_text()) == 64 * MiB
        assert cgroup.exceeded() is None
    finally:
        cgroup.remove()
    assert not any(d.exists() for d in cgroup.directories)


@needs_cgroup
def test_a_limited_command_runs_inside_its_cgroup_from_the_start(tmp_path: Path) -> None:
    limits = TrialLimits(memory_bytes=128 * MiB, processes=32, cpu_seconds=7)
    confinement = Confinement(
        writable=(),
        read_only=(),
        hidden=(),
        network=True,
        cwd=tmp_path,
        environment={"PATH": "/usr/bin:/bin"},
        limits=limits,
    )
    launch = NoSandbox().launch(["/bin/sh", "-c", "cat /proc/self/cgroup; ulimit -t"], confinement)
    assert launch.cgroup is not None
    name = launch.cgroup.directories[0].name
    try:
        result = run_process(
            launch.argv,
            cwd=tmp_path,
            env=launch.env,
            timeout=60,
            stdout=tmp_path / "out",
            stderr=tmp_path / "err",
            pass_fds=launch.pass_fds,
        )
        assert result.exit_code == 0, (tmp_path / "err").read_text()
        assert launch.started() and launch.exceeded(result) is None
    finally:
        launch.close()
    lines = (tmp_path / "out").read_text().splitlines()
    pids_line = "0::" if launch.cgroup.parents.mechanism == "cgroup-v2" else ":pids:"
    assert any(pids_line in line and line.endswith(f"/{name}") for line in lines), lines
    assert lines[-1] == "7"  # RLIMIT_CPU
    assert not any(d.exists() for d in launch.cgroup.directories)


def test_prlimit_is_there() -> None:
    assert shutil.which("prlimit"), "prlimit (util-linux) sets a trial's rlimits"


def test_the_disk_watch_counts_like_du_and_stops_past_the_limit(tmp_path: Path) -> None:
    """Two directories counted together as `du -s` counts them (a hard link once, a symbolic
    link's target not followed); the watch is over once they take more than the limit."""
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    (workspace / "deep" / "er").mkdir(parents=True)
    home.mkdir()
    (workspace / "deep" / "er" / "a.bin").write_bytes(b"\1" * 300_000)
    (home / "b.bin").write_bytes(b"\2" * 200_000)
    os.link(home / "b.bin", workspace / "b-again.bin")
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"\3" * 1_000_000)
    (home / "link").symlink_to(outside)
    du = subprocess.run(
        ["du", "-s", "-B1", "-c", str(workspace), str(home)], capture_output=True, text=True
    )
    total = int(du.stdout.splitlines()[-1].split()[0])
    assert used_bytes([workspace, home]) == total < 1_000_000
    watch = DiskWatch([workspace, home], limit_bytes=total, interval=0)
    assert watch.over() is False and watch.peak_bytes == total
    (home / "c.bin").write_bytes(b"\4" * 100_000)
    # The next walk comes after 10 times the last one took: poll as the harness does.
    deadline = time.monotonic() + 60
    while not watch.over():
        assert time.monotonic() < deadline, "the watch never saw the directories pass the limit"
        time.sleep(0.01)
    assert watch.peak_bytes > total
