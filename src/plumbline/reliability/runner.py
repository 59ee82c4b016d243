"""The trial runner: the same prompts, many times, against one or more models.

Calls go through Inspect AI's model API, so every Inspect provider works (including
`openai-api/<service>/<model>` with `<SERVICE>_BASE_URL` and `<SERVICE>_API_KEY` for local
servers); a non-streamed `openai-api` call goes straight to Inspect's provider, without the
`Model.generate` bookkeeping a probe does not use (`_DirectCall`, through the private names
`plumbline.compat` guards; the records are the same, and each names its `call_path`).
The plan of (model, prompt, trial) keys is shuffled with the seed, so every model is measured
across the same time window rather than one after the other; a bounded pool of async
workers runs it. Every trial, failed or not, is appended to a JSONL journal and made durable
(group commit, `reliability.journal`) before it is counted, so a rerun skips what is done and
a killed run loses only the calls in flight.

Retries are off unless asked for, at every layer: Inspect's retry loop (`max_retries=0`), the
provider SDK's own (`client.max_retries = 0`), and ours (`retries`, counted per trial in
`attempts`). A timeout is enforced per attempt with `asyncio.timeout` (exact, sub-second
allowed; Inspect's whole-second `attempt_timeout` stands behind it) and is always classified as
a TimeoutError.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import importlib
import itertools
import json
import math
import os
import random
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from plumbline.compat import inspect as inspect_compat
from plumbline.compat import openai as openai_compat
from plumbline.core.answer_guard import install_answer_guard
from plumbline.core.redaction import Redactor, public_arguments, secret_arguments
from plumbline.records.io import JsonlAppender, RecordError, iter_json_values, read_text_file
from plumbline.records.locks import LockBusy, exclusive
from plumbline.records.trial_record import (
    CallPath,
    ErrorClass,
    GenerationSettings,
    TrialRecord,
    read_trial_records,
    usage_counts,
)
from plumbline.reliability.configs import differences, run_config
from plumbline.reliability.errors import (
    Classification,
    classify_exception,
    redact,
    secrets_from_environment,
)
from plumbline.reliability.journal import GroupCommitJournal

TrialKey = tuple[str, str, int]

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


@dataclass(frozen=True)
class Prompt:
    """A prompt and its stable id (the id keys resumption)."""

    id: str
    text: str


def prompt_id_for(text: str) -> str:
    """A content-derived id, so the same prompt text always resumes the same trials."""
    return "p-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def load_prompts(path: str | Path) -> list[Prompt]:
    """Prompts from a file: JSONL/JSON (`{"id": ..., "prompt": ...}` or strings) or plain text
    with one prompt per non-empty line. Problems read `file:line: field: problem`."""
    source = Path(path)
    prompts: list[Prompt] = []
    if source.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        problems: list[str] = []
        for item in iter_json_values(source):
            if isinstance(item, RecordError):
                problems.append(str(item))
                continue
            value = item.value
            if isinstance(value, str):
                text, given_id = value, None
            elif isinstance(value, dict):
                raw_text = value.get("prompt", value.get("text"))
                raw_id = value.get("id", value.get("prompt_id"))
                if not isinstance(raw_text, str) or not raw_text.strip():
                    problems.append(f"{item.path}:{item.line}: prompt: a non-empty string needed")
                    continue
                if raw_id is not None and not isinstance(raw_id, str | int):
                    problems.append(f"{item.path}:{item.line}: id: a string or integer needed")
                    continue
                text, given_id = raw_text, None if raw_id is None else str(raw_id)
            else:
                problems.append(f"{item.path}:{item.line}: <record>: a string or an object needed")
                continue
            prompts.append(Prompt(given_id or prompt_id_for(text), text))
        if problems:
            raise ValueError("\n".join(problems))
    else:
        for line in read_text_file(source).splitlines():
            if line.strip():
                prompts.append(Prompt(prompt_id_for(line.strip()), line.strip()))
    if not prompts:
        raise ValueError(f"{source}: no prompts found")
    seen: dict[str, str] = {}
    for prompt in prompts:
        if prompt.id in seen and seen[prompt.id] != prompt.text:
            raise ValueError(f"{source}: id: prompt id {prompt.id!r} is used for two prompts")
        seen[prompt.id] = prompt.text
    return list({p.id: p for p in prompts}.values())


@dataclass(frozen=True)
class ProbeSettings:
    """What to run. Invalid values raise `ValueError` naming the setting."""

    models: tuple[str, ...]
    prompts: tuple[Prompt, ...]
    trials: int = 20
    concurrency: int = 8
    timeout: float = 30.0
    temperature: float | None = 0.7
    seed: int = 42
    max_tokens: int | None = 1024
    retries: int = 0
    stream: bool = False
    model_args: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if not self.models:
            raise ValueError("models: give at least one model (--model)")
        if len(set(self.models)) != len(self.models):
            raise ValueError("models: a model is listed twice")
        if not self.prompts:
            raise ValueError("prompts: give at least one prompt (--prompt or --prompts)")
        if self.trials < 1:
            raise ValueError(f"trials must be at least 1, got {self.trials}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, got {self.timeout}")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise ValueError(f"temperature must be between 0 and 2, got {self.temperature}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if self.retries < 0:
            raise ValueError(f"retries must be 0 or more, got {self.retries}")

    def trial_seed(self, trial: int) -> int:
        """Seed sent with trial `trial`: reproducible, and different between trials (one fixed
        seed would make a seeded provider repeat itself and hide its real variability)."""
        return self.seed + trial

    def generation(self, trial: int) -> GenerationSettings:
        return GenerationSettings(
            temperature=self.temperature,
            seed=self.trial_seed(trial),
            max_tokens=self.max_tokens,
            timeout=self.timeout,
            retries=self.retries,
            stream=self.stream,
            model_args=public_arguments(self.model_args) or None,
        )


def plan_trials(settings: ProbeSettings) -> list[TrialKey]:
    """Every (model, prompt id, trial) key, shuffled with the seed (the same order every run)."""
    keys = [
        (model, prompt.id, trial)
        for model in settings.models
        for prompt in settings.prompts
        for trial in range(settings.trials)
    ]
    random.Random(settings.seed).shuffle(keys)
    return keys


class TrialCaller(Protocol):
    """Runs one trial and returns its record (failures included; never raises for a failure)."""

    def __call__(self, model: str, prompt: Prompt, trial: int) -> Awaitable[TrialRecord]: ...


def _provider(model: str) -> str:
    return model.split("/", 1)[0]


@dataclass(frozen=True)
class _Answer:
    """What a trial keeps of Inspect's `ModelOutput`, read once (reading it is where an answer
    that is not a completion fails)."""

    completion: str
    stop_reason: str | None
    input_tokens: int | None
    output_tokens: int | None

    @classmethod
    def of(cls, output: Any) -> _Answer:
        if isinstance(output, _Answer):  # read from a plain answer already (`_plain_answer`)
            return output
        if not output.choices:
            raise IndexError("the answer has no choices")
        usage = output.usage
        return cls(
            completion=str(output.completion),
            stop_reason=output.stop_reason,
            input_tokens=getattr(usage, "input_tokens", None),
            output_tokens=getattr(usage, "output_tokens", None),
        )


# What a plain chat completion answer may hold for `_plain_answer` to read it; anything else
# (reasoning, refusals, tool calls, logprobs, unknown fields) is read by the SDK and Inspect.
_PLAIN_BODY = frozenset(
    {"id", "object", "created", "model", "choices", "usage", "system_fingerprint", "service_tier"}
)
_PLAIN_CHOICE = frozenset({"index", "message", "finish_reason", "logprobs"})
_PLAIN_MESSAGE = frozenset(
    {"role", "content", "refusal", "tool_calls", "function_call", "annotations", "audio"}
)
_PLAIN_USAGE = frozenset(
    {
        "prompt_tokens",
        "completion_tokens",
        "total_tokens",
        "prompt_tokens_details",
        "completion_tokens_details",
    }
)


def _plain_tokens(usage: Any) -> tuple[int | None, int | None] | None:
    """(input, output) tokens as Inspect counts them (cached prompt tokens apart), or None when
    the usage is not plain."""
    if usage is None:
        return None, None
    if not isinstance(usage, dict) or not usage.keys() <= _PLAIN_USAGE:
        return None
    if not all(
        type(usage.get(k)) is int for k in ("prompt_tokens", "completion_tokens", "total_tokens")
    ):
        return None
    details = usage.get("prompt_tokens_details")
    cached = written = 0
    if details is not None:
        if not isinstance(details, dict):
            return None
        cached, written = details.get("cached_tokens") or 0, details.get("cache_write_tokens") or 0
        if type(cached) is not int or type(written) is not int:
            return None
    if not isinstance(usage.get("completion_tokens_details") or {}, dict):
        return None
    prompt: int = usage["prompt_tokens"]
    return prompt - cached - written, usage["completion_tokens"]


def _plain_answer(body: Any, stop_reason: Callable[[str | None], str]) -> _Answer | None:
    """What `_Answer.of` reads from the `ModelOutput` Inspect builds of a chat completion answer,
    read from the decoded body directly; None when the answer is not a plain one (one choice,
    text content, no reasoning, refusal, tool call or logprobs, known fields only)."""
    if not isinstance(body, dict) or not body.keys() <= _PLAIN_BODY:
        return None
    choices = body.get("choices")
    if not isinstance(body.get("model"), str) or not isinstance(choices, list) or len(choices) != 1:
        return None
    choice = choices[0]
    if not isinstance(choice, dict) or not choice.keys() <= _PLAIN_CHOICE:
        return None
    message, finish = choice.get("message"), choice.get("finish_reason")
    if choice.get("logprobs") is not None or not (finish is None or isinstance(finish, str)):
        return None
    if not isinstance(message, dict) or not message.keys() <= _PLAIN_MESSAGE:
        return None
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, str) or "<think" in content:
        return None
    if any(message.get(k) is not None for k in _PLAIN_MESSAGE - {"role", "content"}):
        return None
    tokens = _plain_tokens(body.get("usage"))
    if tokens is None:
        return None
    return _Answer(content, stop_reason(finish), *tokens)


def _read_plain(response: Any, stop_reason: Callable[[str | None], str]) -> _Answer | None:
    """`_plain_answer` of a JSON answer (by the SDK's test of its content type), or None."""
    content_type = response.headers.get("content-type", "*").split(";")[0]
    if not content_type.endswith("json"):
        return None
    try:
        body = response.json()
    except ValueError:  # the SDK's reading raises it
        return None
    return _plain_answer(body, stop_reason)


# Generation parameters the lean request path sends as they are (plain JSON values in the body);
# any other parameter (extra_body, response_format, ...) keeps the provider's request path.
_LEAN_PARAMS = frozenset(
    {
        "model",
        "max_tokens",
        "max_completion_tokens",
        "seed",
        "temperature",
        "top_p",
        "stop",
        "frequency_penalty",
        "presence_penalty",
        "logit_bias",
        "n",
        "logprobs",
        "top_logprobs",
    }
)


@dataclass(frozen=True)
class _DirectCall:
    """A non-streamed call straight to the provider of an `openai-api/...` model.

    `Model.generate` around the provider records a transcript event, merges and copies the
    config, wraps the call in a retry loop and a concurrency limiter, and checks sample limits
    and hooks: most of a trial's client CPU, none of it used by a probe (no transcript, retries
    off, its own concurrency). A failure is raised as `Model.generate` raises it, so records
    are identical. It takes private names of Inspect (`compat.inspect`): where that adapter is
    not fast, there is no direct call and the probe goes through `Model.generate`.

    With `lean` (plain generation parameters, no tool emulation, and `compat.openai` fast), the
    provider's request building is skipped too: the body the SDK would send (the user message
    and the provider's completion parameters) is sent as the SDK's request prepared once per
    client (`compat.openai.PreparedPost`), or with the SDK client's own `post` when the client
    is not a plain-key one, so sending (httpx2's standard transport), timeouts, connection
    errors, HTTP status errors and the decoding of the answer are the SDK's; the answer is then
    read and its errors judged by the provider's own functions, as in
    `OpenAICompatibleAPI.generate`. What is skipped: the provider's message conversion and the
    SDK's parameter transform (both identity for one text message), and the call log (a deep
    copy of every request and answer) that a probe never reads.
    """

    api: Any
    config: Any
    user_message: Callable[[str], Any]
    lean: bool = True
    post: openai_compat.PreparedPost | None = None

    @classmethod
    def of(cls, model: Any, *, lean: bool = True) -> _DirectCall | None:
        from inspect_ai.model import ChatMessageUser

        # not when Inspect runs inside an eval (its active config applies): see InspectCaller
        api = inspect_compat.direct_provider(model)
        if api is None:
            return None
        config = inspect_compat.resolved_config(model)
        if config.max_tokens is None:
            config.max_tokens = api.max_tokens_for_config(config) or api.max_tokens()
        lean = lean and openai_compat.ADAPTER.fast
        lean = lean and not api.emulate_tools and not config.extra_headers
        lean = lean and set(api.completion_params(config=config, tools=False)) <= _LEAN_PARAMS
        lean = lean and not api.request_headers(config)
        post = openai_compat.PreparedPost.of(api.client) if lean else None
        return cls(api, config, lambda text: ChatMessageUser(content=text), lean, post)

    @property
    def path(self) -> CallPath:
        """The code this call sends with (recorded with each trial)."""
        if not self.lean:
            return CallPath.INSPECT_PROVIDER
        return CallPath.SDK_POST if self.post is None else CallPath.PREPARED_REQUEST

    async def generate(self, text: str, seed: int | None) -> Any:
        config = self.config.model_copy(update={"seed": seed})
        request: Any
        if self.lean:
            request = {
                "messages": [{"role": "user", "content": text}],
                **self.api.completion_params(config=config, tools=False),
            }
            output = await self._lean_generate(request)
        else:
            result = await self.api.generate(
                input=[self.user_message(text)], tools=[], tool_choice="none", config=config
            )
            output, call = result if isinstance(result, tuple) else (result, None)
            request = call.request if call is not None else None
        if isinstance(output, Exception):
            raise self._error(output, request) from output
        return output

    async def _lean_generate(self, request: dict[str, Any]) -> Any:
        # the steps of OpenAICompatibleAPI.generate after its request is built, in its order
        from openai import (
            APIError,
            APIStatusError,
            BadRequestError,
            PermissionDeniedError,
            UnprocessableEntityError,
        )

        client = self.api.client
        try:
            if self.post is not None:
                response = await self.post.send(request)
            else:
                response = await openai_compat.post_chat_completion(client, request)
            answer = _read_plain(response, inspect_compat.stop_reason)
            if answer is not None:
                return answer
            # the SDK reads any other answer, as it reads every answer on the provider's path
            completion = await openai_compat.parse_chat_completion(client, response, request)
            return inspect_compat.output_from_completion(self.api, completion)
        except (BadRequestError, UnprocessableEntityError, PermissionDeniedError) as ex:
            return self.api.handle_bad_request(ex)
        except APIStatusError as ex:
            if ex.status_code == 413:
                return self.api.handle_bad_request(ex)
            raise
        except APIError as ex:
            output = self.api.handle_stream_error(ex)
            if output is None:
                raise
            return output

    def _error(self, output: Exception, call_request: Any) -> Exception:
        # as Model.generate wraps a provider error it is returned (inspect_ai/model/_model.py)
        request = json.dumps(call_request, indent=2) if call_request is not None else ""
        lines = request.splitlines()
        if len(lines) > 200:
            request = "\n".join([f"... ({len(lines) - 200} lines truncated) ...", *lines[-200:]])
        return inspect_compat.generate_error(output, request)


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
        self._direct: dict[str, list[_DirectCall | None]] = {}
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
                    _DirectCall.of(model, lean=lean) if direct and not settings.stream else None
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
    ) -> tuple[_Answer | None, float | None, Classification | None]:
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
            answer = _Answer.of(output)
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
            "provider": _provider(model_name),
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


def failed_trial(
    settings: ProbeSettings, model: str, prompt: Prompt, trial: int, error: BaseException
) -> TrialRecord:
    """The record of a trial whose caller raised instead of returning a record: classified
    like any failed call (secrets redacted), so one failure never ends the run."""
    failure = classify_exception(error, secrets=secrets_from_environment())
    return TrialRecord(
        model=model,
        provider=_provider(model),
        prompt_id=prompt.id,
        prompt=prompt.text,
        trial=trial,
        response=None,
        latency_seconds=None,
        attempts=1,
        timestamp=datetime.now(UTC),
        config=settings.generation(trial),
        error_class=failure.error_class,
        http_status=failure.http_status,
        error_message=failure.message,
        timed_out=failure.timed_out,
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


@dataclass
class ProbeSummary:
    """What a probe run did."""

    output: str
    planned: int
    already_done: int
    completed: int
    errors: dict[str, int] = field(default_factory=dict)
    elapsed_seconds: float = 0.0
    duplicates_in_journal: int = 0
    # journal trials recorded with another generation config (temperature, seed, ...)
    config_mismatches: int = 0

    @property
    def trials_per_second(self) -> float:
        return self.completed / self.elapsed_seconds if self.elapsed_seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": self.output,
            "planned": self.planned,
            "already_done": self.already_done,
            "completed": self.completed,
            "errors": dict(self.errors),
            "elapsed_seconds": self.elapsed_seconds,
            "trials_per_second": self.trials_per_second,
            "duplicates_in_journal": self.duplicates_in_journal,
            "config_mismatches": self.config_mismatches,
        }


class JournalBusy(LockBusy):
    """Another `probe` is writing the same journal."""


class ConfigChanged(ValueError):
    """The journal was written with other generation settings than this run's."""


def lock_path(journal: Path) -> Path:
    """The lock a probe holds beside its journal while it writes (``trials.jsonl.lock``)."""
    return journal.with_name(journal.name + ".lock")


def completed_keys(
    path: Path, settings: ProbeSettings, *, allow_config_change: bool = False
) -> tuple[set[TrialKey], int, int]:
    """Keys already in the journal with this run's configuration, how many duplicates it
    holds, and how many of its trials were sent with another configuration.

    A journal line that is not a valid trial record stops the run: resuming on top of it could
    duplicate or mislabel trials. A prompt id whose stored text differs from the current prompt
    stops it too, and so does a trial sent with other generation settings (temperature, seed,
    max tokens, timeout, retries, streaming, model arguments; `ConfigChanged`), unless
    `allow_config_change`: the journal then holds both configurations, which `reliability`
    reports separately, and this run's trials are all run under its own.
    """
    if not path.exists():
        return set(), 0, 0
    result = read_trial_records([path])
    if result.errors:
        shown = "\n".join(str(e) for e in result.errors[:5])
        raise ValueError(
            f"{path} holds lines that are not trial records; fix or remove them, "
            f"or write to a new file:\n{shown}"
        )
    texts = {prompt.id: prompt.text for prompt in settings.prompts}
    wanted = run_config(settings.generation(0), 0)
    done: set[TrialKey] = set()
    duplicates = 0
    mismatches = 0
    first_mismatch: tuple[str, dict[str, Any]] | None = None
    for record, located in zip(result.records, result.locations, strict=True):
        expected = texts.get(record.prompt_id)
        if expected is not None and expected != record.prompt:
            raise ValueError(
                f"{located.path}:{located.line}: prompt: prompt id {record.prompt_id!r} was "
                "recorded with a different text; use a new output file or a new prompt id"
            )
        config = run_config(record.config, record.trial)
        if config != wanted:
            mismatches += 1
            if first_mismatch is None:
                first_mismatch = (f"{located.path}:{located.line}", config)
            continue
        if record.key in done:
            duplicates += 1
        done.add(record.key)
    if first_mismatch is not None and not allow_config_change:
        where, config = first_mismatch
        raise ConfigChanged(
            f"{where}: config: {path} was written with other generation settings "
            f"({', '.join(differences(config, wanted))}; {mismatches} trial(s)). Rerun with "
            "the journal's settings to resume it, write this configuration to a new file "
            "(-o), or pass --allow-config-change to add it to this journal (reliability then "
            "reports each configuration separately)"
        )
    return done, duplicates, mismatches


async def run_probe(
    settings: ProbeSettings,
    output: str | Path,
    *,
    caller: TrialCaller | None = None,
    on_record: Callable[[TrialRecord], None] | None = None,
    on_plan: Callable[[int, int], None] | None = None,
    allow_config_change: bool = False,
    processes: int | None = 1,
    workers: ProbeProcesses | None = None,
) -> ProbeSummary:
    """Run every trial not already in `output`, appending each record as it completes.

    One writer per journal: a second probe on the same `output` stops at once (`JournalBusy`).
    A journal holding trials of other generation settings stops the run (`ConfigChanged`)
    unless `allow_config_change`.

    The calls can be shared by `processes` worker processes (None: one per core when the
    concurrency is at least `SHARD_CONCURRENCY`, as `plumbline probe` runs; never with a given
    `caller`), or by `workers` set up ahead; this process alone writes the journal. Worker
    processes are spawned: a script that runs a probe with them needs the
    `if __name__ == "__main__":` guard of `multiprocessing`.
    """
    path = Path(output)
    busy = (
        f"{path} is being written by another `plumbline probe` ({{holder}}); wait for it to "
        "finish, or write to another file (-o)"
    )
    with exclusive(lock_path(path), busy, JournalBusy), outside_any_eval():
        return await _run_probe(
            settings,
            path,
            caller=caller,
            on_record=on_record,
            on_plan=on_plan,
            allow_config_change=allow_config_change,
            processes=processes,
            workers=workers,
        )


async def _run_probe(
    settings: ProbeSettings,
    path: Path,
    *,
    caller: TrialCaller | None,
    on_record: Callable[[TrialRecord], None] | None,
    on_plan: Callable[[int, int], None] | None,
    allow_config_change: bool,
    processes: int | None,
    workers: ProbeProcesses | None,
) -> ProbeSummary:
    # Records are group-committed (reliability.journal): durable before they are counted.
    appender = JsonlAppender(path)  # repairs a partial last line of a killed run
    try:
        done, duplicates, mismatches = completed_keys(
            path, settings, allow_config_change=allow_config_change
        )
        planned = plan_trials(settings)
        todo = [key for key in planned if key not in done]
        if on_plan is not None:
            on_plan(len(planned), len(planned) - len(todo))
        summary = ProbeSummary(
            output=str(path),
            planned=len(planned),
            already_done=len(planned) - len(todo),
            completed=0,
            duplicates_in_journal=duplicates,
            config_mismatches=mismatches,
        )
        if not todo:
            return summary
        own_workers: ProbeProcesses | None = None
        if workers is None and caller is None:
            count = process_count(settings, len(todo), processes)
            # set up before the clock starts, as the in-process caller below is
            own_workers = ProbeProcesses(settings, count) if count > 1 else None
            workers = own_workers
        inspect_caller = InspectCaller(settings) if caller is None and workers is None else None
        errors: Counter[str] = Counter()
        started = time.monotonic()

        def on_durable(record: TrialRecord) -> None:
            summary.completed += 1
            if record.error_class is not None:
                errors[record.error_class.value] += 1
            if on_record is not None:
                on_record(record)

        journal = GroupCommitJournal(appender, on_durable)
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(journal.run())
                if workers is not None:
                    await workers.run(todo, journal.submit)
                else:
                    active = caller if caller is not None else inspect_caller
                    assert active is not None
                    await run_trials(settings, todo, active, journal.submit)
                journal.close()
        finally:
            journal.commit_now()  # an interrupted run keeps every trial that completed
            summary.elapsed_seconds = time.monotonic() - started
            summary.errors = dict(errors)
            if inspect_caller is not None:
                await inspect_caller.aclose()
            if own_workers is not None:
                own_workers.close()
        return summary
    finally:
        appender.close()


async def run_trials(
    settings: ProbeSettings,
    keys: Sequence[TrialKey],
    caller: TrialCaller,
    submit: Callable[[TrialRecord], None],
) -> None:
    """Run `keys` on at most `settings.concurrency` concurrent workers, handing each record to
    `submit` as it completes."""
    prompts = {prompt.id: prompt for prompt in settings.prompts}
    pending = iter(keys)  # shared by the workers: they take turns on one event loop

    async def worker() -> None:
        for model, prompt_id, trial in pending:
            try:
                record = await caller(model, prompts[prompt_id], trial)
            except Exception as error:  # a caller's defect costs this trial only
                record = failed_trial(settings, model, prompts[prompt_id], trial, error)
            submit(record)

    async with asyncio.TaskGroup() as workers:
        for _ in range(min(settings.concurrency, len(keys))):
            workers.create_task(worker())


# The concurrency from which a probe's calls are shared by worker processes, and the least
# concurrency each process is given: below it one process's event loop keeps up (at 32, the
# client spends about a third of a core), above it the client's CPU per call is the limit.
SHARD_CONCURRENCY = 64
_SHARD_LEAST = 32


def process_count(settings: ProbeSettings, trials: int, processes: int | None = None) -> int:
    """How many worker processes run `trials` trials (1: this process runs them)."""
    if processes is None:
        if settings.concurrency < SHARD_CONCURRENCY:
            return 1
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        processes = min(cores or 1, settings.concurrency // _SHARD_LEAST)
    return max(1, min(processes, settings.concurrency, trials))


@dataclass(frozen=True)
class _ShardReady:
    """A worker process has set up its model clients and waits for its trials."""


@dataclass(frozen=True)
class _ShardEnd:
    """A worker process's last message: it ran all its trials (with the CPU seconds that took),
    or why it could not."""

    error: str | None = None
    cpu_seconds: float = 0.0


def _run_shard(settings: ProbeSettings, connection: Any) -> None:
    """A worker process: set up the model clients, then run the trials it is sent, sending each
    record to the parent as it completes."""

    async def run(caller: InspectCaller, keys: list[TrialKey]) -> None:
        try:
            await run_trials(settings, keys, caller, connection.send)
        finally:
            await caller.aclose()

    # interrupted, or the parent gone: the worker just ends (the journal keeps what it received)
    with (
        contextlib.closing(connection),
        contextlib.suppress(KeyboardInterrupt, BrokenPipeError, EOFError),
    ):
        try:
            caller = InspectCaller(settings)
        except (RuntimeError, ValueError) as error:  # a model that cannot be set up
            connection.send(_ShardEnd(str(error)))
            return
        connection.send(_ShardReady())
        keys = connection.recv()
        started = time.process_time()
        asyncio.run(run(caller, keys))
        connection.send(_ShardEnd(cpu_seconds=time.process_time() - started))


def _drain(
    connection: Any, loop: asyncio.AbstractEventLoop, submit: Callable[..., None]
) -> _ShardEnd:
    """Hand a worker process's records to `submit` on `loop` until it ends."""
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return _ShardEnd("a probe worker process stopped early; rerun to resume")
        if isinstance(message, _ShardEnd):
            return message
        try:
            loop.call_soon_threadsafe(submit, message)
        except RuntimeError:  # the run was torn down
            return _ShardEnd("interrupted")


class ProbeProcesses:
    """Worker processes for a probe: each with its own event loop, model clients and share of
    the concurrency, started and set up ahead of a run (`run_probe(workers=...)`). The records
    come back to the process that runs the probe, which alone writes the journal."""

    def __init__(self, settings: ProbeSettings, count: int) -> None:
        import multiprocessing

        # spawn, not fork: the parent may have an event loop and threads running
        context = multiprocessing.get_context("spawn")
        share = dataclasses.replace(settings, concurrency=settings.concurrency // count)
        self.count = count
        #: the worker processes' CPU seconds for their trials (set-up excluded), once run
        self.cpu_seconds = 0.0
        self._workers: list[tuple[Any, Any]] = []
        self._done = False
        try:
            for _ in range(count):
                parent_end, child_end = context.Pipe()
                worker = context.Process(target=_run_shard, args=(share, child_end), daemon=True)
                worker.start()
                child_end.close()
                self._workers.append((worker, parent_end))
            for _, connection in self._workers:
                ready = connection.recv()
                if isinstance(ready, _ShardEnd):
                    raise RuntimeError(ready.error)
        except BaseException:
            self.close()
            raise

    async def run(self, keys: Sequence[TrialKey], submit: Callable[[TrialRecord], None]) -> None:
        """Run `keys` (shared round-robin), handing each record to `submit` as it arrives."""
        loop = asyncio.get_running_loop()
        drains = []
        for index, (_, connection) in enumerate(self._workers):
            connection.send(list(keys[index :: self.count]))
            drains.append(asyncio.to_thread(_drain, connection, loop, submit))
        ends = await asyncio.gather(*drains)
        self._done = True
        self.cpu_seconds = sum(end.cpu_seconds for end in ends)
        problem = next((end.error for end in ends if end.error), None)
        if problem is not None:
            raise RuntimeError(problem)

    def close(self) -> None:
        """Wait for the processes; an interrupted run's are stopped (its calls in flight are
        lost, as in a killed run)."""
        for worker, connection in self._workers:
            if not self._done:
                worker.terminate()
            worker.join()
            connection.close()

    def __enter__(self) -> ProbeProcesses:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def dump_settings(settings: ProbeSettings) -> str:
    """The settings as JSON (for logs and reports: no secrets live in settings)."""
    return json.dumps(
        {
            "models": list(settings.models),
            "prompts": [p.id for p in settings.prompts],
            "trials": settings.trials,
            "concurrency": settings.concurrency,
            "timeout": settings.timeout,
            "temperature": settings.temperature,
            "seed": settings.seed,
            "max_tokens": settings.max_tokens,
            "retries": settings.retries,
            "stream": settings.stream,
        }
    )
