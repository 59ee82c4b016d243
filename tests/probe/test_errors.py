"""Error classification uses exception types and HTTP status only, never the message text."""

from __future__ import annotations

import pytest

from plumbline.probe.errors import (
    class_for_status,
    classify_exception,
    exception_chain,
    redact,
    secrets_from_environment,
)
from plumbline.records.trial_record import ErrorClass


class StatusError(Exception):
    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code


class APITimeoutError(Exception):
    """Named like the openai/anthropic SDK timeout (which is not a builtin TimeoutError)."""


class _Attempt:
    def __init__(self, error: BaseException) -> None:
        self._error = error

    def exception(self) -> BaseException:
        return self._error


class RetryError(Exception):
    """Shaped like tenacity's RetryError: the real error sits in `last_attempt`."""

    def __init__(self, error: BaseException) -> None:
        super().__init__("RetryError[<Future>]")
        self.last_attempt = _Attempt(error)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (429, ErrorClass.RATE_LIMIT),
        (401, ErrorClass.AUTHENTICATION),
        (403, ErrorClass.PERMISSION),
        (404, ErrorClass.NOT_FOUND),
        (400, ErrorClass.INVALID_REQUEST),
        (422, ErrorClass.INVALID_REQUEST),
        (500, ErrorClass.SERVER),
        (502, ErrorClass.SERVER),
        (529, ErrorClass.SERVER),
        (408, ErrorClass.TIMEOUT),
        (418, ErrorClass.UNKNOWN),
    ],
)
def test_status_codes(status: int, expected: ErrorClass) -> None:
    assert class_for_status(status) is expected
    assert classify_exception(StatusError(status, "whatever")).error_class is expected


def test_message_text_is_never_used() -> None:
    # the reference read "500" inside "5000 tokens" as a server error
    misleading = Exception("request of 5000 tokens failed: 500 Internal Server Error, 429")
    assert classify_exception(misleading).error_class is ErrorClass.UNKNOWN
    # and a 503 that talks about rate limits is still a server error
    result = classify_exception(StatusError(503, "rate limit exceeded (429), timeout"))
    assert result.error_class is ErrorClass.SERVER
    assert result.http_status == 503


def test_timeouts_are_recognised_by_type() -> None:
    assert classify_exception(TimeoutError()).timed_out
    assert classify_exception(TimeoutError()).timed_out
    sdk_timeout = classify_exception(APITimeoutError("Request timed out."))
    assert sdk_timeout.error_class is ErrorClass.TIMEOUT


def test_wrapped_errors_are_unwrapped() -> None:
    inner = StatusError(429, "slow down")
    wrapped = RetryError(inner)
    result = classify_exception(wrapped)
    assert (result.error_class, result.http_status) == (ErrorClass.RATE_LIMIT, 429)
    try:
        try:
            raise ConnectionResetError("peer reset")
        except ConnectionResetError as error:
            raise RuntimeError("generate failed") from error
    except RuntimeError as outer:
        assert classify_exception(outer).error_class is ErrorClass.CONNECTION
        assert [type(e) for e in exception_chain(outer)] == [RuntimeError, ConnectionResetError]


def test_redaction_of_known_values_and_key_shapes() -> None:
    secrets = secrets_from_environment(
        {"OPENAI_API_KEY": "abc123secretvalue", "HOME": "/root", "HF_TOKEN": "hf_tokenvalue"}
    )
    assert set(secrets) == {"abc123secretvalue", "hf_tokenvalue"}
    text = "key abc123secretvalue and Bearer qwertyuiop123 and sk-live-ABCDEFGHIJ"
    cleaned = redact(text, secrets)
    assert "abc123secretvalue" not in cleaned
    assert "qwertyuiop123" not in cleaned
    assert "sk-live-ABCDEFGHIJ" not in cleaned
    message = classify_exception(StatusError(401, "bad key abc123secretvalue"), secrets=secrets)
    assert "abc123secretvalue" not in message.message


def test_library_connection_errors_by_type_name() -> None:
    # requests.exceptions.ConnectionError is an OSError, not the builtin ConnectionError
    requests_like = type("ConnectionError", (OSError,), {})
    assert classify_exception(requests_like("no route")).error_class is ErrorClass.CONNECTION
    assert classify_exception(OSError("disk")).error_class is ErrorClass.UNKNOWN
