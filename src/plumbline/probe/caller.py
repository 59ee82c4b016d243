"""The caller: one trial against a model through Inspect AI's model API (`InspectCaller`).

Retries are off unless allowed, at every layer; each attempt has its own exact timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
import math
import random
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from plumbline.compat import inspect as inspect_compat
from plumbline.core.answer_guard import install_answer_guard
from plumbline.core.redaction import Redactor, secret_arguments
from plumbline.probe.answers import Answer
from plumbline.probe.direct_call import DirectCall
from plumbline.probe.errors import (
    Classification,
    classify_exception,
    redact,
    secrets_from_environment,
)
from plumbline.probe.settings import ProbeSettings, Prompt, provider_of
from plumbline.records.trial_record import CallPath, ErrorClass, TrialRecord, usage_counts

# Failures worth another attempt when retries are allowed; the rest will fail the same way.
RETRYABLE = frozenset(
    {
        ErrorClass.TIMEOUT,
        ErrorClass.RATE_LIMIT,
        ErrorClass.SERVER,
        ErrorClass.CONNECTION,
        ErrorClass.MALFORMED_RESPONSE,
    }
)


# Connections per model client (see InspectCaller.__init__).
POOL_SHARD = 32


# Modules the openai and anthropic SDKs import lazily on their first request.
_WARM_MODULES = (
    "openai.resources.chat",
    "openai.resources.chat.chat",
    "openai.resources.chat.completions.completions",
    "openai.pagination",
    "anthropic.resources.messages",
    "httpcore",
    "httpcore2",
    "anyio._backends._asyncio",
    "anyio.streams.tls",
)


#: Inspect's model calls made outside an eval take the retries, timeout, connection limit and
#: cache of the last eval run in the same context; inside this block they take only their own
#: (see `compat.inspect.outside_any_eval`; on the public path every call passes its whole
#: config instead).
outside_any_eval = inspect_compat.outside_any_eval


class InspectCaller:
    """Calls models through Inspect AI's model API with retries off unless allowed."""

    def __init__(
        self,
        settings: ProbeSettings,
        *,
        secrets: Sequence[str] | None = None,
        direct: bool = True,
        lean: bool = True,
    ) -> None:
        from inspect_ai.model import GenerateConfig, get_model

        self.settings = settings
        given = list(secrets) if secrets is not None else secrets_from_environment()
        # A key passed as a model argument (-M api_key=...) is as secret as one in the env.
        self.secrets = sorted(
            {*given, *secret_arguments(settings.model_args)}, key=len, reverse=True
        )
        self._exactly = Redactor(self.secrets)
        self._models: dict[str, list[Any]] = {}
        self._direct: dict[str, list[DirectCall | None]] = {}
        self._turn: dict[str, Iterator[int]] = {}
        base = GenerateConfig(
            max_retries=0,
            timeout=math.ceil(settings.timeout),
            attempt_timeout=math.ceil(settings.timeout),
            max_connections=settings.concurrency,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
        )
        # httpcore scans every connection of its pool for each request; at high concurrency
        # that scan dominated a trial's CPU, so calls are spread over clients of at most
        # POOL_SHARD connections each (the same provider, the same settings)
        shards = math.ceil(settings.concurrency / POOL_SHARD)
        with outside_any_eval():  # the direct calls resolve their config here
            for name in settings.models:
                self._models[name] = [self._set_up(get_model, name, base) for _ in range(shards)]
                self._direct[name] = [
                    DirectCall.of(model, lean=lean) if direct and not settings.stream else None
                    for model in self._models[name]
                ]
                self._turn[name] = itertools.cycle(range(shards))
        self._base_config = base
        _use_plain_tracebacks()

    def _set_up(self, get_model: Callable[..., Any], name: str, base: Any) -> Any:
        try:
            model = get_model(name, config=base, memoize=False, **dict(self.settings.model_args))
        except Exception as error:
            raise RuntimeError(
                f"cannot set up model {name!r}: {redact(str(error), self.secrets)}"
            ) from None
        self._disable_sdk_retries(model)
        install_answer_guard(model)
        self._warm_up(model)
        return model

    @staticmethod
    def _disable_sdk_retries(model: Any) -> None:
        # The openai and anthropic SDK clients retry 429/5xx/connection errors twice by
        # default, below Inspect; a retry there would hide exactly the failures we measure.
        client = getattr(getattr(model, "api", None), "client", None)
        if client is not None and isinstance(getattr(client, "max_retries", None), int):
            client.max_retries = 0

    @staticmethod
    def _warm_up(model: Any) -> None:
        # Inspect loads its model-info database (YAML, about a second) and the SDK imports its
        # HTTP stack on the first call; doing that inside the first trials would charge client
        # start-up to the provider's latency and turn it into spurious timeouts.
        family = getattr(getattr(model, "api", None), "model_family", None)
        if callable(family):
            # only a warm-up: the real call reports real problems
            with contextlib.suppress(Exception):
                family()
        client = getattr(getattr(model, "api", None), "client", None)
        with contextlib.suppress(Exception):
            # the SDKs build their resource namespaces lazily, on first attribute access
            getattr(getattr(client, "chat", None), "completions", None)
            getattr(client, "messages", None)
        for module in _WARM_MODULES:
            with contextlib.suppress(ImportError):
                importlib.import_module(module)
        # a provider with its own start-up (the embedded model loads its weights: 20 s on a
        # busy 2-core machine) does it now, not inside the first trials' timeouts
        prepare = getattr(getattr(model, "api", None), "warm_up", None)
        if callable(prepare):
            prepare()

    async def aclose(self) -> None:
        for model in itertools.chain.from_iterable(self._models.values()):
            closer = getattr(getattr(model, "api", None), "aclose", None)
            if closer is not None:
                # closing is best effort: the trials are already recorded
                with contextlib.suppress(Exception):
                    await closer()

    def call_path(self, model_name: str) -> CallPath:
        """The code that sends the calls to `model_name` (the same for every client of it)."""
        direct = self._direct[model_name][0]
        return CallPath.MODEL_GENERATE if direct is None else direct.path

    async def _attempt(
        self, model_name: str, prompt: Prompt, trial: int
    ) -> tuple[Answer | None, float | None, Classification | None]:
        shard = next(self._turn[model_name])
        model = self._models[model_name][shard]
        started = time.monotonic()
        first_text: list[float] = []

        async def on_stream(event: Any) -> None:
            if not first_text and getattr(event, "type", None) == "text" and event.text:
                first_text.append(time.monotonic() - started)

        # the whole config with every call: merged last, it holds even where an eval run
        # earlier in the process left its own active (the public path of `outside_any_eval`)
        config = self._base_config.model_copy(update={"seed": self.settings.trial_seed(trial)})
        direct = self._direct[model_name][shard]
        try:
            async with asyncio.timeout(self.settings.timeout):
                if direct is not None:
                    output = await direct.generate(prompt.text, config.seed)
                elif self.settings.stream:
                    output = await model.generate(prompt.text, config=config, on_stream=on_stream)
                else:
                    output = await model.generate(prompt.text, config=config)
            # read inside the try: an answer that is not a completion fails here (no choices)
            answer = Answer.of(output)
        except Exception as error:
            return None, None, classify_exception(error, secrets=self.secrets)
        ttft = first_text[0] if first_text else None
        if answer.stop_reason == "content_filter":
            text = redact(answer.completion or "content filtered", self.secrets)
            return None, ttft, Classification(ErrorClass.CONTENT_FILTER, None, text[:500])
        return answer, ttft, None

    async def __call__(self, model: str, prompt: Prompt, trial: int) -> TrialRecord:
        model_name = model
        timestamp = datetime.now(UTC)
        started = time.monotonic()
        backoff = random.Random(f"{self.settings.seed}:{model_name}:{prompt.id}:{trial}")
        attempts = 0
        while True:
            attempts += 1
            output, ttft, failure = await self._attempt(model_name, prompt, trial)
            if failure is None or failure.error_class not in RETRYABLE:
                break
            if attempts > self.settings.retries:
                break
            await asyncio.sleep(min(8.0, 0.5 * 2 ** (attempts - 1)) * backoff.uniform(0.5, 1.0))
        latency = time.monotonic() - started
        common: dict[str, Any] = {
            "model": model_name,
            "provider": provider_of(model_name),
            "prompt_id": prompt.id,
            "prompt": prompt.text,
            "trial": trial,
            "latency_seconds": latency,
            "ttft_seconds": ttft,
            "attempts": attempts,
            "timestamp": timestamp,
            "config": self.settings.generation(trial),
            "call_path": self.call_path(model_name),
        }
        if failure is not None:
            return TrialRecord(
                **common,
                response=None,
                error_class=failure.error_class,
                http_status=failure.http_status,
                error_message=failure.message,
                timed_out=failure.timed_out,
            )
        assert output is not None
        counts = usage_counts(output.input_tokens, output.output_tokens)
        return TrialRecord(
            **common,
            response=self._exactly.text(output.completion),
            input_tokens=counts.input_tokens,
            output_tokens=counts.output_tokens,
            usage_note=counts.note,
        )


def _plain_traceback(
    exc_type: type[BaseException], exc_value: BaseException, exc_traceback: TracebackType | None
) -> tuple[str, str]:
    text = "".join(traceback.format_exception(exc_type, exc_value, exc_traceback))
    return text, text


def _use_plain_tracebacks() -> None:
    """Make Inspect record a failed call's traceback as plain text.

    For every failed call Inspect renders a rich traceback for its transcript (which a probe
    never writes), synchronously on the event loop. Measured here: about a second of CPU per
    failure on a busy machine, during which every other call in flight stalls, so faults
    showed up as spurious timeouts and inflated the latency of healthy trials.
    """
    inspect_compat.use_plain_tracebacks(_plain_traceback)


def redact_secrets_exactly(text: str, secrets: Iterable[str]) -> str:
    """Remove known secret values only, in every encoding (model text may legitimately look
    like a key, so key-shaped strings stay)."""
    return Redactor(secrets).text(text)
