"""The demo's last screen: the answers to the questions its steps asked, read back from the
result files it wrote (and its store's change check).

    Best model: scripted/oracle, overall 0.967 [0.833, 0.994] (Wilson 95%)
    A/B (with_skelly vs without_skelly): mixed results - inspect paired deltas
    Reliability: plumbline/smollm2: ...
    Regression (plumbline/smollm2, update vs first probe): 0 regressed, 1 improved, ...
    History: no series changed beyond noise (41 series; 1 run each: not enough to check yet)
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from plumbline.core import present


def _read(path: Path) -> dict[str, Any] | None:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def best_model_line(board: dict[str, Any] | None) -> str:
    """The leaderboard's first model with its overall score and interval."""
    if not board or not board.get("models"):
        return "Best model: no leaderboard was written"
    top = board["models"][0]
    interval = (top.get("intervals") or {}).get("overall") or {}
    shown = f"{present.number(top.get('overall'))}"
    if interval.get("low") is not None and interval.get("high") is not None:
        level = present.shortest(float(interval.get("level", 0.95)) * 100)
        shown += (
            f" [{present.number(interval['low'])}, {present.number(interval['high'])}]"
            f" ({interval.get('method', 'interval')} {level}%)"
        )
    ranked = len(board["models"])
    return f"Best model: {top.get('model')}, overall {shown} (of {ranked} models ranked)"


def ab_line(compare: dict[str, Any] | None) -> str:
    if not compare:
        return "A/B: no comparison was written"
    pairs = compare.get("comparisons") or []
    names = (
        f" ({pairs[0].get('treatment')} vs {pairs[0].get('control')})"
        if pairs and isinstance(pairs[0], dict)
        else ""
    )
    return f"A/B{names}: {compare.get('decision', 'no decision')}"


def reliability_lines(report: dict[str, Any] | None) -> list[str]:
    if not report:
        return ["Reliability: no report was written"]
    return [
        f"Reliability of {model.get('model')}: {model.get('verdict') or 'no verdict'}"
        for model in report.get("models") or []
    ]


def regression_line(report: dict[str, Any] | None) -> str:
    comparison = (report or {}).get("baseline_comparison")
    if not comparison:
        return "Regression check: not run"
    verdicts = Counter(entry.get("verdict") for entry in comparison.get("entries") or [])
    counted = ", ".join(
        f"{verdicts[name]} {name}"
        for name in ("regressed", "improved", "unchanged", "inconclusive")
        if verdicts[name]
    )
    level = comparison.get("family_level")
    family = f" (all metrics at once at {present.shortest(level * 100)}%)" if level else ""
    return f"Regression check, update vs first probe: {counted or 'no metric compared'}{family}"


def alarm_line(store_url: str | None) -> str:
    """Whether any stored series changed beyond noise (`history check`)."""
    if store_url is None:
        return "History: no store"
    from plumbline.store.history import check_changes
    from plumbline.store.migrate import StoreError
    from plumbline.store.store import Query, Store

    try:
        with Store.open(store_url, create=False) as store:
            report = check_changes(store, Query())
    except StoreError as error:
        return f"History: not checked ({error})"
    changed = [s for s in report.series if s.first_alarm is not None]
    if changed:
        names = ", ".join(f"{s.model} · {s.metric}" for s in changed[:5])
        return f"History: ALARM, {len(changed)} series changed beyond noise: {names}"
    short = sum(1 for s in report.series if len(s.runs) < 2)
    if short == len(report.series):
        return (
            f"History: {len(report.series)} series stored, one run each: not enough runs to "
            "check yet (run the demo again)"
        )
    return f"History: no alarm ({len(report.series)} series; {short} with too few runs)"


def demo_answers(output: Path, store_url: str | None) -> list[str]:
    """The answer lines of the demo (see the module)."""
    return [
        best_model_line(_read(output / "leaderboard.json")),
        ab_line(_read(output / "compare.json")),
        *reliability_lines(_read(output / "reliability.json")),
        regression_line(_read(output / "regression.json")),
        alarm_line(store_url),
    ]
