"""A plain install that works (issue 27): `pip install plumbline` (the wheel, base dependencies
only) then `plumbline leaderboard LOGDIR` printed "internal error: ModuleNotFoundError: No
module named 'inspect_ai'". The wheel is built here and installed into a clean virtual
environment (no system site packages, no extras); `leaderboard`, `compare` and `report` run
from it, and a command that needs an extra says which, in one line.

The clean environments take the newest releases pyproject.toml's ranges allow (issue 39), as a
user's `pip install plumbline` next month would, not the lock's: a release that breaks
plumbline shows here first. A second one (a copy of the first, so pip adds only what is new)
holds the wheel with the `inspect` extra and jsii, and each adapter of `plumbline.compat`
reports there whether the newest releases still have the private names it uses, so a break
upstream fails `test_each_adapter_is_fast_on_the_newest_releases` naming the adapter and the
missing name, not a command.

Fast enough on a fresh CI machine: the wheel is built without isolation (the dev environment's
setuptools, no download); the clean environments are made without pip of their own (the dev
environment's pip installs into them with `--python`, and compiles nothing).
"""

from __future__ import annotations

import json
import os
import shutil
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
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plumbline wheel, built from a copy of this checkout's sources (setuptools' `build/`
    directory is then the copy's own, never one a concurrent build in the checkout uses)."""
    wheels = tmp_path_factory.mktemp("wheels")
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
    shutil.copytree(ROOT / "src", source / "src", ignore=skip)
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    built = _run([*build, "-w", str(wheels), str(source)], env=_clean_env())
    assert built.returncode == 0, built.stderr[-3000:]
    [found] = wheels.glob("plumbline-*.whl")
    return found


def _newest_install(work: Path, *requirements: str, start: Path | None = None) -> Path:
    """A clean venv in `work` holding `requirements` at the newest releases their ranges
    allow (a copy of the venv `start` with them added, when given); its Python."""
    venv = work / "venv"
    if start is not None:
        shutil.copytree(start, venv, symlinks=True)
    else:
        # no pip of its own (ensurepip takes long): this environment's pip installs into it
        made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
        assert made.returncode == 0, made.stderr
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    install = [*pip, "install", "-q", "--no-compile", "--upgrade", *requirements]
    installed = _run(install, env=_clean_env(), cwd=work)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return venv / "bin" / "python"


@pytest.fixture(scope="module")
def plain(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The `plumbline` script of a clean venv holding the wheel and its base dependencies."""
    python = _newest_install(tmp_path_factory.mktemp("plain"), str(wheel))
    yield python.parent / "plumbline"


def test_base_dependencies_hold_inspect_and_no_heavy_extra() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"])
    assert "inspect-ai" in base
    for heavy in ("torch", "aws-cdk-lib", "ray", "transformers", "sentence-transformers"):
        assert heavy not in base, heavy


@pytest.fixture(scope="module")
def original_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Inspect logs of the original SA Bench project's tasks (run by the dev environment, once
    per test run: tests/leaderboard's session fixture of the same name reads the same logs)."""
    from tests.support.original_sa_bench import original_logs as run
    from tests.support.shared import built_once

    return built_once(tmp_path_factory, "original-sa-bench", run)


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


#: What each adapter of plumbline.compat needs installed beside the wheel's `inspect` extra.
_ADAPTER_PACKAGES = ("jsii",)
_STATUS = """
import json
from plumbline.compat import inspect, jsii, openai
print(json.dumps([a.ADAPTER.status().describe() for a in (inspect, openai, jsii)]))
print(json.dumps([a.ADAPTER.fast for a in (inspect, openai, jsii)]))
"""


def test_each_adapter_is_fast_on_the_newest_releases(
    wheel: Path, plain: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Fails naming the adapter (and its missing private name, or the release outside the
    range it was checked against) when a new release of Inspect, openai or jsii breaks the
    fast path. plumbline still works then, on the public path; the adapter needs checking
    against that release (see `plumbline.compat`). Ray's adapter is checked against the lock's
    release only (`tests/compat/test_compat_adapters.py`): its wheels are too large for this."""
    work = tmp_path_factory.mktemp("newest")
    # the plain install's copy (its base dependencies are the newest releases already): pip
    # adds the extra and jsii, upgrading anything a newer release of theirs needs
    venv = plain.parent.parent
    python = _newest_install(work, f"{wheel}[inspect]", *_ADAPTER_PACKAGES, start=venv)
    env = {k: v for k, v in _clean_env().items() if k != "PLUMBLINE_COMPAT"}
    done = _run([str(python), "-c", _STATUS], env=env, cwd=work)
    assert done.returncode == 0, done.stderr[-3000:]
    described, fast = (json.loads(line) for line in done.stdout.splitlines()[-2:])
    broken = [text for text, ok in zip(described, fast, strict=True) if not ok]
    assert not broken, "adapters on their public path with the newest releases:\n" + "\n".join(
        broken
    )
