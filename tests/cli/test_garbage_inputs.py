"""Generated garbage at every reader and every command's arguments (Hypothesis).

Readers get real files: bytes nobody thought of, and real inputs (example records made by the
scripts under scripts/, the packaged suites, a leaderboard built from a real Inspect log)
mutated one value, one line or one byte range at a time. Each reader must return its problems
or raise its own documented error, never anything else. Commands get the same files and
generated option values through click's CliRunner; each must exit 0, 1, 2 or 3 with no
traceback and no "internal error" (the top-level guard is the last resort, not the answer).

Set PLUMBLINE_FUZZ_COUNTS=path to write how many inputs each reader and command was given.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plumbline.cli.main import COMMANDS, main

ROOT = Path(__file__).parents[2]
EXAMPLE_DIR = ROOT / "src/plumbline/examples"
COUNTS: Counter[str] = Counter()
# Examples per reader; commands get half as many, and the slow ones (reliability loads an
# embedding model and bootstraps) fewer still. PLUMBLINE_FUZZ_EXAMPLES=200 for a long hunt.
EXAMPLES = int(os.environ.get("PLUMBLINE_FUZZ_EXAMPLES", "8"))
SLOW_COMMANDS = {"reliability": 0.1, "compare": 0.3}


def fuzz(scale: float = 1.0) -> settings:
    return settings(
        max_examples=max(2, int(EXAMPLES * scale)),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        derandomize=True,
        database=None,
    )


@pytest.fixture(scope="module", autouse=True)
def write_counts() -> Iterator[None]:
    yield
    target = os.environ.get("PLUMBLINE_FUZZ_COUNTS")
    if target:
        previous = json.loads(Path(target).read_text()) if Path(target).exists() else {}
        for key, value in COUNTS.items():
            previous[key] = previous.get(key, 0) + value
        Path(target).write_text(json.dumps(previous, indent=2, sort_keys=True) + "\n")


# ---- garbage ---------------------------------------------------------------------------------

NASTY_JSON = [
    "NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1e308", "1e30", "-1", "0",
    "99999999999999999999999999", "3.5", '"banana"', '"not a date"', '""', "null", "true",
    "[]", "{}", '"\\u0000"', '"\\ud800"', '"[/bold] <script>alert(1)</script>"',
    "[" * 3000 + "]" * 3000, '{"a":' * 500 + "1" + "}" * 500,
]  # fmt: skip
NASTY_TEXT = [
    "-1", "0", "nan", "inf", "-inf", "1e308", "1e999", "99999999999999999999", "", " ",
    "[/bold]", "<script>alert(1)</script>", "a|b", "\x1b[31m", "{{ 7*7 }}", "../../etc/passwd",
    "é", "\ud7ff", "0x10", "--json", "-", "1,2", "a=b", "=", ":",
]  # fmt: skip


def mutate(seed: bytes, data: st.DataObject) -> bytes:
    """One realistic corruption of a real input."""
    kind = data.draw(
        st.sampled_from(
            ["value", "value", "truncate", "bytes", "bom", "array_first", "lines", "encoding"]
        )
    )
    try:
        text = seed.decode("utf-8")
    except UnicodeDecodeError:  # a binary input (an .eval zip): corrupt its bytes instead
        text, kind = "", data.draw(st.sampled_from(["truncate", "bytes"]))
    if kind == "value":
        spots = [m for m in re.finditer(r'(?<=: )("[^"\n]*"|-?[0-9.eE+-]+|true|false|null)', text)]
        spots += [m for m in re.finditer(r'(?<=:)("[^"\n]*"|-?[0-9.eE+-]+|true|false|null)', text)]
        spots += [m for m in re.finditer(r"(?<== )(\"[^\"\n]*\"|'[^'\n]*'|-?[0-9.]+)", text)]
        if spots:
            spot = data.draw(st.sampled_from(spots))
            value = data.draw(st.sampled_from(NASTY_JSON) | st.text(max_size=8).map(json.dumps))
            return (text[: spot.start()] + value + text[spot.end() :]).encode("utf-8")
    if kind == "truncate" and seed:
        return seed[: data.draw(st.integers(0, len(seed) - 1))]
    if kind == "bytes":
        at = data.draw(st.integers(0, len(seed)))
        return seed[:at] + data.draw(st.binary(min_size=1, max_size=16)) + seed[at:]
    if kind == "bom":
        return b"\xef\xbb\xbf" + seed
    if kind == "array_first":
        return b"[1, 2]\n" + seed
    if kind == "lines":
        lines = seed.splitlines(keepends=True)
        return b"".join(data.draw(st.lists(st.sampled_from(lines or [b"\n"]), max_size=8)))
    if kind == "encoding":
        return text.encode("utf-16")
    return data.draw(st.binary(max_size=64))


def garbage(seeds: list[bytes]) -> st.SearchStrategy[bytes]:
    @st.composite
    def draw(data: st.DrawFn) -> bytes:
        choice = data(st.integers(0, 9))
        if choice == 0:
            return data(st.binary(max_size=300))
        if choice == 1:
            return data(st.text(max_size=200)).encode("utf-8")
        seed = data(st.sampled_from(seeds))
        return mutate(seed, data(st.data()))

    return draw()


def first_lines(path: Path, count: int) -> bytes:
    return b"".join(path.read_bytes().splitlines(keepends=True)[:count])


# ---- real inputs -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[bytes]]:
    """Real inputs of each kind, made by the code that makes them."""
    from tests.cli.test_untrusted_text import _inspect_logs

    root = tmp_path_factory.mktemp("real")
    logs = root / "logs"
    _inspect_logs(logs, "plain")
    (log,) = logs.glob("*.eval")
    suite = root / "suite.toml"
    suite.write_text(
        "[suite]\nname = 'mine'\n[[category]]\nkey = 'exam'\nname = 'Exam'\n"
        "description = 'd'\nweight = 1.0\nscoring = 'binary'\ntasks = ['exam']\n"
        "scorer = 'verdict'\n"
    )
    board = root / "board.json"
    built = CliRunner().invoke(
        main, ["leaderboard", str(logs), "--suite", str(suite), "-o", str(board)]
    )
    assert built.exit_code == 0, built.output
    compare_json = root / "compare.json"
    compared = CliRunner().invoke(
        main,
        ["compare", str(EXAMPLE_DIR / "agent_runs.jsonl"), "--treatment", "with_skelly",
         "--control", "without_skelly", "--resamples", "100", "--json", str(compare_json)],
    )  # fmt: skip
    assert compared.exit_code == 0, compared.output
    sa_bench = resources.files("plumbline.suites.sa_bench").joinpath("suite.toml").read_bytes()
    return {
        "run_records": [first_lines(EXAMPLE_DIR / "agent_runs.jsonl", 12)],
        "trial_records": [first_lines(EXAMPLE_DIR / "trials.jsonl", 12)],
        "suite": [suite.read_bytes(), sa_bench],
        "agent_suite": [(EXAMPLE_DIR / "agent_suite/suite.toml").read_bytes()],
        "leaderboard": [board.read_bytes()],
        "compare": [compare_json.read_bytes()],
        "prompts": [b'{"id": "a", "prompt": "hello"}\n{"id": "b", "prompt": "bye"}\n'],
        "inspect_log": [log.read_bytes()],
        "claude_code": [json.dumps(_claude()).encode()],
    }


def _claude() -> dict[str, Any]:
    from tests.cli.test_untrusted_text import _claude_result

    return _claude_result(1)


# ---- readers ---------------------------------------------------------------------------------


def _readers() -> dict[str, tuple[str, str, Callable[[Path], Any], tuple[type[Exception], ...]]]:
    """name -> (kind of real input, file suffix, read, the errors it may raise)."""
    from plumbline.agent.suite import SuiteError as AgentSuiteError
    from plumbline.agent.suite import load_suite as load_agent_suite
    from plumbline.app.site import SiteInputError, load_site_inputs
    from plumbline.leaderboard.document import LeaderboardFileError, read_leaderboard
    from plumbline.leaderboard.suite import SuiteError, load_suite
    from plumbline.probe.settings import load_prompts
    from plumbline.records.adapters import RunContext
    from plumbline.records.adapters.claude_code import convert_claude_code
    from plumbline.records.adapters.opencode import convert_opencode
    from plumbline.records.inspect_logs import read_log_header, read_sample_scores
    from plumbline.records.io import read_records
    from plumbline.records.log_scores import LogReadError
    from plumbline.records.run_record import RunRecord, read_run_records
    from plumbline.records.trial_record import read_trial_records
    from plumbline.suites.registry import resolve_suite

    context = RunContext(arm="a", task_id="t", repeat=0)

    def log(path: Path) -> Any:
        read_log_header(path)
        return read_sample_scores(path)

    return {
        "records.io read_records": (
            "run_records", ".jsonl", lambda p: read_records([p], RunRecord), ()
        ),
        "read_run_records": ("run_records", ".jsonl", lambda p: read_run_records([p]), ()),
        "read_trial_records": ("trial_records", ".jsonl", lambda p: read_trial_records([p]), ()),
        "leaderboard suite TOML": ("suite", ".toml", load_suite, (SuiteError,)),
        "run suite TOML": ("suite", ".toml", resolve_suite, (SuiteError,)),
        "agent suite": ("agent_suite", ".toml", load_agent_suite, (AgentSuiteError,)),
        "leaderboard JSON": ("leaderboard", ".json", read_leaderboard, (LeaderboardFileError,)),
        "leaderboard JSON (check)": (
            "leaderboard", ".json", lambda p: read_leaderboard(p, validate=False),
            (LeaderboardFileError,),
        ),
        "report inputs": ("compare", ".json", lambda p: load_site_inputs([p]), (SiteInputError,)),
        "probe prompts (JSONL)": ("prompts", ".jsonl", load_prompts, (ValueError,)),
        "probe prompts (text)": ("prompts", ".txt", load_prompts, (ValueError,)),
        "Inspect log": ("inspect_log", ".eval", log, (LogReadError,)),
        "Inspect log (JSON)": ("leaderboard", ".json", log, (LogReadError,)),
        "claude-code output": (
            "claude_code", ".json", lambda p: convert_claude_code([p], context), ()
        ),
        "opencode output": ("claude_code", ".json", lambda p: convert_opencode([p], context), ()),
    }  # fmt: skip


READERS = _readers()


@pytest.mark.parametrize("name", list(READERS))
def test_every_reader_reports_garbage_as_problems(
    name: str, real: dict[str, list[bytes]], tmp_path: Path
) -> None:
    kind, suffix, read, allowed = READERS[name]

    @fuzz()
    @given(content=garbage(real[kind]))
    def check(content: bytes) -> None:
        COUNTS[f"reader: {name}"] += 1
        path = tmp_path / f"input{suffix}"
        path.write_bytes(content)
        try:
            read(path)
        except allowed as error:
            assert str(error).strip(), "an error must say what is wrong"
            assert "Traceback" not in str(error)

    check()


# ---- commands --------------------------------------------------------------------------------

# Each command with the input kind its first argument reads and the arguments that keep the
# run short; a command is given garbage in that input and generated values for its options.
COMMAND_INPUTS: dict[str, tuple[str, str, list[str]]] = {
    "records validate": ("run_records", ".jsonl", []),
    "records convert": ("claude_code", ".json", ["--from", "claude-code", "--arm", "a",
                                                 "--task-id", "t"]),
    "compare": ("run_records", ".jsonl", ["--resamples", "100"]),
    "reliability": ("trial_records", ".jsonl", ["--resamples", "100"]),
    "leaderboard": ("inspect_log", ".eval", []),
    "leaderboard check": ("leaderboard", ".json", ["--against", "{input}"]),
    "report": ("compare", ".json", ["-o", "{tmp}/site"]),
    "agent plan": ("agent_suite", ".toml", []),
    "run": ("suite", ".toml", ["--model", "mockllm/model", "--limit", "1",
                               "--log-dir", "{tmp}/logs"]),
    "probe": ("prompts", ".jsonl", ["--model", "openai-api/nowhere/m", "--trials", "1",
                                    "-o", "{tmp}/t.jsonl", "--prompts"]),
}  # fmt: skip


def _leaves() -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    ctx = click.Context(main)
    for name in COMMANDS:
        command = main.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                leaf = command.get_command(ctx, sub)
                assert leaf is not None
                found[f"{name} {sub}"] = leaf
        else:
            found[name] = command
    return found


LEAVES = _leaves()
# Commands that do real work (models, sandboxes, agents) once their arguments are valid get
# generated option values with an input that is never valid, so they stop at validation.
HEAVY = {"demo", "cdk check", "agent run", "judge calibrate", "run", "probe"}


def assert_clean(result: Any, what: str) -> None:
    output = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code in (0, 1, 2, 3), (what, result.exit_code, output)
    assert "Traceback (most recent call last)" not in output, (what, output)
    assert "internal error" not in output, (what, output)
    if result.exception is not None:
        assert isinstance(result.exception, SystemExit), (what, repr(result.exception), output)


def _env() -> dict[str, str]:
    # no HF_HUB_OFFLINE here: the embedder sets it for the process, and CliRunner would unset it
    return {"COLUMNS": "200", "NO_COLOR": "1", "PLUMBLINE_DEBUG": ""}


@pytest.mark.parametrize("name", list(COMMAND_INPUTS))
def test_every_command_reports_garbage_input_cleanly(
    name: str, real: dict[str, list[bytes]], tmp_path: Path
) -> None:
    kind, suffix, extra = COMMAND_INPUTS[name]
    strategy = (
        garbage(real[kind])
        if name not in HEAVY
        else st.binary(max_size=200).filter(lambda b: b"[" not in b and b"=" not in b)
    )

    @fuzz(0.5 * SLOW_COMMANDS.get(name, 1.0))
    @given(content=strategy)
    def check(content: bytes) -> None:
        COUNTS[f"command (garbage input): {name}"] += 1
        path = tmp_path / f"input{suffix}"
        path.write_bytes(content)
        args = [a.replace("{tmp}", str(tmp_path)).replace("{input}", str(path)) for a in extra]
        result = CliRunner().invoke(main, [*name.split(), *args, str(path)], env=_env())
        assert_clean(result, f"{name} {content[:80]!r}")

    check()


def _option_values(param: click.Parameter) -> st.SearchStrategy[list[str]]:
    names = [n for n in param.opts if n.startswith("--")] or list(param.opts)
    flag = st.sampled_from(names)
    if isinstance(param, click.Option) and (param.is_flag or param.count):
        return flag.map(lambda n: [n])
    value = st.sampled_from(NASTY_TEXT) | st.text(max_size=12) | st.integers().map(str)
    if isinstance(param.type, click.Choice):
        value = value | st.sampled_from([str(c) for c in param.type.choices])
    return st.tuples(flag, value).map(lambda pair: [pair[0], pair[1]])


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_every_command_rejects_generated_arguments_cleanly(
    name: str, real: dict[str, list[bytes]], tmp_path: Path
) -> None:
    command = LEAVES[name]
    options = [p for p in command.params if isinstance(p, click.Option) and p.name != "help"]
    kind, suffix, _ = COMMAND_INPUTS.get(name, ("run_records", ".jsonl", []))
    valid_input = tmp_path / f"valid{suffix}"
    valid_input.write_bytes(real[kind][0])
    if name == "agent plan":  # the suite's relative paths point into the example directory
        valid_input = EXAMPLE_DIR / "agent_suite/suite.toml"
    never_valid = tmp_path / "never_valid.bin"
    never_valid.write_bytes(b"\x00\xff not an input \xfe")
    positional = st.sampled_from(
        [str(never_valid)] if name in HEAVY else [str(valid_input), str(never_valid), "[/b]"]
    )
    option_lists = st.lists(
        st.one_of(*[_option_values(p) for p in options]) if options else st.nothing(),
        max_size=4,
    )

    @fuzz(0.5 * SLOW_COMMANDS.get(name, 1.0))
    @given(chosen=option_lists, argument=positional)
    def check(chosen: list[list[str]], argument: str) -> None:
        COUNTS[f"command (arguments): {name}"] += 1
        args = [*name.split(), *[part for option in chosen for part in option], argument]
        runner = CliRunner()
        with runner.isolated_filesystem(temp_dir=tmp_path):
            result = runner.invoke(main, args, env=_env())
        assert_clean(result, " ".join(repr(a) for a in args))

    check()


# ---- the named cases -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["agent", "plan", "--seed", "-1", str(EXAMPLE_DIR / "agent_suite/suite.toml")],
        ["compare", "--seed", "-1", str(EXAMPLE_DIR / "agent_runs.jsonl")],
        ["compare", "--level", "nan", str(EXAMPLE_DIR / "agent_runs.jsonl")],
        ["cdk", "check", "--timeout", "0", str(EXAMPLE_DIR / "agent_suite/suite.toml")],
        ["cdk", "check", "--timeout", "nan", str(EXAMPLE_DIR / "agent_suite/suite.toml")],
        ["cdk", "check", "--timeout", "-5", str(EXAMPLE_DIR / "agent_suite/suite.toml")],
        ["interval", "-k", "3", "-n", "10", "--level", "nan"],
        ["probe", "--model", "m", "--prompt", "x", "--timeout", "inf"],
        ["probe", "--model", "m", "--prompt", "x", "--temperature", "nan"],
    ],
    ids=lambda args: " ".join(args[:4]),
)
def test_bad_option_values_are_usage_errors(args: list[str]) -> None:
    result = CliRunner().invoke(main, args, env=_env())
    assert result.exit_code == 2, result.output
    assert "Error: Invalid value" in result.output
    assert "Traceback" not in result.output


def test_report_on_a_leaderboard_with_a_null_or_nan_overall(
    real: dict[str, list[bytes]], tmp_path: Path
) -> None:
    document = json.loads(real["leaderboard"][0])
    for overall, expected in ((None, "overall"), ("NaN", "NaN")):
        document["models"][0]["overall"] = overall
        text = json.dumps(document)
        if overall == "NaN":
            text = text.replace('"overall": "NaN"', '"overall": NaN')
        path = tmp_path / "board.json"
        path.write_text(text)
        result = CliRunner().invoke(main, ["report", str(path), "-o", str(tmp_path / "s")])
        assert result.exit_code == 2, result.output
        assert str(path) in result.output and expected in result.output
        check = CliRunner().invoke(
            main, ["leaderboard", "check", str(path), "--against", str(path)]
        )
        assert check.exit_code == 2, check.output
        assert "Traceback" not in check.output


def test_unexpected_exceptions_are_one_line_and_exit_3_unless_debugging(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import plumbline.stats as stats  # the interval command imports it when it runs

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom [/bold]\nsecond line \x1b[31m")

    monkeypatch.setattr(stats, "proportion_interval", explode)
    args = ["interval", "-k", "3", "-n", "10"]
    monkeypatch.delenv("PLUMBLINE_DEBUG", raising=False)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3
    assert result.output.strip().splitlines() == [
        "plumbline: internal error: RuntimeError: boom [/bold] second line \\x1b[31m (rerun "
        "with --debug or PLUMBLINE_DEBUG=1 for the traceback)"
    ]
    debug = CliRunner().invoke(main, ["--debug", *args])
    assert isinstance(debug.exception, RuntimeError)
    from_env = CliRunner().invoke(main, args, env={"PLUMBLINE_DEBUG": "1"})
    assert isinstance(from_env.exception, RuntimeError)


def test_a_path_the_file_system_refuses_is_one_line_naming_it(tmp_path: Path) -> None:
    taken = tmp_path / "a_directory"
    taken.mkdir()
    args = [
        "compare", str(EXAMPLE_DIR / "agent_runs.jsonl"), "--treatment", "with_skelly",
        "--control", "without_skelly", "--resamples", "100", "--json",
    ]  # fmt: skip
    # A directory is refused before any work (exit 2, issue 27: it was exit 3).
    result = CliRunner().invoke(main, [*args, str(taken)], env=_env())
    assert result.exit_code == 2, result.output
    assert "is a directory" in result.output
    # A place the file system will not take a file (/proc) fails at the write: one line.
    refused = Path("/proc/plumbline-cannot-write-here.json")
    result = CliRunner().invoke(main, [*args, str(refused)], env=_env())
    assert result.exit_code == 3, result.output
    (line,) = result.output.strip().splitlines()[-1:]
    assert line.startswith("plumbline: error: ") and "/proc/" in line
    assert "Traceback" not in result.output and "internal error" not in result.output


def test_report_on_a_compare_document_with_a_field_of_the_wrong_shape(
    real: dict[str, list[bytes]], tmp_path: Path
) -> None:
    text = real["compare"][0].decode()
    path = tmp_path / "compare.json"
    for old, new in (('"pairs": 35', '"pairs": "\\u0000"'), ('"runs": 35', '"runs": []')):
        assert old in text
        path.write_text(text.replace(old, new))
        result = CliRunner().invoke(main, ["report", str(path), "-o", str(tmp_path / "site")])
        assert "internal error" not in result.output and "Traceback" not in result.output
        if old.startswith('"pairs"'):  # a field of the typed report: refused, file and field named
            assert result.exit_code == 2, result.output
            assert f"{path}: paired.pairs: Input should be a valid integer" in result.output
        else:
            assert result.exit_code in (0, 2), result.output
