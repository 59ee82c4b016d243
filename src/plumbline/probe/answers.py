"""What a trial keeps of a model's answer (`Answer`).

A plain chat completion answer is read from its decoded body directly (`plain_answer`), giving
what Inspect would read of the `ModelOutput` it builds; any other answer is read by Inspect.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Answer:
    """What a trial keeps of Inspect's `ModelOutput`, read once (reading it is where an answer
    that is not a completion fails)."""

    completion: str
    stop_reason: str | None
    input_tokens: int | None
    output_tokens: int | None

    @classmethod
    def of(cls, output: Any) -> Answer:
        if isinstance(output, Answer):  # read from a plain answer already (`plain_answer`)
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


# What a plain chat completion answer may hold for `plain_answer` to read it; anything else
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


def plain_answer(body: Any, stop_reason: Callable[[str | None], str]) -> Answer | None:
    """What `Answer.of` reads from the `ModelOutput` Inspect builds of a chat completion answer,
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
    return Answer(content, stop_reason(finish), *tokens)


def read_plain(response: Any, stop_reason: Callable[[str | None], str]) -> Answer | None:
    """`plain_answer` of a JSON answer (by the SDK's test of its content type), or None."""
    content_type = response.headers.get("content-type", "*").split(";")[0]
    if not content_type.endswith("json"):
        return None
    try:
        body = response.json()
    except ValueError:  # the SDK's reading raises it
        return None
    return plain_answer(body, stop_reason)
