"""A judged architecture run: the per-model page shows each judge's reasoning (as text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browser import outside_event_loop

from plumbline.app.site import read_site_input
from plumbline.leaderboard import build_leaderboard
from plumbline.leaderboard.samples import read_leaderboard_samples
from plumbline.views.leaderboard_page import render_leaderboard_pages

REASONING = "Names <b>every</b> service; misses the queue's dead-letter role."
JUDGE = "mockllm/judge"


def _verdict(*args: Any) -> Any:
    from inspect_ai.model import ModelOutput, ModelUsage

    content = json.dumps(
        {"accuracy": 0.8, "completeness": 0.7, "quality": 0.9, "reasoning": REASONING}
    )
    output = ModelOutput.from_content(model="mockllm", content=content)
    # Set usage so mockllm does not count tokens (tiktoken would fetch its vocabulary).
    output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
    return output


def _judged_run(root: Path) -> dict[str, Any]:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    from plumbline.suites.registry import resolve_suite
    from plumbline.suites.sa_bench.tasks import architecture_design

    judge = get_model(JUDGE, custom_outputs=_verdict, memoize=False)
    (log,) = inspect_eval(
        architecture_design(seed=42, limit=2, judge=judge),
        model="scripted/oracle",
        log_dir=str(root),
        display="none",
    )
    assert log.status == "success", log.error
    suite = resolve_suite("sa-bench").with_judge().suite
    return build_leaderboard(root, suite, run_id="judged").to_dict()


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("judged")
    return root, outside_event_loop(_judged_run, root)


def test_judge_reasoning_reaches_the_model_page(judged: tuple[Path, dict[str, Any]]) -> None:
    logs, document = judged
    assert document["_metadata"]["categories"]["architecture_design"]["scorer"] == (
        "llm_judge_scorer"
    )
    samples = read_leaderboard_samples(document, [logs])
    assert len(samples.samples) == 2
    for sample in samples.samples:
        assert dict(sample.highlights)[f"judge {JUDGE}"] == REASONING
        assert sample.metadata["scorer"] == "llm_judge_scorer"
    pages = render_leaderboard_pages(read_site_input("leaderboard", "j", document, [logs]), "j")
    model_page = pages[1].html
    assert model_page.count("Names &lt;b&gt;every&lt;/b&gt; service") >= 2
    assert "<b>every</b>" not in model_page
