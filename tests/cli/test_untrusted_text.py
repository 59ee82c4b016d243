"""Untrusted text is data: injection payloads in names and model text, through every view.

Each payload enters the way it would in real use (an agent's output converted to run records,
a model's name and replies in trial records a probe journaled from a real HTTP server, an
Inspect log written by a real eval, a CDK app's exception), then goes through the command's
terminal, Markdown and HTML outputs. Terminal output must show it literally (no markup crash,
no live escape sequences); Markdown rendered by a real Markdown renderer must hold no live HTML,
no links and no extra table cells; HTML pages must hold it escaped.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from plumbline.cli.main import main
from plumbline.core.escape import markdown, terminal

SCRIPT = "<script>alert(1)</script>"
# Every payload at once: rich markup (closing and link tags), HTML, a table cell break, a code
# span, a Markdown link to javascript:, an ANSI colour sequence, template braces and a newline.
PAYLOAD = (
    f"x[/bold] [link=javascript:alert(1)]ok[/link] {SCRIPT} a|b `c` "
    "[l](javascript:alert(1)) \x1b[31mred\x1b[0m {{ 7*7 }} *em*\nnext"
)
PAYLOADS = [
    "[/bold]",
    "[/]",
    "[link=javascript:alert(1)]x[/link]",
    SCRIPT,
    "a|b",
    "one\ntwo\r\nthree",
    "`code`",
    "[x](javascript:alert(1))",
    "![i](http://example.invalid/t.png)",
    "\x1b[31mred\x1b[0m\x07",
    "{{ 7*7 }}",
    "back\\",
    "*em* _u_ ~~s~~ # h",
    PAYLOAD,
]


def render_markdown(text: str) -> str:
    """HTML as a Markdown renderer (CommonMark + tables, raw HTML allowed) makes it."""
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(text)


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Elements()
    parser.feed(html)
    return parser.tags


def assert_markdown_inert(text: str) -> None:
    """No live HTML, link or image, and every table row has as many cells as its header."""
    html = render_markdown(text)
    tags = elements(html)
    assert not [t for t, _ in tags if t in ("script", "img", "iframe", "a")], html
    assert "javascript:" not in "".join(str(a) for _, attrs in tags for a in attrs.values())
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):
        header = len(re.findall(r"<th\b", table.split("</thead>")[0]))
        for row in re.findall(r"<tr>(.*?)</tr>", table.split("</thead>")[-1], flags=re.S):
            assert len(re.findall(r"<td\b", row)) == header, row


def assert_terminal_literal(output: str, name: str) -> None:
    """The name is printed as written (control characters made visible), never interpreted."""
    assert "\x1b" not in output and "\x07" not in output
    for line in name.split("\n"):
        visible = line.replace("\x1b", "\\x1b").replace("\x07", "\\x07")
        assert " ".join(visible.split()) in " ".join(output.split()), (visible, output)


def assert_html_escaped(site: Path) -> None:
    pages = list(site.rglob("*.html"))
    assert pages
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    assert SCRIPT not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "{{ 7*7 }}" in text  # data, never a template


@pytest.mark.parametrize("payload", PAYLOADS)
def test_escaping_helpers_make_every_payload_inert(payload: str) -> None:
    from rich.console import Console

    console = Console(record=True, width=400, color_system=None, emoji=False)
    console.print(f"[bold]{terminal(payload)}[/bold] after")
    printed = console.export_text()
    assert_terminal_literal(printed, payload)
    assert printed.rstrip().endswith("after")
    cell = markdown(payload)
    assert "\n" not in cell and "\r" not in cell
    assert_markdown_inert(f"| a | b |\n|---|---|\n| {cell} | x |\n\n- {cell}\n\n## {cell}\n")
    # the text survives: rendered Markdown shows the payload's visible characters
    rendered = render_markdown(cell)
    for word in ("script", "javascript", "7*7", "red"):
        if word in payload:
            assert word in rendered.replace("\\", "")


# ---- compare: run records converted from an agent's output ---------------------------------

ARMS = {"treatment": f"with_skelly{PAYLOAD}", "control": "without_skelly[/b]"}
TASKS = [f"task-1 {SCRIPT}|", "task-2 [/bold]\n`x`"]


def _claude_result(seed: int) -> dict[str, Any]:
    """Claude Code's documented `--output-format json` result shape."""
    return {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 10_000 + 997 * seed,
        "num_turns": 3 + seed % 4,
        "result": f"Done {PAYLOAD}",
        "session_id": f"session-{seed}",
        "total_cost_usd": 0.01 + seed / 1000,
        "usage": {
            "input_tokens": 100 + seed,
            "cache_creation_input_tokens": 2000,
            "cache_read_input_tokens": 15000 + 7 * seed,
            "output_tokens": 400 + 3 * seed,
        },
    }


@pytest.fixture(scope="module")
def run_records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("agent_output")
    outcomes = root / "outcomes.jsonl"
    lines = []
    files = []
    seed = 0
    for arm in ARMS.values():
        for task in TASKS:
            for repeat in range(3):
                seed += 1
                result = root / f"run-{seed}.json"
                result.write_text(json.dumps(_claude_result(seed)))
                files.append((result, arm, task, repeat))
                lines.append(
                    {
                        "task_id": task,
                        "arm": arm,
                        "repeat": repeat,
                        "acceptance_exit_code": seed % 3,
                    }
                )
    outcomes.write_text("".join(json.dumps(line) + "\n" for line in lines))
    records = root / "records.jsonl"
    with records.open("w", encoding="utf-8") as handle:
        for result, arm, task, repeat in files:
            converted = CliRunner().invoke(
                main,
                [
                    "records", "convert", "--from", "claude-code", str(result), "--arm", arm,
                    "--task-id", task, "--repeat", str(repeat), "--outcomes", str(outcomes),
                ],
            )  # fmt: skip
            assert converted.exit_code == 0, converted.output
            handle.write(converted.stdout)
    return records


def test_compare_prints_writes_and_renders_payload_names_as_data(
    run_records: Path, tmp_path: Path
) -> None:
    md, site = tmp_path / "compare.md", tmp_path / "site"
    result = CliRunner().invoke(
        main,
        [
            "compare", str(run_records), "--control", ARMS["control"], "--resamples", "200",
            "--markdown", str(md), "--html", str(site),
        ],
        env={"COLUMNS": "400"},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert_terminal_literal(result.output, "without_skelly[/b]")
    assert "x[/bold]" in result.output and "[link=javascript:alert(1)]" in result.output
    assert "\x1b" not in result.output
    text = md.read_text(encoding="utf-8")
    assert_markdown_inert(text)
    assert "<script" not in render_markdown(text)
    assert_html_escaped(site)


def test_agent_records_with_payloads_validate_and_print_literally(run_records: Path) -> None:
    result = CliRunner().invoke(main, ["records", "validate", str(run_records)])
    assert result.exit_code == 0, result.output
    assert "12 valid and 0 invalid" in result.output


# ---- reliability: trials a probe journaled from a real HTTP server -------------------------


@pytest.mark.slow
def test_reliability_shows_model_names_and_replies_as_data(tmp_path: Path) -> None:
    from tests.probe.helpers import cli_env, model_name, run_cli
    from tests.support.openai_server import Latency, ModelProfile, OpenAIServer

    name = "m[/bold]<script>alert(1)</script>|`x`"
    profile = ModelProfile(latency=Latency("constant", 0.01), responses=PAYLOADS)
    with OpenAIServer({name: profile}) as server:
        trials = tmp_path / "trials.jsonl"
        prompts = tmp_path / "prompts.jsonl"
        prompts.write_text(json.dumps({"id": f"p {SCRIPT}|[/b]", "prompt": PAYLOAD}) + "\n")
        probe = run_cli(
            ["probe", "--model", model_name(name), "--prompts", str(prompts), "--trials", "4",
             "-o", str(trials)],
            cli_env(server),
        )  # fmt: skip
        assert probe.returncode == 0, probe.stderr
    md, site = tmp_path / "reliability.md", tmp_path / "site"
    report = run_cli(
        ["reliability", str(trials), "--resamples", "100", "--markdown", str(md),
         "--html", str(site)],
        cli_env_without_server(),
    )  # fmt: skip
    assert report.returncode == 0, report.stderr
    assert "Traceback" not in report.stderr
    assert_terminal_literal(report.stdout, model_name(name))
    assert_markdown_inert(md.read_text(encoding="utf-8"))
    assert_html_escaped(site)


def cli_env_without_server() -> dict[str, str]:
    import os

    return {**os.environ, "NO_COLOR": "1", "COLUMNS": "400"}


# ---- leaderboard: an Inspect log written by a real eval -------------------------------------


def _inspect_logs(log_dir: Path, model: str) -> None:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, Target, accuracy, scorer
    from inspect_ai.solver import TaskState, generate

    @scorer(metrics=[accuracy()])
    def verdict() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            text = state.input_text
            return Score(value="banana" if "bad" in text else (1.0 if "q1" in text else 0.0))

        return score

    def reply(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        output = ModelOutput.from_content(model=model, content=PAYLOAD)
        output.usage = ModelUsage(input_tokens=10, output_tokens=3, total_tokens=13)
        return output

    samples = [Sample(input=f"q{i}", target="A", id=f"q{i}") for i in range(3)]
    task = Task(
        name="exam", dataset=[*samples, Sample(input="bad", id="bad")], solver=generate(),
        scorer=verdict(),
    )  # fmt: skip
    inspect_eval(
        task,
        model=get_model(f"mockllm/{model}", custom_outputs=reply),
        log_dir=str(log_dir),
        display="none",
    )


def test_leaderboard_shows_model_and_category_names_as_data(tmp_path: Path) -> None:
    # Inspect's own console interprets markup in a model name, so this one carries a link tag
    # (valid markup) rather than a stray closing tag.
    model = f"[link=javascript:alert(1)]x[/link]{SCRIPT}|`y`"
    logs = tmp_path / "logs"
    _inspect_logs(logs, model)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        "[suite]\n"
        f"name = 'mine'\ntitle = {json.dumps('Bench [/bold] ' + SCRIPT)}\n"
        "[[category]]\nkey = 'exam'\n"
        f"name = {json.dumps('Exam | [/b] ' + SCRIPT)}\n"
        "description = 'd'\nweight = 1.0\nscoring = 'binary'\ntasks = ['exam']\n"
        "scorer = 'verdict'\n",
        encoding="utf-8",
    )
    md, site, out = tmp_path / "board.md", tmp_path / "site", tmp_path / "board.json"
    result = CliRunner().invoke(
        main,
        ["leaderboard", str(logs), "--suite", str(suite), "-o", str(out), "--markdown", str(md),
         "--html", str(site), "--errors", "exclude"],
        env={"COLUMNS": "400"},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "[link=javascript:alert(1)]x[/link]" in result.output
    assert "Bench [/bold]" in result.output
    # a score value that is no score is reported, never read as 0
    assert "unreadable_score" in result.output and "'banana'" in result.output
    board = json.loads(out.read_text())
    (entry,) = board["models"]
    assert entry["exam"] == pytest.approx(1 / 3)  # q1 of q0..q2; 'bad' is excluded, not a 0
    text = md.read_text(encoding="utf-8")
    assert_markdown_inert(text)
    assert_html_escaped(site)
    check = CliRunner().invoke(
        main, ["leaderboard", "check", str(out), "--against", str(out)], env={"COLUMNS": "400"}
    )
    assert check.exit_code == 0, check.output
    assert "[link=javascript:alert(1)]x[/link]" in check.output


# ---- cdk check: a model-written app's exception ---------------------------------------------


@pytest.mark.slow
def test_cdk_check_prints_the_apps_exception_as_data(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(f"raise RuntimeError({'[/bold] x ' + SCRIPT + ' ' + chr(27) + '[31m'!r})\n")
    result = CliRunner().invoke(main, ["cdk", "check", str(app), "--no-lint"])
    assert result.exit_code == 1, result.output
    assert "python_error" in result.output
    assert "RuntimeError: [/bold] x <script>alert(1)</script>" in result.output
    assert "\x1b" not in result.output
