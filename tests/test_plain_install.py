"""A plain install that works (issue 27): `pip install plumbline` (the wheel, base dependencies
only) then `plumbline leaderboard LOGDIR` printed "internal error: ModuleNotFoundError: No
module named 'inspect_ai'". The wheel is built here and installed into a clean virtual
environment (no system site packages, no extras); `leaderboard`, `compare` and `report` run
from it, and a command that needs an extra says which, in one line.

Fast on a fresh CI machine: the wheel is built without isolation (the dev environment's
setuptools, no download); the clean environment is made without pip of its own (the dev
environment's pip installs into it with `--python`, and compiles nothing), pinned to the
versions the dev environment already resolved (`pip freeze` as constraints), so pip resolves
at once and takes every wheel from its cache or the configured index (about a minute here).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

import plumbline

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = Path(plumbline.__file__).resolve().parent / "examples"
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("plain_install")]


def _run(command: list[str], **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=900, **options
    )  # type: ignore[call-overload, no-any-return]


def _clean_env() -> dict[str, str]:
    """This environment without what points Python at the dev install."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}
    return {k: v for k, v in os.environ.items() if k not in drop} | {"NO_COLOR": "1"}


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The `plumbline` script of a clean venv holding the wheel and its base dependencies."""
    work = tmp_path_factory.mktemp("plain")
    wheels = work / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    built = _run([*build, "-w", str(wheels), str(ROOT)], env=_clean_env())
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = wheels.glob("plumbline-*.whl")
    frozen = _run([sys.executable, "-m", "pip", "freeze", "--exclude-editable"])
    constraints = work / "constraints.txt"
    constraints.write_text(
        "\n".join(
            line
            for line in frozen.stdout.splitlines()
            if "==" in line and not line.lower().startswith("plumbline")
        )
        + "\n"
    )
    venv = work / "venv"
    # no pip of its own (ensurepip takes long): this environment's pip installs into it
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    assert made.returncode == 0, made.stderr
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    install = [*pip, "install", "-q", "--no-compile", str(wheel), "-c", str(constraints)]
    installed = _run(install, env=_clean_env(), cwd=work)
    assert installed.returncode == 0, installed.stderr[-3000:]
    yield venv / "bin" / "plumbline"


def test_base_dependencies_hold_inspect_and_no_heavy_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"])
    assert "inspect-ai" in base
    for heavy in ("torch", "aws-cdk-lib", "ray", "transformers", "sentence-transformers"):
        assert heavy not in base, heavy


@pytest.fixture(scope="module")
def original_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Inspect logs of the original SA Bench project's tasks (run by the dev environment)."""
    from tests.support.original_sa_bench import original_logs as run

    return run(tmp_path_factory.mktemp("original"))


def test_leaderboard_compare_and_report_run_from_a_plain_install(
    plain: Path, tmp_path: Path, original_logs: Path
) -> None:
    env = _clean_env()
    board = tmp_path / "leaderboard.json"
    done = _run([str(plain), "leaderboard", str(original_logs), "-o", str(board)], env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(board.read_text())["models"]
    comparison = tmp_path / "compare.json"
    runs = EXAMPLES / "agent_runs.jsonl"
    arms = ["--treatment", "with_skelly", "--control", "without_skelly"]
    done = _run([str(plain), "compare", str(runs), *arms, "--json", str(comparison)], env=env)
    assert done.returncode in (0, 1), done.stderr  # 1: a gate failed, a result all the same
    assert json.loads(comparison.read_text())["schema_version"].startswith("plumbline.compare")
    site = tmp_path / "site"
    done = _run([str(plain), "report", str(board), str(comparison), "-o", str(site)], env=env)
    assert done.returncode == 0, done.stderr
    assert (site / "index.html").is_file()


def test_a_missing_extra_is_one_line_naming_it(plain: Path, tmp_path: Path) -> None:
    trials = EXAMPLES / "trials.jsonl"
    done = _run([str(plain), "reliability", str(trials)], env=_clean_env())
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode != 0
    assert len(lines) == 1, done.stderr
    assert "plumbline[embeddings]" in lines[0]
    assert "Traceback" not in done.stderr
