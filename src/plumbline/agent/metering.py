"""A trial's usage as the harness counted it, beside what the agent said: the record's fields.

`usage_fields` turns the proxy's calls (`MeteredCall`) and the agent's own report into run-record
fields. With a route through the proxy (`usage_source = "metered"`), the record's tokens, model,
per-model usage and cost are the metered ones, so every reader of records (`compare`'s token and
cost gates among them) uses them; the agent's own totals stay beside them in
`agent_reported_usage`. Without one (`"agent-reported"`) the agent's numbers stay, and
`usage_note` says why.

The discrepancy is over the token kinds the agent reported:

    usage_discrepancy = (reported - metered) / metered        (sums over those kinds)

flagged when `|usage_discrepancy| > DISCREPANCY_LIMIT` (1%), or when the agent reported tokens
and the proxy counted none (the ratio is then undefined and recorded null).

Cost is computed from the metered tokens with the price table (`plumbline.core.prices`), per
call at the model the provider answered with; the table's version is named in `price_table`. An
unknown price leaves the cost null with `cost_note`, never $0.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plumbline.agent.meter import MeteredCall
from plumbline.agent.meter_usage import Tokens
from plumbline.records.run_record import MAX_COST_USD, MAX_TOKENS

#: A discrepancy above this fraction of the metered tokens is flagged.
DISCREPANCY_LIMIT = 0.01

_KINDS = (
    ("input_tokens", "input"),
    ("output_tokens", "output"),
    ("cache_read_tokens", "cache_read"),
    ("cache_write_tokens", "cache_write"),
)


@dataclass(frozen=True)
class Priced:
    """A cost from the price table: USD (None when unknown), why unknown, the table's version."""

    usd: float | None
    note: str | None
    price_table: str | None


def price_calls(calls: Sequence[MeteredCall]) -> Priced:
    """The cost of the calls that reported tokens, at each call's model (`plumbline.core.prices`,
    the shipped table). Any call without a price makes the total unknown, with a note."""
    try:
        prices: Any = importlib.import_module("plumbline.core.prices")
    except ModuleNotFoundError:
        return Priced(None, "no price table in this build (plumbline.core.prices)", None)
    table = prices.load_prices()
    total = 0.0
    notes: list[str] = []
    for call in calls:
        if call.tokens is None:
            continue
        tokens = call.tokens
        counts = prices.TokenCounts(
            input=tokens.input,
            output=tokens.output,
            cache_read=tokens.cache_read,
            cache_write=tokens.cache_write,
            reasoning=tokens.reasoning,
        )
        cost = table.cost(call.model or "unknown", counts)
        if cost.usd is None:
            notes.append(str(cost.note or f"no price for model {call.model}"))
        else:
            total += float(cost.usd)
    if notes:
        return Priced(None, "; ".join(dict.fromkeys(notes)), str(table.version))
    return Priced(total, None, str(table.version))


def metered_totals(calls: Sequence[MeteredCall]) -> dict[str, Any]:
    """The `metered_usage` of a record: calls, their tokens by kind, models, latency."""
    total = sum((c.tokens for c in calls if c.tokens is not None), Tokens())
    return {
        "calls": len(calls),
        "failed_calls": sum(c.status >= 400 or c.status == 0 or c.error is not None for c in calls),
        "calls_without_usage": sum(
            c.tokens is None and c.api != "other" and c.status < 400 for c in calls
        ),
        "input_tokens": total.input,
        "output_tokens": total.output,
        "cache_read_tokens": total.cache_read,
        "cache_write_tokens": total.cache_write,
        "reasoning_tokens": total.reasoning,
        "models": sorted({c.model for c in calls if c.model and c.tokens is not None}),
        "latency_seconds": round(sum(c.latency_seconds for c in calls), 6),
    }


def model_usage(calls: Sequence[MeteredCall]) -> list[dict[str, Any]]:
    """Per model: its metered tokens and cost (the record's `model_usage`)."""
    by_model: dict[str, list[MeteredCall]] = {}
    for call in calls:
        if call.tokens is not None:
            by_model.setdefault(call.model or "unknown", []).append(call)
    rows = []
    for model, group in sorted(by_model.items()):
        total = sum((c.tokens for c in group if c.tokens is not None), Tokens())
        rows.append(
            {
                "model": model,
                "input_tokens": total.input,
                "output_tokens": total.output,
                "cache_read_tokens": total.cache_read,
                "cache_write_tokens": total.cache_write,
                "total_cost_usd": price_calls(group).usd,
            }
        )
    return rows


def _count(value: Any) -> int | None:
    """A token count as a record holds it (None for anything else)."""
    valid = isinstance(value, int) and not isinstance(value, bool)
    return value if valid and 0 <= value <= MAX_TOKENS else None


def discrepancy(
    metered: Mapping[str, Any], reported: Mapping[str, Any]
) -> tuple[float | None, bool]:
    """`(reported - metered) / metered` over the token kinds the agent reported, and whether
    it is flagged (over `DISCREPANCY_LIMIT`, or tokens reported where none were metered)."""
    kinds = [name for name, _ in _KINDS if _count(reported.get(name)) is not None]
    if not kinds:
        return None, False
    said = sum(int(reported[name]) for name in kinds)
    counted = sum(int(metered[name]) for name in kinds)
    if counted == 0:
        return None, said > 0
    ratio = (said - counted) / counted
    return round(ratio, 6), abs(ratio) > DISCREPANCY_LIMIT


def usage_fields(
    calls: Sequence[MeteredCall] | None, reported: Mapping[str, Any], why_not: str | None = None
) -> dict[str, Any]:
    """The record fields of a trial's usage. `calls` is None when the trial had no route
    through the proxy (`why_not` says why); `reported` holds the agent's own fields."""
    own: dict[str, Any] = {name: _count(reported.get(name)) for name, _ in _KINDS}
    cost = reported.get("total_cost_usd")
    if isinstance(cost, int | float) and not isinstance(cost, bool) and 0 <= cost <= MAX_COST_USD:
        own["total_cost_usd"] = float(cost)
    else:
        own["total_cost_usd"] = None
    own["model"] = reported.get("model") if isinstance(reported.get("model"), str) else None
    if calls is None:
        return {
            "usage_source": "agent-reported",
            "usage_note": why_not,
            "agent_reported_usage": own,
        }
    totals = metered_totals(calls)
    ratio, flagged = discrepancy(totals, own)
    priced = price_calls(calls)
    models = model_usage(calls)
    main = max(models, key=lambda row: row["output_tokens"] + row["input_tokens"], default=None)
    notes = []
    if totals["calls_without_usage"]:
        notes.append(f"{totals['calls_without_usage']} model call(s) answered without usage")
    return {
        "usage_source": "metered",
        "usage_note": "; ".join(notes) or None,
        "metered_usage": totals,
        "agent_reported_usage": own,
        "usage_discrepancy": ratio,
        "usage_discrepancy_flagged": flagged,
        **{name: totals[name] for name, _ in _KINDS},
        "model": main["model"] if main else reported.get("model"),
        "model_usage": models or None,
        "total_cost_usd": priced.usd,
        "cost_note": priced.note,
        "price_table": priced.price_table,
    }


__all__ = [
    "DISCREPANCY_LIMIT",
    "Priced",
    "discrepancy",
    "metered_totals",
    "model_usage",
    "price_calls",
    "usage_fields",
]
