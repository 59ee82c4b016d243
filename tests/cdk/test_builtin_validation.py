"""aws-cdk-lib's built-in CloudFormation validator: off by default, kept when the app opts in.

Its findings are warnings unless the app sets `@aws-cdk/core:validateAgainstDefaultRules`,
so turning it off never changes an outcome; an app that opts in still gets it, and fails.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from plumbline.cdk.outcomes import Outcome
from plumbline.cdk.synth import CdkSynthesizer, SynthOptions
from plumbline.sandbox import ResourceLimits

GiB = 1024**3


def builtin_notes(report: object) -> list[str]:
    return [n for n in getattr(report, "notes", []) if n.startswith("CDK built-in validation")]


BAD_BUCKET = """\
from aws_cdk import App, Stack, aws_s3 as s3

app = App({context})
stack = Stack(app, "Storage")
s3.CfnBucket(stack, "Bucket", bucket_name="Invalid_Name!!")
app.synth()
"""
OPT_IN = '{"@aws-cdk/core:validateAgainstDefaultRules": True}'


@pytest.fixture(scope="module")
def validating_synthesizer() -> Iterator[CdkSynthesizer]:
    options = SynthOptions(
        limits=ResourceLimits(wall_seconds=240, cpu_seconds=30, address_space_bytes=3 * GiB),
        pool_size=1,
        builtin_validation=True,
        lint=False,
    )
    # the early stop of the jsii runtime is what the slow-relay test below checks: on, even when
    # the suite runs with every adapter on its public path (`make unit-public`)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("PLUMBLINE_COMPAT", raising=False)
        synthesizer = CdkSynthesizer(options)
    with synthesizer:
        yield synthesizer


@pytest.mark.slow
def test_default_skips_the_builtin_validator(synthesizer: CdkSynthesizer) -> None:
    report = synthesizer.check_source(BAD_BUCKET.format(context=""))
    assert builtin_notes(report) == []
    # cfn-lint still judges the template: the bad bucket name is its error E3031.
    assert report.outcome is Outcome.LINT_ERROR, report.reason
    assert any(finding.rule == "E3031" for finding in report.lint)


@pytest.mark.slow
def test_an_app_that_opts_in_keeps_the_validator_and_fails(synthesizer: CdkSynthesizer) -> None:
    report = synthesizer.check_source(BAD_BUCKET.format(context=f"context={OPT_IN}"))
    assert report.outcome is Outcome.SYNTH_ERROR, report.reason
    assert "ValidationFailed" in report.reason


@pytest.mark.slow
@pytest.mark.xdist_group("builtin_validation")  # one `validating_synthesizer` for both
def test_builtin_validation_option_runs_it_as_warnings(
    validating_synthesizer: CdkSynthesizer,
) -> None:
    report = validating_synthesizer.check_source(BAD_BUCKET.format(context=""))
    notes = builtin_notes(report)
    assert any("Invalid_Name!!" in note for note in notes), report.notes
    assert report.outcome is Outcome.PASSED, report.reason  # warnings only, lint off


SLOW_RELAY = """\
import sys
import time

from aws_cdk import App, Stack, aws_s3 as s3


class SlowBuffer:
    def __init__(self, raw):
        self.raw = raw

    def write(self, data):
        time.sleep(0.5)  # the jsii runtime's reader thread relays Node.js output through this
        return self.raw.write(data)

    def flush(self):
        self.raw.flush()


class SlowStderr:
    def __init__(self, real):
        self.real, self.buffer = real, SlowBuffer(real.buffer)

    def write(self, text):
        return self.real.write(text)

    def flush(self):
        self.real.flush()


sys.stderr = SlowStderr(sys.stderr)
app = App()
stack = Stack(app, "Storage")
s3.CfnBucket(stack, "Bucket", bucket_name="Invalid_Name!!")
app.synth()
"""


@pytest.mark.slow
@pytest.mark.xdist_group("builtin_validation")  # one `validating_synthesizer` for both
def test_the_validators_report_reaches_the_log_when_relaying_it_is_slow(
    validating_synthesizer: CdkSynthesizer,
) -> None:
    # Node.js prints the report; the jsii runtime relays it from a thread of its own after
    # synth() returned. The worker must wait for that thread before it exits.
    report = validating_synthesizer.check_source(SLOW_RELAY)
    assert report.outcome is Outcome.PASSED, report.reason
    assert "Invalid_Name!!" in report.log, report.log
    assert "Template validation found issues" in report.stderr_head
