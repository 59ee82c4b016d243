"""`plumbline demo`: plumbline's three jobs on built-in data, offline, in a few minutes.

Each step runs the same command a user would type, so the demo doubles as a tour: the SA Bench
leaderboard from two scripted offline models and one real offline model (`plumbline/smollm2`,
which also probes and judges), the statistics commands, an A/B decision on bundled
agent run records, the CERT reliability metrics on bundled trial records, and a regression check
between two probes of the real model. Every result is also
written under `-o DIR`, and all three as one static HTML site under `DIR/site/`. Every result
is recorded in a results store (`DIR/history.db`, or `--store`), whose history the demo shows
last and adds to the site.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from plumbline.cli.demo_answers import demo_answers
from plumbline.cli.output import Command, OutputDirectory, console, output_option
from plumbline.cli.prices import load_price_table
from plumbline.cli.report import site_url
from plumbline.cli.storing import StoreOptions, store_options
from plumbline.core.escape import terminal

if TYPE_CHECKING:  # the agent trials' imports wait until the demo runs, not its --help
    from plumbline.app.demo_trials import DemoAgent

#: Samples per SA Bench task in the demo: enough to show intervals, small enough for minutes.
DEMO_LIMIT = 5
#: The real model's share of the demo: it generates a few tokens a second on two cores.
REAL_MODEL = "plumbline/smollm2"
REAL_LIMIT = 2
REAL_MAX_TOKENS = 32
#: Calibration items the real model judges: one adversarial item for certain, and another. Each
#: is a long prompt, and the real model fails the verdict format often, so every item may cost
#: a retry: this is the demo's slowest step.
JUDGE_ITEMS = 2
# The judge step makes its calls at once (--concurrency): they decode together in one batch
# (plumbline.models.batching), each call giving the tokens it gives alone. The probes stay
# sequential: their journal keeps the trials in the order they finish, and the reliability
# metrics summed in another order differ in the last digits.
#: Repeats of each (task, arm) in the demo's agent trials (the A/B schema asks for 5 before a
#: promotion decision: the demo's A/B says so).
AGENT_REPEATS = 3
#: The "update" of the regression check: the same model with shorter answers.
UPDATE_MAX_TOKENS = 8
REAL_PROMPTS = (
    "Name one AWS service for object storage.",
    "What does Amazon SQS do? Answer in one sentence.",
)


@dataclass(frozen=True)
class DemoStep:
    """One command of the demo and why it is there."""

    title: str
    why: str
    args: tuple[str, ...]
    # exit status 1 is a finding, not a failure (a weak judge fails its calibration)
    findings_exit: bool = False
    # why this machine cannot run the step (it is shown, not run)
    not_run: str | None = None


def example_path(name: str) -> Path:
    """The path of a bundled example file (`plumbline/examples/<name>`)."""
    from importlib import resources

    return Path(str(resources.files("plumbline") / "examples" / name))


def not_run_arguments() -> tuple[str, ...]:
    """`--not-run` for the leaderboard step when this machine cannot sandbox CDK synthesis (the
    run steps leave that category out, with the reason; the combined leaderboard says so too)."""
    from plumbline.sandbox import probe_sandbox
    from plumbline.suites.registry import sandbox_missing_reason

    if probe_sandbox().available:
        return ()
    return ("--not-run", f"cdk_synth={sandbox_missing_reason('cdk_synth')}")


def _saved(output: Path, name: str, option: str = "--json") -> tuple[str, ...]:
    """Where a step saves its result: `output/NAME.json` (given with `option`) and its
    Markdown beside it, `output/NAME.md`."""
    return (option, str(output / f"{name}.json"), "--markdown", str(output / f"{name}.md"))


#: The commands whose results the demo records in its store: the combined leaderboard holds
#: every model's scores (the run steps' leaderboards would store the same models twice).
STORED_COMMANDS = frozenset({"leaderboard", "compare", "reliability"})
#: Lines of a step's output the demo shows (the rest is in DIR/demo.log; --verbose: all).
STEP_LINES = 30


def demo_store(output: Path) -> str:
    """The demo's results store when `--store` is not given: a SQLite file in its output."""
    return str(output / "history.db")


#: The commands the demo gives its price file (`--prices`).
PRICED_COMMANDS = frozenset({"run", "leaderboard"})


def demo_steps(
    output: Path,
    store: StoreOptions | None = None,
    prices: Path | None = None,
    agent: DemoAgent | None = None,
) -> list[DemoStep]:
    """The demo's commands, writing their JSON and Markdown under `output`; with `store`, each
    result is recorded there too and a last step shows the history and adds it to the site.
    The leaderboard's commands price tokens with `prices` (default: the demo's made-up price
    file, `examples/demo_prices.toml`). The agent trials run with `agent` (without one they are
    shown as not run, with the reason)."""
    price_file = str(prices or example_path("demo_prices.toml"))
    runs = str(example_path("agent_runs.jsonl"))
    trials = str(example_path("trials.jsonl"))
    steps = [
        *_leaderboard_steps(output),
        *_judge_steps(output),
        *_statistics_steps(),
        *_ab_steps(output, runs),
        *_agent_steps(output, agent, price_file),
        *_reliability_steps(output, trials),
        *_regression_steps(output),
        *_site_steps(output, runs),
    ]
    steps = [
        replace(step, args=(*step.args, "--prices", price_file))
        if step.args[0] in PRICED_COMMANDS
        else step
        for step in steps
    ]
    if store is None or store.url is None:
        return steps
    stored = [
        replace(step, args=(*step.args, *store.as_arguments()))
        if step.args[0] in STORED_COMMANDS
        else step
        for step in steps
    ]
    return [*stored, *_history_steps(output, store.url)]


def _history_steps(output: Path, url: str) -> list[DemoStep]:
    """The history of every result the demo recorded, on the terminal and in the site."""
    return [
        DemoStep(
            "What has changed since the last run? (the results store)",
            "Every result above was recorded in a results store with its metrics and "
            "intervals; run the demo again and `plumbline history check` tells whether any "
            "metric moved beyond noise.",
            ("history", "--store", url, "--html", str(output / "site")),
        ),
    ]


def _leaderboard_steps(output: Path) -> list[DemoStep]:
    """The leaderboard job: two runs of SA Bench (scripted and real models) and one leaderboard."""
    return [
        DemoStep(
            "Which model is best? (an SA Bench leaderboard)",
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
                *_saved(output, "leaderboard", "--output"),
                "--display",
                "none",
            ),
        ),
        DemoStep(
            "A real model beside the scripted ones",
            f"{REAL_MODEL} is SmolLM2-135M-Instruct, run in process on the CPU: weak, but real. "
            f"It answers {REAL_LIMIT} samples of each task ({REAL_MAX_TOKENS} tokens at most); "
            "the diagram task it cannot see is recorded as unsupported.",
            (
                "run",
                "sa-bench",
                "--model",
                REAL_MODEL,
                "--limit",
                str(REAL_LIMIT),
                "--max-tokens",
                str(REAL_MAX_TOKENS),
                "--timeout",
                "300",
                "--log-dir",
                str(output / "logs-smollm2"),
                "--output",
                str(output / "leaderboard-smollm2.json"),
                "--display",
                "none",
            ),
        ),
        DemoStep(
            "All three models on one leaderboard",
            "The leaderboard is built from the logs of both runs; the real model's few samples "
            "give it wide intervals.",
            (
                "leaderboard",
                str(output / "logs"),
                str(output / "logs-smollm2"),
                *_saved(output, "leaderboard", "--output"),
                *not_run_arguments(),
            ),
        ),
    ]


def _judge_steps(output: Path) -> list[DemoStep]:
    """The real model as an LLM judge, on a few calibration items."""
    return [
        DemoStep(
            "Can the real model judge? (a few calibration items)",
            f"The LLM judge's calibration on {JUDGE_ITEMS} hand-scored items: a reply that is no "
            "verdict is unscored, never a score.",
            (
                "judge",
                "calibrate",
                "--judge",
                REAL_MODEL,
                "--limit",
                str(JUDGE_ITEMS),
                "--runs",
                "1",
                "--max-tokens",
                "48",
                "--concurrency",
                str(JUDGE_ITEMS),
                "--json",
                str(output / "judge-smollm2.json"),
            ),
            findings_exit=True,
        ),
    ]


def _statistics_steps() -> list[DemoStep]:
    """The statistics commands: an interval and a power analysis."""
    return [
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
    ]


def _ab_steps(output: Path, runs: str) -> list[DemoStep]:
    """The A/B job: a decision between two arms of bundled agent run records."""
    return [
        DemoStep(
            "Did the change help the agent? (the A/B schema: three gates, paired deltas)",
            "Bundled run records of two arms of a coding agent, paired by task and repeat.",
            (
                "compare",
                runs,
                "--treatment",
                "with_skelly",
                "--control",
                "without_skelly",
                "--resamples",
                "2000",
                *_saved(output, "compare"),
            ),
        ),
    ]


def _agent_steps(output: Path, agent: DemoAgent | None, price_file: str) -> list[DemoStep]:
    """The A/B job on trials the harness runs: the example agent suite, metered."""
    from plumbline.app.demo_trials import agent_unavailable

    trials = output / "agent-trials"
    suite, command, host = (
        (str(agent.suite), agent.command, agent.allow_host)
        if agent is not None
        else (str(example_path("agent_suite") / "suite.toml"), "claude-code", "127.0.0.1")
    )
    not_run = None if agent is not None else agent_unavailable() or "no model server was started"
    run: tuple[str, ...] = ("agent", "run", suite, "--agent", command, "--profile", "claude-code")
    run += ("--repeats", str(AGENT_REPEATS), "--concurrency", "2", "--allow-host", host)
    compare: tuple[str, ...] = (
        "compare",
        str(trials / "records.jsonl"),
        "--treatment",
        "with_hint",
    )
    compare += ("--control", "without_hint", "--prices", price_file, "--resamples", "2000")
    compare += ("--json", str(output / "agent-compare.json"))
    return [
        DemoStep(
            "Does a hint help a coding agent? (the A/B schema on trials the harness runs)",
            "The example agent suite: a small agent fixes planted bugs with and without a hint "
            "file. Each trial runs in the sandbox on a network of its own; the agent's model "
            "calls (an offline scripted model) go through the harness's metering proxy, so every "
            "token counted is one the harness saw.",
            (*run, "-o", str(trials)),
            not_run=not_run,
        ),
        DemoStep(
            "",
            "",
            (*compare, "--markdown", str(output / "agent-compare.md")),
            not_run=not_run,
        ),
    ]


def _reliability_steps(output: Path, trials: str) -> list[DemoStep]:
    """The reliability job: probe the real model, then CERT metrics on its and bundled trials."""
    return [
        DemoStep(
            "Probing the real model: the same prompts, repeated",
            f"{REAL_MODEL} answers each prompt 3 times (a seed per trial), journaled as trial "
            "records.",
            (
                "probe",
                "--model",
                REAL_MODEL,
                *(arg for prompt in REAL_PROMPTS for arg in ("--prompt", prompt)),
                "--trials",
                "3",
                "--concurrency",
                "1",
                "--max-tokens",
                "24",
                "--timeout",
                "120",
                "--no-progress",
                "-o",
                str(output / "smollm2-trials.jsonl"),
            ),
        ),
        DemoStep(
            "Can I rely on these models? (CERT metrics with intervals)",
            "Bundled trial records from three models probed against a local OpenAI-style server, "
            "and the real model's probe.",
            (
                "reliability",
                trials,
                str(output / "smollm2-trials.jsonl"),
                *_saved(output, "reliability"),
            ),
        ),
    ]


def _regression_steps(output: Path) -> list[DemoStep]:
    """A regression check: a second probe as the update, compared with the first."""
    return [
        DemoStep(
            "Did the update make it worse? (a regression check between two runs)",
            f"A tiny second probe of {REAL_MODEL} stands in for an update (shorter answers: "
            f"{UPDATE_MAX_TOKENS} tokens at most, 2 trials per prompt); `reliability --baseline` "
            "pairs the two runs by prompt and gives every metric a verdict. With this few "
            "trials most are inconclusive, and it says how large a change it could have seen.",
            (
                "probe",
                "--model",
                REAL_MODEL,
                *(arg for prompt in REAL_PROMPTS for arg in ("--prompt", prompt)),
                "--trials",
                "2",
                "--seed",
                "7",
                "--concurrency",
                "1",
                "--max-tokens",
                str(UPDATE_MAX_TOKENS),
                "--timeout",
                "120",
                "--no-progress",
                "-o",
                str(output / "smollm2-update.jsonl"),
            ),
        ),
        DemoStep(
            "",
            "",
            (
                "reliability",
                str(output / "smollm2-update.jsonl"),
                "--baseline",
                str(output / "smollm2-trials.jsonl"),
                *_saved(output, "regression"),
            ),
        ),
    ]


def _site_steps(output: Path, runs: str) -> list[DemoStep]:
    """The report site built from every result above."""
    return [
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
                str(output / "regression.json"),
                str(output / "logs-smollm2"),
                "-o",
                str(output / "site"),
            ),
        ),
    ]


def shown_arguments(args: tuple[str, ...], url: str | None) -> tuple[str, ...]:
    """A step's arguments as the demo echoes them: the store URL with its password hidden."""
    if url is None:
        return args
    from plumbline.store.url import shown_url

    shown = shown_url(url)
    return tuple(shown if arg == url else arg for arg in args)


def _run_step(step: DemoStep, log: TextIO, verbose: bool) -> None:
    """Run one step; without `verbose`, its output goes to `log` and its first `STEP_LINES`
    lines to the terminal."""
    from rich.text import Text

    from plumbline.cli.main import main

    def run() -> None:
        try:
            main.main(list(step.args), prog_name="plumbline", standalone_mode=False)
        except SystemExit as stop:
            if not (step.findings_exit and stop.code == 1):
                raise

    if verbose:
        run()
        return
    with console.capture() as captured:
        run()
    text = captured.get()
    log.write(text)
    lines = text.rstrip("\n").splitlines()
    for line in lines[:STEP_LINES]:
        console.print(Text.from_ansi(line), soft_wrap=True)
    if len(lines) > STEP_LINES:
        console.print(
            f"[dim]... {len(lines) - STEP_LINES} more lines in {terminal(log.name)} "
            "(--verbose shows every step in full)[/dim]"
        )


@click.command(cls=Command)
@output_option(
    type=OutputDirectory(path_type=Path),
    default=Path("demo-output"),
    show_default=True,
    help="Where the demo writes its JSON and Markdown results and the HTML site (DIR/site/).",
)
@click.option(
    "--verbose",
    "verbose",
    is_flag=True,
    help=f"Show every step's output in full (by default: its first {STEP_LINES} lines, the "
    "rest in DIR/demo.log).",
)
@click.option(
    "--prices",
    "prices_path",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="A price table for the leaderboard's cost (default: the demo's made-up prices).",
)
@store_options
def demo(output: Path, store: StoreOptions, verbose: bool, prices_path: Path | None) -> None:
    """Run plumbline's jobs on built-in data, offline; write every result and a site under -o,
    and end with the answers."""
    import shlex

    from rich.rule import Rule

    from plumbline.app.demo_trials import agent_unavailable, demo_agent

    load_price_table(prices_path)  # a bad price file stops the demo before its first step
    output.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if store.url is None:
        store = replace(store, url=demo_store(output))
    missing = agent_unavailable()
    with (
        open(output / "demo.log", "w", encoding="utf-8") as log,
        nullcontext(None) if missing else demo_agent(output) as agent,
    ):
        for step in demo_steps(output, store, prices_path, agent):
            if step.title:
                console.print(Rule(step.title))
                console.print(f"[dim]{step.why}[/dim]")
            shown = shlex.join(shown_arguments(step.args, store.url))
            console.print(f"[bold]$ plumbline {terminal(shown)}[/bold]")
            log.write(f"$ plumbline {shown}\n")
            if step.not_run is not None:
                console.print(f"Not run: {terminal(step.not_run)}")
                log.write(f"Not run: {step.not_run}\n")
                continue
            _run_step(step, log, verbose)
    console.print(Rule("The answers"))
    for line in demo_answers(output, store.url):
        console.print(terminal(line), highlight=False, soft_wrap=True)
    console.print(
        f"Demo finished in {time.monotonic() - started:.0f} s. Results: "
        f"{terminal(output.resolve())}"
    )
    console.print(f"Open {terminal(site_url(output / 'site' / 'index.html'))}", soft_wrap=True)
