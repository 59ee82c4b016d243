"""Group commit: a record is in the file before it is counted, and nothing is written twice."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

from plumbline.probe.journal import GroupCommitJournal
from plumbline.records.io import JsonlAppender
from plumbline.records.trial_record import GenerationSettings, TrialRecord


def _record(trial: int) -> TrialRecord:
    return TrialRecord(
        model="openai-api/local/m",
        provider="openai-api",
        prompt_id="p",
        prompt="hi",
        trial=trial,
        response=f"answer {trial}",
        latency_seconds=0.1,
        attempts=1,
        timestamp=datetime(2026, 1, 1, tzinfo=UTC),
        config=GenerationSettings(temperature=0.7, seed=42 + trial),
    )


def test_every_record_is_in_the_file_before_it_is_counted(tmp_path: Path) -> None:
    path = tmp_path / "trials.jsonl"
    seen_in_file: list[bool] = []
    appender = JsonlAppender(path)

    def on_durable(record: TrialRecord) -> None:
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        seen_in_file.append(any(line["trial"] == record.trial for line in lines))

    journal = GroupCommitJournal(appender, on_durable)

    async def run() -> None:
        committer = asyncio.create_task(journal.run())
        for trial in range(50):
            journal.submit(_record(trial))
            if trial % 7 == 0:
                await asyncio.sleep(0)  # let batches of several sizes form
        journal.close()
        await committer

    asyncio.run(run())
    appender.close()
    assert seen_in_file == [True] * 50
    trials = [json.loads(line)["trial"] for line in path.read_text().splitlines()]
    assert trials == list(range(50))


def test_a_teardown_commits_what_is_queued(tmp_path: Path) -> None:
    path = tmp_path / "trials.jsonl"
    counted: list[int] = []
    with JsonlAppender(path) as appender:
        journal = GroupCommitJournal(appender, lambda record: counted.append(record.trial))
        for trial in range(3):
            journal.submit(_record(trial))
        journal.commit_now()  # the run was interrupted before its committer ran
        journal.commit_now()  # a second teardown writes nothing again
    assert counted == [0, 1, 2]
    assert [json.loads(line)["trial"] for line in path.read_text().splitlines()] == [0, 1, 2]
