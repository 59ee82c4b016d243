"""The cdk_synth dataset: counts, prompt contract, distinct prompts, and reference solutions.

That every solution really synthesizes (and lints clean) is proved by
`scripts/verify_cdk_solutions.py` and, in CI, through the sandboxed scorer; these tests check
the invariants that make that proof meaningful.
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from plumbline.suites.sa_bench.datasets import (
    CDK_PROMPT_ENDING,
    DatasetError,
    load_cdk_synth,
)

PROMPTS = load_cdk_synth()


def tokens(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def jaccard(a: str, b: str) -> float:
    left, right = tokens(a), tokens(b)
    return len(left & right) / len(left | right)


def test_forty_prompts_split_by_level() -> None:
    assert len(PROMPTS) == 40
    assert Counter(p.level for p in PROMPTS) == {"beginner": 10, "intermediate": 17, "advanced": 13}
    assert [p.id for p in PROMPTS] == [f"cdk-{n:02d}" for n in range(1, 41)]


def test_every_prompt_ends_with_the_contract_sentence() -> None:
    assert CDK_PROMPT_ENDING == "Emit a complete CDK app that can be synthesized."
    for prompt in PROMPTS:
        assert prompt.prompt.endswith(" " + CDK_PROMPT_ENDING), prompt.id
        assert prompt.prompt.count(CDK_PROMPT_ENDING) == 1, prompt.id
        assert "CDK v2" in prompt.prompt and "Python" in prompt.prompt, prompt.id


def test_no_near_duplicate_prompts() -> None:
    worst = max(
        (jaccard(a.prompt, b.prompt), a.id, b.id) for a, b in itertools.combinations(PROMPTS, 2)
    )
    assert worst[0] < 0.5, f"{worst[1]} and {worst[2]} share {worst[0]:.2f} of their tokens"


def test_services_are_listed_once_each() -> None:
    for prompt in PROMPTS:
        assert prompt.services and len(set(prompt.services)) == len(prompt.services), prompt.id


@pytest.mark.parametrize("prompt", PROMPTS, ids=[p.id for p in PROMPTS])
def test_reference_solution_is_a_single_file_cdk_app(prompt: object) -> None:
    from plumbline.suites.sa_bench.datasets import CdkPrompt

    assert isinstance(prompt, CdkPrompt)
    source = prompt.solution
    tree = ast.parse(source, filename=prompt.id)
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    }
    assert imported <= {"aws_cdk", "constructs", "typing", "jsii"}, imported
    calls = [ast.unparse(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)]
    assert calls.count("App") == 1 and calls.count("app.synth") == 1
    # Module-level `app.synth()` is the last statement, so running the source synthesizes.
    last = tree.body[-1]
    assert isinstance(last, ast.Expr) and ast.unparse(last) == "app.synth()"
    # Offline and self-contained: no asset directories, Docker builds or context lookups.
    for forbidden in ("from_asset", "from_lookup", "DockerImage", "from_docker_build"):
        assert forbidden not in source, forbidden
    assert ast.get_docstring(tree, clean=False) is not None
    assert ast.get_docstring(tree, clean=False).startswith(f"{prompt.id}: ")  # type: ignore[union-attr]


def _write(tmp_path: Path, records: list[dict[str, object]]) -> Path:
    path = tmp_path / "cdk_synth.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


APP = "from aws_cdk import App\n\napp = App()\napp.synth()\n"
GOOD = {
    "id": "cdk-01",
    "level": "beginner",
    "prompt": f"Create a bucket with AWS CDK v2 in Python. {CDK_PROMPT_ENDING}",
    "solution": APP,
    "services": ["Amazon S3"],
}


def test_loader_locates_a_prompt_without_the_contract_ending(tmp_path: Path) -> None:
    bad = dict(GOOD, id="cdk-02", prompt="Create a queue with AWS CDK v2 in Python, please.")
    path = _write(tmp_path, [GOOD, bad])
    with pytest.raises(DatasetError) as caught:
        load_cdk_synth(path)
    [error] = caught.value.errors
    assert str(error).startswith(f"{path}:2: prompt: ")
    assert "Emit a complete CDK app that can be synthesized" in error.problem


def test_loader_locates_solutions_that_are_not_apps_and_a_bad_level(tmp_path: Path) -> None:
    # The old form (a path to a file) is refused with what to do instead.
    a_path = dict(GOOD, id="cdk-02", solution="cdk_solutions/cdk-02.py")
    broken = dict(GOOD, id="cdk-03", solution="from aws_cdk import App\napp = App(\n")
    no_synth = dict(GOOD, id="cdk-04", solution="from aws_cdk import App\n\napp = App()\n")
    wrong_level = dict(GOOD, id="cdk-05", level="expert")
    nul = dict(GOOD, id="cdk-06", solution="app = 1\x00\napp.synth()\n")
    path = _write(tmp_path, [GOOD, a_path, broken, no_synth, wrong_level, nul])
    with pytest.raises(DatasetError) as caught:
        load_cdk_synth(path)
    located = [(e.line, e.field) for e in caught.value.errors]
    assert located == [
        (2, "solution"),
        (3, "solution"),
        (4, "solution"),
        (5, "level"),
        (6, "solution"),
    ]
    nul_error = str(caught.value.errors[-1])
    assert nul_error.startswith(f"{path}:6: solution: not Python source: ")
    assert "null bytes" in nul_error and "None" not in nul_error
    first, second, third = (str(error) for error in caught.value.errors[:3])
    assert first == (
        f"{path}:2: solution: holds the app's source, not a path: put the text of "
        "cdk_solutions/cdk-02.py"
    )
    assert second.startswith(f"{path}:3: solution: not Python source: ")
    assert "(solution line 2)" in second or "(solution line 3)" in second
    assert third == (
        f"{path}:4: solution: must be a complete CDK app whose last statement is `app.synth()`"
    )
