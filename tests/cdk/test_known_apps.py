"""Known-good and known-bad apps each get the outcome they should; reference solutions pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from plumbline.cdk.outcomes import Outcome
from plumbline.cdk.synth import CdkSynthesizer
from plumbline.suites.sa_bench.datasets import CdkPrompt, load_cdk_synth

APPS = Path(__file__).parent / "apps"
SOLUTIONS = load_cdk_synth()

BAD = sorted((APPS / "bad").glob("*.py"))
GOOD = sorted((APPS / "good").glob("*.py"))


def expectation(path: Path) -> tuple[str, str | None]:
    """The first line of a bad app says `# expect: OUTCOME [ExceptionType]`."""
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect: "), f"{path.name}: first line must be '# expect: ...'"
    words = first.removeprefix("# expect: ").split()
    return words[0], (words[1] if len(words) > 1 else None)


def test_enough_known_bad_apps() -> None:
    assert len(BAD) >= 20
    assert {expectation(path)[0] for path in BAD} >= {
        "python_error",
        "synth_error",
        "lint_error",
        "timeout",
        "resource_limit",
    }


@pytest.mark.slow
@pytest.mark.parametrize("path", BAD, ids=[path.stem for path in BAD])
def test_known_bad_app_gets_its_outcome(synthesizer: CdkSynthesizer, path: Path) -> None:
    outcome, exception_type = expectation(path)
    report = synthesizer.check_source(path.read_text())
    assert report.outcome.value == outcome, (report.reason, report.stderr_head, report.log[-2000:])
    assert report.reason
    if exception_type is not None:
        assert report.exception_type == exception_type
    if report.outcome is Outcome.LINT_ERROR:
        assert any(finding.severity == "error" for finding in report.lint)
        assert report.resource_count is not None and report.resource_count >= 1
    if report.outcome in (Outcome.PYTHON_ERROR, Outcome.SYNTH_ERROR):
        assert report.stderr_head or report.reason


@pytest.mark.slow
@pytest.mark.parametrize("path", GOOD, ids=[path.stem for path in GOOD])
def test_known_good_app_passes(synthesizer: CdkSynthesizer, path: Path) -> None:
    report = synthesizer.check_source(path.read_text())
    assert report.outcome is Outcome.PASSED, (report.reason, report.stderr_head, report.log)
    assert report.resource_count is not None and report.resource_count >= 2
    assert report.templates and all(name.endswith(".template.json") for name in report.templates)
    assert all(finding.severity != "error" for finding in report.lint)


@pytest.mark.slow
@pytest.mark.parametrize("prompt", SOLUTIONS, ids=[prompt.id for prompt in SOLUTIONS])
def test_reference_solution_passes(synthesizer: CdkSynthesizer, prompt: CdkPrompt) -> None:
    """Zero false negatives: every reference solution of the cdk_synth dataset passes."""
    report = synthesizer.check_source(prompt.solution)
    assert report.outcome is Outcome.PASSED, (report.reason, report.stderr_head, report.log)
