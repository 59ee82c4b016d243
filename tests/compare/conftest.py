"""Fixtures for the comparison tests: run records written to files and read back for real."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from plumbline.records.run_record import RunRecordTable, read_run_records

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "src/plumbline/examples/agent_runs.jsonl"

Run = Callable[..., dict[str, Any]]


def _run(task_id: str = "t1", arm: str = "T", repeat: int = 1, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "task_id": task_id,
        "arm": arm,
        "repeat": repeat,
        "success": True,
        "duration_seconds": 10.0,
        "total_cost_usd": 0.1,
        "input_tokens": 1000,
        "output_tokens": 100,
        "cache_read_tokens": 500,
        "cache_write_tokens": 50,
    }
    record.update(fields)
    return record


@pytest.fixture
def run() -> Run:
    """Build one run record (a dict) with sensible defaults."""
    return _run


@pytest.fixture
def load(tmp_path: Path) -> Callable[[list[dict[str, Any]]], RunRecordTable]:
    """Write records as JSONL and read them back through the real reader."""
    counter = iter(range(1_000_000))

    def write_and_read(records: list[dict[str, Any]]) -> RunRecordTable:
        path = tmp_path / f"runs-{next(counter)}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        return read_run_records([path])

    return write_and_read


@pytest.fixture(scope="session")
def bench_module() -> ModuleType:
    """benchmarks/bench_compare.py, whose per-record baseline is a second implementation."""
    spec = importlib.util.spec_from_file_location(
        "bench_compare", ROOT / "benchmarks/bench_compare.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def example_path() -> Path:
    return EXAMPLE
