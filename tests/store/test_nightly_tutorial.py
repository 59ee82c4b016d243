"""The nightly tutorial (docs/tutorials/nightly.md, section 4) run as written, night after
night, on a SQLite file and on a real PostgreSQL server whose role must give its password
(scram-sha-256, from `PGPASSWORD` or a `~/.pgpass` file): every step succeeds, the store fills,
and the password shows nowhere: not in stdout, stderr, the files written or the server's log.
Only the model (an offline scripted one) and the sample count are changed from the text.

The evaluation does not depend on the store, only the storing does: the first night's first
step (the one fresh evaluation) runs once, on SQLite, in a module fixture (`first_night`); the
SQLite test goes on in that directory, and the PostgreSQL test starts from a copy of the logs
it wrote (its first night reuses them, as a second night does, and stores them afresh)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.postgres import PostgresServer

ROOT = Path(__file__).parents[2]
TUTORIAL = ROOT / "docs/tutorials/nightly.md"

# one fresh evaluation (`first_night`) for both tests: under `--dist loadgroup`, on one worker
pytestmark = pytest.mark.xdist_group("nightly_tutorial")


def nightly_job() -> dict[str, Any]:
    """The tutorial's workflow: its `env` and the plumbline command of each step."""
    text = TUTORIAL.read_text(encoding="utf-8")
    section = text.split("## 4. Put it together", 1)[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block, "the nightly job's YAML block"
    return dict(yaml.safe_load(block.group(1)))


def as_run_here(command: str) -> list[str]:
    """A step's command with an offline model, two samples per task and the CI's variables."""
    command = command.replace("${{ github.sha }}", "abc123").replace(
        "${{ github.ref_name }}", "main"
    )
    command = command.replace(
        "--model openai/gpt-4o-mini --limit 50", "--model scripted/weak --limit 2"
    )
    args = shlex.split(command)
    assert args[0] == "plumbline", command
    return args


def plumbline(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}
    for name in ("PLUMBLINE_STORE", "PGPASSWORD", "PGPASSFILE"):
        if name not in env:
            environment.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "plumbline", *args[1:], "--display", "none"]
        if args[1] == "run"
        else [sys.executable, "-m", "plumbline", *args[1:]],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )


def everything_written(*roots: Path) -> str:
    return "\n".join(
        path.read_bytes().decode("utf-8", "replace")
        for root in roots
        for path in root.rglob("*")
        if path.is_file()
    )


def run_the_nights(cwd: Path, env: dict[str, str], nights: int, skip: int = 0) -> list[str]:
    """Each step of the job, `nights` times, but the first `skip` steps (already run); every
    step's output."""
    outputs = []
    job = nightly_job()
    steps = [step for _ in range(nights) for step in job["steps"]][skip:]
    for step in steps:
        result = plumbline(as_run_here(step["run"]), cwd, env)
        outputs.append(result.stdout + result.stderr)
        assert result.returncode == 0, (step["run"], result.stderr[-3000:])
    return outputs


@dataclass(frozen=True)
class FirstNight:
    """The job's first step, run once on SQLite: its directory, a copy of the logs it wrote
    (taken before anything else ran there), the password that was in its environment and
    its output."""

    cwd: Path
    logs: Path
    password: str
    output: str


@pytest.fixture(scope="module")
def first_night(tmp_path_factory: pytest.TempPathFactory) -> FirstNight:
    """The first night's first step (the fresh evaluation), on SQLite, with the PostgreSQL
    test's password in `PGPASSWORD` as in the tutorial's `env`: the logs it writes are then
    scanned for the password too, in the PostgreSQL test's directory."""
    cwd = tmp_path_factory.mktemp("nightly")
    password = "Pw" + uuid.uuid4().hex
    env = {"PLUMBLINE_STORE": str(cwd / "results.db"), "PGPASSWORD": password}
    first_step = as_run_here(nightly_job()["steps"][0]["run"])
    result = plumbline(first_step, cwd, env)
    assert result.returncode == 0, (first_step, result.stderr[-3000:])
    logs = tmp_path_factory.mktemp("nightly-logs") / "logs"
    shutil.copytree(cwd / "logs", logs)
    return FirstNight(cwd, logs, password, result.stdout + result.stderr)


def check_the_store(cwd: Path) -> None:
    alarms = json.loads((cwd / "alarms.json").read_text(encoding="utf-8"))
    assert alarms["series"], alarms
    # the second night rebuilds the leaderboard from the same logs: one entry, not two
    assert {len(series["runs"]) for series in alarms["series"]} == {1}, alarms["series"]
    assert {series["metric"] for series in alarms["series"]} >= {"overall", "cdk_synth"}
    assert "scripted/weak" in (cwd / "site/history/index.html").read_text(encoding="utf-8")


def test_the_nightly_job_runs_on_sqlite(first_night: FirstNight) -> None:
    cwd = first_night.cwd
    env = {"PLUMBLINE_STORE": str(cwd / "results.db")}
    run_the_nights(cwd, env, nights=2, skip=1)  # the first step ran in `first_night`
    check_the_store(cwd)


def test_the_nightly_job_runs_on_postgresql_with_a_password(
    postgres: PostgresServer, first_night: FirstNight, tmp_path: Path
) -> None:
    password = first_night.password
    suffix = uuid.uuid4().hex[:8]
    url = postgres.add_login(f"ci_{suffix}", password, f"plumbline_{suffix}")
    shutil.copytree(first_night.logs, tmp_path / "logs")
    job = nightly_job()
    assert job["env"]["PLUMBLINE_STORE"].startswith("postgresql://ci@")
    assert job["env"]["PGPASSWORD"] == "${{ secrets.DB_PASSWORD }}"
    env = {"PLUMBLINE_STORE": url, "PGPASSWORD": password}
    outputs = run_the_nights(tmp_path, env, nights=2)
    check_the_store(tmp_path)

    # ~/.pgpass instead of PGPASSWORD (PGPASSFILE names the file)
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{postgres.port}:plumbline_{suffix}:ci_{suffix}:{password}\n")
    pgpass.chmod(0o600)
    listed = plumbline(
        ["plumbline", "history"], tmp_path, {"PLUMBLINE_STORE": url, "PGPASSFILE": str(pgpass)}
    )
    assert listed.returncode == 0 and "sa-bench" in listed.stdout, listed.stderr
    pgpass.unlink()

    # a wrong password: the leaderboard is still written, one warning, exit 3 (--store-required)
    (tmp_path / "logs/leaderboard.json").unlink()
    first_step = as_run_here(job["steps"][0]["run"])
    wrong = plumbline(
        first_step, tmp_path, {"PLUMBLINE_STORE": url, "PGPASSWORD": "wrong" + password}
    )
    assert wrong.returncode == 3, wrong.stderr[-2000:]
    assert (tmp_path / "logs/leaderboard.json").is_file()
    assert "password authentication failed" in wrong.stderr
    assert "Traceback" not in wrong.stderr

    for text in [
        first_night.output,
        *outputs,
        listed.stdout + listed.stderr,
        wrong.stdout + wrong.stderr,
    ]:
        assert password not in text
    assert password not in everything_written(tmp_path, first_night.cwd, postgres.root)
