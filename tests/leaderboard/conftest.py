"""Session fixtures: the leaderboard scenario's Inspect logs (see leaderboard_scenario.py),
built once per test run and only read by the tests (tests/support/shared.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from leaderboard_scenario import Fixture, generate_logs
from tests.support.shared import built_once


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    """Run the scenario once per test run (the first xdist worker to ask runs it)."""
    return built_once(tmp_path_factory, "leaderboard-scenario", generate_logs)


def _clean(root: Path, scenario: Fixture) -> Path:
    for sub in ("alpha", "beta", "gamma"):
        shutil.copytree(scenario.logs / sub, root / sub)
    (root / "alpha" / scenario.alpha_pe_old.name).unlink()
    return root


@pytest.fixture(scope="session")
def clean_logs(inspect_logs: Fixture, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Only the usable logs of alpha, beta and gamma (no problems at all)."""
    return built_once(
        tmp_path_factory, "leaderboard-clean", lambda root: _clean(root, inspect_logs)
    )


@pytest.fixture(scope="session")
def original_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Logs of the original SA Bench project's tasks (see tests/support/original_sa_bench.py)."""
    from tests.support.original_sa_bench import original_logs as run

    return built_once(tmp_path_factory, "original-sa-bench", run)
