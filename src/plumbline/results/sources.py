"""The record files that feed results: which kind of records a file holds, from its first.

`run_records` (`task_id`, `arm`: agent runs, behind a comparison) and `trial_records`
(`prompt_id`, `trial`, or `prompt`, `latency_seconds`: a reliability probe's trials); a kind
names the sources it is fed by (`ResultKind.sources`, with `inspect_logs`).
"""

from __future__ import annotations

from pathlib import Path

from plumbline.records.io import Located, iter_json_values


def record_source(path: Path) -> str | None:
    """`run_records` or `trial_records` from a record file's first record; None otherwise."""
    for item in iter_json_values(path):
        if not isinstance(item, Located) or not isinstance(item.value, dict):
            return None
        keys = set(item.value)
        if {"task_id", "arm"} <= keys:
            return "run_records"
        if {"prompt_id", "trial"} <= keys or {"prompt", "latency_seconds"} <= keys:
            return "trial_records"
        return None
    return None
