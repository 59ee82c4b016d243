"""The Ray executor's options and inputs, checked without a cluster: bad options are usage
errors before anything runs, and the inputs shipped to workers build the same workspace as the
suite's own files."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from click.testing import CliRunner
from tests.agent.helpers import fake_agent, write_suite

from plumbline.agent.harness import Materials
from plumbline.agent.plan import make_plan
from plumbline.agent.profiles import resolve_agent
from plumbline.agent.suite import load_suite
from plumbline.cli.main import main
from plumbline.cluster.trials import ShippedMaterials


def _tree(root: Path) -> dict[str, str]:
    found = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[relative] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[relative] = f"{path.read_text()} mode {path.stat().st_mode & 0o777:o}"
    return found


def test_shipped_inputs_build_the_workspace_the_suite_files_build(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    repo = tmp_path / "suite" / "repo"
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link").symlink_to("calc.py")
    (repo / "sub" / ".git").mkdir(parents=True)
    (repo / "sub" / ".git" / "HEAD").write_text("history stays behind\n")
    (repo / "sub" / "kept.txt").write_text("kept\n")
    plan = make_plan(load_suite(suite), resolve_agent(fake_agent(), None), repeats=1, seed=0)
    local, shipped = Materials(plan), ShippedMaterials(plan)
    for task_plan in plan.tasks.values():
        here, there = tmp_path / "here" / task_plan.task.id, tmp_path / "there" / task_plan.task.id
        local.copy_source(task_plan, here)
        shipped.copy_source(task_plan, there)
        assert _tree(here) == _tree(there)
        assert "sub/.git/HEAD" not in _tree(there) and _tree(there)["link"] == "-> calc.py"
        for arm in plan.loaded.suite.arms:
            task = task_plan.task
            assert shipped.prompt(task, arm) == local.prompt(task, arm)
            for item in arm.add_files:
                assert shipped.file_content(item) == local.file_content(item)


def test_a_git_source_ships_its_commit(tmp_path: Path) -> None:
    source = tmp_path / "src-repo"
    source.mkdir()
    (source / "a.txt").write_text("committed\n")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
    }
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    for command in (["init", "-q"], ["add", "."], ["commit", "-qm", "one"]):
        subprocess.run(["git", "-C", str(source), *command], check=True, env=env)
    (source / "a.txt").write_text("not committed\n")
    task = {"id": "t", "prompt": "p", "source": {"git": str(source)}, "acceptance": "true"}
    suite = write_suite(tmp_path / "suite", {"tasks": [task]})
    plan = make_plan(load_suite(suite), resolve_agent(fake_agent(), None), repeats=1, seed=0)
    ShippedMaterials(plan).copy_source(plan.tasks["t"], tmp_path / "ws")
    assert (tmp_path / "ws" / "a.txt").read_text() == "committed\n"


def _run(*options: str, tmp_path: Path) -> tuple[int, str, Path]:
    suite = write_suite(tmp_path / "suite")
    out = tmp_path / "out"
    command = ["agent", "run", str(suite), "--agent", fake_agent(), "-o", str(out), "--json"]
    result = CliRunner().invoke(main, [*command, "--executor", "ray", *options])
    return result.exit_code, result.output, out


def test_a_bad_memory_size_is_a_usage_error(tmp_path: Path) -> None:
    code, output, out = _run("--memory-per-trial", "lots", tmp_path=tmp_path)
    assert code == 2 and "--memory-per-trial" in output and "512M or 4G" in output
    assert not out.exists()


def test_an_address_nobody_answers_fails_fast_and_writes_nothing(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, output, out = _run("--ray-address", f"127.0.0.1:{port}", tmp_path=tmp_path)
    assert code == 2 and f"127.0.0.1:{port}: nothing answers there" in output
    assert not (out / "plan.json").exists() and not (out / "records.jsonl").exists()
