"""`plumbline demo`: plumbline's three jobs on built-in data, offline, in a few minutes.

Each step runs the same command a user would type, so the demo doubles as a tour: the SA Bench
leaderboard from two scripted offline models, the statistics commands, an A/B decision on bundled
agent run records, and the CERT reliability metrics on bundled trial records. Every result is also
written under `-o DIR`, and all three as one static HTML site under `DIR/site/`.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import click
from rich.rule import Rule

from plumbline.cli.output import console
from plumbline.cli.report import site_url
from plumbline.report.escape import terminal

#: Samples per SA Bench task in the demo: enough to show intervals, small enough for minutes.
DEMO_LIMIT = 5


@dataclass(frozen=True)
class DemoStep:
    """One command of the demo and why it is there."""

    title: str
    why: str
    args: tuple[str, ...]


def example_path(name: str) -> Path:
    """The path of a bundled example file (`plumbline/examples/<name>`)."""
    return Path(str(resources.files("plumbline") / "examples" / name))


def demo_steps(output: Path) -> list[DemoStep]:
    """The demo's commands, writing their JSON and Markdown under `output`."""
    runs = str(example_path("agent_runs.jsonl"))
    trials = str(example_path("trials.jsonl"))
    return [
        DemoStep(
            "Which model is best? (seed 000: SA Bench leaderboard)",
            "Two offline scripted models (an oracle and a seeded weak one) run 5 samples of each "
            "SA Bench task through Inspect AI, scored for real (CDK apps synthesize in a sandbox).",
            (
                "run",
                "sa-bench",
                "--model",
                "scripted/oracle",
                "--model",
                "scripted/weak",
                "--limit",
                str(DEMO_LIMIT),
                "--log-dir",
                str(output / "logs"),
                "--output",
                str(output / "leaderboard.json"),
                "--markdown",
                str(output / "leaderboard.md"),
                "--display",
                "plain",
            ),
        ),
        DemoStep(
            "How sure is 42 out of 50?",
            "Every score needs its interval: Wilson is the default, exact and Wald for contrast.",
            ("interval", "--successes", "42", "--trials", "50"),
        ),
        DemoStep(
            "",
            "",
            ("interval", "--successes", "42", "--trials", "50", "--method", "exact"),
        ),
        DemoStep(
            "How many questions does a 5-point difference need?",
            "Power analysis for a paired comparison of two models on the same questions.",
            ("power", "--baseline", "0.80", "--effect", "0.05", "--paired"),
        ),
        DemoStep(
            "Did the change help the agent? (seed 002: three gates, paired deltas)",
            "Bundled run records of two arms of a coding agent, paired by task and repeat.",
            (
                "compare",
                runs,
                "--resamples",
                "2000",
                "--json",
                str(output / "compare.json"),
                "--markdown",
                str(output / "compare.md"),
            ),
        ),
        DemoStep(
            "Can I rely on these models? (seed 003: CERT metrics with intervals)",
            "Bundled trial records from three models probed against a local OpenAI-style server.",
            (
                "reliability",
                trials,
                "--json",
                str(output / "reliability.json"),
                "--markdown",
                str(output / "reliability.md"),
            ),
        ),
        DemoStep(
            "The report site: every result as pages people look at",
            "A static site (no network needed) with the leaderboard and each model's samples, "
            "the A/B decision and the reliability report.",
            (
                "report",
                str(output / "leaderboard.json"),
                str(output / "logs"),
                str(output / "compare.json"),
                runs,
                str(output / "reliability.json"),
                trials,
                "-o",
                str(output / "site"),
            ),
        ),
    ]


@click.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("demo-output"),
    show_default=True,
    help="Where the demo writes its JSON and Markdown results and the HTML site (DIR/site/).",
)
def demo(output: Path) -> None:
    """Run plumbline's jobs on built-in data, offline; write every result and a site under -o."""
    from plumbline.cli.main import main

    output.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    for step in demo_steps(output):
        if step.title:
            console.print(Rule(step.title))
            console.print(f"[dim]{step.why}[/dim]")
        console.print(f"[bold]$ plumbline {terminal(shlex.join(step.args))}[/bold]")
        main.main(list(step.args), prog_name="plumbline", standalone_mode=False)
    console.print(Rule())
    console.print(
        f"Demo finished in {time.monotonic() - started:.0f} s. Results: "
        f"{terminal(output.resolve())}"
    )
    console.print(f"Open {terminal(site_url(output / 'site' / 'index.html'))}", soft_wrap=True)
