"""Which models of a baseline run and a current run are compared, and how each pair is named.

Models pair by an explicit `--pair OLD=NEW` first, then by equal names, then, when each run
holds one model, those two whatever their names. Records are grouped as `analyze` groups them
(configurations split, duplicates dropped), so a regression check and a reliability report of
the same file see the same models.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Literal

from plumbline.records.trial_record import TrialRecord
from plumbline.reliability.config_split import split_by_config
from plumbline.reliability.result import MetricChange, ModelPairing, Verdict

#: How a baseline model was paired with a current one.
PairedBy = Literal["name", "single model", "--pair"]


def records_by_model(records: Sequence[TrialRecord]) -> dict[str, list[TrialRecord]]:
    """Records per model, named as `analyze` names them (configurations split, duplicates
    dropped)."""
    unique: dict[tuple[str, str, int], TrialRecord] = {}
    for record in split_by_config(records).records:
        unique.setdefault(record.key, record)
    grouped: dict[str, list[TrialRecord]] = defaultdict(list)
    for record in unique.values():
        grouped[record.model].append(record)
    return grouped


def pair_models(
    baseline: Sequence[str], current: Sequence[str], explicit: Mapping[str, str] | None = None
) -> list[tuple[str, str, PairedBy]]:
    """(baseline model, current model, how) pairs: `explicit` (baseline → current) first, then
    equal names, then the two models when each run holds one. Unknown explicit names raise."""
    pairs: list[tuple[str, str, PairedBy]] = []
    for old, new in (explicit or {}).items():
        if old not in baseline:
            raise ValueError(f"--pair: the baseline has no model {old!r}")
        if new not in current:
            raise ValueError(f"--pair: the current run has no model {new!r}")
        pairs.append((old, new, "--pair"))
    if pairs:
        return pairs
    pairs = [(name, name, "name") for name in current if name in baseline]
    if not pairs and len(baseline) == 1 and len(current) == 1:
        pairs = [(baseline[0], current[0], "single model")]
    return pairs


def _summary(pairing_head: str, changes: Sequence[MetricChange]) -> str:
    parts = []
    for verdict in ("regressed", "improved", "unchanged", "inconclusive"):
        names = [c.metric for c in changes if c.verdict == verdict]
        if names:
            parts.append(
                f"{verdict.upper() if verdict == 'regressed' else verdict} " + ", ".join(names)
            )
    return f"{pairing_head}: " + "; ".join(parts) + "."


def _overall(changes: Sequence[MetricChange]) -> Verdict:
    verdicts = {c.verdict for c in changes}
    if "regressed" in verdicts:
        return "regressed"
    if "improved" in verdicts:
        return "improved"
    if verdicts == {"unchanged"}:
        return "unchanged"
    return "inconclusive"


def model_pairing(
    names: tuple[str, str],
    prompts: tuple[set[str], set[str]],
    how: PairedBy,
    changes: Sequence[MetricChange],
) -> ModelPairing:
    """The pairing of a baseline model with a current one (`names` and `prompts`: baseline,
    then current), its overall verdict and its one-line summary."""
    old_name, new_name = names
    old_prompts, new_prompts = prompts
    shared = len(old_prompts & new_prompts)
    head = (
        f"{new_name} vs baseline {old_name}" if new_name != old_name else f"{new_name}"
    ) + f" ({shared} shared prompts)"
    return ModelPairing(
        model=new_name,
        baseline_model=old_name,
        paired_by=how,
        shared_prompts=shared,
        only_in_baseline=sorted(old_prompts - new_prompts),
        only_in_current=sorted(new_prompts - old_prompts),
        verdict=_overall(changes),
        summary=_summary(head, changes),
    )


__all__ = ["PairedBy", "model_pairing", "pair_models", "records_by_model"]
