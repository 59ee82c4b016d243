"""Reading logs in a process pool, with the fast reader, gives the leaderboard of the plain way.

The scenario's logs are real Inspect runs with every kind of problem (a truncated log, a rerun
with duplicate samples, a task no category takes, a wrong scorer): the document built with two
worker processes and the fast reader must be the one built in-process through Inspect's
readers, problems and their order included.
"""

from __future__ import annotations

import multiprocessing
import sys
from datetime import UTC, datetime
from pathlib import Path

from leaderboard_scenario import Fixture

from plumbline.leaderboard import build_leaderboard, load_suite
from plumbline.records import log_pool
from plumbline.records.log_files import find_log_files
from plumbline.records.log_pool import LogReader

collect_module = sys.modules["plumbline.leaderboard.collect"]

MOMENT = datetime(2026, 11, 26, tzinfo=UTC)


def _document(logs: Path, *, workers: int, fast: bool) -> str:
    board = build_leaderboard(
        logs, "sa-bench", run_id="same", generated_at=MOMENT, workers=workers, fast=fast
    )
    return board.document().model_dump_json()


def test_pool_and_fast_reader_give_the_plain_document(inspect_logs: Fixture) -> None:
    plain = _document(inspect_logs.logs, workers=1, fast=False)
    assert '"unreadable_log"' in plain and '"duplicate_samples"' in plain
    assert _document(inspect_logs.logs, workers=2, fast=True) == plain
    assert _document(inspect_logs.logs, workers=1, fast=True) == plain
    assert multiprocessing.active_children() == []  # the pool's workers are gone


def test_progress_follows_the_logs_in_order(inspect_logs: Fixture) -> None:
    seen: list[tuple[int, int, str]] = []
    collect_module.collect(
        [inspect_logs.logs],
        load_suite("sa-bench"),
        workers=2,
        progress=lambda done, total, path: seen.append((done, total, path)),
    )
    logs = [str(path) for path in find_log_files([inspect_logs.logs]).logs]
    assert seen == [(done, len(logs), path) for done, path in enumerate(logs, start=1)]


def test_small_inputs_are_read_in_process(inspect_logs: Fixture, tmp_path: Path) -> None:
    logs = find_log_files([inspect_logs.logs]).logs
    assert len(logs) >= log_pool.POOL_MIN_LOGS
    assert log_pool.pool_workers(logs) == 1  # a few KiB: a pool would cost more
    big = tmp_path / "big.eval"
    with big.open("wb") as handle:
        handle.truncate(log_pool.POOL_MIN_BYTES)
    assert log_pool.pool_workers([*logs, big]) == min(
        len(log_pool.os.sched_getaffinity(0)), len(logs) + 1
    )
    assert log_pool.pool_workers([*map(str, logs), str(big)]) == 1  # remote-like


def test_a_reader_closed_early_leaves_no_worker(inspect_logs: Fixture) -> None:
    with LogReader([inspect_logs.logs], workers=2) as reader:
        first = next(iter(reader))
        assert first.path == str(reader.files.logs[0])
    assert multiprocessing.active_children() == []
