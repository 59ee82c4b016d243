"""Session fixtures: the leaderboard scenario's Inspect logs (see leaderboard_scenario.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from leaderboard_scenario import Fixture, generate_logs


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    """Run the scenario once per session (per worker under xdist)."""
    return generate_logs(tmp_path_factory.mktemp("leaderboard"))


@pytest.fixture(scope="session")
def clean_logs(inspect_logs: Fixture, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Only the usable logs of alpha, beta and gamma (no problems at all)."""
    root = tmp_path_factory.mktemp("clean")
    for sub in ("alpha", "beta", "gamma"):
        shutil.copytree(inspect_logs.logs / sub, root / sub)
    (root / "alpha" / inspect_logs.alpha_pe_old.name).unlink()
    return root


@pytest.fixture(scope="session")
def original_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Logs of the original SA Bench project's tasks (see tests/support/original_sa_bench.py)."""
    from tests.support.original_sa_bench import original_logs as run

    return run(tmp_path_factory.mktemp("original"))
