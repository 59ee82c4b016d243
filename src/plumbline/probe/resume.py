"""Resuming a journal: the trials it already holds under this run's generation configuration.

Trial ``i`` is sent seed ``base + i``, so the run's configuration is a record's config with the
seed taken back to its base (`run_config`). A probe refuses to add trials with another
configuration to a journal unless told to (`ConfigChanged`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from plumbline.probe.settings import ProbeSettings, TrialKey
from plumbline.records.trial_record import GenerationSettings, read_trial_records


def run_config(config: GenerationSettings, trial: int) -> dict[str, Any]:
    """The run-level configuration behind one trial's settings (its seed back to the base)."""
    data = config.model_dump(mode="json")
    if isinstance(data.get("seed"), int):
        data["seed"] -= trial
    return data


def _show(value: Any) -> str:
    return "none" if value is None else str(value)


def differences(journal: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """How two run configurations differ, in words: ``temperature 0.7 -> 0.2``."""
    return [
        f"{name} {_show(journal.get(name))} -> {_show(wanted.get(name))}"
        for name in sorted(set(journal) | set(wanted))
        if journal.get(name) != wanted.get(name)
    ]


class ConfigChanged(ValueError):
    """The journal was written with other generation settings than this run's."""


def completed_keys(
    path: Path, settings: ProbeSettings, *, allow_config_change: bool = False
) -> tuple[set[TrialKey], int, int]:
    """Keys already in the journal with this run's configuration, how many duplicates it
    holds, and how many of its trials were sent with another configuration.

    A journal line that is not a valid trial record stops the run: resuming on top of it could
    duplicate or mislabel trials. A prompt id whose stored text differs from the current prompt
    stops it too, and so does a trial sent with other generation settings (temperature, seed,
    max tokens, timeout, retries, streaming, model arguments; `ConfigChanged`), unless
    `allow_config_change`: the journal then holds both configurations, which `reliability`
    reports separately, and this run's trials are all run under its own.
    """
    if not path.exists():
        return set(), 0, 0
    result = read_trial_records([path])
    if result.errors:
        shown = "\n".join(str(e) for e in result.errors[:5])
        raise ValueError(
            f"{path} holds lines that are not trial records; fix or remove them, "
            f"or write to a new file:\n{shown}"
        )
    texts = {prompt.id: prompt.text for prompt in settings.prompts}
    wanted = run_config(settings.generation(0), 0)
    done: set[TrialKey] = set()
    duplicates = 0
    mismatches = 0
    first_mismatch: tuple[str, dict[str, Any]] | None = None
    for record, located in zip(result.records, result.locations, strict=True):
        expected = texts.get(record.prompt_id)
        if expected is not None and expected != record.prompt:
            raise ValueError(
                f"{located.path}:{located.line}: prompt: prompt id {record.prompt_id!r} was "
                "recorded with a different text; use a new output file or a new prompt id"
            )
        config = run_config(record.config, record.trial)
        if config != wanted:
            mismatches += 1
            if first_mismatch is None:
                first_mismatch = (f"{located.path}:{located.line}", config)
            continue
        if record.key in done:
            duplicates += 1
        done.add(record.key)
    if first_mismatch is not None and not allow_config_change:
        where, config = first_mismatch
        raise ConfigChanged(
            f"{where}: config: {path} was written with other generation settings "
            f"({', '.join(differences(config, wanted))}; {mismatches} trial(s)). Rerun with "
            "the journal's settings to resume it, write this configuration to a new file "
            "(-o), or pass --allow-config-change to add it to this journal (reliability then "
            "reports each configuration separately)"
        )
    return done, duplicates, mismatches
