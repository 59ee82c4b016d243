"""The decision rule: three gates, checked in the A/B schema's order.

Schema rule (`--rule schema`, the A/B schema's "Decision Rule"): `prefer <treatment>` when
success_rate(T) ≥ success_rate(C), median_duration_seconds(T) ≤ median_duration_seconds(C)
and median_non_cache_tokens(T) ≤ median_non_cache_tokens(C); `prefer <control>` when all three hold
the other way; otherwise `mixed results - inspect paired deltas`. Checked in that order, so a
three-way tie reads `prefer <treatment>` and is flagged as a tie.

CI rule (`--rule ci`, plumbline's stricter variant): a gate passes for an arm only when its 95%
interval excludes a regression beyond a stated margin: the paired pass-rate difference's interval
must stay above `−success` (absolute), and the paired geometric-mean ratio of duration and of
non-cache tokens must stay below `1 + duration` / `1 + tokens` (relative). Both intervals come
from the cluster bootstrap (tasks, then repeats within task).
"""

from __future__ import annotations

from dataclasses import dataclass

from plumbline.compare.result import (
    MIXED,
    ArmSummary,
    Gate,
    Margins,
    Role,
    Rule,
    Verdict,
    prefer,
)
from plumbline.core.result import Interval
from plumbline.stats.result import ConfidenceInterval


def gate(
    name: str,
    treatment: float | None,
    control: float | None,
    for_treatment: bool,
    for_control: bool,
    criterion: str,
    interval: ConfidenceInterval | None = None,
) -> Gate:
    """A gate with its verdict: `tie` when it holds for both, else the arm it holds for."""
    verdict: Verdict = (
        "tie"
        if for_treatment and for_control
        else "treatment"
        if for_treatment
        else "control"
        if for_control
        else "neither"
    )
    return Gate(
        name=name,
        treatment=treatment,
        control=control,
        holds_for_treatment=for_treatment,
        holds_for_control=for_control,
        verdict=verdict,
        criterion=criterion,
        interval=None if interval is None else Interval.of(interval),
    )


@dataclass(frozen=True)
class Decision:
    """The A/B schema's decision string, and `role`: which side it prefers ("treatment", "control")
    or "mixed", so that an arm literally named "treatment" cannot be misread."""

    decision: str
    rule: Rule
    gates: list[Gate]
    tie: bool
    role: Role = "mixed"

    @property
    def prefers_treatment(self) -> bool:
        return all(g.holds_for_treatment for g in self.gates)


def _compare(t: float | None, c: float | None, higher_is_better: bool) -> tuple[bool, bool]:
    if t is None or c is None:
        return False, False
    return (t >= c, c >= t) if higher_is_better else (t <= c, c <= t)


def schema_gates(treatment: ArmSummary, control: ArmSummary) -> list[Gate]:
    """The A/B schema's three gates on the arm summaries."""
    gates = []
    for name, higher, sign in (
        ("success_rate", True, "≥"),
        ("median_duration_seconds", False, "≤"),
        ("median_non_cache_tokens", False, "≤"),
    ):
        t, c = getattr(treatment, name), getattr(control, name)
        for_t, for_c = _compare(t, c, higher)
        gates.append(gate(name, t, c, for_t, for_c, f"{name}(treatment) {sign} {name}(control)"))
    return gates


def ci_gates(
    treatment: ArmSummary,
    control: ArmSummary,
    *,
    pass_delta: ConfidenceInterval | None,
    duration_ratio: ConfidenceInterval | None,
    token_ratio: ConfidenceInterval | None,
    margins: Margins,
) -> list[Gate]:
    """Gates that pass only when the interval excludes a regression beyond the margin."""
    gates = []
    if pass_delta is None:
        for_t = for_c = False
    else:
        for_t = pass_delta.low >= -margins.success
        for_c = pass_delta.high <= margins.success
    gates.append(
        gate(
            "success_rate",
            treatment.success_rate,
            control.success_rate,
            for_t,
            for_c,
            f"CI of mean pass_delta (T − C) above −{margins.success:g}",
            pass_delta,
        )
    )
    for name, ratio, margin in (
        ("median_duration_seconds", duration_ratio, margins.duration),
        ("median_non_cache_tokens", token_ratio, margins.tokens),
    ):
        if ratio is None:
            for_t = for_c = False
        else:
            for_t = ratio.high <= 1 + margin
            for_c = ratio.low >= 1 / (1 + margin)
        gates.append(
            gate(
                name,
                getattr(treatment, name),
                getattr(control, name),
                for_t,
                for_c,
                f"CI of paired geometric-mean ratio (T / C) below {1 + margin:g}",
                ratio,
            )
        )
    return gates


def decide(treatment: str, control: str, gates: list[Gate], rule: Rule) -> Decision:
    """Apply the gates in the A/B schema's order: treatment first, then control, else mixed."""
    role: Role
    if all(g.holds_for_treatment for g in gates):
        decision, role = prefer(treatment), "treatment"
    elif all(g.holds_for_control for g in gates):
        decision, role = prefer(control), "control"
    else:
        decision, role = MIXED, "mixed"
    tie = all(g.holds_for_treatment and g.holds_for_control for g in gates)
    return Decision(decision, rule, gates, tie, role)
