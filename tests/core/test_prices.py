"""The price table: the shipped data, the cost formula, tiers, batch, and price-file errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plumbline.core.prices import PriceFileError, TokenCounts, load_prices


def test_shipped_table_has_a_version_and_a_source_and_date_per_entry() -> None:
    table = load_prices()
    assert table.version.startswith("plumbline-prices-")
    assert table.source == "shipped"
    for entry in table.entries.values():
        assert entry.source.startswith("https://")
        assert len(entry.date) == 10


def test_cost_subtracts_cache_reads_counted_inside_input_and_prices_them_apart() -> None:
    cost = load_prices().cost("openai/gpt-4o", TokenCounts(1000, 500, 200, 0, 0))
    # 800 uncached input at 2.50, 200 cached at 1.25, 500 output at 10.00 per million
    assert cost.usd == pytest.approx((800 * 2.5 + 200 * 1.25 + 500 * 10.0) / 1e6)
    assert cost.note is None
    assert cost.price_table == load_prices().version


def test_an_alias_prices_like_its_model_and_batch_applies_the_discount() -> None:
    table = load_prices()
    tokens = TokenCounts(input=10_000, output=2_000)
    base = table.cost("openai/gpt-4o", tokens).usd
    assert table.cost("openai/gpt-4o-2024-08-06", tokens).usd == base
    assert base is not None
    assert table.cost("openai/gpt-4o", tokens, batch=True).usd == pytest.approx(base * 0.5)


def test_long_context_tier_applies_above_its_prompt_size_only() -> None:
    table = load_prices()
    small = table.cost("anthropic/claude-sonnet-4", TokenCounts(200_000, 1000))
    large = table.cost("anthropic/claude-sonnet-4", TokenCounts(200_001, 1000))
    assert small.usd == pytest.approx((200_000 * 3.0 + 1000 * 15.0) / 1e6)
    assert large.usd == pytest.approx((200_001 * 6.0 + 1000 * 22.5) / 1e6)
    # cache reads and writes count toward the prompt that picks the tier (Anthropic's rule)
    cached = table.cost("anthropic/claude-sonnet-4", TokenCounts(1000, 10, 150_000, 60_000))
    assert cached.usd == pytest.approx((1000 * 6 + 10 * 22.5 + 150_000 * 0.6 + 60_000 * 7.5) / 1e6)


def test_unknown_model_is_none_with_a_note_never_zero() -> None:
    cost = load_prices().cost("acme/model-x", TokenCounts(10, 10))
    assert cost.usd is None
    assert cost.note is not None and "acme/model-x" in cost.note


def test_a_kind_without_a_price_is_none_and_zero_tokens_of_it_are_fine(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        'version = "t1"\n[models."m/a"]\nsource = "mine"\ndate = "2026-01-01"\n'
        "input = 1.0\noutput = 2.0\nreasoning = 4.0\n"
    )
    table = load_prices(path)
    assert table.cost("m/a", TokenCounts(1_000_000, 1_000_000, 0)).usd == pytest.approx(3.0)
    # reasoning is part of output: 400k of the 1M output tokens at the reasoning price
    with_reasoning = table.cost("m/a", TokenCounts(0, 1_000_000, reasoning=400_000))
    assert with_reasoning.usd == pytest.approx(0.6 * 2.0 + 0.4 * 4.0)
    missing = table.cost("m/a", TokenCounts(1, 1, cache_read=5))
    assert missing.usd is None and missing.note is not None and "cache_read" in missing.note
    assert table.cost("m/a", TokenCounts(1, 1), batch=True).usd is None
    assert table.cost("m/a", TokenCounts(None, 1)).usd is None


def test_json_price_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(
        json.dumps(
            {
                "version": "j1",
                "models": {"m/a": {"source": "s", "date": "2026-01-01", "input": 1, "output": 1}},
            },
            indent=2,
        )
    )
    assert load_prices(path).cost("m/a", TokenCounts(500_000, 500_000)).usd == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'version = "v"\n[models."m/a"]\nsource = "s"\ndate = "2026-01-01"\n'
            "input = -1\noutput = 1\n",
            ":5: models.m/a.input: Input should be greater than or equal to 0",
        ),
        (
            'version = "v"\n[models."m/a"]\nsource = "s"\ndate = "Jan 1"\ninput = 1\noutput = 1\n',
            ":4: models.m/a.date: Value error, must be a date YYYY-MM-DD",
        ),
        (
            'version = "v"\n[models."m/a"]\nsource = "s"\ndate = "2026-01-01"\ninput = 1\n'
            "output = 1\nouptut = 2\n",
            ":7: models.m/a.ouptut: Extra inputs are not permitted",
        ),
        ('[models."m/a"]\n', ":1: version: Field required"),
        ('version = "v"\nmodels = [\n', ":2: file: invalid TOML"),
        ('{"version": "v",\n "models": {\n}', ":3: file: invalid JSON"),
    ],
)
def test_bad_price_file_gives_file_line_field_problem(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(PriceFileError) as caught:
        load_prices(path)
    assert str(caught.value).startswith(f"{path}{expected}"), str(caught.value)
    for line in str(caught.value).splitlines():
        assert line.startswith(f"{path}:"), line


def test_a_model_priced_twice_through_an_alias_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text(
        'version = "v"\n[models."m/a"]\nsource = "s"\ndate = "2026-01-01"\ninput = 1\n'
        'output = 1\n[models."m/b"]\nsource = "s"\ndate = "2026-01-01"\ninput = 1\n'
        'output = 1\naliases = ["m/a"]\n'
    )
    with pytest.raises(PriceFileError, match=r"p\.toml:7: models\.m/b: 'm/a' is priced twice"):
        load_prices(path)


def test_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(PriceFileError, match=r"nope\.toml:1: file: cannot read"):
        load_prices(tmp_path / "nope.toml")
