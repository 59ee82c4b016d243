"""All of the process's torch computation on one thread.

torch's CPU kernels run on OpenMP (libgomp). Every thread that starts parallel work gets a team
of worker threads of its own, and once libgomp manages more threads than there are cores it
stops spin-waiting between parallel regions and puts its workers to sleep after each one. A
decoding step of the local model is about two hundred small parallel regions, so on 2 cores a
second thread that had ever run torch work (an idle Inspect executor thread is enough) made
every step about 1.8 times slower: 32 ms alone, 59–62 ms with a second team alive, the same as
`OMP_WAIT_POLICY=PASSIVE` (`benchmarks/bench_local_batching.py` shows both; libgomp's
`gomp_throttled_spin_count_var`). Running every model load, forward pass and embedding on one
long-lived thread keeps one team, whichever threads the callers are on.

`run(function, *args)` runs `function` there and returns its result (its exception is raised
in the caller); called from the torch thread itself it just calls `function`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_T = TypeVar("_T")

_executor: ThreadPoolExecutor | None = None
_thread: threading.Thread | None = None
_lock = threading.Lock()


def _mark() -> None:
    global _thread
    _thread = threading.current_thread()


def _torch_executor() -> ThreadPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(1, thread_name_prefix="plumbline-torch")
            _executor.submit(_mark).result()
        return _executor


def _forget_after_fork() -> None:
    # a forked child has no torch thread: its first call starts one
    global _executor, _thread, _lock
    _executor, _thread, _lock = None, None, threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


def run(function: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """`function(*args, **kwargs)` on the torch thread (see the module docstring)."""
    if on_torch_thread():
        return function(*args, **kwargs)
    future = _torch_executor().submit(function, *args, **kwargs)
    try:
        return future.result()
    except BaseException:
        future.cancel()  # an interrupted caller's work does not start later (once started, it
        raise  # runs to its end: the caller stops a decoding through its requests' events)


def on_torch_thread() -> bool:
    """Whether the caller is the torch thread."""
    return threading.current_thread() is _thread
