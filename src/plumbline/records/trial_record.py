"""Trial records: one call of one model on one prompt, kept whole (CERT).

The JSON Schema `schemas/trial_record.schema.json` is the exchange format; `TrialRecord` is its
typed model, and the two accept and reject the same records. A failed trial is a record too:
the reliability metrics count failures, so they must never be dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from plumbline.core.timestamps import as_utc
from plumbline.records.io import ReadResult, read_records

SCHEMA_VERSION = "1.0.0"

# Sane maxima: past these a value is garbage or a unit mistake, not a measurement.
MAX_SECONDS = 7 * 24 * 3600.0
MAX_TOKENS = 10**9
MAX_TRIALS = 10**7
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
Tokens = Annotated[int, Field(ge=0, le=MAX_TOKENS)]


class ErrorClass(StrEnum):
    """Why a trial failed, from the exception type and HTTP status (never the message text).

    CERT's six classes keep their names (TimeoutError, RateLimitError, AuthenticationError,
    ServerError, ConnectionError, UnknownError); the others split out what it lumped together.
    """

    TIMEOUT = "TimeoutError"
    RATE_LIMIT = "RateLimitError"
    AUTHENTICATION = "AuthenticationError"
    PERMISSION = "PermissionError"
    NOT_FOUND = "NotFoundError"
    SERVER = "ServerError"
    CONNECTION = "ConnectionError"
    INVALID_REQUEST = "InvalidRequestError"
    CONTENT_FILTER = "ContentFilterError"
    # an answer that arrived (HTTP 200) but is not a completion: no choices, a choice without
    # a message, an error object, not JSON (a provider-side failure CERT counts as ServerError)
    MALFORMED_RESPONSE = "MalformedResponseError"
    UNKNOWN = "UnknownError"


class CallPath(StrEnum):
    """The code that sent a probe trial's call (`plumbline.compat`: the fast paths take
    private names of Inspect and the openai SDK; `model_generate` is Inspect's public API)."""

    #: the openai SDK's request built once per client, sent by the direct call
    PREPARED_REQUEST = "prepared_request"
    #: the openai SDK client's own `post`, called by the direct call
    SDK_POST = "sdk_post"
    #: Inspect's `openai-api` provider, called directly (its own request building)
    INSPECT_PROVIDER = "inspect_provider"
    #: Inspect's `Model.generate`
    MODEL_GENERATE = "model_generate"


class GenerationSettings(BaseModel):
    """The generation config a trial was sent with."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    seed: int | None = None
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)
    timeout: float | None = Field(
        default=None,
        gt=0,
        le=MAX_SECONDS,
        allow_inf_nan=False,
        description="Per-call timeout, seconds.",
    )
    retries: int = Field(default=0, ge=0, le=1000, description="Retries allowed per trial.")
    stream: bool = False
    model_args: dict[str, Any] | None = Field(
        default=None, description="Provider arguments (-M); secret-named values redacted."
    )


class TrialRecord(BaseModel):
    """One trial (schema version 1.0.0).

    `latency_seconds` is measured on a monotonic clock around the whole call (retries
    included); `ttft_seconds` is the time to the first streamed text. A trial failed when
    `error_class` is set; `timed_out` is true exactly when the class is TimeoutError.
    """

    model_config = ConfigDict(extra="allow")

    schema_version: Literal["1.0.0"] = "1.0.0"
    model: str = Field(min_length=1, description="Inspect model name, e.g. openai/gpt-4o.")
    provider: str = Field(min_length=1)
    prompt_id: str = Field(min_length=1)
    prompt: str
    trial: int = Field(ge=0, le=MAX_TRIALS)
    response: str | None = None
    latency_seconds: Seconds | None = None
    ttft_seconds: Seconds | None = None
    input_tokens: Tokens | None = None
    output_tokens: Tokens | None = None
    error_class: ErrorClass | None = None
    http_status: int | None = Field(default=None, ge=100, le=599)
    error_message: str | None = None
    timed_out: bool = False
    attempts: int = Field(default=1, ge=1, le=1001, description="Calls made: 1 + retries used.")
    #: when this trial started (its first attempt), to the microsecond: the regression check
    #: orders a run's trials by it to keep bursts of failures together (`reliability.bursts`);
    #: a naive time is UTC, as every reader reads one (`core.timestamps`)
    timestamp: Annotated[datetime, AfterValidator(as_utc)]
    config: GenerationSettings
    call_path: CallPath | None = Field(
        default=None,
        description=(
            "The code that sent the call (plumbline.compat); absent in records of other "
            "callers and of older plumbline releases."
        ),
    )
    usage_note: str | None = Field(
        default=None,
        description="Why a token count the provider reported is null: it was out of range.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> TrialRecord:
        if self.timed_out != (self.error_class is ErrorClass.TIMEOUT):
            raise ValueError("timed_out must be true exactly when error_class is TimeoutError")
        if self.error_class is None and self.response is None:
            raise ValueError("a successful trial needs a response (null only when it failed)")
        if (
            self.ttft_seconds is not None
            and self.latency_seconds is not None
            and self.ttft_seconds > self.latency_seconds
        ):
            raise ValueError(
                f"ttft_seconds ({self.ttft_seconds:g}) is longer than latency_seconds "
                f"({self.latency_seconds:g}): the first token cannot come after the whole response"
            )
        return self

    @property
    def ok(self) -> bool:
        return self.error_class is None

    @property
    def key(self) -> tuple[str, str, int]:
        """The identity of a trial: (model, prompt id, trial index)."""
        return (self.model, self.prompt_id, self.trial)


@dataclass(frozen=True)
class UsageCounts:
    """A provider's token counts as a trial record keeps them, and why any was left out."""

    input_tokens: int | None
    output_tokens: int | None
    note: str | None = None


def usage_counts(input_tokens: Any, output_tokens: Any) -> UsageCounts:
    """Token counts as reported when they are counts the schema holds (integers in
    [0, MAX_TOKENS]); any other value is left null, and the note says what was reported.

    A provider's usage block is data about the answer, not part of it: a gateway that counts
    cached tokens apart reports more cached than prompt tokens (Inspect's input count,
    prompt − cached − cache-write, is then negative), another reports 10¹² completion tokens.
    Either way the answer, its latency and its class stand; only the count is unknown.
    """
    kept: dict[str, int | None] = {}
    problems: list[str] = []
    for name, value in (("input_tokens", input_tokens), ("output_tokens", output_tokens)):
        if value is None or (
            isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS
        ):
            kept[name] = value
            continue
        kept[name] = None
        why = "negative" if isinstance(value, int | float) and value < 0 else "out of range"
        problems.append(f"{name} {value!r} ({why}; a count is in [0, {MAX_TOKENS:.0e}])")
    note = None
    if problems:
        note = "the provider's usage gave " + "; ".join(problems) + ": left null"
    return UsageCounts(kept["input_tokens"], kept["output_tokens"], note)


@cache
def trial_record_schema() -> dict[str, Any]:
    """The packaged JSON Schema for trial records."""
    text = (resources.files("plumbline") / "schemas" / "trial_record.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


def read_trial_records(
    paths: Iterable[str | Path], *, strict: bool = False
) -> ReadResult[TrialRecord]:
    """Read trial records from JSONL (or JSON) files; problems read `file:line: field: why`."""
    return read_records(paths, TrialRecord, strict=strict)
