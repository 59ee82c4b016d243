"""The one output layer (issue 27): every file a command writes goes through `cli.output`.

The command tree is walked: every command is an output-checked `Command`, and every option that
names something a command writes has an output type, which refuses an empty path and a path of
the wrong kind before any work. Then each case seen in issue 27 ("What was seen"), one test each:
outputs that are inputs, links and FIFOs, pipes as inputs, numbers and names.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result
from tests.support.small_inputs import (
    copy_example,
    make_log_dir,
    write_claude_result,
    write_suite,
)

import plumbline
from plumbline.cli import output
from plumbline.cli.main import main

EXAMPLES = Path(plumbline.__file__).parent / "examples"

#: Options that name something a command writes (by their spelling on the command line).
OUTPUT_SPELLINGS = {"-o", "--output", "--json", "--csv", "--markdown", "--parquet", "--html"}
OUTPUT_SPELLINGS |= {"--log-dir"}
ARMS = ["-t", "with_skelly", "-c", "without_skelly", "--resamples", "100"]


def commands() -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command under `plumbline`, with the words that invoke it."""
    context = click.Context(main)

    def walk(
        command: click.Command, path: tuple[str, ...]
    ) -> Iterator[tuple[tuple[str, ...], click.Command]]:
        yield path, command
        if isinstance(command, click.Group):
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                assert sub is not None
                yield from walk(sub, (*path, name))

    for name in main.list_commands(context):
        sub = main.get_command(context, name)
        assert sub is not None
        yield from walk(sub, (name,))


def output_options() -> list[tuple[tuple[str, ...], click.Parameter]]:
    return [(path, p) for path, c in commands() for p in c.params if _writes(p)]


def _writes(param: click.Parameter) -> bool:
    return bool(set(param.opts) & OUTPUT_SPELLINGS)


def invoke(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=input)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_command_checks_its_outputs_before_it_runs() -> None:
    found = list(commands())
    assert len(found) >= 15
    for path, command in found:
        kind = output.Group if isinstance(command, click.Group) else output.Command
        assert isinstance(command, kind), (
            f"plumbline {' '.join(path)} is not an output.{kind.__name__}"
        )


def test_every_output_option_of_every_command_has_an_output_type() -> None:
    checked = 0
    for path, command in commands():
        for param in command.params:
            typed = isinstance(param.type, output.OutputType)
            assert typed == _writes(param), (
                f"plumbline {' '.join(path)} {param.opts}: an option that writes must have an "
                "output type (cli.output), and only such an option"
            )
            checked += typed
    # run/leaderboard/compare/reliability/... : at least the options the README lists
    assert checked >= 25


@pytest.mark.parametrize(
    "path,option",
    [(path, param.opts[-1]) for path, param in output_options()],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else str(value),
)
def test_each_output_option_refuses_an_empty_path_and_a_path_of_the_wrong_kind(
    path: tuple[str, ...], option: str, tmp_path: Path
) -> None:
    empty = invoke(*path, option, "")
    assert empty.exit_code == output.EXIT_USAGE, empty.output
    assert "an empty path names nothing to write" in empty.output
    kind = next(p.type for pth, p in output_options() if pth == path and option in p.opts)
    assert isinstance(kind, output.OutputType)
    if kind.kind in ("file", "journal"):
        wrong = tmp_path / "a-directory"
        wrong.mkdir()
        expected = "is a directory"
    else:
        wrong = tmp_path / "a-file"
        wrong.write_text("mine\n")
        expected = "exists and is not a directory"
    refused = invoke(*path, option, str(wrong))
    assert refused.exit_code == output.EXIT_USAGE, refused.output
    assert expected in refused.output
    if wrong.is_file():
        assert wrong.read_text() == "mine\n"


# --- Outputs overwrite inputs --------------------------------------------------------------


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_log_dir(tmp_path_factory.mktemp("logs"))


@pytest.mark.parametrize("option", ["--json", "-o", "--csv", "--markdown", "--parquet"])
def test_leaderboard_outputs_into_a_log_of_the_logdir_it_reads_are_refused(
    logs: Path, tmp_path: Path, option: str
) -> None:
    suite = write_suite(tmp_path / "suite.toml")
    (log,) = logs.glob("*.eval")
    before = digest(log)
    for target in (log, tmp_path / "link.eval"):
        if target != log:
            target.symlink_to(log)
        result = invoke("leaderboard", str(logs), "--suite", str(suite), option, str(target))
        assert result.exit_code == output.EXIT_USAGE, result.output
        assert "is both an input and an output" in result.output
        assert digest(log) == before
    hard = logs.parent / "hard.eval"
    os.link(log, hard)
    try:
        result = invoke("leaderboard", str(logs), "--suite", str(suite), option, str(hard))
        assert result.exit_code == output.EXIT_USAGE, result.output
    finally:
        hard.unlink()
    assert digest(log) == before


def test_a_leaderboard_beside_the_logs_it_reads_is_not_an_input(logs: Path, tmp_path: Path) -> None:
    """Only the logs a directory stands for are inputs: `run` writes LOGDIR/leaderboard.json,
    and rebuilding it there is allowed."""
    suite = write_suite(tmp_path / "suite.toml")
    target = logs / "leaderboard.json"
    for _ in range(2):
        result = invoke("leaderboard", str(logs), "--suite", str(suite), "-o", str(target))
        assert result.exit_code == 0, result.output
    assert json.loads(target.read_text())["models"][0]["model"] == "mockllm/model"
    target.unlink()


@pytest.mark.parametrize("option", ["--markdown", "--parquet", "--json"])
def test_reliability_outputs_onto_the_trials_journal_are_refused(
    tmp_path: Path, option: str
) -> None:
    trials = copy_example("trials.jsonl", tmp_path / "trials.jsonl")
    before = digest(trials)
    result = invoke("reliability", str(trials), option, str(trials))
    assert result.exit_code == output.EXIT_USAGE, result.output
    assert "is both an input and an output" in result.output
    assert digest(trials) == before


def test_records_convert_onto_its_own_input_is_refused(tmp_path: Path) -> None:
    source = write_claude_result(tmp_path / "result.json")
    before = digest(source)
    for given in (source, tmp_path):  # the file, and the file inside an input directory
        result = invoke(
            "records", "convert", "--from", "claude-code", str(given), "--arm", "a",
            "--task-id", "t", "--repeat", "0", "-o", str(source),
        )  # fmt: skip
        assert result.exit_code == output.EXIT_USAGE, result.output
        assert digest(source) == before


def test_two_outputs_at_one_path_are_refused(tmp_path: Path) -> None:
    runs = copy_example("agent_runs.jsonl", tmp_path / "runs.jsonl")
    target = tmp_path / "out.txt"
    result = invoke("compare", str(runs), *ARMS, "--json", str(target), "--markdown", str(target))
    assert result.exit_code == output.EXIT_USAGE
    assert "writes the same path" in result.output
    assert not target.exists()
    # a stream may take several outputs
    both = invoke("compare", str(runs), *ARMS, "--json", os.devnull, "--markdown", os.devnull)
    assert both.exit_code == 0, both.output


# --- Special files replaced ----------------------------------------------------------------


def test_an_output_that_is_a_symlink_is_written_through_to_its_target(tmp_path: Path) -> None:
    target = tmp_path / "results" / "interval.json"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    result = invoke("interval", "-k", "42", "-n", "50", "--json", str(link))
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["n"] == 50
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "results" / "new.json")
    assert invoke("interval", "-k", "1", "-n", "2", "--json", str(dangling)).exit_code == 0
    assert dangling.is_symlink() and json.loads(dangling.read_text())["n"] == 2


def _drain(fifo: Path, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(fifo, "rb") as handle:
            into.append(handle.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_an_output_that_is_a_fifo_is_streamed_into_never_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    runs = copy_example("agent_runs.jsonl", tmp_path / "runs.jsonl")
    for args in (
        ["interval", "-k", "42", "-n", "50", "--json", str(fifo)],
        ["compare", str(runs), *ARMS, "--markdown", str(fifo)],
    ):
        received: list[bytes] = []
        reader = _drain(fifo, received)
        result = invoke(*args)
        reader.join(timeout=60)
        assert result.exit_code == 0, result.output
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)
        assert received and received[0].strip()
    assert not list(tmp_path.glob(".out.fifo.*"))  # no temporary file left beside it


def test_dev_stdout_as_an_output_path_is_written_into(tmp_path: Path) -> None:
    """`--json /dev/stdout`: a character device or a pipe, written into (here a pipe)."""
    import subprocess
    import sys

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "plumbline",
            "interval",
            "-k",
            "1",
            "-n",
            "2",
            "--json",
            "/dev/stdout",
        ],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert result.returncode == 0, result.stderr
    assert '"n": 2' in result.stdout


# --- Empty paths and pipes -----------------------------------------------------------------


def test_empty_output_paths_are_usage_errors_and_nothing_is_written(tmp_path: Path) -> None:
    runs = copy_example("agent_runs.jsonl", tmp_path / "runs.jsonl")
    before = set(Path.cwd().iterdir())
    for args in (
        ["compare", str(runs), *ARMS, "--html", ""],
        ["report", str(runs), "-o", ""],
        ["compare", str(runs), *ARMS, "--json", ""],
        ["compare", str(runs), *ARMS, "--markdown", ""],
        ["records", "validate", str(runs), "--json", ""],
    ):
        result = invoke(*args)
        assert result.exit_code == output.EXIT_USAGE, (args, result.output)
    assert set(Path.cwd().iterdir()) == before


def _fifo_with(tmp_path: Path, name: str, data: bytes) -> Path:
    fifo = tmp_path / name
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as handle:
            handle.write(data)

    threading.Thread(target=write, daemon=True).start()
    return fifo


def test_compare_reads_a_fifo_and_a_pipe(tmp_path: Path) -> None:
    data = copy_example("agent_runs.jsonl", tmp_path / "runs.jsonl").read_bytes()
    expected = invoke("compare", str(tmp_path / "runs.jsonl"), *ARMS, "--json")
    assert expected.exit_code == 0
    fifo = _fifo_with(tmp_path, "runs.fifo", data)
    from_fifo = invoke("compare", str(fifo), *ARMS, "--json")
    assert from_fifo.exit_code == 0, from_fifo.output
    read, write = os.pipe()  # what `<(cat runs.jsonl)` hands a command: /dev/fd/N
    threading.Thread(target=lambda: (os.write(write, data), os.close(write)), daemon=True).start()
    try:
        from_pipe = invoke("compare", f"/dev/fd/{read}", *ARMS, "--json")
    finally:
        os.close(read)
    assert from_pipe.exit_code == 0, from_pipe.output
    for result in (from_fifo, from_pipe):
        got, want = json.loads(result.stdout), json.loads(expected.stdout)
        assert got["comparisons"] == want["comparisons"]


def test_records_validate_reads_a_pipe_and_names_it_in_problems(tmp_path: Path) -> None:
    rows = copy_example("agent_runs.jsonl", tmp_path / "runs.jsonl").read_text().splitlines()
    rows[2] = rows[2].replace('"arm":', '"arm_":', 1)
    fifo = _fifo_with(tmp_path, "runs.fifo", ("\n".join(rows) + "\n").encode())
    result = invoke("records", "validate", str(fifo))
    assert result.exit_code == output.EXIT_FAILED, result.output  # an invalid record: exit 1
    assert f"{fifo}:3: arm" in result.output
    assert "71 valid and 1 invalid" in result.output


def test_help_shows_no_unbounded_ranges() -> None:
    for name in ("interval", "power"):
        text = invoke(name, "--help").output
        assert "None" not in text and "x<=None" not in text
    assert "0<x<1" in invoke("power", "--help").output


def test_compare_and_records_convert_exit_1_on_invalid_records(tmp_path: Path) -> None:
    runs = copy_example("agent_runs.jsonl", tmp_path / "runs.jsonl")
    with runs.open("a") as handle:
        handle.write('{"task_id": "t", "arm": "with_skelly"}\n')
    compared = invoke("compare", str(runs), *ARMS)
    assert compared.exit_code == output.EXIT_FAILED, compared.output
    good = write_claude_result(tmp_path / "good.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": "result", "duration_ms": "soon"}')
    converted = invoke(
        "records", "convert", "--from", "claude-code", str(good), str(bad), "--arm", "a",
        "--task-id", "t", "--repeat", "0", "-o", str(tmp_path / "out.jsonl"),
    )  # fmt: skip
    assert converted.exit_code == output.EXIT_FAILED, converted.output
    assert (tmp_path / "out.jsonl").read_text().count("\n") == 1


# --- Silently wrong numbers (the options of the CLI) ---------------------------------------


def test_numeric_options_are_validated(tmp_path: Path) -> None:
    level = invoke("interval", "-k", "5", "-n", "10", "--level", "0.9999999999999999", "--json")
    assert level.exit_code == 0
    payload = json.loads(level.stdout)
    assert "nan" not in level.stdout.lower()
    assert 0 <= payload["interval"]["low"] < payload["interval"]["high"] <= 1
    assert "100%" not in json.loads(level.stdout)["text"]
    weak = invoke("power", "--baseline", "0.8", "--effect", "0.05", "--power", "0.01")
    assert weak.exit_code == output.EXIT_USAGE and "not above --alpha" in weak.output
    trials = copy_example("trials.jsonl", tmp_path / "trials.jsonl")
    nan = invoke("reliability", str(trials), "--price", "m=nan:1")
    assert nan.exit_code == output.EXIT_USAGE and "finite" in nan.output
    absent = invoke("reliability", str(trials), "--price", "nobody/model=1:2")
    assert absent.exit_code == output.EXIT_USAGE
    assert "no trial records of 'nobody/model'" in absent.output
    runs = copy_example("agent_runs.jsonl", tmp_path / "runs.jsonl")
    margin = invoke("compare", str(runs), *ARMS, "--margin", "success=0.1")
    assert margin.exit_code == output.EXIT_USAGE and "--rule ci" in margin.output
    directory = invoke("compare", str(runs), *ARMS, "--json", str(tmp_path))
    assert directory.exit_code == output.EXIT_USAGE and "is a directory" in directory.output


@pytest.mark.parametrize(
    "args",
    [
        ["reliability", "--baseline", "\x00", str(EXAMPLES / "trials.jsonl")],
        ["report", "--output", "a\x00b", str(EXAMPLES / "trials.jsonl")],
        ["leaderboard", str(EXAMPLES), "--labels", "\x00"],
    ],
    ids=["input --baseline", "output --output", "input --labels"],
)
def test_a_path_with_a_nul_byte_is_a_usage_error(args: list[str]) -> None:
    """`os.stat` refuses a NUL byte with a ValueError: it was an internal error (exit 3)."""
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "a path cannot hold a NUL byte" in result.output
