"""aws-cdk-lib's built-in validator restored from its snapshot gives the findings it would build.

The snapshot is made once on the host (`ensure_validator_snapshot`); sandboxed runtimes load
it through `validator_snapshot.js`. Restored or built, every report must be the same.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from plumbline.cdk.outcomes import SynthReport
from plumbline.cdk.runtime import (
    VALIDATOR_SCRIPT,
    ensure_jsii_cache,
    ensure_validator_snapshot,
    silence_node_warnings,
)
from plumbline.cdk.synth import CdkSynthesizer, SynthOptions
from plumbline.sandbox import ResourceLimits

pytestmark = pytest.mark.slow

GiB = 1024**3
APPS = Path(__file__).parent / "apps"
#: Validation opted into as errors, over two stacks: the engine validates a clean stack, then
#: fails the second one.
OPTED_IN = """\
from aws_cdk import App, Stack, aws_s3 as s3, aws_sqs as sqs

app = App(context={"@aws-cdk/core:validateAgainstDefaultRules": True})
sqs.CfnQueue(Stack(app, "Queues"), "Queue")
s3.CfnBucket(Stack(app, "Storage"), "Bucket", bucket_name="Invalid_Name!!")
app.synth()
"""


@pytest.fixture(scope="module")
def snapshot() -> Path:
    found = ensure_validator_snapshot(ensure_jsii_cache())
    assert found is not None, "aws-cdk-lib's validator snapshot could not be made"
    return found


def _plugin() -> Path:
    cache = ensure_jsii_cache()
    (plugin,) = cache.glob("aws-cdk-lib/*/*/core/lib/validation/cloudformation-validate-plugin.js")
    return plugin


def _node(script: str, snapshot: Path) -> dict[str, Any]:
    """Run a Node.js script with the preload, as a jsii runtime would; its JSON output."""
    completed = subprocess.run(
        ["node", "--require", str(VALIDATOR_SCRIPT), "-e", script],
        env={
            "PATH": "/usr/bin:/bin",
            "PLUMBLINE_CFN_VALIDATE_SNAPSHOT": str(snapshot),
            **silence_node_warnings(),
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


_VALIDATE = """
const plugin = require({plugin}).CloudFormationValidatePlugin;
const validate = require(require.resolve('@aws/cloudformation-validate', {{paths: [{plugin}]}}));
{setup}
const queue = {{Type: 'AWS::SQS::Queue', Properties: {{VisibilityTimeout: 99999}}}};
const template = {{Resources: {{Q: queue}}}};
const name = `plumbline-validate-${{process.pid}}.json`;
const file = require('path').join(require('os').tmpdir(), name);
require('fs').writeFileSync(file, JSON.stringify(template));
const report = engine.validateTemplate(new validate.TemplateFile(file), {{severityLevel: 'WARN'}});
require('fs').unlinkSync(file);
console.log(JSON.stringify({{
  restored: validate.CompositeEngine.restoredFromSnapshot,
  diagnostics: report.diagnostics.map(d => [d.ruleId, d.message]),
}}));
"""


def test_the_plugin_engine_is_restored_and_finds_what_a_built_one_finds(snapshot: Path) -> None:
    plugin = json.dumps(str(_plugin()))
    restored = _node(
        _VALIDATE.format(plugin=plugin, setup="const engine = plugin._singletonInstance().engine;"),
        snapshot,
    )
    built = _node(
        _VALIDATE.format(plugin=plugin, setup="const engine = plugin._singletonInstance().engine;"),
        snapshot.parent / "no-such-snapshot",
    )
    assert restored["restored"] == 1 and built["restored"] == 0
    assert restored["diagnostics"] == built["diagnostics"]
    assert any("99999" in message for _rule, message in restored["diagnostics"])


def test_only_the_first_engine_with_the_snapshot_configuration_is_restored(
    snapshot: Path,
) -> None:
    plugin = json.dumps(str(_plugin()))
    other_configuration = _node(
        _VALIDATE.format(plugin=plugin, setup="const engine = new validate.CompositeEngine({});"),
        snapshot,
    )
    assert other_configuration["restored"] == 0
    second = _node(
        _VALIDATE.format(
            plugin=plugin,
            setup="new validate.CompositeEngine({}); "
            "const engine = plugin._singletonInstance().engine;",
        ),
        snapshot,
    )
    assert second["restored"] == 0  # something already lived in the memory: built instead
    assert second["diagnostics"] == other_configuration["diagnostics"] != []


def _comparable(report: SynthReport) -> dict[str, Any]:
    fields = dataclasses.asdict(report)
    fields.pop("seconds")
    fields.pop("log")
    # The jsii runtime's temporary directories have random names in every runtime.
    fields["stderr_head"] = re.sub(r"/(jsii-kernel-|tmp)\w+", r"/\1X", report.stderr_head)
    return fields


def test_reports_are_identical_with_and_without_the_snapshot(snapshot: Path) -> None:
    """One app for each way the built-in validator's findings reach a report: as warnings
    (the default: notes beside the linter's own finding) and as errors (opted in: the
    synthesis fails), the latter over two stacks (the engine used more than once)."""
    sources = [(APPS / "bad/lint_out_of_range.py").read_text(), OPTED_IN]
    reports = {}
    for restore in (True, False):
        options = SynthOptions(
            limits=ResourceLimits(wall_seconds=240, cpu_seconds=30, address_space_bytes=3 * GiB),
            pool_size=2,
            builtin_validation=True,
            validator_snapshot=restore,
            expected_samples=len(sources),
        )
        with CdkSynthesizer(options) as synthesizer:
            reports[restore] = [synthesizer.check_source(source) for source in sources]
    for fast, plain in zip(reports[True], reports[False], strict=True):
        assert _comparable(fast) == _comparable(plain)
    notes = [n for n in reports[True][0].notes if n.startswith("CDK built-in validation")]
    assert any("99999" in note for note in notes), reports[True][0].notes
    assert "ValidationFailed" in reports[True][1].reason
