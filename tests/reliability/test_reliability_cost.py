"""Reliability cost: per trial and per prompt, with intervals over prompts, from the provider's
usage in the probe's records (the shipped example, written by the probe), priced by `--price`
or a price table."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from plumbline.cli.main import main
from plumbline.core.prices import parse_prices
from plumbline.records.trial_record import TrialRecord, read_trial_records
from plumbline.reliability.cost import Price, Pricing, cost_result

EXAMPLE = Path(__file__).parents[2] / "src/plumbline/examples/trials.jsonl"
STEADY = "openai-api/example/steady"
TABLE = parse_prices(
    f'version = "test-rel"\n[models."{STEADY}"]\ninput = 1.0\noutput = 2.0\n'
    'source = "a test"\ndate = "2025-01-01"\n',
    "prices.toml",
    source="prices.toml",
)


def _ok(model: str) -> list[TrialRecord]:
    records = read_trial_records([EXAMPLE]).records
    return [r for r in records if r.model == model and r.ok and r.response is not None]


def test_cost_per_trial_and_per_prompt_from_the_records_tokens() -> None:
    ok = _ok(STEADY)
    cost, warnings = cost_result(STEADY, ok, Pricing(STEADY, table=TABLE), None, seed=0)
    assert cost is not None and warnings == []
    by_prompt: dict[str, list[float]] = defaultdict(list)
    for r in ok:
        by_prompt[r.prompt_id].append(
            ((r.input_tokens or 0) * 1.0 + (r.output_tokens or 0) * 2.0) / 1e6
        )
    assert cost.per_trial_usd is not None and cost.per_prompt_usd is not None
    assert abs(cost.per_trial_usd - np.mean([np.mean(v) for v in by_prompt.values()])) < 1e-15
    assert abs(cost.per_prompt_usd - np.mean([np.sum(v) for v in by_prompt.values()])) < 1e-15
    assert cost.prompts_priced == len(by_prompt)
    assert cost.price_table == "test-rel" and cost.provenance == "provider-reported"
    # three prompts: too few for the bootstrap-t to bound the cost: no interval, never made up
    assert cost.per_trial_interval is None and cost.per_prompt_interval is None


def test_interval_over_prompts_with_enough_prompts() -> None:
    ok = _ok(STEADY)
    # the same trials under 12 prompt ids (each prompt's trials split four ways)
    spread = [r.model_copy(update={"prompt_id": f"{r.prompt_id}-{r.trial % 4}"}) for r in ok]
    cost, _ = cost_result(STEADY, spread, Pricing(STEADY, price=Price(1.0, 2.0)), None, seed=0)
    assert cost is not None and cost.price_table == "--price"
    interval = cost.per_prompt_interval
    assert interval is not None and interval.low is not None and interval.high is not None
    assert interval.low < cost.per_prompt_usd < interval.high  # type: ignore[operator]
    assert interval.prompts == 12 and interval.simulated_coverage is not None


def test_an_unpriced_model_has_no_cost_and_a_note_naming_it() -> None:
    model = "openai-api/example/creative"
    cost, warnings = cost_result(model, _ok(model), Pricing(model, table=TABLE), None, seed=0)
    assert cost is None
    assert warnings == [f"{model}: no cost: no price for model {model} in price table test-rel"]


def test_a_bad_price_file_stops_reliability_before_it_runs(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text('{"version": "x", "models": {"a/b": {"input": 1}}}')
    result = CliRunner().invoke(main, ["reliability", str(EXAMPLE), "--prices", str(prices)])
    assert result.exit_code == 2
    assert "models.a/b.output" in result.output and "Traceback" not in result.output
