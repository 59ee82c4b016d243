"""`plumbline power --sequential`: the cap and the expected pairs, agreeing with the fixed
paired design `plumbline power --paired` prints."""

from __future__ import annotations

import json

from click.testing import CliRunner

from plumbline.cli.main import main
from plumbline.stats import expected_pairs, mcnemar_sample_size, plan_sequential


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["power", *args])
    return result.exit_code, result.output


def test_power_sequential_prints_the_cap_and_expected_pairs() -> None:
    code, output = _run("--baseline", "0.6", "--effect", "0.1", "--sequential")
    assert code == 0, output
    # without --correlation the sequential plan assumes independent arms (0), and says so
    fixed = mcnemar_sample_size(0.6, 0.1, correlation=0.0).n
    plan = plan_sequential(0.6, 0.1)
    text = " ".join(output.split())
    assert f"fixed design: {fixed} pairs" in text
    assert f"cap: {plan.max_pairs} pairs" in text
    assert "assumes correlation 0 between the arms' outcomes within a pair" in text
    for multiple in ("1x", "1.5x", "2x"):
        assert f"{multiple} (" in text
    # the fixed design is the one `power --paired` prints under the same assumption
    code, paired = _run("--baseline", "0.6", "--effect", "0.1", "--paired", "--correlation", "0")
    assert f"{fixed} questions" in " ".join(paired.split())
    # a stated correlation is used by both
    code, output = _run(
        "--baseline", "0.6", "--effect", "0.1", "--sequential", "--correlation", "0.5"
    )
    text = " ".join(output.split())
    assert f"fixed design: {mcnemar_sample_size(0.6, 0.1, correlation=0.5).n} pairs" in text
    assert "assumes correlation 0.5" in text


def test_power_sequential_json() -> None:
    code, output = _run("--baseline", "0.6", "--effect", "0.1", "--sequential", "--json")
    assert code == 0
    document = json.loads(output)
    plan = plan_sequential(0.6, 0.1)
    assert document["max_pairs"] == plan.max_pairs
    assert document["fixed_pairs"] == plan.fixed_pairs
    rows = {row["multiple"]: row for row in document["expected"]}
    assert set(rows) == {1.0, 1.5, 2.0}
    assert abs(rows[2.0]["expected_pairs"] - expected_pairs(plan, 0.2)) < 1e-9
    assert rows[2.0]["ratio_to_fixed"] < 0.4 < rows[1.5]["ratio_to_fixed"] < 0.6
    assert document["cap_ratio"] <= 1.7


def test_power_sequential_continuous_and_bad_input() -> None:
    code, output = _run("--sd", "1", "--effect", "0.5", "--sequential", "--json")
    assert code == 0, output
    assert json.loads(output)["outcome"] == "continuous"
    code, output = _run("--baseline", "0.6", "--n", "100", "--sequential")
    assert code == 2 and "--n does not apply" in output
    code, output = _run("--baseline", "0.95", "--effect", "0.1", "--sequential")
    assert code == 2 and "baseline + effect" in output
    # an effect whose 2x multiple leaves the unit interval shows no figure there
    code, output = _run("--baseline", "0.6", "--effect", "0.2", "--sequential", "--json")
    rows = {row["multiple"]: row for row in json.loads(output)["expected"]}
    assert rows[2.0]["expected_pairs"] is None and rows[1.0]["expected_pairs"] is not None


def test_the_plan_gives_its_power_at_negative_correlations() -> None:
    """Issue 45: the default plan (correlation 0) loses power when the arms correlate
    negatively; the plan prints how much, and `--correlation unknown` plans at the lowest
    correlation the rates allow, so its power holds at every correlation."""
    from plumbline.stats.sequential import lowest_correlation, power_at_correlations

    code, output = _run("--baseline", "0.6", "--effect", "0.1", "--sequential", "--json")
    assert code == 0, output
    rows = {row["correlation"]: row for row in json.loads(output)["power_by_correlation"]}
    assert set(rows) == {-0.5, -0.3, 0.0}
    assert 0.60 < rows[-0.5]["power"] < rows[-0.3]["power"] < 0.75 < rows[0.0]["power"]
    text = " ".join(_run("--baseline", "0.6", "--effect", "0.1", "--sequential")[1].split())
    assert "Power if the arms correlate otherwise" in text and "-0.3" in text
    assert "--correlation unknown" in text

    code, output = _run(
        "--baseline", "0.5", "--effect", "0.1", "--sequential", "--correlation", "unknown",
        "--json",
    )  # fmt: skip
    assert code == 0, output
    document = json.loads(output)
    lowest = lowest_correlation(0.5, 0.1)
    assert document["assumptions"]["correlation"] == lowest
    assert abs(document["assumptions"]["discordant"] - 0.9) < 1e-12  # min(p_t + p_c, 2 − p_t − p_c)
    plan = plan_sequential(0.5, 0.1, correlation=lowest)
    grid = [lowest, -0.5, -0.3, 0.0, 0.3, 0.6, 0.8]
    powers = [row.power for row in power_at_correlations(plan, grid)]
    assert all(power is not None and power >= 0.8 for power in powers), powers
    assert powers == sorted(powers)  # more correlation, fewer discordant pairs, more power
    code, output = _run("--baseline", "0.5", "--effect", "0.1", "--paired", "--correlation",
                        "unknown")  # fmt: skip
    assert code == 2 and "applies with --sequential" in output
    code, output = _run("--baseline", "0.5", "--effect", "0.1", "--sequential", "--correlation",
                        "sometimes")  # fmt: skip
    assert code == 2 and "nor 'unknown'" in output
