"""What a probe runs: the prompts, the settings, and the shuffled plan of trial keys."""

from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbline.core.redaction import public_arguments
from plumbline.records.io import RecordError, iter_json_values, read_text_file
from plumbline.records.trial_record import GenerationSettings

TrialKey = tuple[str, str, int]


@dataclass(frozen=True)
class Prompt:
    """A prompt and its stable id (the id keys resumption)."""

    id: str
    text: str


def prompt_id_for(text: str) -> str:
    """A content-derived id, so the same prompt text always resumes the same trials."""
    return "p-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def load_prompts(path: str | Path) -> list[Prompt]:
    """Prompts from a file: JSONL/JSON (`{"id": ..., "prompt": ...}` or strings) or plain text
    with one prompt per non-empty line. Problems read `file:line: field: problem`."""
    source = Path(path)
    prompts: list[Prompt] = []
    if source.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        problems: list[str] = []
        for item in iter_json_values(source):
            if isinstance(item, RecordError):
                problems.append(str(item))
                continue
            value = item.value
            if isinstance(value, str):
                text, given_id = value, None
            elif isinstance(value, dict):
                raw_text = value.get("prompt", value.get("text"))
                raw_id = value.get("id", value.get("prompt_id"))
                if not isinstance(raw_text, str) or not raw_text.strip():
                    problems.append(f"{item.path}:{item.line}: prompt: a non-empty string needed")
                    continue
                if raw_id is not None and not isinstance(raw_id, str | int):
                    problems.append(f"{item.path}:{item.line}: id: a string or integer needed")
                    continue
                text, given_id = raw_text, None if raw_id is None else str(raw_id)
            else:
                problems.append(f"{item.path}:{item.line}: <record>: a string or an object needed")
                continue
            prompts.append(Prompt(given_id or prompt_id_for(text), text))
        if problems:
            raise ValueError("\n".join(problems))
    else:
        for line in read_text_file(source).splitlines():
            if line.strip():
                prompts.append(Prompt(prompt_id_for(line.strip()), line.strip()))
    if not prompts:
        raise ValueError(f"{source}: no prompts found")
    seen: dict[str, str] = {}
    for prompt in prompts:
        if prompt.id in seen and seen[prompt.id] != prompt.text:
            raise ValueError(f"{source}: id: prompt id {prompt.id!r} is used for two prompts")
        seen[prompt.id] = prompt.text
    return list({p.id: p for p in prompts}.values())


@dataclass(frozen=True)
class ProbeSettings:
    """What to run. Invalid values raise `ValueError` naming the setting."""

    models: tuple[str, ...]
    prompts: tuple[Prompt, ...]
    trials: int = 20
    concurrency: int = 8
    timeout: float = 30.0
    temperature: float | None = 0.7
    seed: int = 42
    max_tokens: int | None = 1024
    retries: int = 0
    stream: bool = False
    model_args: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if not self.models:
            raise ValueError("models: give at least one model (--model)")
        if len(set(self.models)) != len(self.models):
            raise ValueError("models: a model is listed twice")
        if not self.prompts:
            raise ValueError("prompts: give at least one prompt (--prompt or --prompts)")
        if self.trials < 1:
            raise ValueError(f"trials must be at least 1, got {self.trials}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, got {self.timeout}")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise ValueError(f"temperature must be between 0 and 2, got {self.temperature}")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if self.retries < 0:
            raise ValueError(f"retries must be 0 or more, got {self.retries}")

    def trial_seed(self, trial: int) -> int:
        """Seed sent with trial `trial`: reproducible, and different between trials (one fixed
        seed would make a seeded provider repeat itself and hide its real variability)."""
        return self.seed + trial

    def generation(self, trial: int) -> GenerationSettings:
        return GenerationSettings(
            temperature=self.temperature,
            seed=self.trial_seed(trial),
            max_tokens=self.max_tokens,
            timeout=self.timeout,
            retries=self.retries,
            stream=self.stream,
            model_args=public_arguments(self.model_args) or None,
        )


def plan_trials(settings: ProbeSettings) -> list[TrialKey]:
    """Every (model, prompt id, trial) key, shuffled with the seed (the same order every run)."""
    keys = [
        (model, prompt.id, trial)
        for model in settings.models
        for prompt in settings.prompts
        for trial in range(settings.trials)
    ]
    random.Random(settings.seed).shuffle(keys)
    return keys


def dump_settings(settings: ProbeSettings) -> str:
    """The settings as JSON (for logs and reports: no secrets live in settings)."""
    return json.dumps(
        {
            "models": list(settings.models),
            "prompts": [p.id for p in settings.prompts],
            "trials": settings.trials,
            "concurrency": settings.concurrency,
            "timeout": settings.timeout,
            "temperature": settings.temperature,
            "seed": settings.seed,
            "max_tokens": settings.max_tokens,
            "retries": settings.retries,
            "stream": settings.stream,
        }
    )


def provider_of(model: str) -> str:
    """The provider part of a model name (`openai-api` of `openai-api/local/m`)."""
    return model.split("/", 1)[0]
