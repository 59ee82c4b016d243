"""`plumbline records`: convert agent output to run records, and validate run record files."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from plumbline.cli.output import (
    EXIT_FAILED,
    Group,
    InputError,
    OutputFile,
    choice_option,
    emit,
    error_console,
    json_option,
    output_option,
    strict_records_option,
    write_json,
    write_output,
)
from plumbline.core.escape import terminal

if TYPE_CHECKING:
    from plumbline.records.adapters import Conversion, RunContext
    from plumbline.records.run_record import RunRecord

SOURCES = ("claude-code", "opencode", "codex", "inspect")
_SUFFIXES = {
    "claude-code": (".json", ".jsonl"),
    "opencode": (".json", ".jsonl"),
    "codex": (".jsonl", ".json"),
    "inspect": (".eval", ".json"),
}
MAX_SHOWN_ERRORS = 20


def expand_inputs(inputs: tuple[str, ...], source: str) -> list[Path]:
    """Files as given; directories searched recursively for the source's file types (for
    Inspect, its logs only: `eval-set.json`, `logs.json` and our own outputs beside them are
    not logs)."""
    paths: list[Path] = []
    for text in inputs:
        path = Path(text)
        if path.is_dir() and source == "inspect":
            from plumbline.records.log_files import find_log_files

            found = sorted(Path(str(log)) for log in find_log_files([path]).logs)
            if not found:
                raise InputError(f"{path}: no Inspect logs (.eval or .json) inside")
            paths.extend(found)
        elif path.is_dir():
            found = sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix in _SUFFIXES[source]
            )
            if not found:
                raise InputError(f"{path}: no {' or '.join(_SUFFIXES[source])} files inside")
            paths.extend(found)
        elif path.exists():  # a file, a FIFO or a pipe (`<(...)`)
            paths.append(path)
        else:
            raise InputError(f"{path}: no such file or directory")
    return paths


def record_line(record: RunRecord) -> str:
    """One JSONL line: required fields always (null stays null), optional ones when set."""
    from plumbline.records.run_record import REQUIRED_FIELDS

    data = record.model_dump(mode="json")
    kept = {
        key: value
        for key, value in data.items()
        if key in REQUIRED_FIELDS or key in ("timed_out", "infra_failure") or value is not None
    }
    import json

    return json.dumps(kept, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def report_errors(errors: list[Any]) -> None:
    for error in errors[:MAX_SHOWN_ERRORS]:
        error_console.print(terminal(error), soft_wrap=True)
    if len(errors) > MAX_SHOWN_ERRORS:
        error_console.print(f"... and {len(errors) - MAX_SHOWN_ERRORS} more problems")


def report_notes(notes: list[str]) -> None:
    """Notes (inputs that gave no record without being wrong) on stderr, as `note: ...`."""
    for note in notes[:MAX_SHOWN_ERRORS]:
        error_console.print(f"note: {terminal(note)}", soft_wrap=True)
    if len(notes) > MAX_SHOWN_ERRORS:
        error_console.print(f"... and {len(notes) - MAX_SHOWN_ERRORS} more notes")


@click.group(cls=Group)
def records() -> None:
    """Run records: convert agent output to them, and validate them."""


@records.command()
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--from", "source", type=click.Choice(SOURCES), required=True, help="The agent output format."
)
@output_option(
    type=OutputFile(allow_dash=True),
    default="-",
    show_default=True,
    help="The run records file (JSONL) to write ('-' = stdout).",
)
@click.option("--arm", help="Arm of every run (when the output and the path do not say).")
@click.option("--task-id", help="Task of every run (when the output and the path do not say).")
@click.option("--repeat", type=click.IntRange(min=0), help="Repeat index of every run.")
@click.option(
    "--path-template",
    help="Read arm, task and repeat from each file's path, e.g. '{arm}/{task_id}/{repeat}.json'.",
)
@choice_option(
    "--arm-from",
    choices=["model", "task"],
    default="model",
    help="inspect: the arm is each log's model, or its task.",
)
@click.option("--scorer", help="inspect: the scorer that decides success (default: the first).")
@choice_option(
    "--sample-errors",
    choices=["failure", "infra"],
    default="failure",
    help="inspect: count samples that errored as failures, or exclude them as infra failures.",
)
@click.option(
    "--outcomes",
    type=click.Path(exists=True, dir_okay=False),
    help="JSON records with task_id, arm, repeat and success (or acceptance_exit_code, "
    "timed_out, infra_failure), as the harness wrote them.",
)
@strict_records_option
@json_option
def convert(
    inputs: tuple[str, ...],
    source: str,
    output: str,
    arm: str | None,
    task_id: str | None,
    repeat: int | None,
    path_template: str | None,
    arm_from: str,
    scorer: str | None,
    sample_errors: str,
    outcomes: str | None,
    strict: bool,
    json_path: str | None,
) -> None:
    """Convert agent output (Claude Code, opencode, Codex, Inspect logs) to validated run records.

    The records go to -o (stdout by default); --json [PATH] gives the summary (counts and
    problems), on stdout only when the records go to a file.
    """
    from plumbline.records.adapters import RunContext, load_outcomes

    if json_path == "-" and output == "-":
        raise click.UsageError("the records go to stdout: give -o FILE to print --json there")
    paths: list[str | Path] = list(expand_inputs(inputs, source))
    known, outcome_errors = load_outcomes(outcomes) if outcomes else ({}, [])
    context = RunContext(
        arm=arm, task_id=task_id, repeat=repeat, path_template=path_template, outcomes=known
    )
    conversion = _convert(source, paths, context, arm_from, scorer, sample_errors)
    conversion.errors[:0] = outcome_errors
    if conversion.errors and strict:
        raise InputError(str(conversion.errors[0]))
    text = "".join(record_line(r) + "\n" for r in conversion.records)
    if output == "-":
        click.echo(text, nl=False)
    else:
        write_output(output, text)
    report_errors(conversion.errors)
    report_notes(conversion.notes)
    invalid = len({(e.path, e.line) for e in conversion.errors})
    summary = {
        "source": source,
        "output": output,
        "records": len(conversion.records),
        "invalid": invalid,
        "errors": [str(e) for e in conversion.errors],
        "notes": conversion.notes,
    }
    if output == "-" and json_path is not None:
        write_json(summary, json_path)  # stdout holds the records: the summary goes to PATH only
    elif output != "-":
        emit(
            summary,
            json_path,
            lambda console: console.print(
                f"wrote {len(conversion.records)} run records to {terminal(output)}"
                + (f"; {invalid} invalid (listed above)" if invalid else "")
            ),
        )
    if conversion.errors:
        raise SystemExit(EXIT_FAILED)  # README, exit codes: invalid records are exit 1


def _convert(
    source: str,
    paths: list[str | Path],
    context: RunContext,
    arm_from: str,
    scorer: str | None,
    sample_errors: str,
) -> Conversion:
    if source == "claude-code":
        from plumbline.records.adapters.claude_code import convert_claude_code

        return convert_claude_code(paths, context)
    if source == "opencode":
        from plumbline.records.adapters.opencode import convert_opencode

        return convert_opencode(paths, context)
    if source == "codex":
        from plumbline.records.adapters.codex import convert_codex

        return convert_codex(paths, context)
    from plumbline.records.adapters.inspect_log import convert_inspect

    return convert_inspect(
        paths,
        context,
        arm_from="task" if arm_from == "task" else "model",
        scorer=scorer,
        sample_errors="infra" if sample_errors == "infra" else "failure",
    )


@records.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@strict_records_option
@json_option
def validate(files: tuple[str, ...], strict: bool, json_path: str | None) -> None:
    """Validate run record files; list every problem as file:line: field: problem.

    A second record of one (task_id, arm, repeat) is a problem too (a duplicate run).
    Exit status 1 when any record is invalid or duplicated.
    """
    from plumbline.records.io import InvalidRecordError
    from plumbline.records.run_record import duplicate_units, read_run_records

    try:
        table = read_run_records(list(files), strict=strict)
    except InvalidRecordError as error:
        raise InputError(str(error)) from None
    duplicates = duplicate_units(table.frame)
    if duplicates and strict:
        raise InputError(str(duplicates[0]))
    order = {name: i for i, name in enumerate(table.files)}
    problems = sorted(
        [*table.errors, *duplicates], key=lambda e: (order.get(e.path, len(order)), e.line)
    )
    result = {
        "files": table.files,
        "records": table.records_read,
        "valid": table.frame.height,
        "invalid": table.invalid_records,
        "duplicate_runs": len(duplicates),
        "errors": [str(e) for e in problems],
    }

    def render(console: Any) -> None:
        for error in problems:
            console.print(terminal(error), soft_wrap=True)
        console.print(
            f"{table.frame.height} valid and {table.invalid_records} invalid run records "
            f"in {len(files)} files"
            + (f"; {len(duplicates)} duplicate runs (listed above)" if duplicates else "")
        )

    emit(result, json_path, render)
    if table.invalid_records or duplicates:
        raise SystemExit(EXIT_FAILED)
