"""CDK synthesis on Ray actors (`--cdk-executor ray`): the same outcome as the local scorer.

A handful of apps (reference solutions, and apps failing in different ways) are synthesized
by a local warm pool and by the `cdk_verify` scorer's synthesizer under the Ray executor (two
actors on the two-node cluster, each with its own warm pool); every judged field must agree.
All 40 reference apps are compared by benchmarks/bench_scale.py --cdk.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.ray_cluster import LocalCluster

from plumbline.cdk.extract import extract_from_source
from plumbline.cdk.outcomes import SynthReport
from plumbline.cdk.scorer import CdkExecutor, shared_synthesizer, use_executor
from plumbline.cdk.synth import CdkSynthesizer, SynthOptions
from plumbline.cli.main import main
from plumbline.cluster.cdk import RaySynthesizer
from plumbline.sandbox import ResourceLimits
from plumbline.suites.sa_bench.datasets import load_cdk_synth

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray_cluster")]

APPS = Path(__file__).parents[1] / "cdk" / "apps"
FAILING = ["bad/lint_unknown_property.py", "bad/name_error.py"]
#: No spare warm workers beyond the three apps (each warm worker costs seconds of CPU).
OPTIONS = SynthOptions(
    limits=ResourceLimits(wall_seconds=240, cpu_seconds=60), pool_size=1, expected_samples=3
)


def judged(report: SynthReport) -> dict[str, Any]:
    """Everything a report says about the app (not where or how fast it ran)."""
    data = report.to_dict()
    for key in ("seconds", "engine", "log"):
        data.pop(key, None)
    return data


def test_ray_actors_judge_apps_exactly_as_the_local_scorer(cluster: LocalCluster) -> None:
    sources = [load_cdk_synth()[0].solution]
    sources += [(APPS / name).read_text() for name in FAILING]
    apps = [extract_from_source(source, "app.py") for source in sources]
    with CdkSynthesizer(OPTIONS) as local:
        expected = [local.check_app(app) for app in apps]

    with use_executor(CdkExecutor("ray", cluster.address, actors=2)):
        remote = shared_synthesizer(OPTIONS)
        assert isinstance(remote, RaySynthesizer) and remote.engine == "ray/bwrap-pool"
        with ThreadPoolExecutor(max_workers=2) as pool:
            found = list(pool.map(remote.check_app, apps))

    assert [judged(r) for r in found] == [judged(r) for r in expected]
    outcomes = [r.outcome.value for r in found]
    assert outcomes == ["passed", "lint_error", "python_error"]


def test_cdk_check_on_ray(cluster: LocalCluster) -> None:
    # An app judged before any synthesis (a syntax error), so no runtime needs to warm up.
    app = APPS / "bad" / "syntax_error.py"
    command = ["cdk", "check", str(app), "--json", "--cdk-executor", "ray"]
    result = CliRunner().invoke(main, [*command, "--ray-address", cluster.address])
    assert result.exit_code == 1, result.output
    document = json.loads(result.output)
    assert document["outcome"] == "python_error" and document["engine"] == "ray/bwrap-pool"
    assert document["exception_type"] == "SyntaxError"
