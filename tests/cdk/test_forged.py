"""A CDK outcome comes only from a synthesis the worker observed: forged assemblies fail.

Every app here runs through the real sandboxed synthesizer. The forgers write the files a
real synthesis writes (a template and a manifest, copied from a real cloud assembly) into
``$CDK_OUTDIR`` by themselves; each must end ``forged_output`` (scored as a failure), while
honest apps, including ones that synthesize twice or contain a nested stage, still pass.
"""

from __future__ import annotations

import hashlib

import pytest

from plumbline.cdk.assembly import forged_outputs
from plumbline.cdk.outcomes import Outcome
from plumbline.cdk.scorer import report_to_score
from plumbline.cdk.synth import CdkSynthesizer

pytestmark = pytest.mark.slow

TEMPLATE = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {}}}}
MANIFEST = {
    "version": "48.0.0",
    "artifacts": {
        "Forged": {
            "type": "aws:cloudformation:stack",
            "environment": "aws://unknown-account/unknown-region",
            "properties": {"templateFile": "Forged.template.json"},
        }
    },
}

WRITE_FORGERY = f"""
import json, os
outdir = os.environ["CDK_OUTDIR"]
os.makedirs(outdir, exist_ok=True)
with open(os.path.join(outdir, "Forged.template.json"), "w") as handle:
    json.dump({TEMPLATE!r}, handle)
with open(os.path.join(outdir, "manifest.json"), "w") as handle:
    json.dump({MANIFEST!r}, handle)
"""

REAL_STACK = """
import aws_cdk as cdk
from aws_cdk import aws_sqs as sqs
app = cdk.App()
stack = cdk.Stack(app, "Real")
sqs.Queue(stack, "Queue")
"""


def test_record_check_is_per_file_and_per_byte() -> None:
    files = {"cdk.out/manifest.json": "{}", "cdk.out/A.template.json": '{"Resources": {}}'}
    record = {name: hashlib.sha256(text.encode()).hexdigest() for name, text in files.items()}
    assert forged_outputs(files, record) == []
    assert forged_outputs(files, None) == sorted(files)
    changed = {**files, "cdk.out/A.template.json": '{"Resources": {"X": {}}}'}
    assert forged_outputs(changed, record) == ["cdk.out/A.template.json"]
    extra = {**files, "cdk.out/B.template.json": "{}"}
    assert forged_outputs(extra, record) == ["cdk.out/B.template.json"]


FORGERS = {
    "files_only": WRITE_FORGERY,
    "files_then_empty_app": WRITE_FORGERY + "\nimport aws_cdk as cdk\napp = cdk.App()\n",
    "files_then_empty_app_synth": WRITE_FORGERY
    + "\nimport aws_cdk as cdk\napp = cdk.App()\napp.synth()\n",
    "copy_over_real_synth": REAL_STACK
    + f"""
import json, os
app.synth()
path = os.path.join(os.environ["CDK_OUTDIR"], "Real.template.json")
with open(path, "w") as handle:
    json.dump({TEMPLATE!r}, handle)
""",
    "extra_template_after_real_synth": REAL_STACK
    + """
import os, shutil
app.synth()
outdir = os.environ["CDK_OUTDIR"]
shutil.copy(os.path.join(outdir, "Real.template.json"), os.path.join(outdir, "Copy.template.json"))
""",
    "forgery_before_a_second_cached_synth": REAL_STACK
    + f"""
import json, os
app.synth()
with open(os.path.join(os.environ["CDK_OUTDIR"], "Real.template.json"), "w") as handle:
    json.dump({TEMPLATE!r}, handle)
app.synth()  # returns the cached assembly and writes nothing
""",
}


@pytest.mark.parametrize("name", sorted(FORGERS))
def test_forged_assemblies_fail(synthesizer: CdkSynthesizer, name: str) -> None:
    report = synthesizer.check_source(FORGERS[name])
    assert report.outcome is Outcome.FORGED_OUTPUT, (report.outcome, report.reason, report.log)
    assert "not written by a CDK synthesis" in report.reason
    assert report.outcome.scored and not report.outcome.passed
    assert report_to_score(report).value == 0


def test_honest_apps_that_synthesize_twice_or_nest_stages_pass(
    synthesizer: CdkSynthesizer,
) -> None:
    source = (
        REAL_STACK
        + """
class Inner(cdk.Stage):
    def __init__(self, scope, name):
        super().__init__(scope, name)
        inner = cdk.Stack(self, "Inner")
        sqs.Queue(inner, "Queue")
        nested = cdk.NestedStack(inner, "Nested")
        sqs.Queue(nested, "NestedQueue")

Inner(app, "Prod")
app.synth()
app.synth()
"""
    )
    report = synthesizer.check_source(source)
    assert report.outcome is Outcome.PASSED, (report.reason, report.log)
    names = sorted(report.templates)
    assert "Real.template.json" in names
    assert any(n.startswith("ProdInner") and n.endswith(".nested.template.json") for n in names)
    assert len(names) == 3, names
