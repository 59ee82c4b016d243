"""Classify failed calls from exception types and HTTP status codes, and keep secrets out.

The reference classified errors by searching the message text ("500" inside "5000 tokens"
became a ServerError, a 429 was never recognised) and detected timeouts with
`isinstance(e, TimeoutError)`, which SDK timeout exceptions are not, so its timeout rate
always read 0. Here the whole exception chain is walked (`__cause__`, `__context__`, Inspect's
`ModelGenerateError`, tenacity's `RetryError`) and each link is judged by its type and its
status code only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from plumbline.core.answer_guard import malformed_answer
from plumbline.core.redaction import Redactor, secret_values
from plumbline.records.trial_record import ErrorClass

# Exception class names shared by the Stainless-generated SDKs (openai, anthropic, ...).
_TIMEOUT_NAMES = frozenset(
    {
        "APITimeoutError",
        "TimeoutException",  # httpx and httpx2 base of every timeout
        "AttemptTimeoutError",  # Inspect's per-attempt timeout
        "StreamIdleTimeoutError",
    }
)
_CONNECTION_NAMES = frozenset(
    {
        "APIConnectionError",
        "TransportError",
        "NetworkError",
        "RemoteProtocolError",
        "ConnectionError",  # requests' and urllib3's, which are not the builtin
    }
)
# a response arrived but could not be decoded: the provider's failure
_INVALID_RESPONSE_NAMES = frozenset(
    {"APIResponseValidationError", "NoStreamDataError", "JSONDecodeError"}
)
# Reading an answer that arrived failed inside Inspect or the SDK (`choices[0]` of an empty
# list, an attribute of a missing message): the answer was not a completion.
_READ_FAILURES = (IndexError, KeyError, AttributeError, TypeError)

_MAX_MESSAGE = 500


@dataclass(frozen=True)
class Classification:
    """What went wrong with one call."""

    error_class: ErrorClass
    http_status: int | None
    message: str

    @property
    def timed_out(self) -> bool:
        return self.error_class is ErrorClass.TIMEOUT


def class_for_status(status: int) -> ErrorClass:
    """The error class of an HTTP status code."""
    if status == 429:
        return ErrorClass.RATE_LIMIT
    if status == 401:
        return ErrorClass.AUTHENTICATION
    if status == 403:
        return ErrorClass.PERMISSION
    if status == 404:
        return ErrorClass.NOT_FOUND
    if status in (408, 504):
        return ErrorClass.TIMEOUT
    if status in (400, 413, 422):
        return ErrorClass.INVALID_REQUEST
    if 500 <= status <= 599:  # 529 (overloaded) included
        return ErrorClass.SERVER
    return ErrorClass.UNKNOWN


def exception_chain(error: BaseException) -> Iterator[BaseException]:
    """Every exception linked to `error`, outermost first, each once."""
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        linked: list[BaseException] = []
        last_attempt = getattr(current, "last_attempt", None)  # tenacity.RetryError
        if last_attempt is not None and hasattr(last_attempt, "exception"):
            inner = last_attempt.exception()
            if isinstance(inner, BaseException):
                linked.append(inner)
        if isinstance(current, BaseExceptionGroup):
            linked.extend(current.exceptions)
        for attribute in ("__cause__", "__context__"):
            inner = getattr(current, attribute)
            if inner is not None:
                linked.append(inner)
        pending[:0] = linked


def _type_names(error: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(error).__mro__}


def _status_of(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    if isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599:
        return status
    response = getattr(error, "response", None)
    status = getattr(response, "status_code", None)
    if isinstance(status, int) and not isinstance(status, bool) and 100 <= status <= 599:
        return status
    return None


def _classify_one(error: BaseException) -> tuple[ErrorClass, int | None] | None:
    if malformed_answer(error) is not None:  # marked by models.answer_guard: a 200 answer
        return ErrorClass.MALFORMED_RESPONSE, 200
    names = _type_names(error)
    # before connection errors: the SDKs' APITimeoutError subclasses APIConnectionError
    if names & _TIMEOUT_NAMES or isinstance(error, TimeoutError):
        return ErrorClass.TIMEOUT, None
    status = _status_of(error)
    if status is not None and status >= 400:
        return class_for_status(status), status
    if names & _CONNECTION_NAMES or isinstance(error, ConnectionError):
        return ErrorClass.CONNECTION, None
    if names & _INVALID_RESPONSE_NAMES or isinstance(error, json.JSONDecodeError):
        return ErrorClass.MALFORMED_RESPONSE, status
    return None


def _message_of(error: BaseException) -> str:
    described = malformed_answer(error)
    if described is not None:
        return described
    # Inspect's ModelGenerateError carries the whole request; the provider's own words suffice
    provider_message = getattr(error, "provider_message", None)
    if isinstance(provider_message, str) and provider_message:
        return provider_message
    message = getattr(error, "message", None)
    if isinstance(message, str) and message:
        return message
    return str(error) or type(error).__name__


def classify_exception(error: BaseException, *, secrets: Iterable[str] = ()) -> Classification:
    """Classify a failed call from its exception chain (types and status codes only).

    An answer that arrived but is not a completion is `MalformedResponseError`: one marked by
    `models.answer_guard` (HTTP status 200, its description with the provider's message), one
    the SDK could not decode, and a chain that holds only a failure to read it (an
    `IndexError`, `KeyError`, `AttributeError` or `TypeError` from inside Inspect or the SDK).
    """
    chain = list(exception_chain(error))
    # the guard's mark first: Inspect's wrapper outside it carries the status it was given
    marked = next((link for link in chain if malformed_answer(link) is not None), None)
    for link in chain if marked is None else [marked]:
        found = _classify_one(link)
        if found is not None:
            error_class, status = found
            text = f"{type(link).__name__}: {_message_of(link)}"
            if error_class is ErrorClass.MALFORMED_RESPONSE and status == 200:
                text = _message_of(link)
            return Classification(error_class, status, redact(text, secrets)[:_MAX_MESSAGE])
    read_failure = next((link for link in chain if isinstance(link, _READ_FAILURES)), None)
    if read_failure is not None:
        text = (
            "the answer could not be read as a completion: "
            f"{type(read_failure).__name__}: {_message_of(read_failure)}"
        )
        return Classification(
            ErrorClass.MALFORMED_RESPONSE, None, redact(text, secrets)[:_MAX_MESSAGE]
        )
    text = f"{type(error).__name__}: {_message_of(error)}"
    return Classification(ErrorClass.UNKNOWN, None, redact(text, secrets)[:_MAX_MESSAGE])


def secrets_from_environment(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of environment variables that hold keys or tokens (longest first)."""
    return secret_values(os.environ if environ is None else environ)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """Replace known secret values (in every encoding) and anything shaped like a key."""
    return Redactor(secrets, shapes=True).text(text)


def redact_value(value: Any, secrets: Iterable[str]) -> Any:
    """Redact every string inside a JSON-like value."""
    return Redactor(secrets, shapes=True).value(value)
