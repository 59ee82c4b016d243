"""`plumbline.core.torch_thread`: every call runs on one long-lived thread."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from plumbline.core import torch_thread


def test_calls_from_any_thread_run_on_the_same_thread() -> None:
    with ThreadPoolExecutor(4) as pool:
        seen = list(pool.map(lambda _: torch_thread.run(threading.current_thread), range(8)))
    seen.append(torch_thread.run(threading.current_thread))
    assert len(set(seen)) == 1
    assert seen[0] is not threading.current_thread()
    assert seen[0].name.startswith("plumbline-torch")


def test_a_call_from_the_torch_thread_runs_in_place() -> None:
    # re-entrant: no deadlock when torch work calls run again
    inner = torch_thread.run(lambda: torch_thread.run(threading.current_thread))
    assert inner is torch_thread.run(threading.current_thread)
    assert torch_thread.run(torch_thread.on_torch_thread)
    assert not torch_thread.on_torch_thread()


def test_the_callers_get_the_result_and_the_exception() -> None:
    assert torch_thread.run(pow, 2, 10) == 1024

    def fails() -> None:
        raise ValueError("from the torch thread")

    with pytest.raises(ValueError, match="from the torch thread"):
        torch_thread.run(fails)
    assert torch_thread.run(sum, [1, 2, 3]) == 6  # the thread survives a failed call
