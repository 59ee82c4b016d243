"""Time order (issue 38, item 7): every reader reads an ISO 8601 time as `records validate`
does (`core.timestamps`: a time without a zone is UTC), and `--effect` of a sequential plan is
bounded before any work."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.compare.test_compare_sequential import FAST, _records, _write

from plumbline.cli.main import main
from plumbline.core.limits import MAX_SEQUENTIAL_PAIRS, MIN_SEQUENTIAL_EFFECT
from plumbline.records.fast_eval_logs import _fast_created
from plumbline.records.inspect_logs import _parse_created
from plumbline.records.trial_record import TrialRecord


def _sequential(path: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        main, ["compare", path, "-t", "new", "-c", "old", "--sequential", *FAST, "--json"]
    )
    assert result.exit_code == 0, result.output
    sequential: dict[str, Any] = json.loads(result.output)["sequential"]
    return sequential


def _spelled(moment: datetime, how: int) -> str:
    """The same instant in four spellings: `Z`, no zone (UTC), `+00:00`, and `+02:00`."""
    if how == 0:
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    if how == 1:
        return moment.replace(tzinfo=None).isoformat()
    if how == 2:
        return moment.isoformat()
    return moment.astimezone(timezone(timedelta(hours=2))).isoformat()


def test_a_time_without_a_zone_keeps_the_time_order(tmp_path: Path) -> None:
    """One `started_at_utc` without a zone (valid for `records validate`) used to send the
    whole comparison to file order; now every spelling of the same instants gives the same
    stop (the pairs are analysed in the seeded order, which no time changes)."""
    records = _records(0.9, 0.4, seed=1)
    reference = _sequential(_write(tmp_path / "z.jsonl", records))
    for index, how in ((0, 1), (1, 1)):  # the first run, then all but a few, naive
        mixed = [dict(r) for r in records]
        chosen = mixed[:1] if index == 0 else mixed
        for number, record in enumerate(chosen):
            moment = datetime.fromisoformat(record["started_at_utc"].replace("Z", "+00:00"))
            record["started_at_utc"] = _spelled(moment, how if index == 0 else number % 4)
        validated = CliRunner().invoke(
            main, ["records", "validate", _write(tmp_path / "mixed.jsonl", mixed)]
        )
        assert validated.exit_code == 0, validated.output
        again = _sequential(str(tmp_path / "mixed.jsonl"))
        assert again["order"] == reference["order"]
        assert (again["verdict"], again["pairs_used"]) == (
            reference["verdict"],
            reference["pairs_used"],
        )
        assert again["path"] == reference["path"]


@pytest.fixture
def tokyo() -> Iterator[None]:
    """The machine's local zone set to UTC+9 (the reader must not use it)."""
    import os

    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.mark.usefixtures("tokyo")
def test_inspect_log_times_without_a_zone_are_utc_in_both_readers() -> None:
    naive = "2026-01-02T03:04:05"
    assert _parse_created(naive, "log.eval") == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert _parse_created(naive, "log.eval") == _fast_created(naive)
    assert _parse_created("2026-01-02T12:04:05+09:00", "log.eval") == _fast_created(naive)


@pytest.mark.usefixtures("tokyo")
def test_trial_record_times_without_a_zone_are_utc() -> None:
    record = TrialRecord.model_validate(
        {
            "model": "m",
            "provider": "p",
            "prompt_id": "p",
            "prompt": "hi",
            "trial": 0,
            "response": "ok",
            "latency_seconds": 0.5,
            "timestamp": "2026-01-02T03:04:05",
            "config": {},
        }
    )
    assert record.timestamp == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert record.model_dump(mode="json")["timestamp"].endswith(("Z", "+00:00"))


def test_effect_has_a_lower_bound_shown_in_help() -> None:
    shown = CliRunner().invoke(main, ["compare", "--help"], terminal_width=200).output
    assert f"{MIN_SEQUENTIAL_EFFECT:g}<=x<1" in shown


@pytest.mark.parametrize("effect", ["1e-6", "0.01", "0.049"])
def test_a_tiny_effect_is_a_usage_error_before_any_work(tmp_path: Path, effect: str) -> None:
    garbage = tmp_path / "runs.jsonl"
    garbage.write_text("not a record\n")  # reading it would be an input error, not this one
    result = CliRunner().invoke(main, ["compare", str(garbage), "--sequential", "--effect", effect])
    assert result.exit_code == 2, result.output
    assert "--effect" in result.output and "0.05<=x<1" in result.output


def test_a_plan_past_the_pair_bound_is_a_usage_error_before_any_work(tmp_path: Path) -> None:
    garbage = tmp_path / "runs.jsonl"
    garbage.write_text("not a record\n")
    result = CliRunner().invoke(
        main,
        ["compare", str(garbage), "--sequential", "--effect", "0.05", "--alpha", "0.0001"],
    )
    assert result.exit_code == 2, result.output
    assert f"{MAX_SEQUENTIAL_PAIRS:,}" in result.output
    assert "not a record" not in result.output
    power = CliRunner().invoke(
        main, ["power", "--sequential", "--baseline", "0.5", "--effect", "0.005"]
    )
    assert power.exit_code == 2, power.output
    assert f"{MAX_SEQUENTIAL_PAIRS:,}" in power.output
    continuous = CliRunner().invoke(
        main, ["power", "--sequential", "--sd", "1", "--effect", "0.01"]
    )
    assert continuous.exit_code == 2, continuous.output
