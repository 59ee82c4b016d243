"""From trial records to the report: analysis, the real embedding model, schema, and the CLI.

The records are produced by running the trial runner against the local server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest
from click.testing import CliRunner
from pydantic import ValidationError
from tests.probe.helpers import FAKE_KEY
from tests.support.openai_server import Latency, ModelProfile, OpenAIServer

from plumbline.cli.reliability import reliability
from plumbline.probe.settings import load_prompts
from plumbline.records.trial_record import TrialRecord, read_trial_records, trial_record_schema
from plumbline.reliability.analysis import Price, analyze
from plumbline.reliability.config import BenchmarkConfig
from plumbline.reliability.embeddings import Embedder, bundled_model_path
from plumbline.views.reliability import render_markdown

# one xdist group: the tests share one probe run (`journal`, a process of its own) and one
# loaded embedding model (`embedder`), built once, not once per worker
pytestmark = pytest.mark.xdist_group("reliability_report")

STEADY = "Caching keeps the results of slow work so repeated requests are answered quickly."
VARIED = [
    "Caching keeps recently used data close to where it is needed.",
    "A cache is a small fast store that sits in front of a slow one.",
    "Bananas are yellow and rich in potassium.",
    "Caching trades memory for speed by reusing earlier answers.",
]


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAIServer]:
    profiles = {
        "steady": ModelProfile(latency=Latency("normal", 0.02, 0.005), responses=[STEADY]),
        "varied": ModelProfile(
            latency=Latency("lognormal", 0.03, 0.5),
            responses=VARIED,
            faults=["ok", "429", "ok", "500", "timeout"],
            hang_seconds=60,
        ),
    }
    with OpenAIServer(profiles, seed=7) as running:
        yield running


PROBE_SCRIPT = """
import asyncio, sys
from plumbline.probe.runner import run_probe
from plumbline.probe.settings import ProbeSettings, Prompt

settings = ProbeSettings(
    models=("openai-api/local/steady", "openai-api/local/varied"),
    prompts=(Prompt("cache", "Explain caching in one sentence."), Prompt("fast", "Why cache?")),
    trials=12,
    concurrency=8,
    timeout=8,
    stream=True,
)
summary = asyncio.run(run_probe(settings, sys.argv[1]))
print(summary.completed)
"""


@pytest.fixture(scope="module")
def journal(server: OpenAIServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A process of its own: earlier tests in this worker (Inspect runs with retries) leave
    # process-wide model state that must not reach the scripted faults counted here.
    path = tmp_path_factory.mktemp("trials") / "trials.jsonl"
    env = {**os.environ, "LOCAL_BASE_URL": server.base_url, "LOCAL_API_KEY": FAKE_KEY}
    done = subprocess.run(
        [sys.executable, "-c", PROBE_SCRIPT, str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "48"
    return path


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


def _records(journal: Path) -> list[TrialRecord]:
    result = read_trial_records([journal])
    assert not result.errors
    return result.records


def test_analysis_with_the_real_embedding_model(journal: Path, embedder: Embedder) -> None:
    records = _records(journal)
    report = analyze(records, embedder, prices={"openai-api/local/steady": Price(1.0, 2.0)})
    by_name = {m.model: m for m in report.models}
    steady = by_name["openai-api/local/steady"]
    varied = by_name["openai-api/local/varied"]

    # identical responses: the seed's score and agreement both read 1
    assert steady.consistency is not None and steady.agreement is not None
    assert steady.consistency.statistic == pytest.approx(1.0)
    assert steady.agreement.statistic == pytest.approx(1.0, abs=1e-6)
    assert steady.robustness.error_rate == 0.0
    assert steady.robustness.error_rate_interval.high > 10  # 0 of 24 is not "0%"
    # four different answers, one off-topic: agreement is clearly lower
    assert varied.agreement is not None
    assert varied.agreement.statistic < 0.8
    # the scripted faults: a 429, a 500 and a timeout, each in its class
    assert varied.robustness.exceptions["RateLimitError"] == 1
    assert varied.robustness.exceptions["ServerError"] == 1
    assert varied.robustness.exceptions["TimeoutError"] == 1
    assert varied.robustness.timeout_trials == 1
    assert varied.successful == 21
    # latency and TTFT come from streamed trials
    assert steady.latency is not None and steady.latency.n == 24
    assert steady.ttft is not None and steady.ttft.p50 <= steady.latency.p50
    assert steady.latency.tokens_per_second is not None
    # performance and output quality
    assert steady.performance is not None and 0 < steady.performance.score <= 1
    assert steady.output_quality is not None
    assert steady.output_quality.mean_words == len(STEADY.split())
    assert steady.cost is not None and steady.cost.cost_per_heuristic_point is not None
    assert varied.cost is None
    # comparisons: Cohen's d for latency and performance between the two models
    metrics = {(c.metric, c.effect is not None) for c in report.comparisons}
    assert ("latency_seconds", True) in metrics and ("performance", True) in metrics
    # the embedder encodes each distinct text once
    assert embedder.encoded <= len({r.response for r in records if r.response}) + 2

    markdown = render_markdown(report)
    assert "## openai-api/local/steady" in markdown
    assert "Highly deterministic" in markdown
    assert "semantic_agreement" in markdown
    json.dumps(report.json_document(), allow_nan=False)  # strict JSON


def test_embedder_is_offline_batched_and_cached() -> None:
    assert bundled_model_path("all-MiniLM-L6-v2") is not None
    embedder = Embedder(batch_size=2)
    vectors = embedder(["a cat", "a dog", "a cat", "a bird"])
    assert vectors.shape == (4, 384)
    assert embedder.encoded == 3
    np.testing.assert_allclose(vectors[0], vectors[2])
    embedder(["a dog"])
    assert embedder.encoded == 3
    assert os.environ.get("HF_HUB_OFFLINE") == "1"


def test_records_validate_against_the_schema_and_the_model_agrees(journal: Path) -> None:
    validator = jsonschema.Draft202012Validator(
        trial_record_schema(), format_checker=jsonschema.FormatChecker()
    )
    lines = [json.loads(line) for line in journal.read_text().splitlines()]
    for line in lines:
        validator.validate(line)
    good = next(line for line in lines if line["error_class"] is None)
    bad_examples: list[dict[str, Any]] = [
        {**good, "timed_out": True},  # a timeout flag without the TimeoutError class
        {**good, "response": None},  # a success needs its response
        {**good, "latency_seconds": -1},
        {**good, "error_class": "Oops"},
        {k: v for k, v in good.items() if k != "model"},
        {**good, "config": {**good["config"], "surprise": 1}},
    ]
    for example in bad_examples:
        assert not validator.is_valid(example), example
        with pytest.raises(ValidationError):
            TrialRecord.model_validate(example)


def test_prompt_files(tmp_path: Path) -> None:
    jsonl = tmp_path / "prompts.jsonl"
    jsonl.write_text('{"id": "a", "prompt": "First?"}\n"Second?"\n{"id": "b"}\n')
    with pytest.raises(ValueError, match=r"prompts.jsonl:3: prompt"):
        load_prompts(jsonl)
    jsonl.write_text('{"id": "a", "prompt": "First?"}\n"Second?"\n')
    prompts = load_prompts(jsonl)
    assert prompts[0].id == "a" and prompts[1].text == "Second?"
    text = tmp_path / "prompts.txt"
    text.write_text("one\n\ntwo\n")
    assert [p.text for p in load_prompts(text)] == ["one", "two"]


@pytest.mark.slow
def test_reliability_cli_writes_json_and_markdown(journal: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "trials.jsonl"
    damaged.write_text(journal.read_text() + '{"model": "x", "trial": -1}\n')
    out_json = tmp_path / "report.json"
    out_md = tmp_path / "report.md"
    runner = CliRunner()
    result = runner.invoke(
        reliability,
        [
            str(damaged),
            "--json",
            str(out_json),
            "--markdown",
            str(out_md),
            "--price",
            "openai-api/local/steady=1:2",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(out_json.read_text())
    assert [m["model"] for m in report["models"]] == [
        "openai-api/local/steady",
        "openai-api/local/varied",
    ]
    steady = report["models"][0]
    assert steady["latency"]["n"] == 24
    assert set(steady["latency"]["percentile_intervals"]) == {"p50", "p95", "p99"}
    assert steady["robustness"]["error_rate_interval"]["method"]
    # the prompt is the unit: t over the 2 prompts' values, with its n and coverage claim
    consistency = steady["consistency"]["interval"]
    assert consistency["method"].startswith("these prompts: t over prompt means")
    population = steady["consistency"]["population_interval"]
    assert population["method"].startswith("prompt population: betting interval")
    assert population["coverage"] == "guaranteed" and population["prompts"] == 2
    assert (consistency["prompts"], consistency["coverage"]) == (2, "approximate")
    assert 0.8 <= consistency["simulated_coverage"] < 0.935
    # 24 latencies cannot bound p95 from above: a lower bound only, and the method says why
    p95 = steady["latency"]["percentile_intervals"]["p95"]
    assert p95["sided"] == "lower" and p95["high"] is None and "n ≥ 59" in p95["method"]
    # one warning line per model in the terminal, the details in the Markdown
    warning_lines = [line for line in result.stdout.splitlines() if "warning:" in line]
    assert len(warning_lines) <= 3
    assert out_md.read_text().count("- warning:") >= len(warning_lines)
    assert report["config"]["random_seed"] == 42
    # the bad line is reported as file:line: field: problem, and the rest is still used
    line_number = len(journal.read_text().splitlines()) + 1
    assert any(e.startswith(f"{damaged}:{line_number}: ") for e in report["record_errors"])
    assert "Reliably consistent" in out_md.read_text() or "Highly deterministic" in (
        out_md.read_text()
    )
    assert "openai-api/local/varied" in result.stdout  # the terminal tables

    printed = runner.invoke(reliability, [str(journal), "--json"])
    assert printed.exit_code == 0, printed.output
    assert json.loads(printed.stdout)["models"][1]["robustness"]["failed_trials"] == 3


def test_default_config_is_the_seeds() -> None:
    assert BenchmarkConfig().random_seed == 42


def test_bundled_example_trials_are_valid_and_complete() -> None:
    from importlib import resources

    path = Path(str(resources.files("plumbline") / "examples" / "trials.jsonl"))
    result = read_trial_records([path])
    assert not result.errors
    keys = {record.key for record in result.records}
    assert len(keys) == len(result.records) == 3 * 3 * 20
    models = {record.model for record in result.records}
    assert models == {f"openai-api/example/{m}" for m in ("steady", "creative", "flaky")}
    failures = [r for r in result.records if r.error_class is not None]
    assert failures and all(r.model != "openai-api/example/steady" for r in failures)
    assert all(r.ttft_seconds is not None for r in result.records if r.ok)


def _rewrite(journal: Path, target: Path, model: str, latency_factor: float = 1.0) -> Path:
    """The journal's records of one model, latencies scaled (a slower update of it)."""
    lines = []
    for line in journal.read_text().splitlines():
        record = json.loads(line)
        if record["model"] != model:
            continue
        for key in ("latency_seconds", "ttft_seconds"):
            if record.get(key) is not None:
                record[key] *= latency_factor
        lines.append(json.dumps(record))
    target.write_text("\n".join(lines) + "\n")
    return target


@pytest.mark.slow
def test_reliability_baseline_regression_check(journal: Path, tmp_path: Path) -> None:
    steady = "openai-api/local/steady"
    old = _rewrite(journal, tmp_path / "old.jsonl", steady)
    same = _rewrite(journal, tmp_path / "same.jsonl", steady)
    slower = _rewrite(journal, tmp_path / "slower.jsonl", steady, latency_factor=3.0)
    runner = CliRunner()

    unchanged = runner.invoke(
        reliability, [str(same), "--baseline", str(old), "--fail-on-regression", "--json", "-"]
    )
    assert unchanged.exit_code == 0, unchanged.output
    comparison = json.loads(unchanged.stdout)["baseline_comparison"]
    assert comparison["level"] == pytest.approx(1 - 0.05 / 6)
    entries = {e["metric"]: e for e in comparison["entries"]}
    assert set(entries) == {
        "consistency",
        "agreement",
        "performance",
        "latency_p50",
        "latency_p95",
        "error_rate",
    }
    assert all(e["verdict"] != "regressed" for e in entries.values())
    assert entries["consistency"]["difference"]["estimate"] == pytest.approx(0.0, abs=1e-12)
    assert comparison["pairs"][0]["paired_by"] == "name"

    markdown_path = tmp_path / "regression.md"
    regressed = runner.invoke(
        reliability,
        [
            str(slower),
            "--baseline",
            str(old),
            "--fail-on-regression",
            "--margin",
            "latency_p50=0.2",
            "--markdown",
            str(markdown_path),
        ],
    )
    assert regressed.exit_code == 1, regressed.output
    # the pair's one line comes first (after the model's verdict), before any table
    output = " ".join(regressed.stdout.split())
    assert output.index("baseline: ") < output.index(" successful")
    summary = output[output.index("baseline: ") :]
    assert "REGRESSED" in summary and "latency_p50" in summary.split(".")[0]
    text = markdown_path.read_text()
    assert "## Change from the baseline" in text and "Bonferroni" in text

    bad = runner.invoke(reliability, [str(same), "--baseline", str(old), "--margin", "speed=1"])
    assert bad.exit_code == 2 and "unknown metric" in bad.output
    alone = runner.invoke(reliability, [str(same), "--fail-on-regression"])
    assert alone.exit_code == 2 and "need --baseline" in alone.output
    # the same slowdown with only agreement in the tested family: measured, never `regressed`
    narrowed = runner.invoke(
        reliability,
        [str(slower), "--baseline", str(old), "--fail-on-regression", "--test-metric",
         "agreement", "--margin", "latency_p50=0.2", "--json", "-"],
    )  # fmt: skip
    assert narrowed.exit_code == 0, narrowed.output
    chosen = json.loads(narrowed.stdout)["baseline_comparison"]
    assert chosen["tested_metrics"] == ["agreement"]
    assert "(agreement)" in chosen["multiplicity"]
    latency = next(e for e in chosen["entries"] if e["metric"] == "latency_p50")
    assert latency["test"] is None and latency["verdict"] in ("inconclusive", "unchanged")
    assert latency["difference"]["estimate"] > 0
    agreement = next(e for e in chosen["entries"] if e["metric"] == "agreement")
    assert agreement["test"]["metrics_tested"] == 1
    assert agreement["test"]["p_worse_adjusted"] == agreement["test"]["p_worse"]
    wrong = runner.invoke(
        reliability, [str(same), "--baseline", str(old), "--test-metric", "speed"]
    )
    assert wrong.exit_code == 2 and "unknown metric 'speed'" in wrong.output
