"""Read-only test data built once per test run, not once per xdist worker.

A session fixture runs in each worker that needs it (`make test` runs two): data that takes
real runs to make (Inspect evaluations) and that the tests only read is built by the first
worker to ask, under a file lock in the run's shared temporary directory, and read by the
others (pytest-xdist's recipe: "Making session-scoped fixtures execute only once"). Without
xdist it is a plain session fixture's directory.
"""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def built_once(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """`build(directory)` once per test run, in a fresh `directory` (named after `name`); every
    worker gets its result. The result is pickled beside the directory for the other workers,
    so it holds paths and plain values. Callers only read what is in the directory."""
    base = factory.getbasetemp()
    # each xdist worker has its own basetemp, in the run's one directory
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    directory = root / f"built-once-{name}"
    result_file = root / f"built-once-{name}.pickle"
    with open(root / f"built-once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes (or its worker dies)
        if result_file.is_file():
            result: T = pickle.loads(result_file.read_bytes())
            return result
        directory.mkdir()
        result = build(directory)
        # written last: a worker that died mid-build leaves no result, and the next one fails
        # on the directory it left (mkdir), never on half the data
        result_file.write_bytes(pickle.dumps(result))
        return result
