"""Older leaderboard documents in the current shape: plumbline's version 1 (an integer
`schema_version`) and SA Bench's own files (no `schema_version`), read by every reader of a
leaderboard file before it is validated as a `LeaderboardDocument`."""

from __future__ import annotations

import copy
from typing import Any

from plumbline.leaderboard.result import LEGACY_SCHEMA_VERSION, SCHEMA_VERSION


def is_older_leaderboard(document: Any) -> bool:
    """True for a leaderboard that `upgrade_document` upgrades: SA Bench's own files (no
    `schema_version`) and plumbline's version 1 (an integer 1 in `_metadata`)."""
    return (
        isinstance(document, dict)
        and isinstance(document.get("_metadata"), dict)
        and isinstance(document.get("models"), list)
        and document["_metadata"].get("schema_version") in (None, LEGACY_SCHEMA_VERSION)
    )


def upgrade_document(document: Any) -> Any:
    """A document of an older version in version 2's shape (anything else unchanged).

    SA Bench's files (no `schema_version`) and plumbline's version 1 (integer 1) are upgraded:
    the version string is set; `seed_group` → `sa_bench_group`, `seed_equivalent` →
    `sa_bench_equivalent`, `seed_equivalence` → `sa_bench_equivalence`; `tie_groups` is
    listed from the rows' `tie_group`; an interval's
    `standard_error` and `half_width` move to the row's `standard_errors` and `half_widths` (its
    per-model `confidence` and `margin` are dropped: they restate the half-width); a pair's
    `low`, `high` and `method` become its `interval`.
    """
    if not is_older_leaderboard(document):
        return document
    upgraded = copy.deepcopy(document)
    metadata = upgraded["_metadata"]
    metadata["schema_version"] = SCHEMA_VERSION
    _rename(metadata, "seed_equivalence", "sa_bench_equivalence")
    level = metadata.get("level", 0.95)
    for row in upgraded.get("models") or []:
        if not isinstance(row, dict):
            continue
        _rename(row, "seed_group", "sa_bench_group")
        intervals = row.get("intervals")
        if not isinstance(intervals, dict):
            continue
        errors: dict[str, Any] = {}
        widths: dict[str, Any] = {}
        for key, interval in intervals.items():
            if not isinstance(interval, dict):
                continue
            errors[key] = interval.pop("standard_error", None)
            widths[key] = interval.pop("half_width", None)
            interval.pop("confidence", None)
            interval.pop("margin", None)
            interval.setdefault("level", level)
        row.setdefault("standard_errors", errors)
        row.setdefault("half_widths", widths)
    if "tie_groups" not in upgraded:
        upgraded["tie_groups"] = _tie_groups(upgraded.get("models") or [])
    for pair in upgraded.get("comparisons") or []:
        if not isinstance(pair, dict):
            continue
        _rename(pair, "seed_equivalent", "sa_bench_equivalent")
        pair.pop("standard_error", None)
        pair.pop("df", None)
        if "interval" not in pair:
            pair["interval"] = {
                "low": pair.pop("low", None),
                "high": pair.pop("high", None),
                "level": level,
                "method": pair.pop("method", "not recorded"),
            }
    return upgraded


def _tie_groups(rows: list[Any]) -> list[dict[str, Any]]:
    """The tie groups a version-1 document's rows name, in rank order."""
    groups: dict[int, list[str]] = {}
    ranked = sorted(
        (row for row in rows if isinstance(row, dict) and isinstance(row.get("tie_group"), int)),
        key=lambda row: (row.get("rank") or 0, str(row.get("model"))),
    )
    for row in ranked:
        groups.setdefault(row["tie_group"], []).append(str(row.get("model")))
    return [
        {"group": group, "size": len(models), "models": models}
        for group, models in sorted(groups.items())
    ]


def _rename(mapping: dict[str, Any], old: str, new: str) -> None:
    if old in mapping and new not in mapping:
        mapping[new] = mapping.pop(old)


__all__ = ["is_older_leaderboard", "upgrade_document"]
