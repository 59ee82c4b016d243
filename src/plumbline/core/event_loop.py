"""Running a coroutine to completion on the fastest event loop installed."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run`, on uvloop when it is installed (the `inspect` extra; not on Windows).

    uvloop's event loop and transports cost a high-concurrency probe markedly less CPU per
    call than asyncio's; the semantics a caller relies on (tasks, timeouts, threads, Ctrl-C)
    are asyncio's.
    """
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coroutine)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(coroutine)
