"""The demo's last screen: the answers to the questions its steps asked, read back from the
result files it wrote (and its store's change check).

    Best model: scripted/oracle, overall 0.995 [0.786, 0.999] (MOVER 95%) (of 3 models ranked)
    A/B (with_skelly vs without_skelly): mixed results - inspect paired deltas
    A/B on the demo's agent trials (with_hint vs without_hint): mixed results - inspect ...
    Reliability of plumbline/smollm2: n = 6 trials, 2 prompts; cannot rely on ...
    Regression (plumbline/smollm2, update vs first probe): 0 regressed, 1 improved, ...
    History: no series changed beyond noise (41 series; 1 run each: not enough to check yet)
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plumbline.core import present

if TYPE_CHECKING:
    from plumbline.compare.result import CompareReport
    from plumbline.leaderboard.result import LeaderboardDocument
    from plumbline.reliability.result import ReliabilityReport


def _read(path: Path, kind_name: str) -> Any:
    """The typed result of kind `kind_name` in the file at `path`, read through its kind
    (`results.kinds`); None when there is none, or it is not a readable result of that kind."""
    from plumbline.results.errors import ResultDocumentError
    from plumbline.results.kinds import kind

    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return kind(kind_name).read(document)
    except (OSError, ValueError, ResultDocumentError):
        return None


def short_method(method: str) -> str:
    """An interval method's name without its description or references: `MOVER` of
    `MOVER over category intervals (Zou & Donner 2008; Newcombe 2011)`."""
    return re.split(r" over | \(|; ", method, maxsplit=1)[0]


def best_model_line(board: LeaderboardDocument | None) -> str:
    """The leaderboard's first model with its overall score and interval."""
    if board is None or not board.models:
        return "Best model: no leaderboard was written"
    top = board.models[0]
    interval = top.interval("overall")
    shown = f"{present.number(top.overall)}"
    if interval is not None and interval.low is not None and interval.high is not None:
        level = present.shortest(interval.level * 100)
        shown += (
            f" [{present.number(interval.low)}, {present.number(interval.high)}]"
            f" ({short_method(interval.method)} {level}%)"
        )
    ranked = len(board.models)
    return f"Best model: {top.model}, overall {shown} (of {ranked} models ranked)"


def ab_line(compare: CompareReport | None, label: str = "A/B") -> str:
    if compare is None:
        return f"{label}: no comparison was written"
    pairs = compare.comparisons
    names = f" ({pairs[0].treatment} vs {pairs[0].control})" if pairs else ""
    return f"{label}{names}: {compare.decision}"


def reliability_lines(report: ReliabilityReport | None) -> list[str]:
    if report is None:
        return ["Reliability: no report was written"]
    return [
        f"Reliability of {model.model}: {_without_model(model.model, model.verdict)}"
        for model in report.models
    ]


def _without_model(model: str, verdict: str) -> str:
    """A model's verdict without its leading name: `n = 6 trials, 2 prompts; cannot rely ...`
    of `M (n = 6 trials, 2 prompts): cannot rely ...`."""
    if not verdict:
        return "no verdict"
    head = f"{model} ("
    if verdict.startswith(head) and "): " in verdict:
        counts, _, rest = verdict[len(head) :].partition("): ")
        return f"{counts}; {rest}"
    return verdict.removeprefix(f"{model} ")


def regression_line(report: ReliabilityReport | None) -> str:
    comparison = report.baseline_comparison if report is not None else None
    if comparison is None:
        return "Regression check: not run"
    verdicts = Counter(entry.verdict for entry in comparison.entries)
    counted = ", ".join(
        f"{verdicts[name]} {name}"
        for name in ("regressed", "improved", "unchanged", "inconclusive")
        if verdicts[name]
    )
    level = comparison.family_level
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
        best_model_line(_read(output / "leaderboard.json", "leaderboard")),
        ab_line(_read(output / "compare.json", "compare")),
        ab_line(_read(output / "agent-compare.json", "compare"), "A/B on the demo's agent trials")
        if (output / "agent-compare.json").is_file()
        else "A/B on the demo's agent trials: not run (no sandbox on this machine)",
        *reliability_lines(_read(output / "reliability.json", "reliability")),
        regression_line(_read(output / "regression.json", "reliability")),
        alarm_line(store_url),
    ]
