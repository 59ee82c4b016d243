"""Running trial keys on a bounded pool of async workers, one record per trial whatever happens."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Protocol

from plumbline.probe.errors import classify_exception, secrets_from_environment
from plumbline.probe.settings import ProbeSettings, Prompt, TrialKey, provider_of
from plumbline.records.trial_record import TrialRecord


class TrialCaller(Protocol):
    """Runs one trial and returns its record (failures included; never raises for a failure)."""

    def __call__(self, model: str, prompt: Prompt, trial: int) -> Awaitable[TrialRecord]: ...


def failed_trial(
    settings: ProbeSettings, model: str, prompt: Prompt, trial: int, error: BaseException
) -> TrialRecord:
    """The record of a trial whose caller raised instead of returning a record: classified
    like any failed call (secrets redacted), so one failure never ends the run."""
    failure = classify_exception(error, secrets=secrets_from_environment())
    return TrialRecord(
        model=model,
        provider=provider_of(model),
        prompt_id=prompt.id,
        prompt=prompt.text,
        trial=trial,
        response=None,
        latency_seconds=None,
        attempts=1,
        timestamp=datetime.now(UTC),
        config=settings.generation(trial),
        error_class=failure.error_class,
        http_status=failure.http_status,
        error_message=failure.message,
        timed_out=failure.timed_out,
    )


async def run_trials(
    settings: ProbeSettings,
    keys: Sequence[TrialKey],
    caller: TrialCaller,
    submit: Callable[[TrialRecord], None],
) -> None:
    """Run `keys` on at most `settings.concurrency` concurrent workers, handing each record to
    `submit` as it completes."""
    prompts = {prompt.id: prompt for prompt in settings.prompts}
    pending = iter(keys)  # shared by the workers: they take turns on one event loop

    async def worker() -> None:
        for model, prompt_id, trial in pending:
            try:
                record = await caller(model, prompts[prompt_id], trial)
            except Exception as error:  # a caller's defect costs this trial only
                record = failed_trial(settings, model, prompts[prompt_id], trial, error)
            submit(record)

    async with asyncio.TaskGroup() as workers:
        for _ in range(min(settings.concurrency, len(keys))):
            workers.create_task(worker())
