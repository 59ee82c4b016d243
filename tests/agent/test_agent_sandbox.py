"""Hostile agents against the trial sandbox: real bubblewrap, real processes, real files.

A hostile agent (`hostile_agent.py`) tries every escape issue 36 found: the invoking user's
home, `/etc/shadow`, the harness's environment and command line through `/proc`, the suite,
an answers file next to the task source, planting a file in the source, other trials, the
results directory (forged records, a rewritten plan), writes outside the trial, processes
that outlive it, and four ways to make an impossible acceptance test pass. Sandboxed, each
fails; the same agent unconfined (`--sandbox none`) succeeds at the reads and writes, which
shows the probes are real, and even then forged records are not counted.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.agent.helpers import read_jsonl, write_suite

from plumbline.agent.limits_kernel import mechanism
from plumbline.agent.trial_paths import install_paths
from plumbline.agent.workspace import file_names, shadowing_files
from plumbline.cli.main import main

HOSTILE = Path(__file__).with_name("hostile_agent.py")
IMPOSSIBLE_TEST = (
    "import unittest\n\n\nclass T(unittest.TestCase):\n"
    "    def test(self):\n        self.assertEqual(1, 2)\n"
)
ENV_MARKER = "sk-hostile-marker-0123456789abcdef"


@dataclass
class Scene:
    """A suite, its results and trial directories, and what the hostile agent attacks."""

    root: Path
    suite: Path
    targets: dict[str, Any]

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def base(self) -> Path:
        return self.root / "trials"

    @property
    def home(self) -> Path:
        return self.root / "home"


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP port listening on the host's loopback (connections wait in its backlog)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield server.getsockname()[1]


def scene(
    root: Path,
    port: int,
    changes: dict[str, Any] | None = None,
    agent_env: dict[str, str] | None = None,
) -> Scene:
    """The example suite (two tasks, two arms) with an answers file next to its source;
    `agent_env` reaches the agent (through the suite's `env`)."""
    suite_dir = root / "suite"
    suite = write_suite(suite_dir, changes)
    (suite_dir / "ANSWERS.md").write_text("calc.py: use a + b\n")
    (root / "home").mkdir()
    (root / "home" / "secret.txt").write_text("the user's secret\n")
    (root / "outside").mkdir()
    (root / "trials").mkdir()
    targets = {
        "home_secret": str(root / "home" / "secret.txt"),
        "env_marker": ENV_MARKER,
        "suite": str(suite_dir),
        "answers": str(suite_dir / "ANSWERS.md"),
        "source": str(suite_dir / "repo"),
        "results": str(root / "results"),
        "base": str(root / "trials"),
        "outside": str(root / "outside"),
        "port": port,
    }
    data = json.loads(suite.read_text())
    data["env"] = {
        **data.get("env", {}),
        **(agent_env or {}),
        "HOSTILE_TARGETS": json.dumps(targets),
    }
    suite.write_text(json.dumps(data))
    return Scene(root, suite, targets)


def agent_run(
    scene: Scene, *extra: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`plumbline agent run` of the hostile agent, as a user would start it (the harness's
    HOME is the scene's, its environment holds a key it never passes)."""
    command = [sys.executable, "-m", "plumbline", "agent", "run", str(scene.suite)]
    command += ["--agent", f"{sys.executable} {HOSTILE}", "-o", str(scene.results)]
    command += ["--workdir", str(scene.base), "--repeats", "1", "--concurrency", "2", "--json"]
    environment = {**os.environ, "HOME": str(scene.home), "OPENAI_API_KEY": ENV_MARKER}
    return subprocess.run(
        [*command, *extra],
        env={**environment, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def reports(scene: Scene) -> list[dict[str, Any]]:
    """What each trial's hostile agent reported (its saved stdout)."""
    found = []
    for record in read_jsonl(scene.results / "records.jsonl"):
        if "run_id" not in record:
            continue  # a line an unconfined agent forged
        log = scene.results / "logs" / record["run_id"] / "agent.stdout"
        found.append(json.loads(log.read_text().splitlines()[-1]))
    return found


def processes_with(marker: str) -> list[int]:
    """Host processes whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


#: SIGKILL's bit in /proc/PID/status's signal masks, and the kernel's "exiting" task flag
#: (PF_EXITING, in /proc/PID/stat's flags).
_SIGKILL_BIT = 1 << (9 - 1)
_PF_EXITING = 0x4
_SHOWN = {"State", "PPid", "NSpid", "SigPnd", "ShdPnd", "SigBlk", "SigIgn"}


def _ending(pid: int) -> bool:
    """Whether process `pid` is gone, exiting, or has a SIGKILL pending (it runs no more of
    its own code)."""
    try:
        status = (Path("/proc") / str(pid) / "status").read_text()
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return True
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    pending = int(fields["SigPnd"], 16) | int(fields["ShdPnd"], 16)
    flags = int(stat.rsplit(")", 1)[1].split()[6])
    return fields["State"].strip()[:1] in "ZX" or bool(
        pending & _SIGKILL_BIT or flags & _PF_EXITING
    )


def left_running(marker: str) -> list[str]:
    """The processes holding `marker` that still run: each as `PID: its status lines`.

    A trial's processes end with its PID namespace, which the kernel tears down after the
    harness has seen the trial end: bwrap reports the agent's exit as soon as its init process
    sees it, and the namespace's other processes are killed (SIGKILL) and reaped when that
    init ends. On a loaded machine a process can still be listed, killed but not yet reaped, when
    `agent run` has returned; it no longer runs, so it does not count as left running."""
    running = []
    for pid in processes_with(marker):
        if not _ending(pid):
            with contextlib.suppress(OSError):
                status = (Path("/proc") / str(pid) / "status").read_text().splitlines()
                shown = [line for line in status if line.split(":")[0] in _SHOWN]
                running.append(f"{pid}: {shown}")
    return running


def test_a_sandboxed_agent_reaches_nothing_but_its_own_trial(tmp_path: Path, listener: int) -> None:
    marker = f"plumbline-linger-{os.getpid()}-{time.monotonic_ns()}"
    here = scene(tmp_path, listener, agent_env={"HOSTILE_LINGER": marker})
    completed = agent_run(here)
    assert completed.returncode == 0, completed.stderr
    found = reports(here)
    assert len(found) == 4
    for report in found:
        assert report["home_secret"] is None
        assert report["shadow"] is None
        assert report["env_marker_in"] == [] and report["suite_path_in"] == []
        assert report["suite_listing"] is None and report["answers"] is None
        assert report["planted_in_source"] is False
        assert report["other_trials"] == [] and report["wrote_other_trial"] is False
        assert report["results_listing"] is None
        assert report["records_appended"] is False and report["plan_rewritten"] is False
        assert report["outside_written"] is False
        # Its own trial is its to use; the host's network is not (its own namespace).
        assert report["workspace_written"] and report["home_written"] and report["tmp_written"]
        assert report["network"] is False
        assert report["pid"] < 10  # its own PID namespace
    assert not (here.root / "suite" / "repo" / "PLANTED").exists()
    assert list((here.root / "outside").iterdir()) == []
    records = read_jsonl(here.results / "records.jsonl")
    assert len(records) == 4 and {r["sandbox"] for r in records} == {"bubblewrap"}
    assert {r["network"] for r in records} == {"isolated"}
    assert {r["limits"]["mechanism"] for r in records} == {mechanism()}
    document = json.loads(completed.stdout)
    assert document["record_errors"] == []
    assert json.loads((here.results / "plan.json").read_text())["schedule"]
    # The setsid processes every agent left ended with their trials.
    assert left_running(marker) == []


def test_the_same_agent_unconfined_reaches_the_host_but_cannot_forge_results(
    tmp_path: Path, listener: int
) -> None:
    here = scene(tmp_path, listener)
    completed = agent_run(here, "--sandbox", "none")
    assert completed.returncode == 0, completed.stderr
    found = reports(here)
    # The probes are real: unconfined, the agent reads the host and writes into the results.
    assert all(r["home_secret"] == "the user's secret\n" for r in found)
    assert all(r["env_marker_in"] for r in found)
    assert all(r["records_appended"] for r in found)
    assert any(r["planted_in_source"] for r in found)
    # Every trial's workspace came from the snapshot made at plan time: no plant inherited.
    assert all("PLANTED" not in r["workspace_files"] for r in found)
    document = json.loads(completed.stdout)
    assert {arm: tally["runs"] for arm, tally in document["arms"].items()} == {
        "without_hint": 2,
        "with_hint": 2,
    }
    forged = [e for e in document["record_errors"] if "not a unit of this run's plan" in e]
    assert len(forged) == 4
    assert {r["sandbox"] for r in read_jsonl(here.results / "records.jsonl") if "run_id" in r} == {
        "none"
    }


def test_network_none_cuts_the_network(tmp_path: Path, listener: int) -> None:
    here = scene(tmp_path, listener)
    completed = agent_run(here, "--network", "none")
    assert completed.returncode == 0, completed.stderr
    assert [r["network"] for r in reports(here)] == [False] * 4
    assert {r["network"] for r in read_jsonl(here.results / "records.jsonl")} == {"none"}


def test_network_host_reaches_the_host_and_says_so(tmp_path: Path, listener: int) -> None:
    here = scene(tmp_path, listener)
    completed = agent_run(here, "--network", "host")
    assert completed.returncode == 0, completed.stderr
    assert [r["network"] for r in reports(here)] == [True] * 4
    assert {r["network"] for r in read_jsonl(here.results / "records.jsonl")} == {"host"}


def impossible_scene(root: Path, port: int, route: str) -> Scene:
    """One task whose acceptance test cannot pass (and is protected)."""
    source = root / "impossible"
    source.mkdir(parents=True)
    (source / "test_impossible.py").write_text(IMPOSSIBLE_TEST)
    task = {
        "id": "impossible",
        "prompt": "Make the test pass.",
        "source": {"dir": str(source)},
        "acceptance": "python3 -m unittest -q test_impossible",
        "acceptance_files": ["test_impossible.py"],
        "timeout_seconds": 60,
    }
    path = os.environ.get("PATH", os.defpath)
    return scene(
        root,
        port,
        {"tasks": [task]},
        agent_env={"PATH": f"/tmp/shims:{path}", "HOSTILE_TAMPER": route},
    )


@pytest.mark.parametrize("route", ["detached", "usercustomize", "shadow", "shim"])
def test_no_tampering_route_passes_an_impossible_acceptance_test(
    tmp_path: Path, listener: int, route: str
) -> None:
    here = impossible_scene(tmp_path, listener, route)
    completed = agent_run(here)
    assert completed.returncode == 0, completed.stderr
    records = read_jsonl(here.results / "records.jsonl")
    assert len(records) == 2
    for record in records:
        assert record["success"] is False and record["infra_failure"] is False
        if route == "shadow":
            assert "unittest/__init__.py" in record["shadowing_files"]
            assert "unittest/__init__.py" in record["failure_reason"]
            assert record["acceptance_exit_code"] is None
        else:
            assert record["shadowing_files"] == []
            assert record["acceptance_exit_code"] == 1


def test_a_home_file_reaches_the_agent_and_never_the_results(tmp_path: Path, listener: int) -> None:
    here = scene(tmp_path, listener)
    token = "oauth-token-4f9c2a7be1d34c5a"
    credential = tmp_path / "auth.json"
    credential.write_text(json.dumps({"access_token": token}))
    data = json.loads(here.suite.read_text())
    targets = {**here.targets, "home_file": ".codex/auth.json"}
    data["env"]["HOSTILE_TARGETS"] = json.dumps(targets)
    here.suite.write_text(json.dumps(data))
    completed = agent_run(here, "--home-file", f"{credential}:.codex/auth.json")
    assert completed.returncode == 0, completed.stderr
    found = reports(here)
    assert all(r["home_file"] is not None and "redacted" in r["home_file"] for r in found)
    for path in here.results.rglob("*"):
        if path.is_file():
            assert token not in path.read_text(errors="replace"), path


def test_without_bubblewrap_the_run_stops_with_one_line(tmp_path: Path, listener: int) -> None:
    here = scene(tmp_path, listener)
    completed = agent_run(here, env={"PLUMBLINE_BWRAP": str(tmp_path / "no-bwrap")})
    assert completed.returncode == 2
    error = completed.stderr.strip().splitlines()[-1]
    assert "bubblewrap is not installed" in error and "--sandbox none" in error
    assert not (here.results / "records.jsonl").exists()


def test_a_node_package_is_mounted_by_its_node_modules_and_its_link(tmp_path: Path) -> None:
    package = tmp_path / "prefix" / "node_modules" / "@scope" / "agent" / "bin"
    package.mkdir(parents=True)
    script = package / "agent.js"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    bin_dir = tmp_path / "prefix" / "node_modules" / ".bin"
    bin_dir.mkdir()
    (bin_dir / "agent").symlink_to("../@scope/agent/bin/agent.js")
    elsewhere = tmp_path / "bin"
    elsewhere.mkdir()
    (elsewhere / "agent").symlink_to(bin_dir / "agent")
    prefixes, links = install_paths(elsewhere / "agent", "/usr/bin:/bin")
    assert prefixes == (tmp_path / "prefix" / "node_modules",)
    # Each link is recreated pointing at the real file, which is mounted where it really is.
    assert (str(script.resolve()), elsewhere / "agent") in links
    assert (str(script.resolve()), bin_dir / "agent") in links
    # A directory above the link that is itself a link (`.tools` -> elsewhere): the recreated
    # link still points at the real file, never through the directory link.
    (tmp_path / "linked").symlink_to(tmp_path / "prefix")
    through = tmp_path / "linked" / "node_modules" / ".bin" / "agent"
    prefixes, links = install_paths(through, "/usr/bin:/bin")
    assert prefixes == (tmp_path / "prefix" / "node_modules",)
    assert links == ((str(script.resolve()), through),)


def test_shadowing_files_are_new_top_level_modules_named_like_importable_ones(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "pkg").mkdir(parents=True)
    (workspace / "pkg" / "__init__.py").write_text("")
    (workspace / "tests").mkdir()
    (workspace / "conftest.py").write_text("")
    before = file_names(workspace)
    for name in (
        "json.py",  # a standard-library module, at the top
        "pkg/json.py",  # inside a package: `pkg.json`, shadows nothing
        "tests/json.py",  # tests/ is no package: pytest puts it on the path
        "unittest/__init__.py",
        "numpy/__init__.py",  # an installed distribution's module
        "mymodule.py",
        "sitecustomize.py",
        "pkg/usercustomize.py",
        "tests/conftest.py",  # a conftest where the task had none
        "extra.pth",
        "json.cpython-311-x86_64-linux-gnu.so",
    ):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("")
    (workspace / "conftest.py").write_text("changed")  # the task's own: not new
    assert shadowing_files(workspace, before) == [
        "extra.pth",
        "json.cpython-311-x86_64-linux-gnu.so",
        "json.py",
        "numpy/__init__.py",
        "pkg/usercustomize.py",
        "sitecustomize.py",
        "tests/conftest.py",
        "tests/json.py",
        "unittest/__init__.py",
    ]
    allowed = ["json", "tests/conftest.py", "extra.pth"]
    assert shadowing_files(workspace, before, allowed) == [
        "numpy/__init__.py",
        "pkg/usercustomize.py",
        "sitecustomize.py",
        "unittest/__init__.py",
    ]


def test_a_mount_inside_the_suite_or_results_is_refused(tmp_path: Path, listener: int) -> None:
    here = scene(tmp_path, listener)
    for inside in (here.root / "suite", here.root / "suite" / "repo"):
        completed = agent_run(here, "--mount-ro", str(inside))
        assert completed.returncode == 2
        assert "trials must not see" in completed.stderr, completed.stderr
    # The results directory: refused as an input of the command that writes it.
    here.results.mkdir(exist_ok=True)
    completed = agent_run(here, "--mount-ro", str(here.results))
    assert completed.returncode == 2 and "both an input and an output" in completed.stderr


def test_resuming_under_another_sandbox_is_refused(tmp_path: Path, listener: int) -> None:
    here = scene(tmp_path, listener)
    # (The unconfined agent must not plant a file in the source or rewrite the plan: either
    # makes the output one of a different experiment.)
    data = json.loads(here.suite.read_text())
    targets = {k: v for k, v in here.targets.items() if k not in ("source", "results")}
    data["env"]["HOSTILE_TARGETS"] = json.dumps(targets)
    here.suite.write_text(json.dumps(data))
    assert agent_run(here, "--sandbox", "none").returncode == 0
    again = agent_run(here)
    assert again.returncode == 2
    assert "--sandbox none" in again.stderr and "--force" in again.stderr


def test_compare_warns_when_the_arms_ran_in_different_sandboxes(
    tmp_path: Path, listener: int
) -> None:
    runs = {}
    for kind in ("bubblewrap", "none"):
        here = scene(tmp_path / kind, listener)
        completed = agent_run(here, "--sandbox", kind, "--repeats", "2")
        assert completed.returncode == 0, completed.stderr
        runs[kind] = read_jsonl(here.results / "records.jsonl")
    mixed = tmp_path / "mixed.jsonl"
    chosen = [r for r in runs["bubblewrap"] if r["arm"] == "with_hint"]
    chosen += [r for r in runs["none"] if r["arm"] == "without_hint" and "run_id" in r]
    mixed.write_text("".join(json.dumps(r) + "\n" for r in chosen))
    # the comparison reads the records only: in this process
    command = ["compare", str(mixed), "--json", "--treatment", "with_hint"]
    command += ["--control", "without_hint"]
    completed = CliRunner().invoke(main, command, catch_exceptions=False)
    assert completed.exit_code == 0, completed.stderr
    warnings = json.loads(completed.stdout)["comparisons"][0]["warnings"]
    assert any("ran in different sandboxes" in w for w in warnings), warnings
    # Unconfined trials run on the host's network; the sandboxed ones on their own.
    networks = [w for w in warnings if "ran in different networks" in w]
    assert networks and "with_hint: isolated; without_hint: host" in networks[0], warnings
    same = tmp_path / "same.jsonl"
    same.write_text("".join(json.dumps(r) + "\n" for r in runs["bubblewrap"]))
    command[1] = str(same)
    completed = CliRunner().invoke(main, command, catch_exceptions=False)
    assert completed.exit_code == 0, completed.stderr
    warnings = json.loads(completed.stdout)["comparisons"][0]["warnings"]
    assert not any("different sandboxes" in w or "different networks" in w for w in warnings)
