"""Fixtures for report tests: chromium (one per test module) and the Inspect scenario."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from browser import CHROMIUM_ARGS, chromium_path, outside_event_loop
from report_scenario import Scenario, generate_scenario
from tests.support.shared import built_once

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's chromium driven by Playwright; fails (never skips) when chromium is missing.

    One browser per test module, not per session: while Playwright's sync API is running, it
    leaves its event loop marked as running on this thread, so any later test in the same
    worker that calls `asyncio.run` (Inspect's eval, `plumbline run`) would fail. Pytest tears
    a module fixture down as soon as the worker moves to a test of another module.
    """
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(executable), args=list(CHROMIUM_ARGS), headless=True
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    """Where a test writes its screenshots: under the test's own output directory."""
    return tmp_path / "screenshots"


@pytest.fixture(scope="session")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    """Real Inspect runs of a slice of sa-bench and their leaderboard (see report_scenario.py),
    once per test run; the tests only read its files (tests/support/shared.py)."""

    def build(root: Path) -> Scenario:
        return outside_event_loop(generate_scenario, root)

    return built_once(tmp_path_factory, "report-scenario", build)
