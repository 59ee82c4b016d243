"""Property (issue 27): whatever output path a user types, no input byte changes and no link or
FIFO is replaced.

Hypothesis draws a command, one of its output options and a kind of path: an existing file, an
input, a link to an input, a FIFO, a directory, an empty path, a new file, a link to a new file.
Every command is driven; the ones whose work needs a model, an agent or an embedding model
(`run`, `probe`, `judge calibrate`, `reliability`, `agent`, `demo`) with the paths that must be
refused before any work (an input, a link to one, a directory or file of the wrong kind, an empty
path), the others to completion.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.cli.test_output_layer import commands
from tests.support.small_inputs import (
    EXAMPLES,
    copy_example,
    make_log_dir,
    write_claude_result,
    write_suite,
)

from plumbline.cli import output
from plumbline.cli.main import main

FILE_KINDS = ("existing", "input", "link_to_input", "fifo", "directory", "empty", "new", "link")
SUITE = EXAMPLES / "agent_suite" / "suite.toml"


@dataclass
class Case:
    """A command: its words, how to make its inputs in a folder, and whether it runs here."""

    words: tuple[str, ...]
    make: Callable[[Path, dict[str, Path]], tuple[list[str], list[Path]]]
    runs: bool = True
    fixed: dict[str, str] = field(default_factory=dict)


def _runs(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    runs = copy_example("agent_runs.jsonl", work / "runs.jsonl")
    arms = ["-t", "with_skelly", "-c", "without_skelly", "--resamples", "100"]
    return [str(runs), *arms], [runs]


def _validate(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    runs = copy_example("agent_runs.jsonl", work / "runs.jsonl")
    return [str(runs)], [runs]


def _convert(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    source = write_claude_result(work / "result.json")
    args = ["--from", "claude-code", str(source), "--arm", "a", "--task-id", "t", "--repeat", "0"]
    return args, [source]


def _leaderboard(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    logs = work / "logs"
    shutil.copytree(shared["logs"], logs)
    suite = write_suite(work / "suite.toml")
    return [str(logs), "--suite", str(suite)], [*logs.iterdir(), suite]


def _check(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    new = work / "new.json"
    published = work / "published.json"
    new.write_bytes(shared["board"].read_bytes())
    published.write_bytes(shared["board"].read_bytes())
    return [str(new), "--against", str(published)], [new, published]


def _report(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    document = work / "compare.json"
    document.write_bytes(shared["compare"].read_bytes())
    return [str(document)], [document]


def _cdk(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    response = work / "response.md"
    response.write_text("I cannot write this app.\n")  # no app: judged without a sandbox
    return [str(response)], [response]


def _trials(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    trials = copy_example("trials.jsonl", work / "trials.jsonl")
    return [str(trials)], [trials]


def _probe(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    prompts = work / "prompts.txt"
    prompts.write_text("Say hi.\n")
    return ["--model", "mockllm/model", "--prompts", str(prompts)], [prompts]


def _judge(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    calibration = work / "calibration.jsonl"
    calibration.write_text('{"id": "x"}\n')
    return ["--judge", "mockllm/model", "--set", str(calibration)], [calibration]


def _suite_file(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    suite = work / "suite.toml"
    suite.write_bytes(SUITE.read_bytes())
    return [str(suite)], [suite]


def _run(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    suite = write_suite(work / "suite.toml")
    return [str(suite), "--model", "mockllm/model"], [suite]


def _store(work: Path, shared: dict[str, Path]) -> Path:
    """A store holding the shared leaderboard."""
    store = work / "history.db"
    added = CliRunner().invoke(main, ["store", "add", str(shared["board"]), "--store", str(store)])
    assert added.exit_code == 0, added.output
    return store


def _history(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    store = _store(work, shared)
    return ["--store", str(store)], [store]


def _store_add(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    store = _store(work, shared)
    board = work / "board.json"
    board.write_bytes(shared["board"].read_bytes())
    return [str(board), "--store", str(store)], [board, store]


def _nothing(work: Path, shared: dict[str, Path]) -> tuple[list[str], list[Path]]:
    return [], []


CASES = [
    Case(("interval",), lambda w, s: (["-k", "42", "-n", "50"], [])),
    Case(("power",), lambda w, s: (["--baseline", "0.8", "--effect", "0.05"], [])),
    Case(("compare",), _runs),
    Case(("records", "validate"), _validate),
    Case(("records", "convert"), _convert),
    Case(("leaderboard", "build"), _leaderboard),
    Case(("leaderboard", "check"), _check),
    Case(("report",), _report),
    Case(("cdk", "check"), _cdk),
    Case(("reliability",), _trials, runs=False),
    Case(("probe",), _probe, runs=False),
    Case(("judge", "calibrate"), _judge, runs=False),
    Case(("judge", "sample"), _leaderboard, runs=False),
    Case(
        ("judge", "plan"),
        lambda w, s: (["--correlation", "0.5", "--judged", "100", "--half-width", "0.05"], []),
    ),
    Case(("run",), _run, runs=False),
    Case(("agent", "run"), _suite_file, runs=False),
    Case(("agent", "plan"), _suite_file, runs=False),
    Case(("demo",), _nothing, runs=False),
    Case(("history", "show"), _history),
    Case(("history", "check"), _history),
    Case(("history", "ack"), _history, runs=False),
    Case(("store", "add"), _store_add),
]


def _options(words: tuple[str, ...]) -> list[tuple[str, output.OutputType]]:
    found = dict(commands())[words]
    return [
        (param.opts[-1], param.type)
        for param in found.params
        if isinstance(param.type, output.OutputType)
    ]


def test_every_command_is_driven() -> None:
    driven = {case.words for case in CASES}
    leaves = {path for path, command in commands() if not hasattr(command, "commands")}
    assert leaves <= driven, f"commands the property does not drive: {leaves - driven}"


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("shared")
    logs = make_log_dir(root)
    board = root / "board.json"
    suite = write_suite(root / "suite.toml")
    built = CliRunner().invoke(
        main, ["leaderboard", str(logs), "--suite", str(suite), "-o", str(board)]
    )
    assert built.exit_code == 0, built.output
    runs = copy_example("agent_runs.jsonl", root / "runs.jsonl")
    compare = root / "compare.json"
    made = CliRunner().invoke(
        main,
        [
            "compare",
            str(runs),
            "-t",
            "with_skelly",
            "-c",
            "without_skelly",
            "--resamples",
            "100",
            "--json",
            str(compare),
        ],
    )
    assert made.exit_code == 0, made.output
    return {"logs": logs, "board": board, "compare": compare}


class Drain:
    """Reads a FIFO while a command writes into it (opened non-blocking, so a command that
    never writes is never waited for). `poll`, not `select`: a test process may hold more
    than FD_SETSIZE descriptors."""

    def __init__(self, fifo: Path) -> None:
        self.fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        self.data = bytearray()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        while not self.stop.is_set():
            if poller.poll(50) and not self._read_available():
                time.sleep(0.01)  # the writer closed: nothing to read until the next one
        self._read_available()  # what was written just before `close`

    def _read_available(self) -> bool:
        got = False
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return got
            if not chunk:
                return got
            self.data.extend(chunk)
            got = True

    def close(self) -> bytes:
        self.stop.set()
        self.thread.join(timeout=30)
        os.close(self.fd)
        return bytes(self.data)


def _digest(paths: list[Path]) -> dict[Path, str]:
    return {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in paths if path.is_file()}


def refusals(kind: output.OutputType, has_inputs: bool) -> set[str]:
    """The path kinds an output option must refuse (exit 2, before any work)."""
    refused = {"empty"} | ({"input", "link_to_input"} if has_inputs else set())
    if kind.kind in ("file", "journal"):
        return refused | {"directory"} | ({"fifo"} if kind.kind == "journal" else set())
    return refused | {"existing", "fifo", "link"}  # a directory is wanted


def _has_inputs(case: Case) -> bool:
    no_inputs = (("interval",), ("power",), ("judge", "plan"))
    return case.make is not _nothing and case.words not in no_inputs


@st.composite
def cases(draw: st.DrawFn) -> tuple[Case, str, output.OutputType, str]:
    # a command without an output option (`history ack`) has nothing to draw here
    case = draw(st.sampled_from([case for case in CASES if _options(case.words)]))
    option, kind = draw(st.sampled_from(_options(case.words)))
    has_inputs = _has_inputs(case)
    kinds = [k for k in FILE_KINDS if has_inputs or k not in ("input", "link_to_input")]
    if not case.runs:
        kinds = sorted(refusals(kind, has_inputs))
    return case, option, kind, draw(st.sampled_from(kinds))


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn=cases())
def test_no_output_path_changes_an_input_or_replaces_a_link_or_fifo(
    shared: dict[str, Path], drawn: tuple[Case, str, output.OutputType, str]
) -> None:
    case, option, kind, path_kind = drawn
    work = Path(tempfile.mkdtemp(prefix="plumbline-property-"))
    try:
        args, inputs = case.make(work, shared)
        before = _digest(inputs)
        links: dict[Path, str] = {}
        fifos: list[Path] = []
        drain: Drain | None = None
        a_file = kind.kind in ("file", "journal")
        if path_kind == "existing":
            target = work / "existing.out"
            target.write_text("an earlier result\n")
        elif path_kind == "input":
            target = inputs[0] if inputs else work
        elif path_kind == "link_to_input":
            target = work / "link-to-input"
            target.symlink_to(inputs[0] if inputs else work)
            links[target] = os.readlink(target)
        elif path_kind == "fifo":
            target = work / "out.fifo"
            os.mkfifo(target)
            fifos.append(target)
            if a_file and kind.kind == "file":
                drain = Drain(target)
        elif path_kind == "directory":
            target = work / "a-directory"
            target.mkdir()
            if a_file:
                (target / "keep.txt").write_text("mine\n")
                inputs.append(target / "keep.txt")
                before = _digest(inputs)
        elif path_kind == "empty":
            target = Path("")
        elif path_kind == "new":
            target = work / "new" / "out.file"
        else:  # a link to a file that does not exist yet
            target = work / "link-to-new"
            target.symlink_to(work / "made-through-the-link")
            links[target] = os.readlink(target)
        text = "" if path_kind == "empty" else str(target)
        # in the work directory: an output left at its default (`report -o site`) lands there
        with contextlib.chdir(work):
            result = CliRunner().invoke(main, [*case.words, *args, option, text])
        received = drain.close() if drain is not None else b""

        assert "Traceback" not in result.output and "internal error" not in result.output
        assert result.exit_code in (0, 1, 2), (case.words, option, path_kind, result.output)
        assert _digest(inputs) == before, "an input changed"
        for link, pointed in links.items():
            assert link.is_symlink() and os.readlink(link) == pointed, "a link was replaced"
        for fifo in fifos:
            assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "a FIFO was replaced"
        if path_kind in refusals(kind, bool(inputs)):
            assert result.exit_code == output.EXIT_USAGE, (
                case.words,
                option,
                path_kind,
                result.output,
            )
        else:
            assert case.runs, "a command that needs a model ran"
        if result.exit_code in (0, 1) and a_file and path_kind in ("existing", "new", "link"):
            written = target.resolve()
            assert written.is_file() and written.read_bytes() not in (b"", b"an earlier result\n")
        if result.exit_code in (0, 1) and drain is not None:
            assert received, "nothing was streamed into the FIFO"
        if result.exit_code in (0, 1) and kind.kind == "site" and path_kind == "directory":
            assert (target / "index.html").is_file()
            json.loads((target / ".plumbline-site").read_text())
    finally:
        shutil.rmtree(work, ignore_errors=True)
