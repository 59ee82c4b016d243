"""plumbline inside Inspect: `inspect eval plumbline/<task>` through the entry point, and
plumbline's statistics as `@metric`s in a third-party task."""

from __future__ import annotations

import importlib
import inspect
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from plumbline import inspect_registry
from plumbline.cli.main import main

SRC = Path(__file__).parents[2] / "src"


@pytest.mark.parametrize("name", sorted(inspect_registry.IMPLEMENTATIONS))
def test_each_registered_name_has_its_implementation_signature(name: str) -> None:
    module, _, attribute = inspect_registry.IMPLEMENTATIONS[name].partition(":")
    implementation = getattr(importlib.import_module(module), attribute)
    registered = getattr(inspect_registry, name)
    assert inspect.signature(registered) == inspect.signature(implementation)


def test_the_entry_point_module_imports_no_implementation() -> None:
    code = (
        "import sys, plumbline.models.providers; "
        "heavy = [m for m in sys.modules if m.startswith(('plumbline.suites', 'plumbline.cdk', "
        "'plumbline.stats'))]; print(heavy)"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_inspect_eval_plumbline_task_from_the_inspect_cli(tmp_path: Path) -> None:
    inspect_cli = Path(sys.executable).with_name("inspect")
    # the installed (editable) plumbline is this checkout's; a PYTHONPATH entry for the same
    # src makes Inspect's CLI resolve `plumbline/...` as a path and find no task
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["INSPECT_DISPLAY"] = "none"
    logs = tmp_path / "logs"
    result = subprocess.run(
        [
            str(inspect_cli),
            "eval",
            "plumbline/practice_exam",
            "--model",
            "scripted/oracle",
            "-T",
            "limit=4",
            "--log-dir",
            str(logs),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    out = tmp_path / "board.json"
    suite = tmp_path / "exam.toml"
    suite.write_text(
        '[suite]\nname = "exam"\n[[category]]\nkey = "practice_exam"\nname = "Exam"\n'
        'description = "d"\nweight = 1.0\nscoring = "binary"\ntasks = ["practice_exam"]\n'
        'scorer = "choice"\n',
        encoding="utf-8",
    )
    board = CliRunner().invoke(main, ["leaderboard", str(logs), "--suite", str(suite), "-o", out])
    assert board.exit_code == 0, board.output
    (model,) = json.loads(out.read_text(encoding="utf-8"))["models"]
    assert model["model"] == "scripted/oracle" and model["practice_exam"] == 1.0
    assert model["counts"]["practice_exam"]["n"] == 4


THIRD_PARTY_TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.solver import TaskState, generate

from plumbline.inspect_metrics import mcnemar, paired_difference, t_interval, wilson_interval

ANSWERS = {ANSWERS!r}


@scorer(metrics=[accuracy(), wilson_interval(), t_interval()])
def exact() -> object:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value="C" if state.output.completion == target.text else "I")

    return score


@scorer(metrics=[paired_difference("candidate", "baseline"), mcnemar("candidate", "baseline")])
def arms() -> object:
    async def score(state: TaskState, target: Target) -> Score:
        candidate = int(state.output.completion == target.text)
        return Score(value={{"candidate": candidate, "baseline": ANSWERS[state.sample_id]}})

    return score


@task
def third_party() -> Task:
    samples = [Sample(id=key, input=key, target="yes") for key in ANSWERS]
    return Task(dataset=samples, solver=generate(), scorer=[exact(), arms()])
"""


def test_plumbline_metrics_in_a_third_party_task(tmp_path: Path) -> None:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    rng = np.random.default_rng(7)
    keys = [f"s{i:02d}" for i in range(30)]
    candidate = rng.random(30) < 0.7
    baseline = {key: int(value) for key, value in zip(keys, rng.random(30) < 0.4, strict=True)}
    said = dict(zip(keys, candidate, strict=True))
    task_file = tmp_path / "third_party.py"
    task_file.write_text(THIRD_PARTY_TASK.format(ANSWERS=baseline), encoding="utf-8")

    def reply(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        output = ModelOutput.from_content("m", "yes" if said[messages[-1].text] else "no")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    (log,) = inspect_eval(
        f"{task_file}@third_party",
        model=get_model("mockllm/m", custom_outputs=reply),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success", log.error
    metrics = {
        (score.name, name): metric.value
        for score in log.results.scores
        for name, metric in score.metrics.items()
    }
    x = candidate.astype(float)
    k, n = int(x.sum()), x.size
    z = stats.norm.ppf(0.975)
    centre = (k / n + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(k / n * (1 - k / n) / n + z**2 / (4 * n**2))
    exact = {key: value for (scorer, key), value in metrics.items() if scorer == "exact"}
    t_low, t_high = stats.t.interval(0.95, n - 1, loc=x.mean(), scale=stats.sem(x))
    assert exact == pytest.approx(
        {
            "accuracy": k / n,
            "proportion": k / n,
            "wilson_low": centre - half,
            "wilson_high": centre + half,
            "mean": k / n,
            "t_low": t_low,
            "t_high": t_high,
            "n": n,
        }
    )

    y = np.array([baseline[key] for key in keys], dtype=float)
    d = x - y
    low, high = stats.t.interval(0.95, n - 1, loc=d.mean(), scale=stats.sem(d))
    b, c = int(np.sum((x == 1) & (y == 0))), int(np.sum((x == 0) & (y == 1)))
    pvalue = stats.binomtest(min(b, c), b + c, 0.5).pvalue
    paired = {key: value for (scorer, key), value in metrics.items() if scorer == "arms"}
    assert paired == pytest.approx(
        {"difference": d.mean(), "low": low, "high": high, "n": n, "pvalue": pvalue, "b": b, "c": c}
    )
