"""Provider answers are data: a chat completion answer that is not a completion is a failed
call of its own class, never a crash.

Some providers and gateways answer HTTP 200 with a body that is not a completion: `"choices":
[]`, a choice without a `message`, an error object (`{"error": {"message": ...}}`), or text
that is not JSON. Inspect and the SDKs then fail while reading it (an `IndexError` deep in a
property, a `TypeError` over `None`), which lost the provider's own message and, in `probe`,
escaped the trial and ended the whole run.

`install_answer_guard(model)` puts a response hook on the model's HTTP client (the httpx
client of the openai SDK, which every `openai/...` and `openai-api/...` model and most
OpenAI-compatible providers use): a 200 answer to `/chat/completions` whose body is not a
completion is marked (`MALFORMED_ANSWER`, in the response's `extensions`), given status `422`,
and the hook raises the SDK's own `UnprocessableEntityError` for it, with an error object
(`"code": "malformed_response"`) describing it with the provider's words; the SDK passes its
own errors through as they are (`AsyncAPIClient.request`: not retried, not wrapped), so Inspect
reports the message (a 4xx is not retried: the original exceptions were not either;
`probe --retries` retries it), and `probe.errors.classify_exception`
records it as `MalformedResponseError` with HTTP status 200 (what the provider sent) and the
provider's message (redacted). Streamed answers (server-sent events) are read as sent.
"""

from __future__ import annotations

import json
from typing import Any

from plumbline.compat.openai import sdk_http_client

#: The key, in an httpx response's `extensions`, of the description of a malformed answer.
MALFORMED_ANSWER = "plumbline.malformed_answer"
_EXCERPT = 300
#: The status a malformed answer is given for the SDK (it raises `UnprocessableEntityError`).
STATUS = 422


def _excerpt(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"


def answer_problem(body: Any) -> str | None:
    """What makes a decoded chat completion body not a completion (None: it is one), with the
    provider's message when the body carries one."""
    if not isinstance(body, dict):
        return f"the answer is not a JSON object: {_excerpt(body)}"
    choices = body.get("choices")
    error = body.get("error")
    if error is not None and not choices:
        message = error.get("message") if isinstance(error, dict) else error
        return f"the answer is an error object, not a completion: {_excerpt(message)}"
    if not isinstance(choices, list) or not choices:
        return f"the answer has no choices: {_excerpt(body)}"
    first = choices[0]
    if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
        return f"the answer's choice has no message: {_excerpt(body)}"
    return None


async def check_completion_response(response: Any) -> None:
    """An httpx response hook: mark a 200 chat completion answer that is not a completion
    (see the module docstring)."""
    if response.status_code != 200:
        return
    if "json" not in response.headers.get("content-type", ""):
        return  # streamed (server-sent events), or another kind of answer: as sent
    path = str(getattr(getattr(response, "request", None), "url", "")).split("?", 1)[0]
    if not path.rstrip("/").endswith("/chat/completions"):
        return
    await response.aread()
    try:
        body = json.loads(response.content)
    except ValueError:
        problem: str | None = f"the answer is not JSON: {_excerpt(response.text)}"
    else:
        problem = answer_problem(body)
    if problem is None:
        return
    import openai

    response.status_code = STATUS
    response.extensions[MALFORMED_ANSWER] = problem
    error = {"message": problem, "type": "malformed_response", "code": "malformed_response"}
    # the message as the SDK words a status error whose body is this error object
    raise openai.UnprocessableEntityError(
        f"Error code: {STATUS} - {problem}", response=response, body={"error": error}
    )


def install_answer_guard(model: Any) -> bool:
    """Put `check_completion_response` on the HTTP client of an Inspect model (once); False
    when the model has no httpx client (other providers keep their own behaviour)."""
    api = getattr(model, "api", None)
    # Inspect's openai providers hold the SDK's HTTP client publicly; others through the SDK
    http = getattr(api, "http_client", None)
    if http is None:
        http = sdk_http_client(getattr(api, "client", None))
    hooks = getattr(http, "event_hooks", None)
    if not isinstance(hooks, dict) or not isinstance(hooks.get("response"), list):
        return False
    if check_completion_response not in hooks["response"]:
        hooks["response"].append(check_completion_response)
    return True


def malformed_answer(error: BaseException) -> str | None:
    """The description a guarded response carries, when `error` is the SDK's error for one."""
    extensions = getattr(getattr(error, "response", None), "extensions", None)
    if isinstance(extensions, dict):
        found = extensions.get(MALFORMED_ANSWER)
        if isinstance(found, str):
            return found
    return None


__all__ = [
    "MALFORMED_ANSWER",
    "answer_problem",
    "check_completion_response",
    "install_answer_guard",
    "malformed_answer",
]
