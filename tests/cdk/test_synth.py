"""Synthesis details: app commands, cdk.json context, multi-file apps, log summaries."""

from __future__ import annotations

import json

import pytest

from plumbline.cdk.extract import ExtractedApp, extract_app
from plumbline.cdk.outcomes import Outcome, SynthReport, looks_like_infra_failure, stderr_head
from plumbline.cdk.synth import AppCommand, CdkSynthesizer, build_job, parse_app_command


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("python3 app.py", AppCommand("app.py")),
        ("python app.py", AppCommand("app.py")),
        (".venv/bin/python -u app.py --stage dev", AppCommand("app.py", ("--stage", "dev"))),
        ("python3.11 -W ignore infra/main.py", AppCommand("infra/main.py")),
        ("python3 -m infra.app", AppCommand("infra.app", module=True)),
    ],
)
def test_python_app_commands(command: str, expected: AppCommand) -> None:
    assert parse_app_command(command) == expected


@pytest.mark.parametrize("command", ["npx ts-node bin/app.ts", "", "python3", "node app.js"])
def test_other_app_commands_are_refused(command: str) -> None:
    with pytest.raises(ValueError, match=r"cdk\.json app command"):
        parse_app_command(command)


def test_non_python_cdk_json_is_a_synth_error_without_running_anything() -> None:
    app = ExtractedApp(
        files={"app.py": "print(1)\n", "cdk.json": json.dumps({"app": "npx ts-node app.ts"})},
        entry="app.py",
    )
    report = build_job(app)
    assert isinstance(report, SynthReport)
    assert report.outcome is Outcome.SYNTH_ERROR and "not a Python command" in report.reason


def test_stderr_head_puts_the_exception_first_and_drops_banners() -> None:
    log = (
        "b'!!!!!!!!!!!!!!!!'\n"
        "Traceback (most recent call last):\n"
        '  File "app.py", line 3, in <module>\n'
        "    boom()\n"
        "NameError: name 'boom' is not defined\n"
    )
    head = stderr_head(log)
    assert head.splitlines()[0] == "NameError: name 'boom' is not defined"
    assert "!!!" not in head


def test_cli_library_schema_mismatch_is_infrastructure() -> None:
    message = (
        "This CDK CLI is not compatible with the CDK library used by your application. "
        "Please upgrade the CLI to the latest version.\n(Cloud assembly schema version "
        "mismatch: Maximum schema version supported is 21.0.0, but found 36.0.0)"
    )
    assert looks_like_infra_failure(message)
    assert not looks_like_infra_failure("ModuleNotFoundError: No module named 'aws_cdk.core'")


MULTI_FILE = """Project layout:

```json
{"app": "python3 app.py", "context": {"stage": "prod"}}
```

**stacks/storage.py**
```python
from aws_cdk import Stack
from aws_cdk import aws_s3 as s3


class StorageStack(Stack):
    def __init__(self, scope, construct_id, **kwargs):
        super().__init__(scope, construct_id, **kwargs)
        stage = self.node.try_get_context("stage")
        if stage != "prod":
            raise ValueError(f"context from cdk.json missing: {stage!r}")
        s3.Bucket(self, "Bucket", bucket_name=f"plumbline-{stage}-documents")
```

**app.py**
```python
import aws_cdk as cdk
from stacks.storage import StorageStack

app = cdk.App()
StorageStack(app, "StorageStack")
app.synth()
```
"""


@pytest.mark.slow
def test_multi_file_app_with_cdk_json_context(synthesizer: CdkSynthesizer) -> None:
    app = extract_app(MULTI_FILE)
    assert app.entry == "app.py" and "stacks/storage.py" in app.files and "cdk.json" in app.files
    report = synthesizer.check_app(app)
    assert report.outcome is Outcome.PASSED, (report.reason, report.stderr_head)
    assert report.templates == ["StorageStack.template.json"]
