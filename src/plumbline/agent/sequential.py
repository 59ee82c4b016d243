"""`agent run --until-decided`: evaluate the sequential A/B after every completed pair and tell
the harness to stop launching trials once the verdict is reached.

Pairs are taken in a fixed, pre-registered order: the schedule position of a block's later
unit (the seeded schedule, made before any outcome). The schedule must be the random one
(`build_schedule(order="random")`, checked by the CLI): its blocks are a seeded shuffle of every
(task, repeat), so each pair is a draw from the whole suite and the verdict is about the mean
over the suite's tasks, not about the tasks that happen to run first (`stats.sequential`,
"Order"). After every record the monitor takes the
longest prefix of that order whose pairs are all resolved (both units recorded), drops pairs
with an infrastructure failure (they have no outcome, as in `compare`), and runs
`stats.run_sequential` on the rest. Because the order never depends on outcomes or on which
trial happened to finish first, the sequence is the same whatever the concurrency or executor,
and a resumed run (records read back) reaches exactly the same verdict at the same pair.
Trials already running when the verdict is reached finish and are recorded; they do not change
the verdict (the comparison stopped at its pair).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from plumbline.agent.schedule import Unit
from plumbline.records.run_record import RunRecord
from plumbline.stats.sequential import (
    INTERVAL_GUARANTEE,
    SequentialPlan,
    SequentialResult,
    run_sequential,
)


@dataclass(frozen=True)
class _Block:
    task_id: str
    repeat: int
    position: int  # the later of its two units in the schedule


class SequentialMonitor:
    """Tracks the pairs of `treatment` vs `control` in schedule order; `stopped` once decided
    (or once the cap is reached)."""

    def __init__(
        self,
        schedule: list[Unit],
        treatment: str,
        control: str,
        plan: SequentialPlan,
        *,
        max_pairs_given: int | None = None,
    ) -> None:
        self.treatment, self.control, self.plan = treatment, control, plan
        #: The cap the user set (`--max-pairs`), to plan the analysis the same way.
        self.max_pairs_given = max_pairs_given
        positions: dict[tuple[str, int], int] = {}
        for unit in schedule:
            if unit.arm in (treatment, control):
                key = (unit.task_id, unit.repeat)
                positions[key] = max(positions.get(key, -1), unit.position)
        self.blocks = sorted(
            (_Block(task, repeat, position) for (task, repeat), position in positions.items()),
            key=lambda block: block.position,
        )
        self.outcomes: dict[tuple[str, str, int], bool | None] = {}
        self.result: SequentialResult | None = None
        self.stopped = False
        self._lock = threading.Lock()

    @property
    def scheduled_pairs(self) -> int:
        return len(self.blocks)

    def add(self, record: RunRecord) -> None:
        """A record was written: update the verdict (thread-safe)."""
        if record.arm not in (self.treatment, self.control):
            return
        with self._lock:
            key = (record.task_id, record.arm, record.repeat)
            outcome = (
                None if record.infra_failure else bool(record.success and not record.timed_out)
            )
            if self.outcomes.get(key) is None:
                self.outcomes[key] = outcome
            self._evaluate()

    def load(self, records: list[RunRecord]) -> None:
        """Records already in the output directory (a resumed run)."""
        for record in records:
            self.add(record)

    def _evaluate(self) -> None:
        if self.stopped:
            return
        treatment: list[int] = []
        control: list[int] = []
        for block in self.blocks:
            t_key = (block.task_id, self.treatment, block.repeat)
            c_key = (block.task_id, self.control, block.repeat)
            if t_key not in self.outcomes or c_key not in self.outcomes:
                break  # the prefix ends at the first pair not yet resolved
            t, c = self.outcomes[t_key], self.outcomes[c_key]
            if t is None or c is None:
                continue  # an infrastructure failure: no outcome
            treatment.append(int(t))
            control.append(int(c))
        if not treatment:
            return
        result = run_sequential(treatment, control, self.plan)
        self.result = result
        if result.decided or result.stopped_at >= self.plan.max_pairs:
            self.stopped = True

    def summary(self, *, trials_scheduled: int, trials_recorded: int) -> dict[str, Any]:
        """The verdict and what stopping saved, for the run's summary (JSON and terminal)."""
        result = self.result
        plan = self.plan
        return {
            "treatment": self.treatment,
            "control": self.control,
            "verdict": "undecided" if result is None else result.verdict,
            "reason": None if result is None else result.reason,
            "decided": result is not None and result.decided,
            "pairs_used": 0 if result is None else result.stopped_at,
            "max_pairs": plan.max_pairs,
            "fixed_pairs": plan.fixed_pairs,
            "scheduled_pairs": self.scheduled_pairs,
            "estimate": None if result is None else result.estimate,
            "interval": None
            if result is None
            else {"low": result.interval.low, "high": result.interval.high},
            "level": 1 - plan.alpha,
            "method": plan.method,
            "interval_guarantee": INTERVAL_GUARANTEE,
            "correlation": plan.assumptions.get("correlation"),
            "discordant": plan.assumptions.get("discordant"),
            "effect": plan.effect,
            "baseline": plan.baseline,
            "alpha": plan.alpha,
            "margin": plan.margin,
            "trials_scheduled": trials_scheduled,
            "trials_recorded": trials_recorded,
            "trials_not_run": max(trials_scheduled - trials_recorded, 0),
        }


def pairs_order_note() -> str:
    return (
        "pairs are evaluated in schedule order (the later unit of each task-repeat block), "
        "after every completed pair"
    )


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """The sequential summary in words (terminal view)."""
    verdict = summary["verdict"]
    pairs = summary["pairs_used"]
    head = (
        f"Sequential: {summary['treatment']} vs {summary['control']} {verdict} after {pairs} pairs"
        if summary["decided"]
        else f"Sequential: {summary['treatment']} vs {summary['control']} undecided after "
        f"{pairs} pairs (cap {summary['max_pairs']})"
    )
    interval = summary["interval"]
    if interval is not None:
        head += (
            f"; pass-rate difference {summary['estimate']:+.3f}, "
            f"{summary['level']:.0%} confidence sequence [{interval['low']:+.3f}, "
            f"{interval['high']:+.3f}] ({summary['interval_guarantee']})"
        )
    correlation = summary.get("correlation")
    assumed = (
        f"discordant share {summary.get('discordant', 0):.2f}"
        if correlation is None
        else f"within-pair correlation {correlation:g}"
        + (" (independent arms: the most pairs)" if correlation == 0 else "")
    )
    return [
        head + ".",
        f"The fixed design would have needed {summary['fixed_pairs']} pairs (planned effect "
        f"{summary['effect']:+.2f} from a baseline of {summary['baseline']:.2f}, alpha "
        f"{summary['alpha']:g}, assuming a {assumed}, as the cap does); the cap is "
        f"{summary['max_pairs']} pairs, pairs taken in the randomised schedule's order. "
        f"{summary['trials_not_run']} of {summary['trials_scheduled']} scheduled trials were "
        "not run.",
    ]
