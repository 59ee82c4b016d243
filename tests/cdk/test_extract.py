"""Extraction: a table of response shapes, each with the files and entry point it must give."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from plumbline.cdk.extract import extract_app, find_blocks, is_entry_candidate

APP = """import aws_cdk as cdk
from aws_cdk import aws_s3 as s3

app = cdk.App()
stack = cdk.Stack(app, "S")
s3.Bucket(stack, "B")
app.synth()
"""

STACK_MODULE = """from aws_cdk import Stack
from aws_cdk import aws_s3 as s3


class StorageStack(Stack):
    def __init__(self, scope, construct_id, **kwargs):
        super().__init__(scope, construct_id, **kwargs)
        s3.Bucket(self, "B")
"""

ENTRY_IMPORTING = """import aws_cdk as cdk
from stacks.storage import StorageStack

app = cdk.App()
StorageStack(app, "Storage")
app.synth()
"""

ENTRY_USING_UNIMPORTED = """import aws_cdk as cdk

app = cdk.App()
StorageStack(app, "Storage")
app.synth()
"""

T3 = "```"


def fence(code: str, tag: str = "python", ticks: str = T3) -> str:
    body = code if code.endswith("\n") else code + "\n"
    return f"{ticks}{tag}\n{body}{ticks}\n"


@dataclass(frozen=True)
class Case:
    name: str
    response: str
    entry: str | None
    files: dict[str, str] | None = None  # exact expected files; None = {entry: APP}
    contains: tuple[str, ...] = ()  # substrings the entry file must contain


CASES = [
    Case("python tag", fence(APP), "app.py"),
    Case("py tag", fence(APP, "py"), "app.py"),
    Case("python3 tag", fence(APP, "python3"), "app.py"),
    Case("py3 tag", fence(APP, "py3"), "app.py"),
    Case("untagged", fence(APP, ""), "app.py"),
    Case("capitalised tag", fence(APP, "Python"), "app.py"),
    Case("trailing spaces after tag", f"```python   \n{APP}```\n", "app.py"),
    Case("trailing spaces after closing fence", f"```python\n{APP}```   \n", "app.py"),
    Case("CRLF line endings", fence(APP).replace("\n", "\r\n"), "app.py"),
    Case("unclosed final fence", f"Here you go:\n```python\n{APP}", "app.py"),
    Case("closing fence glued to the last line", f"```python\n{APP.rstrip()}```\nDone.", "app.py"),
    Case("prose around", f"Sure! Here is the app.\n\n{fence(APP)}\nRun `cdk synth`.", "app.py"),
    Case("four backticks", fence(APP, "python", "````"), "app.py"),
    Case("tilde fence", f"~~~python\n{APP}~~~\n", "app.py"),
    Case(
        "indented in a list item",
        "1. Create the app:\n\n   ```python\n"
        + "".join(f"   {line}\n" if line else "\n" for line in APP.splitlines())
        + "   ```\n",
        "app.py",
    ),
    Case("ANSWER line before block", f"Reasoning...\n\nANSWER:\n{fence(APP)}", "app.py"),
    Case(
        "ANSWER picks the final block among drafts",
        f"Draft:\n{fence(APP.replace('B', 'Draft'))}\nANSWER:\n{fence(APP)}",
        "app.py",
    ),
    Case("no fences, bare code", APP, "app.py"),
    Case("no fences, ANSWER: prefix", "ANSWER: " + APP, "app.py"),
    Case(
        "no fences, prose then code",
        "Here is a complete CDK app that can be synthesized.\n\n" + APP,
        "app.py",
        contains=("app.synth()",),
    ),
    Case(
        "bash block is ignored",
        f"{fence(APP)}\nDeploy with:\n{fence('cdk synth && cdk deploy', 'bash')}",
        "app.py",
    ),
    Case(
        "untagged shell block is ignored",
        f"{fence(APP)}\n{fence('pip install aws-cdk-lib', '')}",
        "app.py",
    ),
    Case(
        "requirements block is ignored",
        fence("aws-cdk-lib>=2.0\nconstructs>=10\n", "text") + fence(APP),
        "app.py",
    ),
    Case(
        "multi-file via first-line comments",
        fence("# stacks/storage.py\n" + STACK_MODULE) + fence("# app.py\n" + ENTRY_IMPORTING),
        "app.py",
        files={
            "stacks/storage.py": "# stacks/storage.py\n" + STACK_MODULE,
            "app.py": "# app.py\n" + ENTRY_IMPORTING,
        },
    ),
    Case(
        "multi-file via 'File:' comments",
        fence("# File: stacks/storage.py\n" + STACK_MODULE)
        + fence("# File: app.py\n" + ENTRY_IMPORTING),
        "app.py",
        contains=("StorageStack(app",),
    ),
    Case(
        "multi-file via headings, bigger stack file first",
        "**stacks/storage.py**\n"
        + fence(STACK_MODULE + "\n# padding\n" * 30)
        + "\n**app.py**\n"
        + fence(ENTRY_IMPORTING),
        "app.py",
        contains=("app.synth()",),
    ),
    Case(
        "multi-file via markdown headings with backticks",
        "### `stacks/storage.py`\n"
        + fence(STACK_MODULE)
        + "### `app.py`\n"
        + fence(ENTRY_IMPORTING),
        "app.py",
    ),
    Case(
        "file name in the fence info string",
        fence(STACK_MODULE, "python stacks/storage.py") + fence(ENTRY_IMPORTING, "python app.py"),
        "app.py",
    ),
    Case(
        "title attribute in the fence",
        fence(STACK_MODULE, 'python title="stacks/storage.py"')
        + fence(ENTRY_IMPORTING, 'python title="app.py"'),
        "app.py",
    ),
    Case(
        "unnamed helper block named after the entry's import",
        fence(STACK_MODULE) + fence(ENTRY_IMPORTING),
        "app.py",
        files={"stacks/storage.py": STACK_MODULE, "app.py": ENTRY_IMPORTING},
    ),
    Case(
        "unnamed blocks joined when the entry uses an unimported class",
        fence(STACK_MODULE) + "And the app:\n" + fence(ENTRY_USING_UNIMPORTED),
        "app.py",
        contains=("class StorageStack", "StorageStack(app"),
    ),
    Case(
        "entry point is not the largest block",
        fence(STACK_MODULE * 3, "python stacks/storage.py")
        + fence(ENTRY_IMPORTING, "python app.py"),
        "app.py",
        contains=("app.synth()",),
    ),
    Case(
        "entry point with another name",
        fence("# main.py\n" + ENTRY_IMPORTING) + fence("# stacks/storage.py\n" + STACK_MODULE),
        "main.py",
    ),
    Case(
        "cdk.json names the entry point",
        fence('{"app": "python3 infra/main.py"}', "json")
        + fence("# infra/main.py\n" + APP)
        + fence("# scratch.py\n" + APP),
        "infra/main.py",
    ),
    Case(
        "repeated full app: the last version wins",
        fence(APP.replace('"B"', '"First"')) + "Fixed version:\n" + fence(APP),
        "app.py",
        contains=('"B"',),
    ),
    Case(
        "shebang then file comment",
        fence("#!/usr/bin/env python3\n# app.py\n" + APP),
        "app.py",
        contains=("#!/usr/bin/env python3",),
    ),
    Case(
        "app without synth is still extracted",
        fence(APP.replace("app.synth()\n", "")),
        "app.py",
        contains=('s3.Bucket(stack, "B")',),
    ),
    Case("no code at all", "I cannot help with that.", None),
    Case("empty response", "", None),
    Case("only a bash block", fence("cdk init app --language python", "bash"), None),
    Case("only a TypeScript block", fence("const app = new cdk.App();", "typescript"), None),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_response_shapes(case: Case) -> None:
    app = extract_app(case.response)
    assert app.entry == case.entry, app.notes
    if case.entry is None:
        assert not app.ok and app.reason
        return
    assert app.ok
    if case.files is not None:
        assert {k: v for k, v in app.files.items() if k != "cdk.json"} == case.files
    elif not case.contains:
        assert app.files[case.entry].strip().endswith(APP.strip()) or (
            "StorageStack(app" in app.files[case.entry]
        )
    for text in case.contains:
        assert text in app.files[case.entry]
    assert "\r" not in app.files[case.entry]


def test_at_least_thirty_shapes() -> None:
    assert len(CASES) >= 30


def test_unclosed_fence_is_reported_as_unclosed() -> None:
    (block,) = find_blocks("```python\nprint(1)\n")
    assert block.closed is False and block.text == "print(1)\n"


def test_entry_candidate_needs_app_and_synth() -> None:
    assert is_entry_candidate(APP)
    assert not is_entry_candidate(STACK_MODULE)
    assert not is_entry_candidate(APP.replace("app.synth()", ""))


def test_paths_escaping_the_work_directory_are_not_used_as_names() -> None:
    app = extract_app(fence("# ../../etc/evil.py\n" + APP))
    assert app.entry == "app.py"
    assert all(".." not in name for name in app.files)
