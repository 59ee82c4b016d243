"""Batched decoding for the local model: requests that arrive together decode together.

A CPU forward pass of a 135M model on one token costs not much less than on a handful: the
weights are read either way (on 2 cores a step of 4 rows takes 44 ms, of one row 31 ms). So
concurrent requests share forward passes: a caller queues its request (`Batcher.arriving`)
and waits for it (`Batcher.wait`); a caller that finds no batch running becomes the leader
and takes the queued requests. It waits first, up to a 50 ms window, while other callers are
still preparing theirs, while requests have been arriving during batches, or until as many
are queued as were in flight during the last batch; otherwise only a 10 ms grace, for callers
starting at the same moment. Requests arriving while a
batch decodes queue for the next one. The leader hands the decoding to the process's one
torch thread (`plumbline.core.torch_thread`) and waits for it; the decoding steps of a batch
multiply by transposed copies of the weights (`SkinnyProducts`).

Per request the result is what an unbatched `model.generate` gives: prompts are left-padded
with an attention mask and per-row position ids; each row picks its token from its own logits
with transformers' own warpers (temperature, top-k, top-p, applied in `generate`'s order) and,
when sampling, its own `torch.Generator` seeded with the request's seed, so a seeded answer
does not depend on which requests shared its batch. A row leaves the batch when it ends (an
end-of-sequence token, its budget, its caller's cancel or deadline). Batched and single-row
matrix products can differ in the last bits of a float; the tests and
`benchmarks/bench_local_batching.py` check token identity on real prompts.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from plumbline.core import torch_thread

#: Requests decoded together at most (more only queue for the next batch).
MAX_BATCH = 8
#: Seconds a leader waits at most for requests being prepared or expected (see `_lead`).
WINDOW = 0.05
#: Seconds a leader waits otherwise: requests made at the same moment share the batch.
GRACE = 0.01


def busy_elsewhere() -> int:
    """Tasks running or waiting for a CPU now, besides the caller: the kernel's `procs_running`
    (`/proc/stat`), the least of three readings a millisecond apart (a CPU-bound process is
    runnable in each; a short-lived one is not counted), minus the caller itself. 0 where the
    system does not say (not Linux)."""
    readings: list[int] = []
    for attempt in range(3):
        if attempt:
            time.sleep(0.001)
        try:
            with open("/proc/stat", encoding="ascii") as stat:
                for line in stat:
                    if line.startswith("procs_running "):
                        readings.append(int(line.split()[1]))
                        break
        except (OSError, ValueError):
            return 0
    return max(0, min(readings) - 1) if readings else 0


def usable_cores() -> int:
    """The CPUs this process may run on."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def threads_for(cap: int, cores: int, others: int) -> int:
    """torch threads for a batch: at most `cap`, and no more than the cores that other busy
    tasks leave free (at least 1).

    A torch operation on T threads waits for the slowest of them at its end, and a decoding
    step is about two hundred such operations: when another process holds one of the cores,
    one thread of the team is descheduled in most of them and every step waits for it. On 2
    cores with a competing process, a batch of 4 answers of 32 tokens on 2 threads did not
    finish in 300 s; on 1 thread it took 11 s, and the same 4 calls one after another 28 s
    (`benchmarks/bench_local_contention.py`).
    """
    return max(1, min(cap, cores - others))


@dataclass
class Request:
    """One generation: its prompt, budget, decoding options, and (once done) its result."""

    prompt: list[int]
    budget: int
    sampling: dict[str, Any]  # temperature/top_k/top_p when sampling; empty for greedy
    seed: int
    cancel: threading.Event
    deadline: float | None
    tokens: list[int] = field(default_factory=list)
    timed_out: bool = False
    seconds: float = 0.0
    threads: int = 0  # torch threads its batch was decoded on
    error: BaseException | None = None
    done: bool = False


class SkinnyProducts:
    """Transposed copies of a model's linear weights, for the decoding steps of a batch.

    A decoding step multiplies a few rows (one per request) by each weight matrix. For a few
    rows MKL computes `x @ Wᵀ` from a contiguous Wᵀ much faster than `linear(x, W)` (SmolLM2's
    layers at 4 rows: the 576 × 576 projections 3.6×, the whole step 50 → 44 ms on 2 cores);
    for one row the two are alike. While `active`, every bias-free linear layer of the model
    uses its copy; otherwise (one request alone, the prompt's prefill, any other caller of the
    model) it computes exactly what it always did. The copies double the weights' memory.
    """

    def __init__(self, model: Any) -> None:
        import torch

        self.active = False
        with torch.inference_mode():
            for module in model.modules():
                if isinstance(module, torch.nn.Linear) and module.bias is None:
                    module.forward = self._forward(module.forward, module.weight.t().contiguous())

    def _forward(self, plain: Callable[[Any], Any], transposed: Any) -> Callable[[Any], Any]:
        def forward(rows: Any) -> Any:
            return rows @ transposed if self.active else plain(rows)

        return forward

    @contextlib.contextmanager
    def on(self, active: bool = True) -> Iterator[None]:
        """Use the copies inside the block (when `active`)."""
        self.active = active
        try:
            yield
        finally:
            self.active = False


class Batcher:
    """Runs queued requests in batches on one model; `run` is thread-safe and blocking."""

    def __init__(self, model: Any, eos: set[int], pad: int) -> None:
        import torch

        self.model = model
        self.products = torch_thread.run(SkinnyProducts, model)
        # the most torch threads a batch uses (torch's default, or `-M threads`); fewer while
        # other processes keep the cores busy (`threads_for`)
        self.max_threads: int = torch_thread.run(torch.get_num_threads)
        self._cores = usable_cores()
        self.eos = eos
        self.pad = pad
        # transformers 5 renamed forward's `past_key_values` to `cache` (the old name warns)
        parameters = inspect.signature(model.forward).parameters
        self._cache_argument = "cache" if "cache" in parameters else "past_key_values"
        self._queue: deque[Request] = deque()
        self._changed = threading.Condition()
        self._running = False
        self._incoming = 0  # callers preparing a request (see `arriving`)
        self._concurrent = False  # requests arrived while a batch ran: worth a window
        # the most requests waiting or decoding at once during the last batch (None before
        # the first): a leader with that many queued, and nobody preparing one, goes at once
        self._callers: int | None = None
        self._peak = 0

    @contextlib.contextmanager
    def arriving(self) -> Iterator[Callable[[Request], None]]:
        """A caller preparing a request: a leader waits for it (briefly) before it submits.

        Yields `submit`, which queues the request; call `wait` with it afterwards.
        """
        submitted = False

        def submit(request: Request) -> None:
            nonlocal submitted
            with self._changed:
                if self._running or self._queue:
                    self._concurrent = True
                self._queue.append(request)
                self._incoming -= 1
                submitted = True
                self._changed.notify_all()

        with self._changed:
            self._incoming += 1
        try:
            yield submit
        finally:
            if not submitted:
                with self._changed:
                    self._incoming -= 1
                    self._changed.notify_all()

    def wait(self, request: Request) -> None:
        """Block until `request` (submitted) is decoded, leading batches when none is running."""
        while True:
            with self._changed:
                while self._running and not request.done:
                    self._changed.wait()
                if request.done:
                    break
                self._running = True
            try:
                self._lead()
            finally:
                with self._changed:
                    self._running = False
                    self._changed.notify_all()
        if request.error is not None:
            raise request.error

    def _lead(self) -> None:
        """Take a batch off the queue (after the window, when useful) and decode it."""
        started = time.monotonic()
        with self._changed:
            # wait for callers still preparing their request, or (when requests have been
            # arriving while batches ran) for the next ones, up to the window; otherwise only
            # a grace period, for callers that arrive at the same moment
            while len(self._queue) < MAX_BATCH:
                callers = self._callers
                back = callers is not None and not self._incoming and len(self._queue) >= callers
                expected = (
                    self._incoming > 0 or self._concurrent or len(self._queue) < (callers or 0)
                )
                # when every caller of the last batch is back, only the grace
                wait = WINDOW if expected and not back else GRACE
                left = started + wait - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            batch = [self._queue.popleft() for _ in range(min(MAX_BATCH, len(self._queue)))]
            self._concurrent = False
            self._peak = len(batch) + len(self._queue)
        threads = threads_for(self.max_threads, self._cores, busy_elsewhere())
        try:
            torch_thread.run(
                decode,
                self.model,
                batch,
                self.eos,
                self.pad,
                self._arrived,
                self._cache_argument,
                self.products,
                threads,
            )
        except BaseException as error:
            for request in batch:
                if not request.done:
                    request.error = error
                if not isinstance(error, Exception):
                    # the leader was interrupted (Ctrl-C) while the torch thread decodes: stop
                    # the batch there within a step, as `cancel_all` could no longer
                    request.cancel.set()
        finally:
            with self._changed:
                for request in batch:
                    request.done = True
                self._callers = min(self._peak, MAX_BATCH)

    def _arrived(self, decoding: int) -> None:
        """Called between steps: a request queued meanwhile means callers are concurrent."""
        if self._queue:
            self._concurrent = True
            self._peak = max(self._peak, decoding + len(self._queue))


def decode(
    model: Any,
    batch: list[Request],
    eos: set[int],
    pad: int,
    between: Callable[[int], None],
    cache_argument: str,
    products: SkinnyProducts,
    threads: int | None = None,
) -> None:
    """Greedy or sampled decoding of `batch` with a shared KV cache; fills each request.

    The decoding steps of two or more rows use the weight copies of `products`; the batch runs
    on `threads` torch threads (None: as many as torch has now).
    """
    import torch
    from transformers import DynamicCache

    if threads is not None and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    for request in batch:
        request.threads = torch.get_num_threads()
    started = time.perf_counter()
    width = max(len(request.prompt) for request in batch)
    ids = torch.full((len(batch), width), pad, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, request in enumerate(batch):
        ids[row, width - len(request.prompt) :] = torch.tensor(request.prompt)
        mask[row, width - len(request.prompt) :] = 1
    positions = (mask.cumsum(-1) - 1).masked_fill_(mask == 0, 1)
    pickers = [_Picker(request, eos) for request in batch]
    active = list(range(len(batch)))
    cache = DynamicCache()
    with torch.inference_mode():
        prefill = True
        while True:
            with products.on(not prefill and len(active) > 1):
                output = model(
                    input_ids=ids,
                    attention_mask=mask,
                    position_ids=positions,
                    use_cache=True,
                    logits_to_keep=1,
                    **{cache_argument: cache},
                )
            prefill = False
            logits = output.logits[:, -1].to(copy=True, dtype=torch.float32)
            best = logits.argmax(dim=-1).tolist()  # every row's greedy token, in one pass
            keep = []
            for row, index in enumerate(active):
                if pickers[index].step(logits[row : row + 1], best[row]):
                    keep.append(row)
                else:
                    batch[index].seconds = time.perf_counter() - started
            between(len(keep))
            if not keep:
                return
            if len(keep) < len(active):
                rows = torch.tensor(keep)
                cache.batch_select_indices(rows)
                mask, positions = mask[rows], positions[rows]
                active = [active[row] for row in keep]
            ids = torch.tensor([[batch[index].tokens[-1]] for index in active])
            mask = torch.cat([mask, mask.new_ones((len(active), 1))], dim=-1)
            positions = positions[:, -1:] + 1


class _Picker:
    """Chooses one request's tokens from its logits, as `generate` would for it alone."""

    def __init__(self, request: Request, eos: set[int]) -> None:
        import torch
        from transformers import (
            LogitsProcessorList,
            TemperatureLogitsWarper,
            TopKLogitsWarper,
            TopPLogitsWarper,
        )

        self.request = request
        self.eos = eos
        self.generator: Any = None
        self.warpers = LogitsProcessorList()
        options = request.sampling
        if options:
            self.generator = torch.Generator().manual_seed(request.seed)
            temperature, top_k, top_p = options["temperature"], options["top_k"], options["top_p"]
            if temperature != 1.0:
                self.warpers.append(TemperatureLogitsWarper(temperature))
            if top_k:
                self.warpers.append(TopKLogitsWarper(top_k=top_k, min_tokens_to_keep=1))
            if top_p < 1.0:
                self.warpers.append(TopPLogitsWarper(top_p=top_p, min_tokens_to_keep=1))
        self.ids: Any = torch.tensor([request.prompt])

    def step(self, logits: Any, best: int) -> bool:
        """Pick the next token from `logits` (1 × vocabulary, whose argmax is `best`); False
        once the request ends."""
        import torch

        request = self.request
        if request.cancel.is_set():
            return False
        if self.generator is None:
            token = best
        else:
            scores = self.warpers(self.ids, logits) if self.warpers else logits
            probs = torch.nn.functional.softmax(scores, dim=-1)
            token = int(torch.multinomial(probs, num_samples=1, generator=self.generator))
        request.tokens.append(token)
        if self.warpers:
            self.ids = torch.cat([self.ids, self.ids.new_tensor([[token]])], dim=-1)
        if request.deadline is not None and time.monotonic() >= request.deadline:
            request.timed_out = True
        return not (
            token in self.eos
            or len(request.tokens) >= request.budget
            or request.cancel.is_set()
            or request.timed_out
        )
