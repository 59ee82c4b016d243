"""The results store's fixtures: a real PostgreSQL server for the session, one store per test
on each backend (`store_url`), and real result documents made by running plumbline."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.postgres import PostgresServer, PostgresUnavailable, postgres_server
from tests.support.store_results import (
    Documents,
    compare_report,
    mini_leaderboard,
    reliability_report,
)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the session; the tests fail (never skip) without one."""
    try:
        with postgres_server() as server:
            yield server
    except PostgresUnavailable as error:
        pytest.fail(str(error), pytrace=False)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store on each backend: a SQLite file, a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database(f"store_{uuid.uuid4().hex[:12]}")


@pytest.fixture(scope="session")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Documents:
    root = tmp_path_factory.mktemp("results")
    return Documents(
        leaderboard=mini_leaderboard(root / "board", correct=24),
        compare=compare_report(root),
        reliability=reliability_report(root),
    )
