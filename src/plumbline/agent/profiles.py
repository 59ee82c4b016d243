"""Agent profiles: how to start an agent on a prompt and read what it reports.

An agent command is a template: `{prompt}` becomes the prompt text (one argument, never
through a shell), `{prompt_file}` a file holding it, `{workspace}` the workspace. A template
with neither prompt placeholder gets the prompt on standard input. A bare profile name
(`claude-code`, `opencode`, `codex`) stands for that profile's usual command.

Built-in profiles parse the agent's standard output with the run-record adapters: Claude Code
(`--output-format json` or `stream-json`), opencode (`run --format json` events), Codex CLI
(`exec --json` events). The generic profile reads nothing: its records carry duration and exit
code, and null tokens and cost (unknown, never zero).
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plumbline.agent.capture import MAX_OUTPUT_BYTES
from plumbline.agent.safe_files import open_regular
from plumbline.records.adapters import claude_code, codex, opencode
from plumbline.records.run_record_model import TOKEN_FIELDS

_PLACEHOLDER = re.compile(r"\{(prompt|prompt_file|workspace)\}")

#: The JSON objects of an agent's output, read afresh from its log at each call.
Values = Callable[[], Iterator[dict[str, Any]]]
Parser = Callable[[Values], dict[str, Any]]

#: The longest line (or pretty-printed object) of an agent's output read as one JSON value;
#: longer ones are skipped, so parsing holds at most about this much at a time.
MAX_VALUE_BYTES = 1024 * 1024
#: The most bytes of an agent's output read (its log is capped at `MAX_OUTPUT_BYTES`).
MAX_REPORT_BYTES = MAX_OUTPUT_BYTES + 4096

#: Fields a profile may report; the harness owns every other record field.
REPORTED_FIELDS = (
    "duration_seconds",
    "total_cost_usd",
    *TOKEN_FIELDS,
    "step_count",
    "tool_call_count",
    "session_id",
    "model",
    "model_usage",
)


def _claude(values: Values) -> dict[str, Any]:
    return claude_code.output_to_fields(values()) or {}


def _opencode(values: Values) -> dict[str, Any]:
    export = None
    for value in values():
        if "info" in value and "messages" in value:
            export = value
    if export is not None:
        return opencode.export_to_fields(export)
    if not any("type" in v for v in values()):
        return {}
    return opencode.events_to_fields(v for v in values() if "type" in v)


def _codex(values: Values) -> dict[str, Any]:
    if not any("type" in v for v in values()):
        return {}
    return codex.events_to_fields(v for v in values() if "type" in v)


def _generic(values: Values) -> dict[str, Any]:
    return {}


Commands = Callable[[Values], list[str] | None]


def _shell_commands(
    values: Values, tool_inputs: Callable[[dict[str, Any]], list[object] | None]
) -> list[str] | None:
    """The shell commands an agent ran, in order, read from its output: `tool_inputs` gives
    the inputs of the tool calls in one JSON value (None for a value that is not part of the
    agent's stream), and a tool input's `command`, when it is a string, is a shell command.
    None when no value is part of the stream."""
    streamed = False
    commands: list[str] = []
    for value in values():
        found = tool_inputs(value)
        if found is None:
            continue
        streamed = True
        for given in found:
            command = given.get("command") if isinstance(given, dict) else None
            if isinstance(command, str):
                commands.append(command)
    return commands if streamed else None


def _claude_tool_inputs(value: dict[str, Any]) -> list[object] | None:
    """The inputs of the `tool_use` blocks of a stream-json `assistant` message."""
    if value.get("type") != "assistant":
        return None
    message = value.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [
        block.get("input")
        for block in (content if isinstance(content, list) else [])
        if isinstance(block, dict) and block.get("type") == "tool_use"
    ]


def _opencode_tool_inputs(value: dict[str, Any]) -> list[object]:
    """The input of a `tool` part of an opencode JSON event."""
    part = value.get("part")
    if not isinstance(part, dict) or part.get("type") != "tool":
        return []
    state = part.get("state")
    return [state.get("input") if isinstance(state, dict) else None]


def _codex_tool_inputs(value: dict[str, Any]) -> list[object]:
    """A completed `command_execution` item of a codex JSON event (it holds the command)."""
    item = value.get("item")
    if (
        value.get("type") == "item.completed"
        and isinstance(item, dict)
        and item.get("type") == "command_execution"
    ):
        return [item]
    return []


def _claude_commands(values: Values) -> list[str] | None:
    return _shell_commands(values, _claude_tool_inputs)


def _opencode_commands(values: Values) -> list[str] | None:
    return _shell_commands(values, _opencode_tool_inputs)


def _codex_commands(values: Values) -> list[str] | None:
    return _shell_commands(values, _codex_tool_inputs)


def _no_commands(values: Values) -> list[str] | None:
    return None


@dataclass(frozen=True)
class Profile:
    name: str
    executable: str | None
    template: str | None
    parse: Parser
    commands: Commands = _no_commands


#: The usual command of each agent. Claude Code: `-p` mode denies every tool not allowed on the
#: command line (and refuses `--dangerously-skip-permissions` to root), and `stream-json` names
#: the tool calls and shell commands. Codex CLI: its own sandbox cannot start inside a trial (it
#: will not install its helper under a temporary directory, and would nest bubblewrap in the
#: trial's), so the trial sandbox is the wall (docs/tutorials/agents-in-the-sandbox.md).
PROFILES: dict[str, Profile] = {
    "claude-code": Profile(
        "claude-code",
        "claude",
        "claude -p {prompt} --output-format stream-json --verbose "
        "--allowedTools Bash,Edit,Write,Read,Glob,Grep",
        _claude,
        _claude_commands,
    ),
    "opencode": Profile(
        "opencode", "opencode", "opencode run --format json {prompt}", _opencode, _opencode_commands
    ),
    "codex": Profile(
        "codex",
        "codex",
        "codex exec --json --dangerously-bypass-approvals-and-sandbox {prompt}",
        _codex,
        _codex_commands,
    ),
    "generic": Profile("generic", None, None, _generic),
}


class AgentCommandError(ValueError):
    """An agent command template that cannot be used."""


@dataclass(frozen=True)
class AgentReport:
    """What an agent reported: run-record fields (empty when nothing parsed), the shell
    commands it ran (None when its output does not say), and why its output could not be
    read (None when it could; the fields are then empty)."""

    fields: dict[str, Any]
    commands: list[str] | None
    problem: str | None = None


@dataclass(frozen=True)
class AgentCommand:
    """An agent command template and the profile that reads its output."""

    template: str
    profile: Profile

    @property
    def argv_template(self) -> list[str]:
        return shlex.split(self.template)

    def argv(self, prompt: str, prompt_file: Path, workspace: Path) -> tuple[list[str], bool]:
        """The argument list, and whether the prompt goes to standard input."""
        values = {"prompt": prompt, "prompt_file": str(prompt_file), "workspace": str(workspace)}
        # One pass, so a prompt that happens to contain `{workspace}` stays as written.
        argv = [
            _PLACEHOLDER.sub(lambda m: values[m.group(1)], token) for token in self.argv_template
        ]
        uses_prompt = "{prompt}" in self.template or "{prompt_file}" in self.template
        return argv, not uses_prompt

    def anchored(self, base: Path) -> AgentCommand:
        """This command with a relative executable path (`./agent.py`, `bin/agent`) made
        absolute against `base`: trials run in their own workspaces, where it would name
        nothing. A bare name (looked up on PATH) or an absolute path stays as written."""
        stream = io.StringIO(self.template)
        lexer = shlex.shlex(stream, posix=True)
        lexer.whitespace_split = True
        first = lexer.get_token()
        if not first or "/" not in first or Path(first).is_absolute():
            return self
        rest = stream.read()
        resolved = shlex.quote(str((base / first).absolute()))
        return AgentCommand(f"{resolved} {rest}" if rest else resolved, self.profile)

    @property
    def executable(self) -> str:
        """The program the command starts (its first word)."""
        return self.argv_template[0]

    def read(self, stdout: Path) -> AgentReport:
        """What the agent reported on standard output. Output of an unexpected shape is the
        agent's business, never the harness's failure: it leaves the fields unknown."""
        try:
            if not os.path.lexists(stdout):
                return AgentReport({}, None)
            values: Values = lambda: json_objects(stdout)  # noqa: E731
            if next(values(), None) is None:
                return AgentReport({}, None)
            fields = self.profile.parse(values)
            if not isinstance(fields, dict):
                raise TypeError(f"the {self.profile.name} parser returned {type(fields).__name__}")
            reported = {k: v for k, v in fields.items() if k in REPORTED_FIELDS}
            return AgentReport(reported, self.profile.commands(values))
        except Exception as error:  # any shape of output: a parser bug must not lose the run
            problem = f"the {self.profile.name} profile could not read the agent's output: "
            return AgentReport({}, None, f"{problem}{type(error).__name__}: {error}")

    def report(self, stdout: Path) -> tuple[dict[str, Any], list[str] | None]:
        """What the agent reported on standard output: run-record fields (empty when nothing
        parsed), and the shell commands it ran (None when its output does not say)."""
        found = self.read(stdout)
        return found.fields, found.commands

    def parse(self, stdout: Path) -> dict[str, Any]:
        """The run-record fields the agent reported (see `report`)."""
        return self.report(stdout)[0]


def _value(data: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _lines(path: Path) -> Iterator[bytes]:
    """The lines of a regular file (never a FIFO or a link), each at most `MAX_VALUE_BYTES`
    (a longer one is yielded as b"" in its place), up to `MAX_REPORT_BYTES` in all."""
    with os.fdopen(open_regular(path), "rb") as handle:
        read = 0
        while read < MAX_REPORT_BYTES:
            line = handle.readline(MAX_VALUE_BYTES + 1)
            if not line:
                return
            read += len(line)
            if len(line) > MAX_VALUE_BYTES and not line.endswith(b"\n"):
                while read < MAX_REPORT_BYTES:  # skip the rest of this line
                    rest = handle.readline(MAX_VALUE_BYTES)
                    read += len(rest)
                    if not rest or rest.endswith(b"\n"):
                        break
                line = b""
            yield line


def json_objects(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of an agent's output, one at a time in bounded memory: a line that
    opens an object in column 0 and parses alone, or a pretty-printed object that starts with
    such a line and ends with a `}` in column 0 (at most `MAX_VALUE_BYTES`). Everything else
    (other values, text, a line too long) is skipped."""
    pending: list[bytes] | None = None
    size = 0
    for line in _lines(path):
        if pending is not None:
            pending.append(line)
            size += len(line)
            if line.startswith(b"}"):
                value, pending = _value(b"".join(pending)), None
                if value is not None:
                    yield value
            elif size > MAX_VALUE_BYTES or not line:
                pending = None
            continue
        if line.startswith(b"{"):
            value = _value(line)
            if value is not None:
                yield value
            elif line.rstrip() == b"{":
                pending, size = [line], len(line)


def count_runs_of(command: str, commands: list[str] | None) -> int | None:
    """How many of the agent's shell commands ran `command` (whitespace-insensitive)."""
    if commands is None:
        return None
    wanted = " ".join(command.split())
    return sum(wanted in " ".join(c.split()) for c in commands)


def resolve_agent(spec: str, profile: str | None = None) -> AgentCommand:
    """An agent command from a template or a profile name; the profile is detected from the
    executable's name unless given."""
    if spec in PROFILES and PROFILES[spec].template is not None:
        chosen = PROFILES[spec]
        assert chosen.template is not None
        if profile not in (None, spec):
            raise AgentCommandError(f"--agent {spec} uses the {spec} profile, not {profile}")
        return AgentCommand(chosen.template, chosen)
    try:
        argv = shlex.split(spec)
    except ValueError as error:
        raise AgentCommandError(f"agent command {spec!r}: {error}") from None
    if not argv:
        raise AgentCommandError("the agent command is empty")
    if profile is not None:
        if profile not in PROFILES:
            raise AgentCommandError(
                f"unknown profile {profile!r}: use one of {', '.join(sorted(PROFILES))}"
            )
        return AgentCommand(spec, PROFILES[profile])
    executable = Path(argv[0]).name
    detected = next(
        (p for p in PROFILES.values() if p.executable and p.executable == executable),
        PROFILES["generic"],
    )
    return AgentCommand(spec, detected)


__all__ = [
    "PROFILES",
    "AgentCommand",
    "AgentCommandError",
    "AgentReport",
    "Profile",
    "count_runs_of",
    "resolve_agent",
]
