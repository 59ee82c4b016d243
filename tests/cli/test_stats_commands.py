"""`plumbline interval` and `plumbline power`, run through the real command group."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner
from scipy import stats as sps

from plumbline.cli.main import main
from plumbline.stats import mcnemar_sample_size, two_proportion_sample_size


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_interval_prints_the_documented_line() -> None:
    code, output = run("interval", "--successes", "42", "--trials", "50")
    assert code == 0
    assert output.strip() == "0.840 [0.715, 0.917] Wilson 95%, n=50"


@pytest.mark.parametrize(
    "method,label,scipy_method",
    [("exact", "Clopper-Pearson", "exact"), ("wilson", "Wilson", "wilson")],
)
def test_interval_methods_and_level(method: str, label: str, scipy_method: str) -> None:
    code, output = run("interval", "-k", "7", "-n", "30", "--method", method, "--level", "0.9")
    assert code == 0
    ci = sps.binomtest(7, 30).proportion_ci(0.9, method=scipy_method)
    assert output.strip() == f"0.233 [{ci.low:.3f}, {ci.high:.3f}] {label} 90%, n=30"


def test_interval_json() -> None:
    code, output = run(
        "interval", "--successes", "42", "--trials", "50", "--method", "wald", "--json"
    )
    assert code == 0
    payload = json.loads(output)
    assert payload["statistic"] == 0.84
    assert payload["n"] == 50
    assert payload["interval"]["method"] == "Wald"
    assert payload["interval"]["level"] == 0.95
    assert payload["successes"] == 42 and payload["trials"] == 50
    assert payload["text"].startswith("0.840 [")


@pytest.mark.parametrize(
    "args,message",
    [
        (["--successes", "52", "--trials", "50"], "successes (52) cannot exceed trials (50)"),
        (["--successes", "1", "--trials", "0"], "0 is not in the range x>=1"),
        (["--successes", "1", "--trials", "5", "--level", "95"], "95.0 is not in the range 0<x<1"),
    ],
)
def test_interval_bad_input_is_a_usage_error(args: list[str], message: str) -> None:
    code, output = run("interval", *args)
    assert code == 2
    assert message in output


def test_power_two_proportions() -> None:
    code, output = run("power", "--baseline", "0.80", "--effect", "0.05")
    assert code == 0
    expected = two_proportion_sample_size(0.8, 0.05).n
    assert f"{expected} questions per arm" in output
    assert "0.800 -> 0.850 (+0.050)" in output
    assert "--within-share" in output  # explains why no repeats table is shown


def test_power_paired_states_its_discordance_assumption() -> None:
    code, output = run("power", "--baseline", "0.80", "--effect", "0.05", "--paired")
    assert code == 0
    expected = mcnemar_sample_size(0.8, 0.05, correlation=0.5)
    assert f"{expected.n} questions" in output
    assert "correlation 0.50" in output
    assert f"{expected.assumptions['discordant'] * 100:.1f}% of questions discordant" in output
    code, fixed = run(
        "power", "--baseline", "0.8", "--effect", "0.05", "--paired", "--discordant", "0.1"
    )
    assert code == 0
    assert f"{mcnemar_sample_size(0.8, 0.05, discordant=0.1).n} questions" in fixed
    assert "10.0% discordant questions" in fixed


def test_power_repeats_table_and_json() -> None:
    args = ["power", "--baseline", "0.8", "--effect", "0.05", "--paired"]
    code, output = run(*args, "--within-share", "0.5", "--epochs", "3", "--json")
    assert code == 0
    payload = json.loads(output)
    assert payload["epochs"] == 3
    assert payload["n"] == mcnemar_sample_size(0.8, 0.05, epochs=3, within_share=0.5).n
    epochs = [row["epochs"] for row in payload["repeats"]]
    assert epochs == [1, 2, 3, 4, 8, 16]
    questions = [row["n"] for row in payload["repeats"]]
    assert questions == sorted(questions, reverse=True)
    assert questions[0] > questions[-1]
    code, text = run(*args, "--within-share", "0.5")
    assert code == 0
    assert "With repeats" in text


def test_power_minimum_detectable_effect() -> None:
    code, output = run("power", "--baseline", "0.80", "--n", "200", "--paired", "--json")
    assert code == 0
    payload = json.loads(output)
    assert payload["n"] == 200
    assert 0 < payload["effect"] < 0.2
    assert mcnemar_sample_size(0.8, payload["effect"]).n_exact == pytest.approx(200, rel=1e-6)
    code, text = run("power", "--baseline", "0.80", "--n", "200", "--decrease")
    assert code == 0
    assert "detects a change of at least -0." in text


def test_power_continuous_paired_scores() -> None:
    code, output = run("power", "--sd", "0.3", "--effect", "0.05")
    assert code == 0
    assert "paired t test" in output
    assert "285 questions" in output


@pytest.mark.parametrize(
    "args,message",
    [
        (["--effect", "0.05"], "give --baseline"),
        (["--baseline", "0.8"], "give --effect"),
        (["--baseline", "0.8", "--effect", "0.05", "--n", "100"], "not both"),
        (["--baseline", "0.95", "--effect", "0.1"], "must be strictly between 0 and 1"),
        (["--baseline", "0.8", "--effect", "0.05", "--alpha", "2"], "2.0 is not in the range"),
    ],
)
def test_power_bad_input_is_a_usage_error(args: list[str], message: str) -> None:
    code, output = run("power", *args)
    assert code == 2
    assert message in output


def test_console_script_runs_interval() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "plumbline", "interval", "--successes", "42", "--trials", "50"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert completed.stdout.strip() == "0.840 [0.715, 0.917] Wilson 95%, n=50"
