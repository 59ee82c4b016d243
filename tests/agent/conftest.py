"""Fixtures of the agent harness tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.agent.helpers import write_suite


@pytest.fixture
def make_suite(tmp_path: Path) -> Callable[..., Path]:
    """A JSON suite in a temp directory: the example's, with changes (see `write_suite`)."""

    def make(changes: dict[str, Any] | None = None, name: str = "suite") -> Path:
        return write_suite(tmp_path / name, changes)

    return make
