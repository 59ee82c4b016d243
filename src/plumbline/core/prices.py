"""The price table: what a model's tokens cost, with a source and a date per entry.

A price table is versioned TOML or JSON (the shipped one is `core/data/prices.toml`; `--prices
FILE` replaces it). Prices are US dollars per million tokens:

    version = "plumbline-2026-11-28"          # names every cost priced with this table
    [models."openai/gpt-4o"]
    source = "https://openai.com/api/pricing/"
    date = "2025-08-07"                        # the date the price was listed at the source
    input = 2.50                               # uncached input tokens
    output = 10.00                             # output tokens (reasoning included)
    cache_read = 1.25                          # optional: input tokens read from a cache
    cache_write = 3.75                         # optional: input tokens written to a cache
    reasoning = 10.00                          # optional: reasoning tokens (default: output)
    batch = 0.5                                # optional: the fraction paid through the batch API
    cache_read_in_input = true                 # the provider counts cache reads inside `input`
    aliases = ["openai/gpt-4o-2024-08-06"]
    [[models."openai/gpt-4o".tiers]]           # optional long-context tiers
    above_input_tokens = 200000                # applies when one request's prompt exceeds this
    input = 5.0                                # ... and replaces any of the prices above
    output = 15.0

The cost of one request (Inspect's `ModelUsage` kinds; reasoning is part of output):

    usd = [in · p_in + cr · p_cr + cw · p_cw + (out − r) · p_out + r · p_r] / 10⁶ × (batch ? b : 1)

where `in` excludes cache reads (subtracted when `cache_read_in_input`), and the tier is the
highest whose `above_input_tokens` is below the request's prompt (`in + cr + cw`). A model the
table does not price, or a kind of token it has no price for, gives `usd=None` and a note
naming the model, never $0.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from plumbline.core.problems import ProblemLinesError

Provenance = Literal["metered", "provider-reported", "agent-reported", "estimated"]
"""Where a cost's tokens came from: the harness's metering proxy, the response's usage, the
agent's own report, or a tokenizer's count."""

PROVENANCES: tuple[Provenance, ...] = (
    "metered",
    "provider-reported",
    "agent-reported",
    "estimated",
)

SHIPPED = "shipped"
_MILLION = 1_000_000.0


class PriceFileError(ProblemLinesError):
    """A price file that cannot be used; each problem is `file:line: field: problem`."""


@dataclass(frozen=True)
class TokenCounts:
    """Tokens of one request or a sum of requests, by kind (`None`: not reported).

    `output` includes `reasoning` (as Inspect and the providers report them)."""

    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    reasoning: int | None = None

    def __add__(self, other: TokenCounts) -> TokenCounts:
        return TokenCounts(
            *(_add(a, b) for a, b in zip(self.as_tuple(), other.as_tuple(), strict=True))
        )

    def as_tuple(self) -> tuple[int | None, ...]:
        return (self.input, self.output, self.cache_read, self.cache_write, self.reasoning)


def _add(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else a + b


@dataclass(frozen=True)
class Cost:
    """A cost in US dollars (`None`: cannot be priced, `note` says why) and the version of the
    price table that priced it."""

    usd: float | None
    note: str | None
    price_table: str


class _Prices(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    output: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    cache_read: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    cache_write: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    reasoning: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class Tier(_Prices):
    """Prices that replace the base ones for a request whose prompt exceeds a size."""

    above_input_tokens: int = Field(gt=0)


class PriceEntry(_Prices):
    """One model's prices (USD per million tokens), with where and when they were listed."""

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    source: str = Field(min_length=1)
    date: str
    batch: float | None = Field(default=None, gt=0, le=1, allow_inf_nan=False)
    cache_read_in_input: bool = False
    aliases: list[str] = Field(default_factory=list)
    tiers: list[Tier] = Field(default_factory=list)

    @field_validator("date")
    @classmethod
    def _iso_date(cls, value: str) -> str:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            raise ValueError("must be a date YYYY-MM-DD")
        return value


class PriceFile(BaseModel):
    """A price file: its version and the models it prices."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str = Field(min_length=1)
    description: str = ""
    models: dict[str, PriceEntry]


@dataclass(frozen=True)
class PriceTable:
    """A loaded price table: `version` names it on every cost; `source` is the file it came
    from (`shipped` for the package's own)."""

    version: str
    entries: Mapping[str, PriceEntry]
    source: str = SHIPPED
    description: str = ""

    def entry(self, model: str) -> PriceEntry | None:
        """The entry pricing `model` (by name or alias), or None."""
        return self.entries.get(model)

    def cost(self, model: str, tokens: TokenCounts, *, batch: bool = False) -> Cost:
        """The cost of one request's `tokens` (the module docstring's formula). Tiers are
        decided on this request's prompt, so price requests one by one (`cost_of_requests`)
        where their sizes are known."""
        entry = self.entry(model)
        if entry is None:
            return self._none(f"no price for model {model} in price table {self.version}")
        return _priced(entry, model, tokens, batch, self.version)

    def cost_of_requests(
        self, model: str, requests: Iterable[TokenCounts], *, batch: bool = False
    ) -> Cost:
        """The sum of `cost` over requests; `None` with the first note if any cannot be priced."""
        total = 0.0
        for tokens in requests:
            one = self.cost(model, tokens, batch=batch)
            if one.usd is None:
                return one
            total += one.usd
        return Cost(usd=total, note=None, price_table=self.version)

    def _none(self, note: str) -> Cost:
        return Cost(usd=None, note=note, price_table=self.version)


def _priced(entry: PriceEntry, model: str, tokens: TokenCounts, batch: bool, version: str) -> Cost:
    if tokens.input is None or tokens.output is None:
        note = f"the usage of model {model} does not report input and output tokens"
        return Cost(usd=None, note=note, price_table=version)
    cache_read = tokens.cache_read or 0
    cache_write = tokens.cache_write or 0
    reasoning = min(tokens.reasoning or 0, tokens.output)
    uncached = max(tokens.input - cache_read, 0) if entry.cache_read_in_input else tokens.input
    prices = _tier_prices(entry, uncached + cache_read + cache_write)
    amounts = {
        "input": uncached,
        "output": tokens.output - reasoning,
        "cache_read": cache_read,
        "cache_write": cache_write,
        "reasoning": reasoning,
    }
    usd = 0.0
    for kind, count in amounts.items():
        if count == 0:
            continue
        price = prices[kind]
        if price is None:
            note = f"no {kind} price for model {model} in price table {version}"
            return Cost(usd=None, note=note, price_table=version)
        usd += count * price / _MILLION
    if batch:
        if entry.batch is None:
            note = f"no batch price for model {model} in price table {version}"
            return Cost(usd=None, note=note, price_table=version)
        usd *= entry.batch
    return Cost(usd=usd, note=None, price_table=version)


def _tier_prices(entry: PriceEntry, prompt_tokens: int) -> dict[str, float | None]:
    prices: dict[str, float | None] = {
        "input": entry.input,
        "output": entry.output,
        "cache_read": entry.cache_read,
        "cache_write": entry.cache_write,
        "reasoning": entry.reasoning if entry.reasoning is not None else entry.output,
    }
    for tier in sorted(entry.tiers, key=lambda t: t.above_input_tokens):
        if prompt_tokens <= tier.above_input_tokens:
            break
        for kind in ("input", "output", "cache_read", "cache_write", "reasoning"):
            value = getattr(tier, kind)
            if value is not None:
                prices[kind] = value
        if tier.reasoning is None and tier.output is not None and entry.reasoning is None:
            prices["reasoning"] = tier.output
    return prices


def load_prices(path: Path | None = None) -> PriceTable:
    """The shipped price table (`path=None`) or a TOML/JSON price file. Raises
    `PriceFileError` with one `file:line: field: problem` line per problem."""
    if path is None:
        text = resources.files("plumbline.core").joinpath("data/prices.toml").read_text("utf-8")
        return parse_prices(text, "prices.toml", source=SHIPPED)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise PriceFileError([f"{path}:1: file: is not UTF-8 text"]) from None
    except OSError as error:
        raise PriceFileError([f"{path}:1: file: cannot read: {error.strerror or error}"]) from None
    return parse_prices(text, str(path), source=str(path))


def parse_prices(text: str, name: str, *, source: str) -> PriceTable:
    """Parse and validate a price file's text (JSON when it starts with `{`, else TOML)."""
    data = _decode(text, name)
    try:
        parsed = PriceFile.model_validate(data)
    except ValidationError as error:
        raise PriceFileError(
            [
                f"{name}:{_line_of(text, item['loc'])}: {_field(item['loc'])}: {item['msg']}"
                for item in error.errors()
            ]
        ) from None
    entries = _index(parsed, text, name)
    return PriceTable(
        version=parsed.version, entries=entries, source=source, description=parsed.description
    )


def _decode(text: str, name: str) -> Any:
    if text.lstrip().startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise PriceFileError(
                [f"{name}:{error.lineno}: file: invalid JSON: {error.msg}"]
            ) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        match = re.search(r"line (\d+)", str(error))
        end = "end of document" in str(error)
        line = match.group(1) if match else str(max(len(text.splitlines()), 1) if end else 1)
        raise PriceFileError([f"{name}:{line}: file: invalid TOML: {error}"]) from None


def _index(parsed: PriceFile, text: str, name: str) -> dict[str, PriceEntry]:
    entries: dict[str, PriceEntry] = {}
    problems: list[str] = []
    for model, entry in parsed.models.items():
        for key in (model, *entry.aliases):
            if key in entries and entries[key] is not entry:
                line = _line_of(text, ("models", model))
                problems.append(f"{name}:{line}: models.{model}: {key!r} is priced twice")
            entries[key] = entry
        tiers = [tier.above_input_tokens for tier in entry.tiers]
        if len(set(tiers)) != len(tiers):
            line = _line_of(text, ("models", model, "tiers"))
            problems.append(f"{name}:{line}: models.{model}.tiers: two tiers start at one size")
    if problems:
        raise PriceFileError(problems)
    return entries


def _field(loc: Sequence[int | str]) -> str:
    return ".".join(str(part) if isinstance(part, str) else f"[{part}]" for part in loc) or "file"


def _line_of(text: str, loc: Sequence[int | str]) -> int:
    """The 1-based line where the field at `loc` is written: each string part of the path is
    found, in order, as a key on a line at or after the previous part's line."""
    lines = text.splitlines()
    start = 0
    for part in loc:
        if not isinstance(part, str):
            continue
        key = re.compile(r'(^|[\s."{\[,])"?' + re.escape(part) + r'"?\s*[=:\]."]')
        for number in range(start, len(lines)):
            if key.search(lines[number]):
                start = number
                break
    return start + 1 if lines else 1


def finite_or_none(value: float | None) -> float | None:
    """A cost as a JSON-safe number: `None` for a missing or non-finite value."""
    return value if value is not None and math.isfinite(value) else None
