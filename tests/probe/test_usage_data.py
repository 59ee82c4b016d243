"""A provider's usage numbers are data (issue 38): a valid HTTP 200 answer whose usage block
is odd (more cached than prompt tokens, as gateways that count the cache apart report; 10¹²
completion tokens) keeps its answer, latency and class; a count the schema cannot hold is left
null with a note, the others are kept as reported. Served by the real local OpenAI-compatible
server, through the real `plumbline probe`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
from tests.probe.helpers import cli_env, model_name, read_jsonl, run_cli
from tests.support.openai_server import Latency, ModelProfile

from plumbline.records.trial_record import TrialRecord, trial_record_schema, usage_counts

QUICK = Latency("constant", 0.01)
USAGE = {
    # Inspect's input count is prompt − cached = 12 − 40: negative
    "cached": {
        "prompt_tokens": 12,
        "completion_tokens": 7,
        "total_tokens": 19,
        "prompt_tokens_details": {"cached_tokens": 40},
    },
    "huge": {"prompt_tokens": 12, "completion_tokens": 10**12, "total_tokens": 10**12 + 12},
}


def test_counts_outside_the_schema_are_left_null_with_a_note() -> None:
    kept = usage_counts(12, 7)
    assert (kept.input_tokens, kept.output_tokens, kept.note) == (12, 7, None)
    odd = usage_counts(-28, 10**12)
    assert (odd.input_tokens, odd.output_tokens) == (None, None)
    assert odd.note is not None
    assert "input_tokens -28 (negative" in odd.note and "output_tokens 1000000000000" in odd.note


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streaming"])
def test_an_odd_usage_block_keeps_the_answer_latency_and_class(
    server_factory: Any, tmp_path: Path, stream: bool
) -> None:
    server = server_factory(
        {
            name: ModelProfile(latency=QUICK, responses=["a fine answer"], usage=usage)
            for name, usage in USAGE.items()
        }
    )
    out = tmp_path / "trials.jsonl"
    args = ["probe", "--prompt", "Explain retries.", "--trials", "2", "--timeout", "20"]
    for name in USAGE:
        args += ["--model", model_name(name)]
    args += ["-o", str(out), "--no-progress", "--json"]
    if stream:
        args.append("--stream")
    result = run_cli(args, cli_env(server))
    assert result.returncode == 0, result.stderr
    records = read_jsonl(out)
    assert len(records) == 4
    validator = jsonschema.Draft202012Validator(trial_record_schema())
    for record in records:
        validator.validate(record)
        TrialRecord.model_validate(record)
        assert record["error_class"] is None and record["response"] == "a fine answer"
        assert record["latency_seconds"] is not None and record["latency_seconds"] > 0
    by_model = {r["model"]: r for r in records}
    cached = by_model[model_name("cached")]
    assert cached["input_tokens"] is None and cached["output_tokens"] == 7
    assert "input_tokens -28" in cached["usage_note"]
    huge = by_model[model_name("huge")]
    assert huge["output_tokens"] is None and huge["input_tokens"] == 12
    assert "output_tokens 1000000000000" in huge["usage_note"]
