"""The trial runner: the same prompts, many times, against one or more models.

Calls go through Inspect AI's model API, so every Inspect provider works (including
`openai-api/<service>/<model>` with `<SERVICE>_BASE_URL` and `<SERVICE>_API_KEY` for local
servers); a non-streamed `openai-api` call goes straight to Inspect's provider, without the
`Model.generate` bookkeeping a probe does not use (`DirectCall`, through the private names
`plumbline.compat` guards; the records are the same, and each names its `call_path`).
The plan of (model, prompt, trial) keys is shuffled with the seed, so every model is measured
across the same time window rather than one after the other; a bounded pool of async
workers runs it. Every trial, failed or not, is appended to a JSONL journal and made durable
(group commit, `probe.journal`) before it is counted, so a rerun skips what is done and
a killed run loses only the calls in flight.

Retries are off unless asked for, at every layer: Inspect's retry loop (`max_retries=0`), the
provider SDK's own (`client.max_retries = 0`), and ours (`retries`, counted per trial in
`attempts`). A timeout is enforced per attempt with `asyncio.timeout` (exact, sub-second
allowed; Inspect's whole-second `attempt_timeout` stands behind it) and is always classified as
a TimeoutError.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plumbline.probe.caller import InspectCaller, outside_any_eval
from plumbline.probe.journal import GroupCommitJournal
from plumbline.probe.resume import completed_keys
from plumbline.probe.settings import ProbeSettings, plan_trials
from plumbline.probe.shards import ProbeProcesses, process_count
from plumbline.probe.trials import TrialCaller, run_trials
from plumbline.records.io import JsonlAppender
from plumbline.records.locks import LockBusy, exclusive
from plumbline.records.trial_record import TrialRecord


@dataclass
class ProbeSummary:
    """What a probe run did."""

    output: str
    planned: int
    already_done: int
    completed: int
    errors: dict[str, int] = field(default_factory=dict)
    elapsed_seconds: float = 0.0
    duplicates_in_journal: int = 0
    # journal trials recorded with another generation config (temperature, seed, ...)
    config_mismatches: int = 0

    @property
    def trials_per_second(self) -> float:
        return self.completed / self.elapsed_seconds if self.elapsed_seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "output": self.output,
            "planned": self.planned,
            "already_done": self.already_done,
            "completed": self.completed,
            "errors": dict(self.errors),
            "elapsed_seconds": self.elapsed_seconds,
            "trials_per_second": self.trials_per_second,
            "duplicates_in_journal": self.duplicates_in_journal,
            "config_mismatches": self.config_mismatches,
        }


class JournalBusy(LockBusy):
    """Another `probe` is writing the same journal."""


def lock_path(journal: Path) -> Path:
    """The lock a probe holds beside its journal while it writes (``trials.jsonl.lock``)."""
    return journal.with_name(journal.name + ".lock")


async def run_probe(
    settings: ProbeSettings,
    output: str | Path,
    *,
    caller: TrialCaller | None = None,
    on_record: Callable[[TrialRecord], None] | None = None,
    on_plan: Callable[[int, int], None] | None = None,
    allow_config_change: bool = False,
    processes: int | None = 1,
    workers: ProbeProcesses | None = None,
) -> ProbeSummary:
    """Run every trial not already in `output`, appending each record as it completes.

    One writer per journal: a second probe on the same `output` stops at once (`JournalBusy`).
    A journal holding trials of other generation settings stops the run (`ConfigChanged`)
    unless `allow_config_change`.

    The calls can be shared by `processes` worker processes (None: one per core when the
    concurrency is at least `SHARD_CONCURRENCY`, as `plumbline probe` runs; never with a given
    `caller`), or by `workers` set up ahead; this process alone writes the journal. Worker
    processes are spawned: a script that runs a probe with them needs the
    `if __name__ == "__main__":` guard of `multiprocessing`.
    """
    path = Path(output)
    busy = (
        f"{path} is being written by another `plumbline probe` ({{holder}}); wait for it to "
        "finish, or write to another file (-o)"
    )
    with exclusive(lock_path(path), busy, JournalBusy), outside_any_eval():
        return await _run_probe(
            settings,
            path,
            caller=caller,
            on_record=on_record,
            on_plan=on_plan,
            allow_config_change=allow_config_change,
            processes=processes,
            workers=workers,
        )


async def _run_probe(
    settings: ProbeSettings,
    path: Path,
    *,
    caller: TrialCaller | None,
    on_record: Callable[[TrialRecord], None] | None,
    on_plan: Callable[[int, int], None] | None,
    allow_config_change: bool,
    processes: int | None,
    workers: ProbeProcesses | None,
) -> ProbeSummary:
    # Records are group-committed (probe.journal): durable before they are counted.
    appender = JsonlAppender(path)  # repairs a partial last line of a killed run
    try:
        done, duplicates, mismatches = completed_keys(
            path, settings, allow_config_change=allow_config_change
        )
        planned = plan_trials(settings)
        todo = [key for key in planned if key not in done]
        if on_plan is not None:
            on_plan(len(planned), len(planned) - len(todo))
        summary = ProbeSummary(
            output=str(path),
            planned=len(planned),
            already_done=len(planned) - len(todo),
            completed=0,
            duplicates_in_journal=duplicates,
            config_mismatches=mismatches,
        )
        if not todo:
            return summary
        own_workers: ProbeProcesses | None = None
        if workers is None and caller is None:
            count = process_count(settings, len(todo), processes)
            # set up before the clock starts, as the in-process caller below is
            own_workers = ProbeProcesses(settings, count) if count > 1 else None
            workers = own_workers
        inspect_caller = InspectCaller(settings) if caller is None and workers is None else None
        errors: Counter[str] = Counter()
        started = time.monotonic()

        def on_durable(record: TrialRecord) -> None:
            summary.completed += 1
            if record.error_class is not None:
                errors[record.error_class.value] += 1
            if on_record is not None:
                on_record(record)

        journal = GroupCommitJournal(appender, on_durable)
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(journal.run())
                if workers is not None:
                    await workers.run(todo, journal.submit)
                else:
                    active = caller if caller is not None else inspect_caller
                    assert active is not None
                    await run_trials(settings, todo, active, journal.submit)
                journal.close()
        finally:
            journal.commit_now()  # an interrupted run keeps every trial that completed
            summary.elapsed_seconds = time.monotonic() - started
            summary.errors = dict(errors)
            if inspect_caller is not None:
                await inspect_caller.aclose()
            if own_workers is not None:
                own_workers.close()
        return summary
    finally:
        appender.close()
