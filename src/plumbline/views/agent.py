"""Terminal and Markdown views of `plumbline agent`: the plan, every difference between arms,
and the runs of a harness run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from plumbline.core import present
from plumbline.core.escape import markdown, terminal

if TYPE_CHECKING:
    from rich.console import Console

    from plumbline.agent.plan import Plan
    from plumbline.agent.run_types import RunResult

#: Schedule rows printed in the terminal (a table of 100,000 rows takes a minute to draw).
MAX_SHOWN_SCHEDULE = 200


def render_plan(plan: Plan, out: Console) -> None:
    """What `agent run` would do: the tasks, every difference between arms, the schedule."""
    from rich.table import Table

    loaded = plan.loaded
    out.print(
        f"[bold]{terminal(loaded.suite.name)}[/]: {len(plan.tasks)} tasks × "
        f"{len(loaded.suite.arms)} arms × {plan.repeats} repeats = "
        f"{len(plan.schedule)} runs, order {plan.order}, seed {plan.seed}"
    )
    tasks = Table(title="Tasks", title_justify="left")
    for column in ("task", "source", "timeout (s)", "acceptance", "protected"):
        tasks.add_column(column)
    for task_plan in plan.tasks.values():
        task = task_plan.task
        source = (
            f"{task.source.git}@{(task_plan.commit or '')[:12]}"
            if task.source.git
            else f"{task.source.dir} (directory)"
        )
        tasks.add_row(
            *map(
                terminal,
                (
                    task.id,
                    source,
                    f"{task_plan.timeout_seconds:g}",
                    task.acceptance,
                    ", ".join(task_plan.protected) or "—",
                ),
            )
        )
    out.print(tasks)
    render_differences(plan, out)
    schedule = Table(title="Schedule", title_justify="left")
    for column in ("#", "task", "arm", "repeat"):
        schedule.add_column(column)
    for unit in plan.schedule[:MAX_SHOWN_SCHEDULE]:
        schedule.add_row(
            str(unit.position), terminal(unit.task_id), terminal(unit.arm), str(unit.repeat)
        )
    out.print(schedule)
    hidden = len(plan.schedule) - MAX_SHOWN_SCHEDULE
    if hidden > 0:
        out.print(
            f"... and {hidden:,} more runs (the first {MAX_SHOWN_SCHEDULE} are shown; "
            "--json prints the whole schedule)"
        )


def render_differences(plan: Plan, out: Console) -> None:
    from rich.table import Table

    arms = [arm.name for arm in plan.loaded.suite.arms]
    commands = {
        f"{a.template} (profile {a.profile.name})" if a else "none: give --agent"
        for a in plan.agents.values()
    }
    if len(commands) == 1:
        out.print(f"agent: {terminal(commands.pop())}", soft_wrap=True)
    if not plan.differences:
        out.print("[yellow]The arms do not differ in anything the suite sets.[/]")
        return
    differences = differences_table(plan)
    table = Table(title="Every difference between arms", title_justify="left")
    table.add_column("field")
    for arm in arms:
        table.add_column(terminal(arm))
    for row in differences["rows"]:
        table.add_row(*map(terminal, [row["field"], *[row["values"][a] for a in arms]]))
    out.print(table)
    out.print(IDENTICAL_IN_EVERY_ARM)


def _short(value: Any) -> str:
    if value in (None, "", [], {}):
        return "—"
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return "\n".join(f"{v['path']} (sha256 {v['sha256'][:12]}, {v['bytes']} B)" for v in value)
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return str(value)


def render_result(
    result: RunResult, out: Console, sequential: dict[str, Any] | None = None
) -> None:
    """The runs per arm, what was reclaimed and retried, and (`--until-decided`) the
    sequential verdict with what the fixed design would have needed."""
    from rich.table import Table

    table = Table(title=f"Runs in {terminal(result.records_path)}", title_justify="left")
    for column in ("arm", "runs", "successes", "timed out", "infra failures", "protected edits"):
        table.add_column(column)
    for arm, tally in result.arms.items():
        infra = ", ".join(f"{k}: {v}" for k, v in tally.infra_failures.items()) or "0"
        table.add_row(
            terminal(arm),
            str(tally.runs),
            str(tally.successes),
            str(tally.timed_out),
            terminal(infra),
            str(tally.protected_paths_modified),
        )
    out.print(table)
    if result.reclaimed:
        killed = sum(r.killed for r in result.reclaimed)
        out.print(
            f"reclaimed {len(result.reclaimed)} trial(s) an interrupted harness left running "
            f"({killed} process(es) ended); they ran again",
            soft_wrap=True,
        )
    if result.infra_retries:
        out.print(
            f"[yellow]{len(result.infra_retries)} trial(s) lost with their node were run "
            "again (each recorded once):[/]",
            soft_wrap=True,
        )
        for retry in result.infra_retries:
            out.print(
                f"  {retry.task_id} {retry.arm} r{retry.repeat} (attempt {retry.attempt}): "
                f"{retry.error}",
                markup=False,
                soft_wrap=True,
            )
    out.print(f"ran {result.ran}, already recorded {result.skipped}, scheduled {result.scheduled}")
    for problem in result.record_errors[:20]:
        out.print(f"[red]{terminal(problem)}[/]", soft_wrap=True)
    if sequential is not None:
        from plumbline.agent.sequential import summary_lines

        for line in summary_lines(sequential):
            out.print(terminal(line), soft_wrap=True, highlight=False)


#: What the harness keeps the same in every arm, said beside every list of differences.
IDENTICAL_IN_EVERY_ARM = (
    "Identical in every arm: repository and revision, task setup, prompt scaffolding, "
    "acceptance command, protected paths, time limits, other environment variables."
)


def differences_table(plan: Plan) -> dict[str, Any]:
    """The arms' differences as display text per arm: the terminal, Markdown and HTML views."""
    arms = [arm.name for arm in plan.loaded.suite.arms]
    return {
        "arms": arms,
        "rows": [
            {"field": d.field, "values": {arm: _short(d.values.get(arm)) for arm in arms}}
            for d in plan.differences
        ],
        "identical": IDENTICAL_IN_EVERY_ARM,
    }


def _multiline_cell(text: str) -> str:
    """One escaped line per line of the value, joined by our own line breaks."""
    return "<br>".join(map(markdown, text.split("\n")))


def differences_markdown(plan: Plan) -> str:
    """The arms' differences as a Markdown section (appended to the analysis report)."""
    differences = differences_table(plan)
    arms = differences["arms"]
    lines = ["", "## Every difference between arms", ""]
    if not differences["rows"]:
        lines.append("The arms do not differ in anything the suite sets.")
    else:
        rows = [[row["field"], *(row["values"][a] for a in arms)] for row in differences["rows"]]
        lines.append(present.markdown_table(["field", *arms], rows, cell=_multiline_cell))
    lines += ["", differences["identical"], ""]
    return "\n".join(lines)
