"""The direct call of an `openai-api/...` model's provider, without `Model.generate`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from plumbline.compat import inspect as inspect_compat
from plumbline.compat import openai as openai_compat
from plumbline.probe.answers import read_plain
from plumbline.records.trial_record import CallPath

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
class DirectCall:
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
    def of(cls, model: Any, *, lean: bool = True) -> DirectCall | None:
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
            answer = read_plain(response, inspect_compat.stop_reason)
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
