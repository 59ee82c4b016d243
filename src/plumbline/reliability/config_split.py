"""Trials split by generation configuration: each (model, configuration) reported on its own,
never pooled silently.

Each trial record carries the generation settings it was sent with (``config``); trials whose
settings differ only in their seed are draws under one configuration. ``reliability`` reports
each configuration of a model separately (``probe`` keeps one per journal unless told otherwise:
`probe.resume`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from plumbline.records.trial_record import TrialRecord


def pooling_config(record: TrialRecord) -> dict[str, Any]:
    """The settings that make trials of one model poolable: every generation setting but the
    seed. Different seeds are different draws under one configuration (and not every journal
    follows `probe`'s base + trial seeding: some send one seed to every trial)."""
    config = record.config.model_dump(mode="json")
    config.pop("seed", None)
    return config


def _key(config: dict[str, Any]) -> str:
    return repr(sorted(config.items()))


def _show(value: Any) -> str:
    return "none" if value is None else str(value)


def label(model: str, config: dict[str, Any], varying: Sequence[str]) -> str:
    """A model's name with the settings that tell its configurations apart."""
    shown = ", ".join(f"{name}={_show(config.get(name))}" for name in varying)
    return f"{model} ({shown})"


@dataclass
class ConfigSplit:
    """Records relabelled by configuration, and what was split (for the report's warnings)."""

    records: list[TrialRecord]
    notes: list[str] = field(default_factory=list)
    #: label -> the model name it was split from (a price given for the model applies)
    models: dict[str, str] = field(default_factory=dict)


def split_by_config(records: Sequence[TrialRecord]) -> ConfigSplit:
    """Give each (model, configuration) its own name when a model ran with several.

    A model with one configuration keeps its name. Models compared with each other under
    different configurations are noted too: their differences mix model and settings.
    """
    configs: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for record in records:
        config = pooling_config(record)
        configs[record.model].setdefault(_key(config), config)
    split = ConfigSplit(records=[])
    labels: dict[tuple[str, str], str] = {}
    for model, found in sorted(configs.items()):
        if len(found) < 2:
            continue
        varying = _varying(list(found.values()))
        for key, config in found.items():
            labels[(model, key)] = label(model, config, varying)
            split.models[labels[(model, key)]] = model
        split.notes.append(
            f"{model} was run with {len(found)} generation configurations (differing in "
            f"{', '.join(varying)}); each is reported separately, never pooled"
        )
    for record in records:
        name = labels.get((record.model, _key(pooling_config(record))))
        split.records.append(record if name is None else record.model_copy(update={"model": name}))
    single = [next(iter(found.values())) for found in configs.values() if len(found) == 1]
    varying = _varying(single)
    if varying:
        split.notes.append(
            "the models were run with different generation configurations (differing in "
            f"{', '.join(varying)}): differences between them mix model and settings"
        )
    return split


def _varying(configs: Sequence[dict[str, Any]]) -> list[str]:
    """The settings whose values are not the same in every configuration."""
    names = sorted({name for config in configs for name in config})
    return [name for name in names if len({repr(config.get(name)) for config in configs}) > 1]
